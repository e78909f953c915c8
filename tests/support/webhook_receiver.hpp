#pragma once
// A webhook receiver for push tests: a real HTTP/1.1 server on 127.0.0.1:<ephemeral port>,
// one thread per connection. It records every request and answers with the next scripted
// status (then `default_status`), optionally after a delay or with a Location header. With a
// certificate it serves https (the test's own TLS server) and counts failed handshakes.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "test_pki.hpp"

namespace boost::asio::ssl {
class context;
}

namespace a2ad::testing {

struct ReceivedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string Header(const std::string& name) const;  // case-insensitive; "" if absent
};

class WebhookReceiver {
 public:
  WebhookReceiver();
  /// Serves https with `tls` (a server certificate for 127.0.0.1, test_pki.hpp).
  explicit WebhookReceiver(const CertAndKey& tls);
  ~WebhookReceiver();
  uint16_t port() const { return port_; }
  /// "http(s)://127.0.0.1:<port><path>".
  std::string Url(const std::string& path = "/hook") const;
  /// https: connections whose TLS handshake failed (the client refused the certificate).
  size_t failed_handshakes();

  /// Statuses for the next requests, in order; afterwards `default_status` (200).
  void Script(std::vector<int> statuses);
  void SetDefaultStatus(int status);
  /// Every answer waits this long first (a slow webhook).
  void SetDelay(std::chrono::milliseconds delay);
  /// 3xx answers carry this Location.
  void SetLocation(std::string location);
  /// Every answer's body (default "{}", application/json) and extra headers.
  void SetResponse(std::string body, std::vector<std::pair<std::string, std::string>> headers = {});

  /// Blocks until at least `n` requests arrived or `timeout` passes; returns the count.
  size_t WaitFor(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  std::vector<ReceivedRequest> requests();
  size_t count();

 private:
  void Accept();
  void Serve(int fd);
  template <class Stream>
  void Exchange(Stream& stream);

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ReceivedRequest> requests_;
  std::deque<int> script_;
  int default_status_ = 200;
  std::chrono::milliseconds delay_{0};
  std::string location_;
  std::string body_ = "{}";
  std::vector<std::pair<std::string, std::string>> extra_headers_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  size_t failed_handshakes_ = 0;
};

}  // namespace a2ad::testing
