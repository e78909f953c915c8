#pragma once
// The byte stream of one connection of the HTTP server (http_server.cpp; internal to
// transport/): plain TCP, or TLS over TCP when the server serves HTTPS. Reads and writes go
// to whichever it is, so the server's request loop is one piece of code for both; the TCP
// stream underneath (`tcp()`) carries the timeouts (its expiry closes the socket), the
// cancellation of pending reads and the close.
//
// Writes try the socket first (TryWrite): an answer or a stream event that fits the socket's
// send buffer, as almost all do, is one sendmsg on the strand, with no operation queued, no
// timer armed and no completion to dispatch; only the rest of one that does not fit is left
// to an asynchronous write (under the caller's expiry).
//
// Thread safety: as Beast's streams: one read and one write may be pending at once, started
// from the connection's strand; TryWrite only when no write is pending.
#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cstddef>
#include <optional>
#include <utility>

namespace a2ad::transport {

class ConnStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  /// TLS over `socket` with `tls` (not null; must outlive the stream), else plain TCP.
  ConnStream(boost::asio::ip::tcp::socket socket, boost::asio::ssl::context* tls) {
    if (tls) {
      secure_.emplace(std::move(socket), *tls);
    } else {
      // Synchronous writes (TryWrite) return would_block instead of waiting; the
      // asynchronous operations are not affected (Asio keeps its own non-blocking mode).
      boost::system::error_code ignored;
      socket.non_blocking(true, ignored);
      plain_.emplace(std::move(socket));
    }
  }

  /// Writes what the socket takes of `buffers` now, without waiting: the number of bytes
  /// written (fewer than asked when the send buffer is full; 0 on TLS, whose records are
  /// written asynchronously only). `ec` is set on a failure other than would_block (the
  /// peer is gone); the caller writes the rest asynchronously.
  template <class ConstBuffers>
  std::size_t TryWrite(const ConstBuffers& buffers, boost::system::error_code& ec) {
    ec = {};
    if (secure_) return 0;
    const std::size_t n = plain_->socket().write_some(buffers, ec);
    if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) ec = {};
    return n;
  }

  boost::beast::tcp_stream& tcp() { return secure_ ? secure_->next_layer() : *plain_; }
  /// The TLS stream; nullptr for a plain connection.
  TlsStream* tls() { return secure_ ? &*secure_ : nullptr; }
  executor_type get_executor() { return tcp().get_executor(); }

  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const MutableBuffers& b) {
          if (secure_)
            secure_->async_read_some(b, std::move(handler));
          else
            plain_->async_read_some(b, std::move(handler));
        },
        token, buffers);
  }

  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const ConstBuffers& b) {
          if (secure_)
            secure_->async_write_some(b, std::move(handler));
          else
            plain_->async_write_some(b, std::move(handler));
        },
        token, buffers);
  }

 private:
  std::optional<boost::beast::tcp_stream> plain_;
  std::optional<TlsStream> secure_;
};

}  // namespace a2ad::transport
