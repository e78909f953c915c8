// The batching of PumpStream (SsePumpSpec::buffer, OpenWOP bufferMs): a window is sent when
// its time is up although nothing else arrives, a flush item is sent at once, and the
// backlog is one batch.
#include "a2ad/transport/http/sse_pump.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "a2ad/protocol/encode.hpp"

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

class RecordingSink : public SseSink {
 public:
  asio::awaitable<bool> Write(std::string bytes) override {
    writes.push_back({Clock::now(), std::move(bytes)});
    calls.push_back(std::exchange(ending, false) ? "last write" : "write");
    co_return true;
  }
  asio::awaitable<bool> Waiting() override {
    calls.emplace_back("waiting");
    co_return true;
  }
  void Ending() override { ending = true; }
  std::vector<std::string> calls;  // in order: "write", "last write" (after Ending), "waiting"
  bool ending = false;
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
                 [&](const std::exception_ptr&) { done = true; });
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

SsePumpSpec Plain() {
  SsePumpSpec spec;
  spec.heartbeat = std::chrono::seconds(30);
  spec.frame = [](const tasks::StreamItem& i) { return std::to_string(i.sequence) + ";"; };
  spec.closes = [](const tasks::StreamItem& i) { return i.run_terminal; };
  return spec;
}

void RunPump(asio::io_context& io, RecordingSink& sink, tasks::StreamStart start, SsePumpSpec spec,
             const std::shared_ptr<tasks::Subscription>& sub,
             const std::vector<tasks::StreamItemPtr>& live) {
  bool done = false;
  asio::co_spawn(io, PumpStream(sink, std::move(start), std::move(spec)),
                 [&](const std::exception_ptr&) { done = true; });
  io.poll();  // the backlog is written and the pump waits
  for (const auto& item : live) {
    sub->Push(item);
    io.poll();
  }
  const auto t0 = Clock::now();
  while (!done && Clock::now() - t0 < std::chrono::seconds(10))
    io.run_one_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(done);
}

// The sink is told which write is the stream's last (ConnSink ends the response in it), and
// told before the stream first waits (ConnSink sends the head it held back): a stream whose
// events are all in its backlog is one write and never waits.
TEST(SsePump, TheLastWriteIsAnnouncedAndAWaitIsAnnouncedBeforeIt) {
  for (bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched" : "plain");
    const SsePumpSpec spec = batched ? Batching(std::chrono::milliseconds(1)) : Plain();
    {
      asio::io_context io;
      auto sub = std::make_shared<tasks::Subscription>(64);
      tasks::StreamStart start;
      start.subscription = sub;
      start.backlog = {Item(0), Item(1), Item(2, false, true)};
      RecordingSink sink;
      RunPump(io, sink, std::move(start), spec, sub, {});
      EXPECT_EQ(sink.calls, (std::vector<std::string>{"last write"}));
    }
    {
      asio::io_context io;
      auto sub = std::make_shared<tasks::Subscription>(64);
      tasks::StreamStart start;
      start.subscription = sub;
      start.backlog = {Item(0)};
      RecordingSink sink;
      RunPump(io, sink, std::move(start), spec, sub, {Item(1), Item(2, false, true)});
      ASSERT_GE(sink.calls.size(), 3u);
      EXPECT_EQ(sink.calls.front(), "write");
      EXPECT_EQ(sink.calls[1], "waiting");
      EXPECT_EQ(sink.calls.back(), "last write");
      EXPECT_EQ(std::count(sink.calls.begin(), sink.calls.end(), "last write"), 1);
    }
    {
      // Nothing at hand: the stream waits first.
      asio::io_context io;
      auto sub = std::make_shared<tasks::Subscription>(64);
      tasks::StreamStart start;
      start.subscription = sub;
      RecordingSink sink;
      RunPump(io, sink, std::move(start), spec, sub, {Item(0, false, true)});
      EXPECT_EQ(sink.calls, (std::vector<std::string>{"waiting", "last write"}));
    }
  }
}

// A stream item is shared by every stream of its task, whichever thread serves each: every
// form of its JSON is written once, and each caller gets that one text, in full (TSan checks
// that the text is published to the other threads).
TEST(StreamItem, EachFormIsWrittenOnceAndEveryThreadReadsIt) {
  using protocol::Final;
  using protocol::Wire;
  auto item = std::make_shared<tasks::StreamItem>();
  item->sequence = 7;
  item->event.kind = protocol::StreamEvent::Kind::kStatusUpdate;
  item->event.status_update.task_id = "t-1";
  item->event.status_update.context_id = "c-1";
  item->event.status_update.status.state = protocol::TaskState::kCompleted;
  item->event.status_update.final = true;
  const std::vector<std::pair<Wire, Final>> forms{{Wire::kV10, Final::kAsProjected},
                                                  {Wire::kV03, Final::kAsProjected},
                                                  {Wire::kV03, Final::kNotFinal},
                                                  {Wire::kV03Proto, Final::kAsProjected},
                                                  {Wire::kV03Proto, Final::kNotFinal}};
  constexpr int kThreads = 8;
  std::vector<std::vector<const std::string*>> seen(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) {
      }
      for (size_t f = 0; f < forms.size(); ++f) {  // each thread in its own order
        const auto& [wire, final] = forms[(f + static_cast<size_t>(t)) % forms.size()];
        seen[t].push_back(&item->Json(wire, final));
      }
    });
  for (auto& t : threads) t.join();
  for (size_t f = 0; f < forms.size(); ++f) {
    std::string expected;
    protocol::AppendStreamEvent(expected, item->event, forms[f].first, forms[f].second);
    for (int t = 0; t < kThreads; ++t) {
      const std::string* text =
          seen[t][(f + forms.size() - static_cast<size_t>(t) % forms.size()) % forms.size()];
      EXPECT_EQ(text, &item->Json(forms[f].first, forms[f].second)) << "form " << f;
      EXPECT_EQ(*text, expected) << "form " << f;
    }
  }
  // The forms differ where the wires do: no form was handed another's text.
  EXPECT_NE(item->Json(Wire::kV10), item->Json(Wire::kV03));
  EXPECT_NE(item->Json(Wire::kV03), item->Json(Wire::kV03, Final::kNotFinal));
}

}  // namespace
}  // namespace a2ad::transport
