#pragma once
// HttpClient: HTTP/1.1 requests to destinations the egress guard vetted (DIGEST §6.3;
// url_guard.hpp step 5). The one outbound client: push deliveries and OpenWOP webhooks today;
// peer A2A calls, HTTP workflow nodes and JWKS fetches use it too.
//
// - Fetch vets the URL with the guard at the moment of the call (fresh DNS), then connects
//   ONLY to VettedTarget::endpoints (tried in order); the name is never resolved again here,
//   so a DNS answer cannot change between the check and the connect. Send takes a target the
//   caller vetted itself.
// - Host header = the original host; for https: SNI = the original host name, and the server
//   certificate is verified against the system CA store (loaded at the first https request)
//   plus EgressPolicy::ca_file, and against the host name (or the IP address of a literal
//   host).
// - Timeouts per request (defaults in HttpClientOptions): connect (per endpoint) and total
//   (every hop of the request: connect, TLS, write, read, redirects). A DNS lookup of the
//   guard cannot be cancelled (getaddrinfo): it is bounded by the system resolver, and the
//   time it took counts against the total (a hop whose deadline passed fails "timed out").
// - The answer: status, headers and body, the body read up to the request's
//   max_response_bytes (more is an error, kTooLarge). Any status is an answer, not an error:
//   the caller judges it.
// - Redirects: as the request's RedirectPolicy says (default: the policy's, which defaults to
//   never: the 3xx is the answer). When followed: 301/302/303 turn a POST into a GET without
//   body (303: any method but HEAD), 307/308 repeat the request; the Location is resolved
//   against the current URL and vetted again (a forbidden address is refused); https -> http
//   is refused; Authorization, Proxy-Authorization and Cookie are dropped when the origin
//   (scheme, host, port) changes.
// - Connections: one request per connection (Connection: close) unless the client was made
//   with HttpClientOptions::reuse_connections. Then an answer the server keeps alive leaves
//   its connection idle in the client's pool, keyed by scheme, host name and port, and a
//   later request to that origin takes it when its peer address is one the guard vetted for
//   that request (the SSRF pin holds), it has been idle less than idle_timeout, and it has
//   not been closed (a peek at the socket). A request that fails on a reused connection
//   before any byte of the answer arrived is sent again on a fresh one when it may be sent
//   twice (HttpRequest::replayable, an idempotent method, or an Idempotency-Key header);
//   else the failure is the answer. Pooled connections belong to the executor that made
//   them: a client that reuses connections must be used from one io_context, which outlives
//   it. Stream never pools: it keeps its connection for the length of its window.
// - Errors carry EgressFailure (egress_error.hpp); the client never throws for network
//   failures.
//
// Thread safety: every member may be called from any thread at once; coroutines run on the
// caller's executor.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/net/url_guard.hpp"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace a2ad::net {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds total_timeout{10000};
  size_t max_response_bytes = size_t{1024} * 1024;
  std::string user_agent = "a2ad";  // a request's own User-Agent header wins
  /// Keep connections alive and reuse them (above); off: one request per connection.
  bool reuse_connections = false;
  /// How long a connection may wait idle in the pool (below the 5 s after which Node.js
  /// servers close theirs); at most max_idle connections wait, 8 per origin.
  std::chrono::milliseconds idle_timeout{4000};
  size_t max_idle = 64;
};

struct HttpRequest {
  std::string method = "GET";  // any HTTP method token (GET, POST, PUT, DELETE, HEAD, ...)
  std::string url;             // absolute; Fetch vets it, Send ignores it
  HeaderList headers;          // Host, Content-Length and Connection are set by the client
  std::string body;
  // Unset: HttpClientOptions' values; redirects: EgressPolicy::redirects.
  std::optional<std::chrono::milliseconds> connect_timeout;
  std::optional<std::chrono::milliseconds> total_timeout;
  std::optional<size_t> max_response_bytes;
  std::optional<RedirectPolicy> redirects;
  /// The request may reach the server twice (it reads, or the server recognizes a repeat,
  /// as an A2A peer does by messageId): sent again on a fresh connection after a reused one
  /// failed before answering. Idempotent methods and requests with an Idempotency-Key
  /// header are replayable anyway.
  bool replayable = false;
};

struct HttpResponse {
  int status = 0;
  HeaderList headers;  // as received, in order
  std::string body;
  std::string url;    // the URL that gave this answer (the last Location followed)
  int redirects = 0;  // redirects followed to get here
  /// The first header of that name (case-insensitive); "" if absent.
  std::string_view Header(std::string_view name) const;
};

/// How HttpClient::Stream ended after the head arrived.
struct StreamEnd {
  HttpResponse head;  // status and headers; the body only when the status is not 2xx
  enum class How { kEnded, kStopped, kWindowClosed } how = How::kEnded;
};

class HttpClient {
 public:
  /// Uses guard.policy() (ca_file, redirects). kInvalidParams when the CA file cannot be
  /// loaded (so a wrong --egress-ca-file fails at startup). `guard` must outlive the client.
  static core::Result<std::unique_ptr<HttpClient>> Create(const UrlGuard& guard,
                                                          HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  /// Vets request.url, then one exchange, following redirects as the request's policy allows.
  boost::asio::awaitable<core::Result<HttpResponse>> Fetch(HttpRequest request) const;

  /// One exchange with `target` (vetted by the caller; request.url is not used and redirects
  /// are never followed).
  boost::asio::awaitable<core::Result<HttpResponse>> Send(const VettedTarget& target,
                                                          HttpRequest request) const;

  /// A response read as it arrives (server-sent events): vets request.url (redirects are
  /// never followed), sends, reads the head, then hands each piece of a 2xx body to
  /// `on_data` as it comes until the body ends (kEnded), `on_data` returns false (kStopped),
  /// or request.total_timeout passes (kWindowClosed: the caller opens it again if it wants
  /// more). A body that is not 2xx is read whole (up to max_response_bytes) into head.body.
  /// The window counts from the connect: a head that does not arrive within it is an
  /// error (kTimeout), as is a connection lost mid-body (kIo).
  boost::asio::awaitable<core::Result<StreamEnd>> Stream(
      HttpRequest request, std::function<bool(std::string_view)> on_data) const;

  const UrlGuard& guard() const { return guard_; }
  const HttpClientOptions& options() const { return options_; }

 private:
  struct Tls;
  struct Pool;  // idle connections (reuse_connections)
  boost::asio::ssl::context& TlsContext() const;  // with the system roots loaded
  using Deadline = std::chrono::steady_clock::time_point;
  HttpClient(const UrlGuard& guard, HttpClientOptions options);
  boost::asio::awaitable<core::Result<HttpResponse>> Exchange(const VettedTarget& target,
                                                              const HttpRequest& request,
                                                              Deadline deadline) const;
  template <class R, class Fn>
  boost::asio::awaitable<R> OverRequest(const VettedTarget& target, const HttpRequest& request,
                                        Deadline deadline, Fn talk) const;

  const UrlGuard& guard_;
  HttpClientOptions options_;
  std::unique_ptr<Tls> tls_;
  std::unique_ptr<Pool> pool_;  // null unless options_.reuse_connections
};

}  // namespace a2ad::net
