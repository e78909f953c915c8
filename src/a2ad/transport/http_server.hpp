#pragma once
// HTTP/1.1 server on Boost.Beast with C++20 coroutines: keep-alive, a request body limit
// (413 past it), a header timeout, an idle keep-alive timeout, and graceful shutdown (stop
// accepting, let in-flight requests finish and answer with `Connection: close`, close idle
// connections, then report drained).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/transport/http_types.hpp"

namespace a2ad::transport {

struct HttpServerOptions {
  size_t body_limit = 1024 * 1024;                  // bytes; larger bodies get 413
  size_t header_limit = 16 * 1024;                  // bytes of request head; larger get 431
  std::chrono::milliseconds header_timeout{10000};  // to receive a full request once started
  std::chrono::milliseconds idle_timeout{60000};    // keep-alive connection with no request
};

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
  /// Number of open connections (0 once drained after Stop()).
  size_t open_connections() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace a2ad::transport
