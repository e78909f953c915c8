#include "http_client.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::testing {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

std::string ClientResponse::Header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return {};
}

json::value ClientResponse::Json() const { return StrictJson(body, "response body"); }

json::value StrictJson(const std::string& text, const std::string& what) {
  auto v = protocol::ParseJson(text);
  if (!v)
    throw std::runtime_error("the server wrote a " + what + " that is not strict JSON (" +
                             v.error().message + "): " + text.substr(0, 300));
  return std::move(v).value();
}

struct HttpClient::Impl {
  std::string host;
  uint16_t port;
  asio::io_context io;
  tcp::socket sock{io};
  beast::flat_buffer buf;

  void Connect() {
    if (sock.is_open()) return;
    buf.clear();
    sock.connect(tcp::endpoint(asio::ip::make_address(host), port));
  }
  ClientResponse Read(bool head = false) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    parser.skip(head);  // the answer to a HEAD has no body, whatever its Content-Length says
    http::read(sock, buf, parser);
    auto res = parser.release();
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res)
      out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    out.body = std::move(res.body());
    out.keep_alive = res.keep_alive();
    // Every JSON answer any test receives is checked: a writer that ever emits Infinity,
    // NaN or a name twice fails the test that met it.
    if (out.Header("Content-Type").find("json") != std::string::npos && !out.body.empty())
      (void)StrictJson(out.body, "JSON response body");
    if (!out.keep_alive) {
      boost::system::error_code ec;
      sock.close(ec);
    }
    return out;
  }
};

HttpClient::HttpClient(std::string host, uint16_t port) : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
}
HttpClient::~HttpClient() = default;

ClientResponse HttpClient::Request(const std::string& method, const std::string& target,
                                   const std::string& body,
                                   std::vector<std::pair<std::string, std::string>> headers) {
  impl_->Connect();
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, impl_->host);
  bool has_ct = false;
  for (auto& [k, v] : headers) {
    if (strcasecmp(k.c_str(), "content-type") == 0) has_ct = true;
    req.set(k, v);
  }
  if (!body.empty() && !has_ct) req.set(http::field::content_type, "application/json");
  req.body() = body;
  req.keep_alive(true);
  req.prepare_payload();
  try {
    http::write(impl_->sock, req);
    return impl_->Read(method == "HEAD");
  } catch (const std::exception& e) {  // say which request the server did not answer
    throw std::runtime_error(method + " " + target + ": " + e.what());
  }
}

json::value HttpClient::Rpc(const std::string& method, const json::value& params,
                            const std::string& version, int id) {
  json::object o{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
  std::vector<std::pair<std::string, std::string>> h;
  if (!version.empty()) h.emplace_back("A2A-Version", version);
  auto r = Request("POST", "/v1/a2a", json::serialize(o), h);
  if (r.status != 200) throw std::runtime_error("HTTP " + std::to_string(r.status) + ": " + r.body);
  return r.Json();
}

ClientResponse HttpClient::Raw(const std::string& bytes) {
  impl_->Connect();
  asio::write(impl_->sock, asio::buffer(bytes));
  return impl_->Read();
}

bool HttpClient::connected() const { return impl_->sock.is_open(); }

void HttpClient::Close() {
  boost::system::error_code ec;
  impl_->sock.close(ec);
}

void ExecOrExit(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

std::string RunCommand(const std::string& command, int* exit_code) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string (*g_database_for_data_dir)(const std::string& data_dir) = nullptr;

ServerProcess ServerProcess::Start(const std::string& binary, const std::string& data_dir,
                                   std::vector<std::string> extra, const std::string& log_file) {
  std::string database_url;
  if (const char* backend = std::getenv("A2AD_TEST_BACKEND");
      backend && std::string_view(backend) == "postgres") {
    if (!g_database_for_data_dir)
      throw std::runtime_error("A2AD_TEST_BACKEND=postgres, but this test is not linked with "
                               "the PostgreSQL test support (a2ad_test ... ALSO_POSTGRES)");
    database_url = g_database_for_data_dir(data_dir);
  }
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    // With A2AD_TEST_LOG_DIR (make test sets it), a server whose test keeps no log of its own
    // logs at info into that directory, which scripts/scan_test_logs.sh then searches for
    // credentials after the run.
    std::string log_path = log_file;
    if (const char* dir = std::getenv("A2AD_TEST_LOG_DIR"); log_path.empty() && dir && *dir)
      log_path = std::string(dir) + "/server-" + std::to_string(getpid()) + ".log";
    if (!log_path.empty()) {
      const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log < 0) _exit(126);
      dup2(log, STDERR_FILENO);
      close(log);
    }
    if (!database_url.empty()) setenv("A2AD_DATABASE_URL", database_url.c_str(), 1);
    std::vector<std::string> args{binary,   "serve",       "--data-dir",
                                  data_dir, "--log-level", log_path.empty() ? "warn" : "info"};
    // A --listen among `extra` (a restart on the same port) replaces the default.
    if (std::find(extra.begin(), extra.end(), "--listen") == extra.end())
      args.insert(args.end(), {"--listen", "127.0.0.1:0"});
    for (auto& e : extra) args.push_back(e);
    // The tests were written for a server whose unnamed messages run `echo`: the default
    // skill, unless a test names one (--default-skill, --tck-skill) or none
    // (--default-skill "").
    if (std::find(extra.begin(), extra.end(), "--tck-skill") == extra.end())
      setenv("A2AD_DEFAULT_SKILL", "echo", 0);
    ExecOrExit(std::move(args));
  }
  close(fds[1]);
  ServerProcess p;
  p.pid = pid;
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  while (line.find('\n') == std::string::npos) {
    // Waits for the server to write (or exit), at most until the deadline.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd ready{fds[0], POLLIN, 0};
    if (left.count() > 0) (void)::poll(&ready, 1, static_cast<int>(left.count()) + 1);
    char c[256];
    ssize_t n = read(fds[0], c, sizeof c);
    if (n > 0) {
      line.append(c, static_cast<size_t>(n));
    } else if (n == 0 || std::chrono::steady_clock::now() > deadline) {
      close(fds[0]);
      p.Kill(SIGKILL);
      throw std::runtime_error("server did not print its ready line; got: " + line);
    }
  }
  close(fds[0]);  // the server's later stdout writes go nowhere (it prints only this line)
  p.ready_line = line.substr(0, line.find('\n'));
  auto pos = p.ready_line.find("://127.0.0.1:");  // http, or https when serving TLS
  if (pos == std::string::npos) throw std::runtime_error("unexpected ready line: " + p.ready_line);
  p.port = static_cast<uint16_t>(std::stoi(p.ready_line.substr(pos + 13)));
  return p;
}

void ServerProcess::Kill(int sig) {
  if (pid <= 0) return;
  ::kill(pid, sig);
  WaitExit();
}

int ServerProcess::WaitExit() {
  if (pid <= 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  pid = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace a2ad::testing
