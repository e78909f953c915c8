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
  std::thread([&] { io.run(); }).join();  // a thread of its own: no streak (see below) yet
  EXPECT_EQ(order, (std::vector<std::string>{"waiter", "queued before the wait"}));
}

// A run whose every commit fires its signal before it waits still yields its thread: a
// handler queued before a long streak of such waits runs before the streak ends.
TEST(Signal, ALongStreakOfFiredWaitsYieldsTheThread) {
  asio::io_context io(1);
  unsigned waits_before_the_queued_handler_ran = 0;
  unsigned waits = 0;
  bool queued_ran = false;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::post(io, [&] {
          queued_ran = true;
          waits_before_the_queued_handler_ran = waits;
        });
        for (unsigned i = 0; i < 4 * Signal::kMaxInlineStreak; ++i) {
          Signal signal;
          signal.Fire();
          co_await signal.Wait();
          ++waits;
        }
      },
      asio::detached);
  io.run();
  ASSERT_TRUE(queued_ran);
  EXPECT_LT(waits_before_the_queued_handler_ran, 4 * Signal::kMaxInlineStreak);
  EXPECT_GT(waits_before_the_queued_handler_ran, 0u);
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
