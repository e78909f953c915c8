#include "a2ad/transport/http/connection.hpp"

#include <array>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <cstdio>
#include <span>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/transport/http/request_line.hpp"
#include "a2ad/transport/http/tls_context.hpp"

namespace a2ad::transport::http_conn {
namespace {

// Lingering close after an error answer: what the client still sends is read and dropped
// for at most this long and this many bytes (see LingeringClose).
constexpr std::chrono::seconds kLinger{1};
constexpr size_t kLingerBytes = size_t{4} * 1024 * 1024;
// TLS close_notify exchange at the end of a connection; a client that does not answer it is
// cut off.
constexpr std::chrono::seconds kTlsShutdown{1};

}  // namespace

std::string PathOfFailedHead(const http::request_parser<http::string_body>& parser,
                             const beast::flat_buffer& buffer, size_t header_limit) {
  if (!parser.get().target().empty()) return std::string(PathOfTarget(parser.get().target()));
  return PathOfRequestLine({static_cast<const char*>(buffer.data().data()), buffer.size()},
                           header_limit);
}

asio::awaitable<ReadResult> ReadSome(Conn& c, asio::mutable_buffer into) {
  auto result = co_await c.io.async_read_some(into, asio::as_tuple(asio::use_awaitable));
  co_return result;
}

namespace {

// The reads of a request, under the read deadline: one that passed between two reads (its
// cancel found none pending) ends the request's read as a cancelled read would.
struct DeadlinedReads {
  Conn& c;
  asio::awaitable<ReadResult> operator()(asio::mutable_buffer into) const {
    if (c.timed_out) co_return ReadResult{asio::error::operation_aborted, 0};
    co_return co_await ReadSome(c, into);
  }
};

}  // namespace

asio::awaitable<boost::system::error_code> ReadRequest(Conn& c, beast::flat_buffer& buffer,
                                                       RequestParser& parser, bool whole) {
  DeadlinedReads reads{c};
  co_return co_await net::ReadHttp(reads, buffer, parser,
                                   whole ? net::ReadUntil::kWhole : net::ReadUntil::kHead);
}

namespace {

// Writes `buffers` past their first `skip` bytes asynchronously, within `limit`.
asio::awaitable<boost::system::error_code> WriteRest(Conn& c,
                                                     std::span<const asio::const_buffer> buffers,
                                                     size_t skip,
                                                     std::chrono::steady_clock::duration limit) {
  beast::buffers_suffix<std::span<const asio::const_buffer>> rest(buffers);
  rest.consume(skip);
  c.stream.expires_after(limit);
  auto [ec, n] = co_await asio::async_write(c.io, rest, asio::as_tuple(asio::use_awaitable));
  (void)n;
  c.stream.expires_never();
  co_return ec;
}

}  // namespace

asio::awaitable<boost::system::error_code> WriteList(Conn& c, BufferList list,
                                                     std::chrono::steady_clock::duration limit) {
  boost::system::error_code ec;
  const size_t wrote = c.io.TryWrite(list, ec);
  if (ec || wrote == asio::buffer_size(list)) co_return ec;
  co_return co_await WriteRest(c, list, wrote, limit);
}

bool IsGone(const boost::system::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
         ec == beast::error::timeout;
}

http::response<http::string_body> ToBeast(HttpResponse&& r, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(r.status), version};
  res.set(http::field::server, "a2ad");
  if (!r.content_type.empty()) res.set(http::field::content_type, r.content_type);
  for (auto& [k, v] : r.headers) res.set(k, v);
  res.body() = std::move(r.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

asio::awaitable<void> LingeringClose(Conn& c) {
  boost::system::error_code ignored;
  if (!c.io.tls()) c.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  c.stream.expires_after(kLinger);  // the tcp_stream closes the socket at the deadline
  std::array<char, 4096> scratch;
  for (size_t dropped = 0; dropped < kLingerBytes;) {
    auto [ec, n] = co_await ReadSome(c, asio::buffer(scratch));
    if (ec) break;
    dropped += n;
  }
  co_await Close(c);
}

asio::awaitable<void> Close(Conn& c) {
  if (auto* tls = c.io.tls()) {
    c.stream.expires_after(kTlsShutdown);
    (void)co_await tls->async_shutdown(asio::as_tuple(asio::use_awaitable));
  }
  boost::system::error_code ignored;
  c.stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  c.stream.close();
}

asio::awaitable<bool> Handshake(Conn& c, std::chrono::steady_clock::duration limit) {
  auto* tls = c.io.tls();
  if (!tls) co_return true;
  boost::system::error_code ep_ec;
  const tcp::endpoint remote = c.stream.socket().remote_endpoint(ep_ec);
  // Under the read deadline, which cancels the handshake rather than closing the socket (as
  // the tcp_stream's expiry would): the caller stops counting the connection against its
  // address's cap before it closes it, so a client that sees the close can come straight back.
  c.ArmReadDeadline(limit);
  auto [ec] =
      co_await tls->async_handshake(ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
  c.DisarmReadDeadline();
  if (ec) {
    core::LogDebug("TLS handshake with " + remote.address().to_string() +
                   " failed: " + ec.message());
    co_return false;
  }
  c.client_subject = VerifiedClientSubject(tls->native_handle());
  co_return true;
}

ConnSink::ConnSink(std::shared_ptr<Conn> c, bool chunked, std::string head)
    : c_(std::move(c)),
      chunked_(chunked),
      head_(std::move(head)),
      watch_done_(c_->stream.get_executor()) {
  watch_done_.expires_at(asio::steady_timer::time_point::max());
}

void ConnSink::Watch() {
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
      // A read that completed before StopWatching's cancel but ran after it: do not read
      // again (that read would not be cancelled, and StopWatching would wait for it). The
      // client sends its next request as soon as the last chunk is out, which can go in the
      // stream's last write, before StopWatching.
      if (self->unwatching_) {
        self->WatchFinished();
        return;
      }
      self->Watch();
      return;
    }
    if (!(ec == asio::error::operation_aborted && self->unwatching_)) self->Gone();
    self->WatchFinished();
  });
}

void ConnSink::WatchFinished() {
  watch_finished_ = true;
  watch_done_.cancel();
}

asio::awaitable<bool> ConnSink::StopWatching(std::string& early) {
  unwatching_ = true;
  if (watching_ && !watch_finished_) {  // same strand as the watch handler: no race with this check
    boost::system::error_code ignored;
    c_->stream.socket().cancel(ignored);
    (void)co_await watch_done_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  early = std::move(early_);
  co_return !gone_;
}

asio::awaitable<bool> ConnSink::Write(std::string bytes) {
  const bool last = std::exchange(ending_, false);
  co_return co_await WriteOut(bytes, last);
}

asio::awaitable<bool> ConnSink::Waiting() {
  const bool ok = co_await Finish(false);  // the held-back head, if it still is
  if (ok && !std::exchange(watching_, true)) Watch();
  co_return ok;
}

asio::awaitable<bool> ConnSink::Finish(bool last_chunk) {
  const bool last = last_chunk && chunked_ && !last_sent_;
  if (head_.empty() && !last) co_return !gone_;
  co_return co_await WriteOut({}, last);
}

asio::awaitable<bool> ConnSink::WriteOut(std::string_view body, bool last) {
  // After the last chunk nothing more belongs to this response (on a kept connection it
  // would read as the start of the next one).
  if (gone_ || last_sent_) co_return false;
  const std::string head = std::exchange(head_, {});  // once, whatever the write does
  // head, chunk size, body, CRLF, last chunk: the parts not needed are empty.
  char size[24];
  size_t size_len = 0;
  if (chunked_ && !body.empty())
    size_len = static_cast<size_t>(std::snprintf(size, sizeof size, "%zx\r\n", body.size()));
  const bool chunk = size_len > 0;
  last = last && chunked_;
  const std::array<asio::const_buffer, 5> parts{
      asio::buffer(head), asio::buffer(size, size_len), asio::buffer(body.data(), body.size()),
      asio::buffer("\r\n", chunk ? 2 : 0), asio::buffer("0\r\n\r\n", last ? 5 : 0)};
  const boost::system::error_code ec = co_await WriteAll(*c_, parts, kWriteStall);
  if (last && !ec) last_sent_ = true;
  if (ec) Gone();
  co_return !ec;
}

void ConnSink::OnClientGone(std::function<void()> f) {
  if (gone_) {
    f();
  } else {
    on_gone_ = std::move(f);
  }
}

void ConnSink::OnServerStopping(std::function<void()> f) {
  if (stopping_) {
    f();
  } else {
    on_stopping_ = std::move(f);
  }
}

void ConnSink::Stopping() {
  if (stopping_) return;
  stopping_ = true;
  if (on_stopping_) std::exchange(on_stopping_, nullptr)();
}

void ConnSink::Gone() {
  if (gone_) return;
  gone_ = true;
  if (on_gone_) std::exchange(on_gone_, nullptr)();
}

}  // namespace a2ad::transport::http_conn
