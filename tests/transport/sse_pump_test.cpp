// The batching of PumpStream (SsePumpSpec::buffer, OpenWOP bufferMs): a window is sent when
// its time is up although nothing else arrives, a flush item is sent at once, and the
// backlog is one batch.
#include "a2ad/transport/http/sse_pump.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <string>
#include <vector>

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

class RecordingSink : public SseSink {
 public:
  asio::awaitable<bool> Write(std::string bytes) override {
    writes.push_back({Clock::now(), std::move(bytes)});
    co_return true;
  }
  void OnClientGone(std::function<void()>) override {}
  void OnServerStopping(std::function<void()>) override {}
  std::vector<std::pair<Clock::time_point, std::string>> writes;
};

tasks::StreamItemPtr Item(int64_t sequence, bool flush = false, bool terminal = false) {
  auto item = std::make_shared<tasks::StreamItem>();
  item->sequence = sequence;
  item->a2a = false;
  item->raw_json = flush ? "flush" : "x";
  item->run_terminal = terminal;
  return item;
}

SsePumpSpec Batching(std::chrono::milliseconds buffer) {
  SsePumpSpec spec;
  spec.buffer = buffer;
  spec.heartbeat = std::chrono::seconds(30);
  spec.batch_item = [](const tasks::StreamItem& i) { return std::to_string(i.sequence); };
  spec.closes = [](const tasks::StreamItem& i) { return i.run_terminal; };
  spec.flushes = [](const tasks::StreamItem& i) { return i.raw_json == "flush"; };
  return spec;
}

TEST(SsePumpBatching, AWindowIsSentWhenItsTimeIsUpAndAFlushAtOnce) {
  asio::io_context io;
  auto sub = std::make_shared<tasks::Subscription>(64);
  tasks::StreamStart start;
  start.subscription = sub;
  start.backlog = {Item(0), Item(1)};
  start.last_sequence = -1;
  RecordingSink sink;
  bool done = false;
  const auto t0 = Clock::now();
  asio::co_spawn(io, PumpStream(sink, std::move(start), Batching(std::chrono::milliseconds(150))),
                 [&](std::exception_ptr) { done = true; });
  // 2 and 3 in one window (sent ~150 ms after 2 came, nothing else arriving); then 4, a flush,
  // at once; then the terminal 5.
  asio::steady_timer t(io);
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        t.expires_after(std::chrono::milliseconds(20));
        co_await t.async_wait(asio::use_awaitable);
        sub->Push(Item(2));
        sub->Push(Item(3));
        t.expires_after(std::chrono::milliseconds(400));
        co_await t.async_wait(asio::use_awaitable);
        sub->Push(Item(4, true));
        t.expires_after(std::chrono::milliseconds(50));
        co_await t.async_wait(asio::use_awaitable);
        sub->Push(Item(5, false, true));
      },
      asio::detached);
  while (!done && Clock::now() - t0 < std::chrono::seconds(10))
    io.run_one_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(done);
  ASSERT_EQ(sink.writes.size(), 4u);
  EXPECT_EQ(sink.writes[0].second, "id: 1\nevent: batch\ndata: [0,1]\n\n");
  EXPECT_EQ(sink.writes[1].second, "id: 3\nevent: batch\ndata: [2,3]\n\n");
  EXPECT_EQ(sink.writes[2].second, "id: 4\nevent: batch\ndata: [4]\n\n");
  EXPECT_EQ(sink.writes[3].second, "id: 5\nevent: batch\ndata: [5]\n\n");
  // Had the window waited for the next item, 2, 3 and 4 would be one batch; had the flush
  // waited out its window, 4 and 5 would be.
}

}  // namespace
}  // namespace a2ad::transport
