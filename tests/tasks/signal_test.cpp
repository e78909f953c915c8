// Signal (signal.hpp): a Wait() that finds it fired goes on without suspending; one that
// waits is resumed by a post to its own executor, never inside Fire() on the firing thread.
#include "a2ad/tasks/signal.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <string>
#include <thread>
#include <vector>

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;

// Fired before the wait (as a commit written on the caller's thread fires it): the waiter
// goes on before a handler queued ahead of it, so no trip through the scheduler happened.
TEST(Signal, AWaitAfterTheFireGoesOnWithoutSuspending) {
  asio::io_context io(1);
  std::vector<std::string> order;
  Signal signal;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::post(io, [&] { order.push_back("queued before the wait"); });
        signal.Fire();
        co_await signal.Wait();
        order.push_back("waiter");
      },
      asio::detached);
  io.run();
  EXPECT_EQ(order, (std::vector<std::string>{"waiter", "queued before the wait"}));
}

// Fired from another thread while the waiter waits (the thread starts from a handler that
// runs once the waiter is suspended): the waiter runs on its io_context's thread, not inside
// Fire() on the firing one.
TEST(Signal, AWaiterFiredFromAnotherThreadResumesOnItsOwnExecutor) {
  asio::io_context io(1);
  Signal signal;
  std::thread firer;
  std::thread::id resumed_on;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::post(io, [&] { firer = std::thread([&] { signal.Fire(); }); });
        co_await signal.Wait();
        resumed_on = std::this_thread::get_id();
      },
      asio::detached);
  io.run();
  const auto firing_thread = firer.get_id();
  firer.join();
  EXPECT_EQ(resumed_on, std::this_thread::get_id());
  EXPECT_NE(resumed_on, firing_thread);
}

}  // namespace
}  // namespace a2ad::tasks
