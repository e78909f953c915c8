#pragma once
// Loopback HTTP and HTTPS servers for the egress client tests, and the test CA they use: a
// CA and a server certificate (DNS hooks.test, IP 127.0.0.1) made with OpenSSL when first
// asked for, the CA written to a temporary PEM file for EgressPolicy::ca_file.
// TestServer: 127.0.0.1:<ephemeral port>, one thread per connection, one request per
// connection unless KeepAlive says otherwise; it records every request and answers with what
// its handler returns, and counts the connections it accepted.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "a2ad/net/egress_policy.hpp"

namespace a2ad::testing {

/// The egress policy of the client tests: loopback allowed (the servers live there), plain
/// http unless `allow_http` is false, the test CA trusted.
net::EgressPolicy LoopbackPolicy(bool allow_http = true);

struct TestCa {
  std::string ca_pem;
  std::string cert_pem;  // server certificate: DNS:hooks.test, IP:127.0.0.1
  std::string key_pem;
  std::string ca_file;  // ca_pem, written to a temporary file
  static const TestCa& Get();
};

struct SeenRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string sni;  // https: the server name the client sent ("" for none)
  std::string Header(const std::string& name) const;  // case-insensitive; "" if absent
};

struct Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body = "ok";
  std::chrono::milliseconds delay{0};  // before answering
};

class TestServer {
 public:
  enum class Mode { kHttp, kHttps };
  explicit TestServer(Mode mode = Mode::kHttp);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  uint16_t port() const { return port_; }
  /// "<scheme>://<host>:<port><path>".
  std::string Url(const std::string& path = "/", const std::string& host = "hooks.test") const;
  void Handle(std::function<Reply(const SeenRequest&)> handler);
  std::vector<SeenRequest> requests();
  size_t count();
  /// Answers up to `answers` requests per connection, keeping it open between them; with
  /// `then_drop`, reads one more request and closes the connection without answering it (a
  /// server that closed an idle connection as the client reused it). Default: 1, no drop.
  void KeepAlive(int answers, bool then_drop = false);
  size_t connections();

 private:
  void Accept();
  void Serve(boost::asio::ip::tcp::socket socket);

  Mode mode_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::function<Reply(const SeenRequest&)> handler_;
  std::vector<SeenRequest> requests_;
  std::vector<std::thread> workers_;
  int answers_per_connection_ = 1;
  bool then_drop_ = false;
  size_t connections_ = 0;
};

/// A port on 127.0.0.1 whose listen queue is full: a connect to it hangs until the client
/// gives up (the connect timeout). Closed with the object.
class StalledPort {
 public:
  StalledPort();
  ~StalledPort();
  uint16_t port() const { return port_; }

 private:
  int listen_fd_ = -1;
  std::vector<int> fillers_;
  uint16_t port_ = 0;
};

}  // namespace a2ad::testing
