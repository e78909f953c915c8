#pragma once
// One HTTP/1.1 POST to a vetted webhook destination (issue 5, url_guard.hpp step 5).
//
// - Connects ONLY to VettedTarget::endpoints (tried in order); the name is never resolved
//   again here, so a DNS answer cannot change between the check and the connect.
// - Host header = the original host; for https: SNI = the original host name, and the
//   server certificate is verified against the system CA store and the host name (or the
//   IP address of a literal host). `ca_file` adds a CA bundle (tests, private CAs).
// - Timeouts: connect (per endpoint) and total (connect + TLS + write + read).
// - The response is read up to `max_response_bytes` of body (more is an error, the body
//   is never used); 2xx = delivered. A 3xx is a failed attempt: redirects are never
//   followed. Connection: close (one request per connection: deliveries are independent).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/push/url_guard.hpp"

namespace a2ad::push {

struct WebhookClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds total_timeout{10000};
  size_t max_response_bytes = 64 * 1024;
  std::string user_agent = "a2ad-push/1";
  std::string ca_file;  // extra trusted CAs (PEM); "" = system store only
};

struct WebhookOutcome {
  bool delivered = false;  // a 2xx answer
  int status = 0;          // HTTP status, 0 when none was received
  std::string error;       // why it failed ("HTTP 500", "redirect (302) not followed", ...)
};

class WebhookClient {
 public:
  explicit WebhookClient(WebhookClientOptions options);
  ~WebhookClient();
  WebhookClient(const WebhookClient&) = delete;
  WebhookClient& operator=(const WebhookClient&) = delete;

  /// POSTs `body` with `headers` (plus Host, Content-Length, User-Agent, Connection) to
  /// `target`. Never throws for network failures: they are outcomes. Thread-safe.
  boost::asio::awaitable<WebhookOutcome> Post(
      const VettedTarget& target, std::string body,
      std::vector<std::pair<std::string, std::string>> headers);

  const WebhookClientOptions& options() const { return options_; }

 private:
  struct Tls;
  WebhookClientOptions options_;
  std::unique_ptr<Tls> tls_;
};

}  // namespace a2ad::push
