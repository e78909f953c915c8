#pragma once
// A small blocking HTTP/1.1 client for tests: real sockets over loopback, keep-alive.
#include <boost/json/value.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace a2ad::testing {

/// `text` read by the server's own strict reader (protocol::ParseJson); throws
/// std::runtime_error naming `what` when it is not strict JSON (Infinity, NaN, a name twice).
boost::json::value StrictJson(const std::string& text, const std::string& what);

struct ClientResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool keep_alive = false;
  std::string Header(const std::string& name) const;
  boost::json::value Json() const;  // parses body strictly (protocol::ParseJson); throws if not
};

class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port);
  ~HttpClient();
  /// Sends one request on the kept-alive connection (reconnecting if needed). Throws
  /// boost::system::system_error on transport errors.
  ClientResponse Request(const std::string& method, const std::string& target,
                         const std::string& body = "",
                         std::vector<std::pair<std::string, std::string>> headers = {});
  /// POST a JSON-RPC request to /v1/a2a. `version` "" sends no A2A-Version header.
  boost::json::value Rpc(const std::string& method, const boost::json::value& params,
                         const std::string& version = "", int id = 1);
  /// Writes raw bytes and reads one response (for malformed-input tests).
  ClientResponse Raw(const std::string& bytes);
  bool connected() const;
  void Close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Runs `command` through the shell; stdout and stderr together, its exit status in
/// `*exit_code` (-1 if it did not exit).
std::string RunCommand(const std::string& command, int* exit_code);

/// In a forked child: execv(args[0], args); exits 127 if that fails. Never returns.
[[noreturn]] void ExecOrExit(std::vector<std::string> args);

/// Where a server of `data_dir` keeps its data when the test runs on another backend than
/// SQLite (A2AD_TEST_BACKEND=postgres: set by ctest for a2ad_test(... ALSO_POSTGRES)): a
/// database URL, the same one for every start with the same data_dir. Set by the PostgreSQL
/// test support (pg_cluster.cpp) when it is linked in; null otherwise.
extern std::string (*g_database_for_data_dir)(const std::string& data_dir);

/// Reads "a2ad: serving http(s)://HOST:PORT/..." from a spawned server's stdout.
struct ServerProcess {
  int pid = -1;
  uint16_t port = 0;
  std::string ready_line;
  /// Starts `binary serve --listen 127.0.0.1:0 --data-dir dir <extra...>` (a --listen in
  /// `extra` replaces the default one) and waits for the
  /// ready line (up to 20 s). Throws std::runtime_error on failure. With `log_file`, the
  /// server logs at info level into that file (else warnings only, to the test's stderr).
  static ServerProcess Start(const std::string& binary, const std::string& data_dir,
                             std::vector<std::string> extra = {}, const std::string& log_file = "");
  void Kill(int signal);  // sends the signal and reaps the process
  int WaitExit();         // waits; returns the exit status (or 128+signal)
};

}  // namespace a2ad::testing
