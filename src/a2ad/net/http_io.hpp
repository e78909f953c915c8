#pragma once
// HTTP messages over one read and one write coroutine, for the server's connections
// (transport/http/connection.cpp) and the client's (http_client.cpp).
//
// Beast's composed operations (http::async_read_header, http::async_read, http::async_write)
// are instantiated once per stream, buffer and handler type, and they were the larger part of
// the compile time of the files that used them. Here a message is read by feeding Beast's
// parser from the caller's one read coroutine (ReadHttp) and written from its serializer's
// buffers by the caller's one write coroutine (WriteHttp); each asynchronous operation is then
// instantiated once, in the caller's .cpp, for TCP and for TLS. A message that arrived whole
// is parsed without a trip through the scheduler (Beast's reads post their completion).
#include <boost/asio/awaitable.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <tuple>

namespace a2ad::net {

/// What one read gives: its error and the bytes read.
using ReadResult = std::tuple<boost::system::error_code, std::size_t>;

/// Buffers gathered from a buffer sequence (an answer's or request's fit without allocating).
using BufferList = boost::container::small_vector<boost::asio::const_buffer, 16>;

template <class Buffers>
void Gather(const Buffers& buffers, BufferList& out) {
  out.clear();
  for (auto it = boost::asio::buffer_sequence_begin(buffers);
       it != boost::asio::buffer_sequence_end(buffers); ++it)
    out.emplace_back(*it);
}

/// How far ReadHttp reads.
enum class ReadUntil {
  kHead,      // the head (the parser is not eager), as http::async_read_header
  kWhole,     // the whole message (eager), as http::async_read
  kProgress,  // until the parser took something, as http::async_read_some
};

/// Reads with `read_some` (called with a mutable buffer, answering an awaitable ReadResult)
/// into `buffer` and parses with `parser` until `until`. What follows the message stays in
/// `buffer`. The errors are those of Beast's composed reads: the parser's (header_limit,
/// body_limit, partial_message, ...), buffer_overflow when `buffer` is full,
/// end_of_stream when the peer closed before a byte of the message, or the read's.
template <bool isRequest, class ReadSome>
boost::asio::awaitable<boost::system::error_code> ReadHttp(
    ReadSome& read_some, boost::beast::flat_buffer& buffer,
    boost::beast::http::basic_parser<isRequest>& parser, ReadUntil until) {
  namespace http = boost::beast::http;
  if (until == ReadUntil::kHead) parser.eager(false);
  if (until == ReadUntil::kWhole) parser.eager(true);
  boost::system::error_code ec;
  for (;;) {
    if (until == ReadUntil::kHead && parser.is_header_done()) co_return ec;
    if (until == ReadUntil::kWhole && parser.is_done()) co_return ec;
    if (buffer.size() != 0) {
      const std::size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec && ec != http::error::need_more) co_return ec;
      const bool need_more = ec == http::error::need_more || used == 0;
      ec = {};
      if (!need_more) {
        if (until == ReadUntil::kProgress) co_return ec;
        continue;
      }
    }
    // As Beast's reads: up to 64 KiB at a time, and never past the buffer's bound.
    const std::size_t size = boost::beast::read_size(buffer, std::size_t{64} * 1024);
    if (size == 0) co_return http::error::buffer_overflow;
    const ReadResult read = co_await read_some(buffer.prepare(size));
    buffer.commit(std::get<1>(read));
    if (std::get<0>(read) == boost::asio::error::eof) {
      if (!parser.got_some()) co_return http::error::end_of_stream;
      parser.put_eof(ec);  // a body that ends with the connection; else partial_message
      co_return ec;
    }
    if (std::get<0>(read)) co_return std::get<0>(read);
  }
}

/// Writes what `sr` (a Beast serializer) makes of its message, its head only with
/// `head_only`, with `write` (called with each piece's buffers, answering an awaitable
/// error_code once all of them are written). The errors: the serializer's, or the write's.
template <class Serializer, class Write>
boost::asio::awaitable<boost::system::error_code> WriteHttp(Write write, Serializer& sr,
                                                            bool head_only) {
  boost::system::error_code ec;
  if (head_only) sr.split(true);
  BufferList list;
  while (!(head_only ? sr.is_header_done() : sr.is_done())) {
    sr.next(ec, [&](boost::system::error_code&, const auto& buffers) { Gather(buffers, list); });
    if (ec) co_return ec;
    const std::size_t n = boost::asio::buffer_size(list);
    ec = co_await write(list);
    if (ec) co_return ec;
    sr.consume(n);
  }
  co_return ec;
}

}  // namespace a2ad::net
