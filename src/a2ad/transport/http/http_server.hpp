#pragma once
// HTTP/1.1 server on Boost.Beast with C++20 coroutines: keep-alive, a request body limit
// (413 past it), timeouts for the idle wait, the request head and the body (408), caps on
// connections overall and per client address (503), and graceful shutdown (stop accepting,
// let in-flight requests finish and answer with `Connection: close`, close idle connections,
// then report drained). Errors the server answers itself are shaped by
// HttpServerOptions::transport_error.
//
// HTTPS (HttpServerOptions::tls): every connection starts with a TLS handshake (TLS 1.2+) that
// must complete within handshake_timeout, else the connection is closed; a failed handshake
// (a plain HTTP client, an untrusted client certificate, a scanner) is logged at debug and
// closed without an answer. Then everything above holds as on plain TCP (a connection over a
// cap is given kRefusalRead for its handshake and request line before its 503). With mutual
// TLS the verified client certificate's subject is in HttpRequest::client_cert_subject of every
// request of the connection. Connections end with a TLS close_notify exchange (bounded).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/net/cidr.hpp"
#include "a2ad/transport/http/forwarded.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace boost::asio::ssl {
class context;
}

namespace a2ad::transport {

struct HttpServerOptions {
  size_t body_limit = size_t{1024} * 1024;  // bytes; larger bodies get 413
  size_t header_limit = size_t{16} * 1024;  // bytes of request head; larger get 431
  // A connection waits this long for the first byte of a request (a new connection and
  // between keep-alive requests); then it is closed without an answer.
  std::chrono::milliseconds idle_timeout{60000};
  // From the first byte of a request on, its whole head must arrive within this; else 408.
  std::chrono::milliseconds header_timeout{10000};
  // From the end of the head on, the whole body must arrive within this; else 408.
  std::chrono::milliseconds body_timeout{30000};
  // Open connections; one more is answered 503 (Retry-After: 1) and closed.
  size_t max_connections = 10000;
  // Open connections from one client IP address (an IPv4-mapped IPv6 address counts as its
  // IPv4 address); one more is answered 503 and closed.
  size_t max_connections_per_address = 256;
  // Reverse proxies and load balancers whose connections are not capped by address; each of
  // their requests is counted against the client address they forward (forwarded.hpp).
  std::vector<net::Cidr> trusted_proxies;
  ForwardedHeader forwarded_header = ForwardedHeader::kAuto;  // which header they set
  // Shapes the errors the server answers itself (400, 408, 413, 431, 500, 503); empty means
  // DefaultTransportError.
  TransportErrorFn transport_error;
  // Serve HTTPS with this context (tls_context.hpp makes it); null serves plain HTTP. Shared
  // by every connection, read-only.
  std::shared_ptr<boost::asio::ssl::context> tls;
  // TLS: a new connection's handshake must complete within this (it counts against the caps
  // meanwhile); else the connection is closed unanswered.
  std::chrono::milliseconds handshake_timeout{10000};
};

/// The default TransportErrorFn: OpenWOP's closed error envelope,
/// `{"error":"<code>","message":"<message>"}`, whatever the path.
HttpResponse DefaultTransportError(std::string_view path, int status, std::string_view code,
                                   std::string message);

using HttpHandler = std::function<boost::asio::awaitable<HttpResponse>(HttpRequest)>;

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpHandler handler, HttpServerOptions options);
  ~HttpServer();

  /// Binds and listens on host:port (port 0 picks a free port). Returns the bound port.
  /// Errors: kUnavailable with the system message (address in use, bad address, ...).
  core::Result<uint16_t> Listen(const std::string& host, uint16_t port);
  /// Starts accepting (connections are served on the io_context's threads).
  void Start();
  /// Stops accepting and closes idle connections; connections in a request finish it and
  /// then close. Thread-safe; idempotent.
  void Stop();
  /// Number of open connections (0 once drained after Stop()). Connections being refused
  /// over a cap are not counted.
  size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace a2ad::transport
