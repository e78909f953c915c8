#pragma once
// One connection of the HTTP server (http_server.cpp, http_session.cpp; internal to
// transport/http): its stream, read deadline and caps key (Conn), the writes that try the
// socket first (WriteAll, WriteMessage), the ends of a connection (Close, LingeringClose), the
// TLS handshake, and the SSE sink of a streaming answer (ConnSink).
//
// Thread safety: a Conn and its ConnSink are used on the connection's strand only.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>

#include "a2ad/net/http_io.hpp"
#include "a2ad/transport/http/conn_stream.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport::http_conn {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

class ConnSink;

// After a read deadline passed, the pending operation is cancelled again this often until its
// caller has seen it end: a composed operation (the TLS handshake) or a loop of reads that does
// not look at `timed_out` (the refusal's) may start its next read just after a cancel found
// nothing pending.
constexpr std::chrono::milliseconds kRecancelEvery{20};

// A client IP address as the caps count it: IPv4 as its IPv4-mapped IPv6 address, so that
// 192.0.2.1 and ::ffff:192.0.2.1 are one client.
using AddressKey = asio::ip::address_v6::bytes_type;

inline AddressKey KeyOf(const asio::ip::address& a) {
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
  //
  // The timer is not armed and cancelled for each read: a request's three (the idle wait, the
  // head, the body) would each queue a timer and post a cancelled wait's completion. Arm and
  // Disarm set `deadline_at_`; a wait that is already pending and ends no later than the new
  // deadline is left to end, and then waits again for the deadline armed by then, if any. Only
  // a deadline earlier than the pending wait's end restarts it. So a deadline never fires
  // early (the handler compares the clock with `deadline_at_`) nor late (no wait ends after
  // it), and a connection's requests share one wait until it ends.
  asio::steady_timer read_deadline;
  const asio::ip::address peer;
  const AddressKey address;
  // A trusted proxy (forwarded.hpp): not capped by address; its requests are, by the address
  // each forwards.
  const bool trusted_proxy;
  bool address_counted = false;  // counted against its address's cap; under the server's mu
  bool timed_out = false;        // the current read's deadline passed; on the strand
  bool busy = false;             // inside a request; touched only on the connection's strand
  std::weak_ptr<ConnSink> sink;  // set while streaming; touched only on the strand
  std::string client_subject;    // TLS: the verified client certificate's subject, or ""

  /// Arms the read deadline `d` from now. Call on the strand; pair with DisarmReadDeadline.
  void ArmReadDeadline(std::chrono::steady_clock::duration d) {
    timed_out = false;
    deadline_armed_ = true;
    deadline_at_ = std::chrono::steady_clock::now() + d;
    if (waiting_ && read_deadline.expiry() <= deadline_at_) return;  // it waits again then
    read_deadline.expires_at(deadline_at_);  // ends a later wait (its handler sees a newer one)
    WaitReadDeadline();
  }

  /// Ends the read deadline. The pending wait, if any, ends at its time and stops.
  void DisarmReadDeadline() { deadline_armed_ = false; }

 private:
  void WaitReadDeadline() {
    waiting_ = true;
    read_deadline.async_wait(
        [weak = weak_from_this(), wait = ++wait_gen_](boost::system::error_code) {
          auto self = weak.lock();
          // Gone, or a newer wait replaced this one (and is pending).
          if (!self || self->wait_gen_ != wait) return;
          self->waiting_ = false;
          if (!self->deadline_armed_) return;
          if (std::chrono::steady_clock::now() < self->deadline_at_) {
            self->read_deadline.expires_at(self->deadline_at_);
          } else {
            // Passed: cancel the read, and again every kRecancelEvery while it stays armed.
            self->timed_out = true;
            boost::system::error_code ignored;
            self->stream.socket().cancel(ignored);
            self->read_deadline.expires_after(kRecancelEvery);
          }
          self->WaitReadDeadline();
        });
  }

  std::chrono::steady_clock::time_point deadline_at_{};
  bool deadline_armed_ = false;
  bool waiting_ = false;   // an async_wait of read_deadline is pending
  uint64_t wait_gen_ = 0;  // tells the pending wait's handler from a replaced one's
};

/// The path of a request whose head could not be read to its end: the parser's once it has
/// parsed the request line, else the one of the line at the start of `buffer`.
std::string PathOfFailedHead(const http::request_parser<http::string_body>& parser,
                             const beast::flat_buffer& buffer, size_t header_limit);

/// A client that went away or a read ended by Stop(): no answer is written.
bool IsGone(const boost::system::error_code& ec);

// A write that waits longer than this for the client to read is cut off (the tcp_stream's
// expiry closes the socket).
constexpr std::chrono::seconds kWriteStall{30};

// The connection's I/O goes through three non-template coroutines (ReadSome, ReadRequest,
// WriteList, in connection.cpp; net/http_io.hpp says why): each Asio and Beast asynchronous
// operation is instantiated once, there, for TCP and for TLS.

using net::BufferList;
using net::Gather;
using net::ReadResult;
using RequestParser = http::request_parser<http::string_body>;

/// One read of what the client sent, into `into`.
asio::awaitable<ReadResult> ReadSome(Conn& c, asio::mutable_buffer into);

/// Reads into `buffer` and parses with `parser` until the request's head (`whole` false) or
/// the whole request (`whole`); what follows it stays in `buffer`. The errors are
/// net::ReadHttp's, and operation_aborted when the read deadline passed (`c.timed_out`).
asio::awaitable<boost::system::error_code> ReadRequest(Conn& c, beast::flat_buffer& buffer,
                                                       RequestParser& parser, bool whole);

/// Writes `list`: what the socket takes at once directly (ConnStream::TryWrite), the rest
/// asynchronously within `limit`.
asio::awaitable<boost::system::error_code> WriteList(Conn& c, BufferList list,
                                                     std::chrono::steady_clock::duration limit);

/// WriteList of any buffer sequence.
template <class Buffers>
asio::awaitable<boost::system::error_code> WriteAll(Conn& c, const Buffers& buffers,
                                                    std::chrono::steady_clock::duration limit) {
  BufferList list;
  Gather(buffers, list);
  return WriteList(c, std::move(list), limit);
}

/// An HTTP message (its head only with `head_only`) through its serializer, each piece by
/// WriteList (net::WriteHttp).
template <class Serializer>
asio::awaitable<boost::system::error_code> WriteMessage(Conn& c, Serializer& sr, bool head_only,
                                                        std::chrono::steady_clock::duration limit) {
  return net::WriteHttp([&c, limit](const BufferList& list) { return WriteList(c, list, limit); },
                        sr, head_only);
}

/// `r` as Beast's response (`Server: a2ad`, its Content-Length), keeping the connection when
/// `keep_alive`.
http::response<http::string_body> ToBeast(HttpResponse&& r, unsigned version, bool keep_alive);

/// Closes after an error answer to a request that was not read to its end. Closing a
/// socket with unread bytes makes the kernel send a RST, not a FIN, and a RST can make
/// the client's TCP drop the answer before the client has read it; a client still
/// sending its body would typically see "connection reset" instead of the 413 or 408.
/// So: FIN after the answer (shutdown of the send side), then read and drop what still
/// arrives until the client closes too, kLingerBytes were dropped, or kLinger passed.
/// On TLS the client's bytes are read before the close_notify (a TLS stream has no
/// half-close that would let them be read after it).
asio::awaitable<void> LingeringClose(Conn& c);

/// Ends a connection: on TLS the close_notify exchange first (bounded by kTlsShutdown),
/// then FIN and close.
asio::awaitable<void> Close(Conn& c);

/// TLS: the handshake, within `limit` (the read deadline cancels it for a client that never
/// completes it, so it cannot hold a slot). false when it failed: logged at debug (a port
/// scan or a plain HTTP client is no event worth more), the caller closes.
asio::awaitable<bool> Handshake(Conn& c, std::chrono::steady_clock::duration limit);

/// The SSE sink of one connection. A read kept pending on the socket from the stream's first
/// wait notices the client going away (a streaming client sends nothing) while the stream
/// waits for events. With `chunked`, every write is one HTTP/1.1 chunk, so the response can
/// end with the last chunk and the connection serve the next request (keep-alive) instead of
/// closing.
/// The response's head is held back until the first write, the stream's first wait
/// (Waiting) or its end (Finish), whichever comes first, and goes out in that write; the
/// last chunk goes out with the stream's last write (Ending). So a stream whose events are
/// all at hand is one write (one syscall, one wake-up of the client), not three.
class ConnSink final : public SseSink, public std::enable_shared_from_this<ConnSink> {
 public:
  /// `head`: the response's head, as bytes.
  ConnSink(std::shared_ptr<Conn> c, bool chunked, std::string head);

  /// After the stream: stops the watching read, if the stream started one, and waits for it
  /// to finish. false if the client is gone (then the connection closes). The bytes it read
  /// arrive in `early`.
  asio::awaitable<bool> StopWatching(std::string& early);

  asio::awaitable<bool> Write(std::string bytes) override;
  /// Also starts the watching read, at the stream's first wait: a stream that never waits
  /// (its events all at hand) needs none, since a write notices a client that is gone and a
  /// request sent behind the stream stays in the socket for the session's next read.
  asio::awaitable<bool> Waiting() override;
  void Ending() override { ending_ = true; }
  /// Writes what is held back: the head if it still is, and with `last_chunk` the last chunk
  /// if it is not written yet (after the stream; Waiting is Finish(false)). false if that
  /// write failed or the client is gone.
  asio::awaitable<bool> Finish(bool last_chunk);
  void OnClientGone(std::function<void()> f) override;
  void OnServerStopping(std::function<void()> f) override;

  /// The server is stopping: the stream is told (once).
  void Stopping();

 private:
  void Watch();
  void WatchFinished();
  void Gone();

  // Writes `body` (a chunk when chunked_) after the head if it is still held back, and the
  // last chunk after it when `last`.
  asio::awaitable<bool> WriteOut(std::string_view body, bool last);

  std::shared_ptr<Conn> c_;
  const bool chunked_;
  std::string head_;               // not written yet; "" once it is
  bool ending_ = false;            // the next write is the last
  bool last_sent_ = false;         // the last chunk is written
  asio::steady_timer watch_done_;  // cancelled when the watching read has finished
  bool watching_ = false;          // the watching read was started
  bool unwatching_ = false;
  bool watch_finished_ = false;
  std::string early_;  // bytes the watching read got
  char scratch_[512];
  bool gone_ = false;
  bool stopping_ = false;
  std::function<void()> on_gone_;
  std::function<void()> on_stopping_;
};

}  // namespace a2ad::transport::http_conn
