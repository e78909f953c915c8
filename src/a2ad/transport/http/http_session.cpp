#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/serializer.hpp>
#include <string>

#include "a2ad/core/log.hpp"
#include "a2ad/transport/http/forwarded.hpp"
#include "a2ad/transport/http/http_server_impl.hpp"
#include "a2ad/transport/http/request_line.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace http_conn;

namespace {

// Bytes the first read of a request asks for (the idle wait ends with it).
constexpr size_t kFirstRead = 4096;
// A connection's read buffer holds at most a request head and this much more.
constexpr size_t kReadSlack = size_t{128} * 1024;

// The bytes of a response's head (its status line, fields and the blank line after them).
std::string HeadText(const http::response<http::empty_body>& head) {
  http::response_serializer<http::empty_body> sr{head};
  sr.split(true);
  std::string text;
  boost::system::error_code ec;
  while (!ec && !sr.is_header_done()) {
    size_t n = 0;
    sr.next(ec, [&](boost::system::error_code&, const auto& buffers) {
      for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers);
           ++it) {
        const asio::const_buffer piece = *it;
        text.append(static_cast<const char*>(piece.data()), piece.size());
        n += piece.size();
      }
    });
    sr.consume(n);
  }
  return text;
}

}  // namespace

asio::awaitable<void> HttpServer::Impl::Session(std::shared_ptr<Conn> c) {
  // Bounded: a head fits (header_limit), and so do a read's worth of body bytes or
  // pipelined requests. Without a bound, a chunk size line or trailer that never ends
  // (Beast limits neither) would grow it until the body timeout; past it the read fails
  // (buffer_overflow, answered 400).
  beast::flat_buffer buffer(opts.header_limit + kReadSlack);
  bool linger = false;  // an error answer was written before the request was read
  if (stopping || !co_await Handshake(*c, opts.handshake_timeout)) {
    ReleaseAddressOf(c);
    c->stream.close();
    co_return;
  }
  for (;;) {
    if (stopping) break;
    c->stream.expires_never();  // reads run under read_deadline, not the stream's expiry
    if (buffer.size() == 0) {
      // Between requests: up to idle_timeout for the first byte; then close, unanswered.
      c->ArmReadDeadline(opts.idle_timeout);
      auto [ec, n] = co_await ReadSome(*c, buffer.prepare(kFirstRead));
      c->DisarmReadDeadline();
      if (ec) break;
      buffer.commit(n);
    }
    // From the first byte on, the whole head within header_timeout.
    RequestParser parser;
    parser.body_limit(opts.body_limit);
    parser.header_limit(static_cast<std::uint32_t>(opts.header_limit));
    c->ArmReadDeadline(opts.header_timeout);
    const auto ec_h = co_await ReadRequest(*c, buffer, parser, false);
    c->DisarmReadDeadline();
    if (ec_h) {
      linger = true;
      if (ec_h == http::error::header_limit) {
        co_await WriteError(
            *c, PathOfFailedHead(parser, buffer, opts.header_limit), 431,
            "request_header_too_large",
            "request header larger than " + std::to_string(opts.header_limit) + " bytes");
      } else if (ec_h == http::error::body_limit) {  // by its Content-Length
        co_await WriteError(
            *c, PathOfFailedHead(parser, buffer, opts.header_limit), 413, "payload_too_large",
            "request body exceeds the limit of " + std::to_string(opts.body_limit) + " bytes");
      } else if (ec_h == asio::error::operation_aborted && c->timed_out) {
        co_await WriteError(*c, PathOfFailedHead(parser, buffer, opts.header_limit), 408,
                            "request_timeout", "request head not received in time");
      } else if (!IsGone(ec_h) && !stopping) {
        co_await WriteError(*c, PathOfFailedHead(parser, buffer, opts.header_limit), 400,
                            "validation_error", "malformed HTTP request: " + ec_h.message());
      } else {
        linger = false;
      }
      break;
    }
    // From the end of the head on, the whole body within body_timeout.
    c->busy = true;
    c->ArmReadDeadline(opts.body_timeout);
    const auto ec_b = co_await ReadRequest(*c, buffer, parser, true);
    c->DisarmReadDeadline();
    if (ec_b) {
      linger = true;
      std::string path(PathOfTarget(parser.get().target()));
      if (ec_b == http::error::body_limit) {
        co_await WriteError(
            *c, std::move(path), 413, "payload_too_large",
            "request body exceeds the limit of " + std::to_string(opts.body_limit) + " bytes");
      } else if (ec_b == asio::error::operation_aborted && c->timed_out) {
        co_await WriteError(*c, std::move(path), 408, "request_timeout",
                            "request body not received in time");
      } else if (ec_b != asio::error::eof && ec_b != asio::error::connection_reset) {
        co_await WriteError(*c, std::move(path), 400, "validation_error",
                            "malformed HTTP request: " + ec_b.message());
      } else {
        linger = false;
      }
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
    in.client_cert_subject = c->client_subject;
    // Released when this request is answered (before its answer is written, so a client that
    // has the answer is no longer counted), or when its stream ends.
    ForwardedSlot forwarded_slot;
    bool over_cap = false;
    if (c->trusted_proxy) {
      const auto client =
          ForwardedClient(c->peer, in.headers, opts.trusted_proxies, opts.forwarded_header);
      if (client) {
        in.client_address = client->to_string();
        over_cap = !HoldForwarded(forwarded_slot, *client);
      } else {
        in.client_address = c->peer.to_string();
      }
    } else {
      in.client_address = c->peer.to_string();
    }
    const bool keep_alive = req.keep_alive();
    const bool head_request = req.method() == http::verb::head;
    const unsigned version = req.version();
    HttpResponse out;
    if (over_cap) {
      // The proxy's connection stays: only this client's request is refused.
      out = TransportError(PathOfTarget(req.target()), 503, "service_unavailable",
                           "too many concurrent requests from one client address (" +
                               in.client_address + "); retry later");
      out.status = 503;
      out.headers.emplace_back("Retry-After", "1");
    } else {
      try {
        // The thread is handed back before the handler runs, so the other connections'
        // requests that are ready are read first. Beast's composed reads did this (twice) for a
        // request that needed no read, and without it the echo send at 64 connections was
        // about 6% slower while one connection gained about 5% (bench/RESULTS.md, stop 47).
        co_await asio::post(c->stream.get_executor(), asio::use_awaitable);
        out = co_await handler(std::move(in));
      } catch (const std::exception& e) {
        core::LogError(std::string("handler threw: ") + e.what());
        out = TransportError(PathOfTarget(req.target()), 500, "internal_error", "internal error");
        out.status = 500;
      }
      // A store that is unavailable (a database being restarted, a lost connection) is
      // worth a retry: say when.
      if (out.status == 503 &&
          std::none_of(out.headers.begin(), out.headers.end(),
                       [](const auto& h) { return boost::beast::iequals(h.first, "Retry-After"); }))
        out.headers.emplace_back("Retry-After", "1");
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
      // The head goes out with the stream's first write (ConnSink).
      auto sink = std::make_shared<ConnSink>(c, chunked, HeadText(head));
      c->sink = sink;
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
          if (co_await sink->Finish(true) && buffer.size() + early.size() <= buffer.max_size()) {
            // A request the client sent during the stream is the next one.
            const size_t n = asio::buffer_copy(buffer.prepare(early.size()), asio::buffer(early));
            buffer.commit(n);
            c->busy = false;
            continue;
          }
        }
      } else {
        // A head still held back, and the last chunk of a stream that ended (it was cut short
        // by the server stopping, say): the response is whole before the connection closes.
        (void)co_await sink->Finish(chunked && completed);
      }
      break;
    }
    forwarded_slot.Release();
    const bool again = keep_alive && !stopping;
    auto res = ToBeast(std::move(out), version, again);
    // HEAD: the head a GET would get (its Content-Length included), and no body (RFC 9110
    // §9.3.2): a body here would be read as the start of the next answer.
    if (head_request) res.body().clear();
    http::response_serializer<http::string_body> sr{res};
    const auto ec_w = co_await WriteMessage(*c, sr, false, kWriteStall);
    c->busy = false;
    if (ec_w || !again) break;
  }
  ReleaseAddressOf(c);
  if (linger) {
    co_await LingeringClose(*c);
  } else {
    co_await Close(*c);
  }
}

}  // namespace a2ad::transport
