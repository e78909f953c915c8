#include "a2ad/transport/http/http_server.hpp"

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_set>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/transport/http/conn_stream.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http/forwarded.hpp"
#include "a2ad/transport/http/request_line.hpp"
#include "a2ad/transport/http/tls_context.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using core::Error;
using core::ErrorCode;

class ConnSink;

namespace {

// Bytes the first read of a request asks for (the idle wait ends with it).
constexpr size_t kFirstRead = 4096;
// A connection's read buffer holds at most a request head and this much more.
constexpr size_t kReadSlack = size_t{128} * 1024;
// After a read deadline passed, the pending read is cancelled again this often until the
// session has seen it end: a composed read (Beast's async_read_header) may start its next
// socket read just after a cancel found nothing pending.
constexpr std::chrono::milliseconds kRecancelEvery{20};
// An error answer's write; a client that does not read it is cut off.
constexpr std::chrono::seconds kErrorWriteTimeout{5};
// Lingering close after an error answer: what the client still sends is read and dropped
// for at most this long and this many bytes (see LingeringClose).
constexpr std::chrono::seconds kLinger{1};
constexpr size_t kLingerBytes = size_t{4} * 1024 * 1024;
// A connection over a cap is given this long to send its request line before the 503.
constexpr std::chrono::seconds kRefusalRead{1};
// Refusals in progress (each holds a socket for up to about 2 s); past this many, a flood
// of connections over the caps is closed without an answer so that refusing cannot
// exhaust descriptors either.
constexpr size_t kMaxRefusing = 1024;
// A refused connection is logged at most this often (with the count since the last line).
constexpr std::chrono::seconds kRefusalLogEvery{1};
// TLS close_notify exchange at the end of a connection; a client that does not answer it is
// cut off.
constexpr std::chrono::seconds kTlsShutdown{1};

// A client IP address as the caps count it: IPv4 as its IPv4-mapped IPv6 address, so that
// 192.0.2.1 and ::ffff:192.0.2.1 are one client.
using AddressKey = asio::ip::address_v6::bytes_type;

AddressKey KeyOf(const asio::ip::address& a) {
  if (a.is_v4()) return asio::ip::make_address_v6(asio::ip::v4_mapped, a.to_v4()).to_bytes();
  return a.to_v6().to_bytes();
}

struct Conn : std::enable_shared_from_this<Conn> {
  Conn(tcp::socket s, const asio::ip::address& peer_, ssl::context* tls, bool trusted_proxy_)
      : io(std::move(s), tls),
        stream(io.tcp()),
        read_deadline(stream.get_executor()),
        peer(peer_),
        address(KeyOf(peer_)),
        trusted_proxy(trusted_proxy_) {}
  ConnStream io;              // reads and writes: TCP or TLS
  beast::tcp_stream& stream;  // the TCP stream under `io`: expiry, cancel, close
  // The deadline of the current read. Unlike the tcp_stream's own expiry (which closes the
  // socket, so no 408 could follow), it only cancels the read and sets `timed_out`.
  asio::steady_timer read_deadline;
  const asio::ip::address peer;
  const AddressKey address;
  // A trusted proxy (forwarded.hpp): not capped by address; its requests are, by the address
  // each forwards.
  const bool trusted_proxy;
  bool timed_out = false;        // the current read's deadline passed; on the strand
  uint64_t deadline_gen = 0;     // tells a stale deadline handler from the armed one
  bool busy = false;             // inside a request; touched only on the connection's strand
  std::weak_ptr<ConnSink> sink;  // set while streaming; touched only on the strand
  std::string client_subject;    // TLS: the verified client certificate's subject, or ""

  /// Arms the read deadline `d` from now. Call on the strand; pair with DisarmReadDeadline.
  void ArmReadDeadline(std::chrono::steady_clock::duration d) {
    timed_out = false;
    read_deadline.expires_after(d);
    WaitReadDeadline(++deadline_gen);
  }

  /// Ends the read deadline (a stale expiry that is already queued is ignored).
  void DisarmReadDeadline() {
    ++deadline_gen;
    read_deadline.cancel();
  }

 private:
  void WaitReadDeadline(uint64_t gen) {
    read_deadline.async_wait([weak = weak_from_this(), gen](boost::system::error_code ec) {
      auto self = weak.lock();
      if (ec || !self || self->deadline_gen != gen) return;
      self->timed_out = true;
      boost::system::error_code ignored;
      self->stream.socket().cancel(ignored);
      self->read_deadline.expires_after(kRecancelEvery);
      self->WaitReadDeadline(gen);
    });
  }
};

/// The path of a request whose head could not be read to its end: the parser's once it has
/// parsed the request line, else the one of the line at the start of `buffer`.
std::string PathOfFailedHead(const http::request_parser<http::string_body>& parser,
                             const beast::flat_buffer& buffer, size_t header_limit) {
  if (!parser.get().target().empty()) return std::string(PathOfTarget(parser.get().target()));
  return PathOfRequestLine({static_cast<const char*>(buffer.data().data()), buffer.size()},
                           header_limit);
}

/// A client that went away or a read ended by Stop(): no answer is written.
bool IsGone(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
         ec == beast::error::timeout;
}

// A write that waits longer than this for the client to read is cut off (the tcp_stream's
// expiry closes the socket).
constexpr std::chrono::seconds kWriteStall{30};

/// Writes `buffers`: what the socket takes at once directly (ConnStream::TryWrite), the rest
/// asynchronously within `limit`.
template <class Buffers>
asio::awaitable<boost::system::error_code> WriteAll(Conn& c, const Buffers& buffers,
                                                    std::chrono::steady_clock::duration limit) {
  boost::system::error_code ec;
  const size_t wrote = c.io.TryWrite(buffers, ec);
  if (ec || wrote == asio::buffer_size(buffers)) co_return ec;
  beast::buffers_suffix<Buffers> rest(buffers);
  rest.consume(wrote);
  c.stream.expires_after(limit);
  std::tie(ec, std::ignore) =
      co_await asio::async_write(c.io, rest, asio::as_tuple(asio::use_awaitable));
  c.stream.expires_never();
  co_return ec;
}

/// WriteAll for an HTTP message (its head only with `head_only`) through its serializer.
template <class Serializer>
asio::awaitable<boost::system::error_code> WriteMessage(Conn& c, Serializer& sr, bool head_only,
                                                        std::chrono::steady_clock::duration limit) {
  boost::system::error_code ec;
  if (head_only) sr.split(true);
  const auto done = [&] { return head_only ? sr.is_header_done() : sr.is_done(); };
  while (!done()) {
    size_t asked = 0, wrote = 0;
    sr.next(ec, [&](boost::system::error_code& write_ec, const auto& buffers) {
      asked = beast::buffer_bytes(buffers);
      wrote = c.io.TryWrite(buffers, write_ec);
      sr.consume(wrote);
    });
    if (ec) co_return ec;
    if (asked == 0 || wrote < asked) break;  // the socket is full (or TLS): the rest waits
  }
  if (done()) co_return ec;
  c.stream.expires_after(limit);
  if (head_only)
    std::tie(ec, std::ignore) =
        co_await http::async_write_header(c.io, sr, asio::as_tuple(asio::use_awaitable));
  else
    std::tie(ec, std::ignore) =
        co_await http::async_write(c.io, sr, asio::as_tuple(asio::use_awaitable));
  c.stream.expires_never();
  co_return ec;
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
    c_->io.async_read_some(asio::buffer(scratch_), [self](boost::system::error_code ec, size_t n) {
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
    boost::system::error_code ec;
    if (chunked_) {
      char size[24];
      const int len = std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
      const std::array<asio::const_buffer, 3> parts{asio::buffer(size, static_cast<size_t>(len)),
                                                    asio::buffer(bytes), asio::buffer("\r\n", 2)};
      ec = co_await WriteAll(*c_, parts, kWriteStall);
    } else {
      ec = co_await WriteAll(*c_, asio::const_buffer(asio::buffer(bytes)), kWriteStall);
    }
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
      : io(io_), handler(std::move(h)), opts(std::move(o)), acceptor(asio::make_strand(io_)) {}

  asio::io_context& io;
  HttpHandler handler;
  HttpServerOptions opts;
  tcp::acceptor acceptor;
  std::atomic<bool> stopping{false};
  mutable std::mutex mu;
  std::unordered_set<std::shared_ptr<Conn>> conns;  // guarded by mu
  std::map<AddressKey, size_t> per_address;         // open connections per client; mu
  std::atomic<size_t> refusing{0};                  // Refusal coroutines running
  // Refusal logging; touched only by the accept loop (on the acceptor's strand).
  std::chrono::steady_clock::time_point last_refusal_log{};
  size_t refused_since_log = 0;

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
      boost::system::error_code ep_ec;
      const tcp::endpoint remote = sock.remote_endpoint(ep_ec);
      if (ep_ec) continue;  // the client is gone already; `sock` closes here
      boost::system::error_code ignored;
      sock.set_option(tcp::no_delay(true), ignored);
      auto conn = std::make_shared<Conn>(std::move(sock), remote.address(), opts.tls.get(),
                                         net::InAnyCidr(remote.address(), opts.trusted_proxies));
      if (const char* cap = Admit(conn)) {
        Refuse(conn, remote, cap);
        continue;
      }
      asio::co_spawn(conn->stream.get_executor(), Session(conn),
                     [self, conn](const std::exception_ptr& ep) {
                       if (ep) core::LogError("connection coroutine ended with an exception");
                       self->Release(conn);
                     });
    }
  }

  /// Counts `c` as open unless that would pass a cap; then returns the cap's flag name.
  const char* Admit(const std::shared_ptr<Conn>& c) {
    std::lock_guard lock(mu);
    if (conns.size() >= opts.max_connections) return "--max-connections";
    if (!c->trusted_proxy) {
      auto it = per_address.find(c->address);
      if (it != per_address.end() && it->second >= opts.max_connections_per_address)
        return "--max-connections-per-address";
      ++per_address[c->address];
    }
    conns.insert(c);
    return nullptr;
  }

  void Release(const std::shared_ptr<Conn>& c) {
    std::lock_guard lock(mu);
    if (conns.erase(c) == 0) return;
    if (!c->trusted_proxy) ReleaseAddress(c->address);
  }

  void ReleaseAddress(const AddressKey& key) {  // under mu
    auto it = per_address.find(key);
    if (it != per_address.end() && --it->second == 0) per_address.erase(it);
  }

  /// A request forwarded by a trusted proxy for `client`, counted against the client's
  /// address while it is in flight (a stream until it ends). Empty (nothing held) when the
  /// client is at its cap.
  struct ForwardedSlot {
    Impl* impl = nullptr;
    AddressKey key{};
    ForwardedSlot() = default;
    ForwardedSlot(const ForwardedSlot&) = delete;
    ForwardedSlot& operator=(const ForwardedSlot&) = delete;
    ~ForwardedSlot() {
      if (!impl) return;
      std::lock_guard lock(impl->mu);
      impl->ReleaseAddress(key);
    }
  };
  bool HoldForwarded(ForwardedSlot& slot, const asio::ip::address& client) {
    const AddressKey key = KeyOf(client);
    std::lock_guard lock(mu);
    size_t& n = per_address[key];
    if (n >= opts.max_connections_per_address) {
      if (n == 0) per_address.erase(key);
      return false;
    }
    ++n;
    slot.impl = this;
    slot.key = key;
    return true;
  }

  /// Answers a connection over a cap with 503 (in its own coroutine) and logs it, at most
  /// once per kRefusalLogEvery. On the acceptor's strand.
  void Refuse(const std::shared_ptr<Conn>& c, const tcp::endpoint& remote, const char* cap) {
    ++refused_since_log;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_refusal_log >= kRefusalLogEvery) {
      core::LogWarn("refusing connections over " + std::string(cap) +
                    " with 503: " + std::to_string(refused_since_log) +
                    " since the last warning, the latest from " + remote.address().to_string());
      last_refusal_log = now;
      refused_since_log = 0;
    }
    if (refusing.fetch_add(1) >= kMaxRefusing) {
      --refusing;
      boost::system::error_code ignored;
      c->stream.socket().close(ignored);
      return;
    }
    auto self = shared_from_this();
    asio::co_spawn(c->stream.get_executor(), Refusal(c), [self, c](const std::exception_ptr& ep) {
      if (ep) core::LogError("refusal coroutine ended with an exception");
      --self->refusing;
    });
  }

  /// A connection over a cap: its request line is read first (for at most kRefusalRead), so
  /// the 503 has the shape of the surface the client meant, then the 503 is written and the
  /// connection closed lingering (the client may still be sending its head and body; see
  /// LingeringClose). A client that leaves without sending anything gets nothing.
  asio::awaitable<void> Refusal(std::shared_ptr<Conn> c) {
    if (!co_await Handshake(*c, kRefusalRead)) {
      c->stream.close();
      co_return;
    }
    std::string head;
    std::array<char, 1024> scratch;
    c->ArmReadDeadline(kRefusalRead);
    while (head.find("\r\n") == std::string::npos && head.size() < opts.header_limit) {
      auto [ec, n] = co_await c->io.async_read_some(asio::buffer(scratch),
                                                    asio::as_tuple(asio::use_awaitable));
      if (ec) break;
      head.append(scratch.data(), n);
    }
    c->DisarmReadDeadline();
    if (head.empty() && !c->timed_out) {
      c->stream.close();
      co_return;
    }
    co_await WriteError(*c, PathOfRequestLine(head, opts.header_limit), 503, "service_unavailable",
                        "too many connections; retry later");
    co_await LingeringClose(*c);
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

  /// The body of an error the server answers itself, shaped by opts.transport_error (the
  /// default when it is unset or throws).
  HttpResponse TransportError(std::string_view path, int status, std::string_view code,
                              std::string message) {
    if (opts.transport_error) {
      try {
        HttpResponse r = opts.transport_error(path, status, code, message);
        r.status = status;
        return r;
      } catch (const std::exception& e) {
        core::LogError(std::string("transport_error threw: ") + e.what());
      }
    }
    return DefaultTransportError(path, status, code, std::move(message));
  }

  /// Writes an error answer with `Connection: close` (and `Retry-After: 1` on a 503).
  asio::awaitable<void> WriteError(Conn& c, std::string path, int status, std::string_view code,
                                   std::string message) {
    HttpResponse r = TransportError(path, status, code, std::move(message));
    r.stream = nullptr;
    if (status == 503) r.headers.emplace_back("Retry-After", "1");
    auto res = ToBeast(std::move(r), 11, false);
    http::response_serializer<http::string_body> sr{res};
    co_await WriteMessage(c, sr, false, kErrorWriteTimeout);
  }

  /// Closes after an error answer to a request that was not read to its end. Closing a
  /// socket with unread bytes makes the kernel send a RST, not a FIN, and a RST can make
  /// the client's TCP drop the answer before the client has read it; a client still
  /// sending its body would typically see "connection reset" instead of the 413 or 408.
  /// So: FIN after the answer (shutdown of the send side), then read and drop what still
  /// arrives until the client closes too, kLingerBytes were dropped, or kLinger passed.
  /// On TLS the client's bytes are read before the close_notify (a TLS stream has no
  /// half-close that would let them be read after it).
  static asio::awaitable<void> LingeringClose(Conn& c) {
    boost::system::error_code ignored;
    if (!c.io.tls()) c.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    c.stream.expires_after(kLinger);  // the tcp_stream closes the socket at the deadline
    std::array<char, 4096> scratch;
    for (size_t dropped = 0; dropped < kLingerBytes;) {
      auto [ec, n] =
          co_await c.io.async_read_some(asio::buffer(scratch), asio::as_tuple(asio::use_awaitable));
      if (ec) break;
      dropped += n;
    }
    co_await Close(c);
  }

  /// Ends a connection: on TLS the close_notify exchange first (bounded by kTlsShutdown),
  /// then FIN and close.
  static asio::awaitable<void> Close(Conn& c) {
    if (auto* tls = c.io.tls()) {
      c.stream.expires_after(kTlsShutdown);
      (void)co_await tls->async_shutdown(asio::as_tuple(asio::use_awaitable));
    }
    boost::system::error_code ignored;
    c.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    c.stream.close();
  }

  /// TLS: the handshake, within `limit` (the tcp_stream's expiry closes the socket of a client
  /// that never completes it, so it cannot hold a slot). false when it failed: logged at debug
  /// (a port scan or a plain HTTP client is no event worth more), the caller closes.
  static asio::awaitable<bool> Handshake(Conn& c, std::chrono::steady_clock::duration limit) {
    auto* tls = c.io.tls();
    if (!tls) co_return true;
    boost::system::error_code ep_ec;
    const tcp::endpoint remote = c.stream.socket().remote_endpoint(ep_ec);
    c.stream.expires_after(limit);
    auto [ec] = co_await tls->async_handshake(ssl::stream_base::server,
                                              asio::as_tuple(asio::use_awaitable));
    c.stream.expires_never();
    if (ec) {
      core::LogDebug("TLS handshake with " + remote.address().to_string() +
                     " failed: " + ec.message());
      co_return false;
    }
    c.client_subject = VerifiedClientSubject(tls->native_handle());
    co_return true;
  }

  asio::awaitable<void> Session(std::shared_ptr<Conn> c) {
    // Bounded: a head fits (header_limit), and so do a read's worth of body bytes or
    // pipelined requests. Without a bound, a chunk size line or trailer that never ends
    // (Beast limits neither) would grow it until the body timeout; past it the read fails
    // (buffer_overflow, answered 400).
    beast::flat_buffer buffer(opts.header_limit + kReadSlack);
    bool linger = false;  // an error answer was written before the request was read
    if (stopping || !co_await Handshake(*c, opts.handshake_timeout)) {
      c->stream.close();
      co_return;
    }
    for (;;) {
      if (stopping) break;
      c->stream.expires_never();  // reads run under read_deadline, not the stream's expiry
      if (buffer.size() == 0) {
        // Between requests: up to idle_timeout for the first byte; then close, unanswered.
        c->ArmReadDeadline(opts.idle_timeout);
        auto [ec, n] = co_await c->io.async_read_some(buffer.prepare(kFirstRead),
                                                      asio::as_tuple(asio::use_awaitable));
        c->DisarmReadDeadline();
        if (ec) break;
        buffer.commit(n);
      }
      // From the first byte on, the whole head within header_timeout.
      http::request_parser<http::string_body> parser;
      parser.body_limit(opts.body_limit);
      parser.header_limit(static_cast<std::uint32_t>(opts.header_limit));
      c->ArmReadDeadline(opts.header_timeout);
      auto [ec_h, n_h] = co_await http::async_read_header(c->io, buffer, parser,
                                                          asio::as_tuple(asio::use_awaitable));
      (void)n_h;
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
      auto [ec_b, n_b] =
          co_await http::async_read(c->io, buffer, parser, asio::as_tuple(asio::use_awaitable));
      (void)n_b;
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
      ForwardedSlot forwarded_slot;  // released when this request (or its stream) ends
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
          out = co_await handler(std::move(in));
        } catch (const std::exception& e) {
          core::LogError(std::string("handler threw: ") + e.what());
          out = TransportError(PathOfTarget(req.target()), 500, "internal_error",
                               "internal error");
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
        http::response_serializer<http::empty_body> sr{head};
        const auto ec_s = co_await WriteMessage(*c, sr, true, kWriteStall);
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
              const auto ec_e =
                  co_await WriteAll(*c, asio::const_buffer("0\r\n\r\n", 5), kWriteStall);
              if (!ec_e && buffer.size() + early.size() <= buffer.max_size()) {
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
      // HEAD: the head a GET would get (its Content-Length included), and no body (RFC 9110
      // §9.3.2): a body here would be read as the start of the next answer.
      if (head_request) res.body().clear();
      http::response_serializer<http::string_body> sr{res};
      const auto ec_w = co_await WriteMessage(*c, sr, false, kWriteStall);
      c->busy = false;
      if (ec_w || !again) break;
    }
    if (linger) {
      co_await LingeringClose(*c);
    } else {
      co_await Close(*c);
    }
  }
};

HttpResponse DefaultTransportError(std::string_view path, int status, std::string_view code,
                                   std::string message) {
  (void)path;
  return RestErrorResponse(status, code, std::move(message));
}

HttpServer::HttpServer(asio::io_context& io, HttpHandler handler, HttpServerOptions options)
    : impl_(std::make_shared<Impl>(io, std::move(handler), std::move(options))) {}

HttpServer::~HttpServer() {
  // Stop() locks and posts, which can throw (resource exhaustion); a destructor must not.
  try {
    Stop();
  } catch (const std::exception& e) {
    core::LogError(std::string("http server: stopping threw: ") + e.what());
  } catch (...) {
    core::LogError("http server: stopping threw");
  }
}

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
  asio::co_spawn(impl->acceptor.get_executor(), impl->AcceptLoop(),
                 [impl](const std::exception_ptr& ep) {
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
