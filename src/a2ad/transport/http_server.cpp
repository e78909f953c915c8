#include "a2ad/transport/http_server.hpp"

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <mutex>
#include <tuple>
#include <unordered_set>

#include "a2ad/core/log.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using core::Error;
using core::ErrorCode;

class ConnSink;

namespace {

struct Conn {
  explicit Conn(tcp::socket s) : stream(std::move(s)) {}
  beast::tcp_stream stream;
  bool busy = false;             // inside a request; touched only on the connection's strand
  std::weak_ptr<ConnSink> sink;  // set while streaming; touched only on the strand
};

std::string TransportErrorBody(int status, std::string_view message) {
  // A JSON-RPC shaped error: every A2A client on our JSON-RPC endpoint understands it, and
  // it still reads clearly elsewhere. id is null because the request was never parsed.
  std::string body = R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":")";
  for (char ch : message) {
    if (ch == '"' || ch == '\\') body += '\\';
    body += ch;
  }
  body += R"(","data":{"httpStatus":")" + std::to_string(status) + R"("}}})";
  return body;
}

}  // namespace

/// The SSE sink of one connection. A read kept pending on the socket notices the client
/// going away (a streaming client sends nothing) while the stream waits for events. With
/// `chunked`, every write is one HTTP/1.1 chunk, so the response can end with the last
/// chunk and the connection serve the next request (keep-alive) instead of closing.
class ConnSink final : public SseSink, public std::enable_shared_from_this<ConnSink> {
 public:
  ConnSink(std::shared_ptr<Conn> c, bool chunked)
      : c_(std::move(c)), chunked_(chunked), watch_done_(c_->stream.get_executor()) {
    watch_done_.expires_at(asio::steady_timer::time_point::max());
  }

  void Watch() {
    auto self = shared_from_this();
    c_->stream.socket().async_read_some(
        asio::buffer(scratch_), [self](boost::system::error_code ec, size_t n) {
          if (!ec) {
            // Bytes from a streaming client: a pipelined next request (kept for the
            // session once the stream is over), or noise. Keep watching.
            if (self->early_.size() + n > sizeof self->scratch_ * 16) {
              self->Gone();  // a client that talks over its stream: stop
              self->WatchFinished();
              return;
            }
            self->early_.append(self->scratch_, n);
            self->Watch();
            return;
          }
          if (!(ec == asio::error::operation_aborted && self->unwatching_)) self->Gone();
          self->WatchFinished();
        });
  }

  void WatchFinished() {
    watch_finished_ = true;
    watch_done_.cancel();
  }

  /// After the stream: stops the watching read and waits for it to finish. false if the
  /// client is gone (then the connection closes). The bytes it read arrive in `early`.
  asio::awaitable<bool> StopWatching(std::string& early) {
    unwatching_ = true;
    if (!watch_finished_) {  // same strand as the watch handler: no race with this check
      boost::system::error_code ignored;
      c_->stream.socket().cancel(ignored);
      (void)co_await watch_done_.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    early = std::move(early_);
    co_return !gone_;
  }

  asio::awaitable<bool> Write(std::string bytes) override {
    if (gone_) co_return false;
    c_->stream.expires_after(std::chrono::seconds(30));  // a client that stops reading
    boost::system::error_code ec;
    if (chunked_) {
      char size[24];
      const int len = std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
      const std::array<asio::const_buffer, 3> parts{asio::buffer(size, static_cast<size_t>(len)),
                                                    asio::buffer(bytes), asio::buffer("\r\n", 2)};
      std::tie(ec, std::ignore) =
          co_await asio::async_write(c_->stream, parts, asio::as_tuple(asio::use_awaitable));
    } else {
      std::tie(ec, std::ignore) = co_await asio::async_write(c_->stream, asio::buffer(bytes),
                                                             asio::as_tuple(asio::use_awaitable));
    }
    c_->stream.expires_never();
    if (ec) Gone();
    co_return !ec;
  }

  void OnClientGone(std::function<void()> f) override {
    if (gone_) {
      f();
    } else {
      on_gone_ = std::move(f);
    }
  }

  void OnServerStopping(std::function<void()> f) override {
    if (stopping_) {
      f();
    } else {
      on_stopping_ = std::move(f);
    }
  }

  void Stopping() {
    if (stopping_) return;
    stopping_ = true;
    if (on_stopping_) std::exchange(on_stopping_, nullptr)();
  }

 private:
  void Gone() {
    if (gone_) return;
    gone_ = true;
    if (on_gone_) std::exchange(on_gone_, nullptr)();
  }

  std::shared_ptr<Conn> c_;
  const bool chunked_;
  asio::steady_timer watch_done_;  // cancelled when the watching read has finished
  bool unwatching_ = false;
  bool watch_finished_ = false;
  std::string early_;  // bytes the watching read got
  char scratch_[512];
  bool gone_ = false;
  bool stopping_ = false;
  std::function<void()> on_gone_;
  std::function<void()> on_stopping_;
};

struct HttpServer::Impl : std::enable_shared_from_this<Impl> {
  Impl(asio::io_context& io_, HttpHandler h, HttpServerOptions o)
      : io(io_), handler(std::move(h)), opts(o), acceptor(asio::make_strand(io_)) {}

  asio::io_context& io;
  HttpHandler handler;
  HttpServerOptions opts;
  tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::unordered_set<std::shared_ptr<Conn>> conns;

  asio::awaitable<void> AcceptLoop() {
    auto self = shared_from_this();
    for (;;) {
      auto [ec, sock] = co_await acceptor.async_accept(asio::make_strand(io),
                                                       asio::as_tuple(asio::use_awaitable));
      if (stopping || ec == asio::error::operation_aborted) co_return;
      if (ec) {
        // Out of descriptors and the like: log, back off briefly, keep serving.
        core::LogWarn("accept failed: " + ec.message());
        asio::steady_timer t(acceptor.get_executor(), std::chrono::milliseconds(50));
        co_await t.async_wait(asio::as_tuple(asio::use_awaitable));
        continue;
      }
      boost::system::error_code ignored;
      sock.set_option(tcp::no_delay(true), ignored);
      auto conn = std::make_shared<Conn>(std::move(sock));
      {
        std::lock_guard lock(mu);
        conns.insert(conn);
      }
      asio::co_spawn(conn->stream.get_executor(), Session(conn),
                     [self, conn](std::exception_ptr ep) {
                       if (ep) core::LogError("connection coroutine ended with an exception");
                       std::lock_guard lock(self->mu);
                       self->conns.erase(conn);
                     });
    }
  }

  static http::response<http::string_body> ToBeast(HttpResponse&& r, unsigned version,
                                                   bool keep_alive) {
    http::response<http::string_body> res{static_cast<http::status>(r.status), version};
    res.set(http::field::server, "a2ad");
    if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res.set(k, v);
    res.body() = std::move(r.body);
    res.keep_alive(keep_alive);
    res.prepare_payload();
    return res;
  }

  asio::awaitable<void> WriteError(Conn& c, int status, std::string message) {
    HttpResponse r;
    r.status = status;
    r.body = TransportErrorBody(status, message);
    auto res = ToBeast(std::move(r), 11, false);
    c.stream.expires_after(std::chrono::seconds(5));
    co_await http::async_write(c.stream, res, asio::as_tuple(asio::use_awaitable));
  }

  asio::awaitable<void> Session(std::shared_ptr<Conn> c) {
    beast::flat_buffer buffer;
    for (;;) {
      if (stopping) break;
      http::request_parser<http::string_body> parser;
      parser.body_limit(opts.body_limit);
      parser.header_limit(static_cast<std::uint32_t>(opts.header_limit));
      c->stream.expires_after(buffer.size() ? opts.header_timeout : opts.idle_timeout);
      auto [ec_h, n_h] = co_await http::async_read_header(c->stream, buffer, parser,
                                                          asio::as_tuple(asio::use_awaitable));
      (void)n_h;
      if (ec_h == http::error::header_limit) {
        co_await WriteError(
            *c, 431, "request header larger than " + std::to_string(opts.header_limit) + " bytes");
        break;
      }
      if (ec_h == http::error::body_limit) {
        co_await WriteError(
            *c, 413,
            "request body exceeds the limit of " + std::to_string(opts.body_limit) + " bytes");
        break;
      }
      if (ec_h) {
        if (ec_h != http::error::end_of_stream && ec_h != beast::error::timeout &&
            ec_h != asio::error::operation_aborted && ec_h != asio::error::connection_reset &&
            ec_h != asio::error::eof && !stopping) {
          co_await WriteError(*c, 400, "malformed HTTP request: " + ec_h.message());
        }
        break;
      }
      c->busy = true;
      c->stream.expires_after(opts.header_timeout);
      auto [ec_b, n_b] =
          co_await http::async_read(c->stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
      (void)n_b;
      if (ec_b == http::error::body_limit) {
        co_await WriteError(
            *c, 413,
            "request body exceeds the limit of " + std::to_string(opts.body_limit) + " bytes");
        break;
      }
      if (ec_b) {
        if (ec_b == beast::error::timeout)
          co_await WriteError(*c, 408, "request not received in time");
        else if (ec_b != asio::error::eof && ec_b != asio::error::connection_reset)
          co_await WriteError(*c, 400, "malformed HTTP request: " + ec_b.message());
        break;
      }
      auto req = parser.release();
      HttpRequest in;
      in.method = std::string(req.method_string());
      in.target = std::string(req.target());
      in.headers.reserve(8);
      for (const auto& f : req)
        in.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
      in.body = std::move(req.body());
      const bool keep_alive = req.keep_alive();
      const unsigned version = req.version();
      c->stream.expires_never();
      HttpResponse out;
      try {
        out = co_await handler(std::move(in));
      } catch (const std::exception& e) {
        core::LogError(std::string("handler threw: ") + e.what());
        out = JsonResponse(500, TransportErrorBody(500, "internal error"));
      }
      if (out.stream) {
        http::response<http::empty_body> head{http::status::ok, version};
        head.set(http::field::server, "a2ad");
        head.set(http::field::content_type, "text/event-stream");
        head.set(http::field::cache_control, "no-cache");
        head.set("X-Accel-Buffering", "no");
        for (auto& [k, v] : out.headers) head.set(k, v);
        // HTTP/1.1: chunked, so the stream ends with the last chunk and the connection stays
        // for the next request. Otherwise (HTTP/1.0, Connection: close, shutting down) the
        // body ends when the connection closes.
        const bool chunked = version >= 11 && keep_alive && !stopping;
        if (chunked)
          head.chunked(true);
        else
          head.keep_alive(false);
        http::response_serializer<http::empty_body> sr{head};
        c->stream.expires_after(std::chrono::seconds(30));
        auto [ec_s, n_s] =
            co_await http::async_write_header(c->stream, sr, asio::as_tuple(asio::use_awaitable));
        (void)n_s;
        c->stream.expires_never();
        if (!ec_s) {
          auto sink = std::make_shared<ConnSink>(c, chunked);
          c->sink = sink;
          sink->Watch();
          if (stopping) sink->Stopping();
          bool completed = true;
          try {
            co_await out.stream(*sink);
          } catch (const std::exception& e) {
            core::LogError(std::string("stream threw: ") + e.what());
            completed = false;
          }
          if (chunked && completed && !stopping) {
            std::string early;
            if (co_await sink->StopWatching(early)) {
              c->sink.reset();
              c->stream.expires_after(std::chrono::seconds(30));
              auto [ec_e, n_e] = co_await asio::async_write(c->stream, asio::buffer("0\r\n\r\n", 5),
                                                            asio::as_tuple(asio::use_awaitable));
              (void)n_e;
              c->stream.expires_never();
              if (!ec_e) {
                // A request the client sent during the stream is the next one.
                const size_t n =
                    asio::buffer_copy(buffer.prepare(early.size()), asio::buffer(early));
                buffer.commit(n);
                c->busy = false;
                continue;
              }
            }
          }
        }
        break;
      }
      const bool again = keep_alive && !stopping;
      auto res = ToBeast(std::move(out), version, again);
      c->stream.expires_after(std::chrono::seconds(30));
      auto [ec_w, n_w] =
          co_await http::async_write(c->stream, res, asio::as_tuple(asio::use_awaitable));
      (void)n_w;
      c->busy = false;
      if (ec_w || !again) break;
    }
    boost::system::error_code ignored;
    c->stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    c->stream.close();
  }
};

HttpServer::HttpServer(asio::io_context& io, HttpHandler handler, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(handler), options)) {}

HttpServer::~HttpServer() { Stop(); }

core::Result<uint16_t> HttpServer::Listen(const std::string& host, uint16_t port) {
  boost::system::error_code ec;
  asio::ip::address addr = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec)
    return Error(ErrorCode::kInvalidParams, "listen address '" + host + "' is not an IP address");
  tcp::endpoint ep(addr, port);
  auto& a = impl_->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Error(ErrorCode::kUnavailable,
                 "cannot listen on " + host + ":" + std::to_string(port) + ": " + ec.message());
  return a.local_endpoint().port();
}

void HttpServer::Start() {
  auto impl = impl_;
  asio::co_spawn(impl->acceptor.get_executor(), impl->AcceptLoop(), [impl](std::exception_ptr ep) {
    if (ep) core::LogError("accept loop ended with an exception");
  });
}

void HttpServer::Stop() {
  auto impl = impl_;
  if (impl->stopping.exchange(true)) return;
  asio::post(impl->acceptor.get_executor(), [impl] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
  std::lock_guard lock(impl->mu);
  for (const auto& c : impl->conns) {
    asio::post(c->stream.get_executor(), [c] {
      if (auto sink = c->sink.lock()) {
        sink->Stopping();  // a stream: it sends a last event and ends
      } else if (!c->busy) {
        c->stream.cancel();  // idle: end its read now; busy ones close after replying
      }
    });
  }
}

size_t HttpServer::open_connections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->conns.size();
}

}  // namespace a2ad::transport
