#pragma once
// Runs a coroutine to its result on an io_context driven by the calling test thread: spawns
// it, then runs one handler at a time until it has finished (other work stays queued for the
// test to drain). An exception the coroutine throws is rethrown here.
//
// Thread safety: the io_context must be driven by the calling thread only.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <utility>

namespace a2ad::testing {

template <class T>
T RunOn(boost::asio::io_context& io, boost::asio::awaitable<T> aw) {
  std::optional<T> out;
  boost::asio::co_spawn(io, std::move(aw), [&](std::exception_ptr ep, T v) {
    if (ep) std::rethrow_exception(ep);
    out.emplace(std::move(v));
  });
  io.restart();
  while (!out) io.run_one();
  return std::move(*out);
}

}  // namespace a2ad::testing
