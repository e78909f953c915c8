// Streams over real loopback HTTP: drop and resume with Last-Event-ID (no gap, no
// duplicate, one execution), many observers, a stalled reader, heartbeats, disconnects.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <set>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/agent_card.hpp"
#include "a2ad/transport/http/http_server.hpp"
#include "a2ad/transport/router.hpp"
#include "http_client.hpp"
#include "sse_client.hpp"
#include "wait_for.hpp"

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using a2ad::testing::HttpClient;
using a2ad::testing::SseClient;
using a2ad::testing::SseEvent;
using a2ad::testing::WaitFor;

// Emits `chunks` artifact chunks of `size` bytes, `gap` apart, then completes.
class ChunksExecutor final : public tasks::Executor {
 public:
  ChunksExecutor(int chunks, size_t size, std::chrono::milliseconds gap)
      : chunks_(chunks), size_(size), gap_(gap) {}
  asio::awaitable<void> Execute(std::shared_ptr<tasks::ExecutionContext> ctx) override {
    ++executions;
    std::vector<tasks::EventDraft> start;
    start.push_back({"run.started", "", {}});
    if (!(co_await ctx->Commit(std::move(start))).ok()) co_return;
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (int i = 0; i < chunks_; ++i) {
      timer.expires_after(gap_);
      co_await timer.async_wait(asio::use_awaitable);
      protocol::Artifact a;
      a.artifact_id = "out";
      a.parts.push_back(protocol::Part::Text(std::to_string(i) + ":" + std::string(size_, 'x')));
      std::vector<tasks::EventDraft> step;
      step.push_back({"artifact.created", "gen",
                      json::object{{"artifact", protocol::ArtifactToJson(a)},
                                   {"append", i > 0},
                                   {"lastChunk", i + 1 == chunks_}}});
      ++chunks_begun;
      if (!(co_await ctx->Commit(std::move(step))).ok()) co_return;
    }
    std::vector<tasks::EventDraft> done;
    done.push_back({"run.completed", "", {}});
    (void)co_await ctx->Commit(std::move(done));
  }
  std::atomic<int> executions{0};
  std::atomic<int> chunks_begun{0};  // counted before the chunk's commit publishes it

 private:
  int chunks_;
  size_t size_;
  std::chrono::milliseconds gap_;
};

class StreamingTest : public ::testing::Test {
 protected:
  void Start(StreamOptions opts, int chunks = 10, size_t size = 16,
             std::chrono::milliseconds gap = std::chrono::milliseconds(20)) {
    chunks_ = std::make_shared<ChunksExecutor>(chunks, size, gap);
    service_.RegisterSkill({"echo", "Echo", "echoes", {"echo"}, {}},
                           std::make_shared<tasks::EchoExecutor>());
    service_.RegisterSkill({"chunks", "Chunks", "streams chunks", {"test"}, {}}, chunks_);
    AgentCardConfig card;
    card.base_url = "http://127.0.0.1";
    router_ = std::make_unique<Router>(service_, BuildAgentCard(card, service_.skills()), opts);
    server_ = std::make_unique<HttpServer>(
        io_, [this](HttpRequest r) { return router_->Handle(std::move(r)); }, HttpServerOptions{});
    port_ = server_->Listen("127.0.0.1", 0).value();
    server_->Start();
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) {
      // Streams end on Stop (their coroutines must run to completion: a stream parked in a
      // subscription is only freed by finishing), so let the loop drain before stopping it.
      server_->Stop();
      WaitFor([&] { return server_->open_connections() == 0; }, std::chrono::seconds(2));
    }
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  static std::string SendBody(const std::string& method, const std::string& skill,
                              bool blocking = true, const std::string& message_id = "") {
    json::object msg{{"kind", "message"},
                     {"role", "user"},
                     {"messageId", message_id.empty() ? "m-" + skill : message_id},
                     {"parts", json::array{json::object{{"kind", "text"}, {"text", "go"}}}},
                     {"metadata", json::object{{"skillId", skill}}}};
    json::object params{{"message", msg}};
    if (!blocking) params["configuration"] = json::object{{"blocking", false}};
    return json::serialize(
        json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}});
  }
  static std::string ResubscribeBody(const std::string& task_id) {
    return json::serialize(json::object{{"jsonrpc", "2.0"},
                                        {"id", 2},
                                        {"method", "tasks/resubscribe"},
                                        {"params", json::object{{"id", task_id}}}});
  }
  std::unique_ptr<SseClient> Resubscribe(const std::string& task_id,
                                         std::optional<int64_t> after = {}) {
    std::vector<std::pair<std::string, std::string>> h;
    if (after) h.emplace_back("Last-Event-ID", std::to_string(*after));
    return std::make_unique<SseClient>("127.0.0.1", port_, "/v1/a2a", ResubscribeBody(task_id), h);
  }
  std::string StartTask(const std::string& skill) {
    HttpClient c("127.0.0.1", port_);
    auto r = c.Request("POST", "/v1/a2a", SendBody("message/send", skill, false));
    return std::string(r.Json().at("result").at("id").as_string());
  }
  void WaitTerminal(const std::string& id) {
    ASSERT_TRUE(WaitFor(
        [&] {
          auto t =
              asio::co_spawn(io_, service_.GetTask(ctx_, {"", id, {}}), asio::use_future).get();
          return t.ok() && protocol::IsTerminal(t->status.state);
        },
        std::chrono::seconds(10)))
        << "task " << id << " did not finish";
  }
  // The v0.3 results a complete observer of `id` must see: the projection of every logged
  // event, in order, keyed by sequence.
  std::vector<std::pair<int64_t, json::value>> ExpectedProjection(const std::string& id) {
    std::vector<std::pair<int64_t, json::value>> out;
    storage::TaskRecord rec;
    for (const auto& e : store_.ReadEvents(id, -1, 100000).value()) {
      auto applied = tasks::ApplyEvent(rec, e);
      EXPECT_TRUE(applied.ok()) << e.type << ": " << (applied.ok() ? "" : applied.error().message);
      if (auto ev = tasks::ProjectEvent(rec.task, e))
        out.emplace_back(e.sequence,
                         json::value(protocol::StreamEventToJson(*ev, protocol::Wire::kV03)));
    }
    return out;
  }
  int CountLogged(const std::string& id, const std::string& type) {
    int n = 0;
    for (const auto& e : store_.ReadEvents(id, -1, 100000).value()) n += e.type == type;
    return n;
  }

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore store_;
  asio::io_context io_;
  tasks::TaskService service_{store_, clock_, *ids_, io_.get_executor(), {}};
  const protocol::CallContext ctx_ =
      protocol::CallContext::Anonymous(protocol::Binding::kInternal, protocol::WireVersion::kV10);
  std::shared_ptr<ChunksExecutor> chunks_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> server_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
};

TEST_F(StreamingTest, DroppedStreamResumedWithLastEventIdMissesNothingAndRunsOnce) {
  Start({});
  SseClient first("127.0.0.1", port_, "/v1/a2a", SendBody("message/stream", "chunks"));
  ASSERT_EQ(first.status(), 200);
  ASSERT_EQ(first.content_type(), "text/event-stream");
  std::vector<SseEvent> got;
  while (got.size() < 4) {
    auto ev = first.Next();
    ASSERT_TRUE(ev.has_value());
    if (!ev->comment) got.push_back(*ev);
  }
  std::string task_id(got[0].Json().at("result").at("id").as_string());
  first.Close();  // the client goes away mid-run

  int64_t last = std::stoll(got.back().id);
  auto second = Resubscribe(task_id, last);
  for (auto& ev : second->ReadToEnd()) got.push_back(ev);
  WaitTerminal(task_id);

  auto expected = ExpectedProjection(task_id);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::stoll(got[i].id), expected[i].first) << i;  // 0,1,2,... no gap, no duplicate
    EXPECT_EQ(got[i].Json().at("result"), expected[i].second) << i;
  }
  EXPECT_EQ(got.back().Json().at("result").at("final"), true);
  EXPECT_EQ(CountLogged(task_id, "run.started"), 1);
  EXPECT_EQ(chunks_->executions.load(), 1);
}

// An HTTP/1.1 stream is chunked: it ends with the last chunk, and the connection takes the
// next request (clients keep their connection, as with the SDKs' servers). A client that
// asks to close gets the stream ended by closing.
TEST_F(StreamingTest, AStreamEndsWithItsLastChunkAndTheConnectionServesTheNextRequest) {
  Start({}, 3, 16, std::chrono::milliseconds(40));
  SseClient c("127.0.0.1", port_, "/v1/a2a", SendBody("message/stream", "chunks"));
  ASSERT_EQ(c.status(), 200);
  EXPECT_TRUE(c.chunked());
  auto first = c.ReadToEnd();
  ASSERT_FALSE(first.empty());
  EXPECT_TRUE(c.ended());
  EXPECT_EQ(first.back().Json().at("result").at("final"), true);
  std::string task_id(first[0].Json().at("result").at("id").as_string());
  // Same socket: a resubscribe to the finished task (its snapshot, then the stream ends),
  // then a plain JSON-RPC call.
  c.Again("/v1/a2a", ResubscribeBody(task_id));
  ASSERT_EQ(c.status(), 200);
  auto again = c.ReadToEnd();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].Json().at("result").at("status").at("state"), "completed");
  EXPECT_EQ(server_->open_connections(), 1u);

  // A request sent while a stream is still running (pipelined) is answered after it.
  c.Again("/v1/a2a", SendBody("message/stream", "chunks", true, "m-second"));
  auto opened = c.Next();
  ASSERT_TRUE(opened.has_value());
  const std::string second_task(opened->Json().at("result").at("id").as_string());
  ASSERT_NE(second_task, task_id);
  c.Pipeline("/v1/a2a", ResubscribeBody(second_task));
  EXPECT_FALSE(c.ReadToEnd().empty());
  ASSERT_TRUE(c.ended());
  c.NextResponse();
  ASSERT_EQ(c.status(), 200);
  auto pipelined = c.ReadToEnd();
  ASSERT_EQ(pipelined.size(), 1u);
  EXPECT_EQ(pipelined[0].Json().at("result").at("id").as_string(), second_task);

  SseClient closing("127.0.0.1", port_, "/v1/a2a", ResubscribeBody(task_id),
                    {{"Connection", "close"}});
  EXPECT_FALSE(closing.chunked());
  EXPECT_EQ(closing.ReadToEnd().size(), 1u);
  EXPECT_TRUE(closing.ended());  // by the server closing the connection
}

// The head of a stream whose events are all at hand goes out with them, in one write; a
// stream with nothing to send yet sends its head at once, so that the client knows it is open
// while it waits.
TEST_F(StreamingTest, AStreamWaitingForItsFirstEventHasItsHeadAtOnce) {
  Start({}, 1, 16, std::chrono::seconds(3));
  const std::string id = StartTask("chunks");
  ASSERT_TRUE(WaitFor([&] { return CountLogged(id, "run.started") == 1; }));
  int64_t last = -1;
  for (const auto& e : store_.ReadEvents(id, -1, 100).value()) last = e.sequence;
  auto c = Resubscribe(id, last);  // nothing after `last` until the chunk, 3 s after the start
  ASSERT_EQ(c->status(), 200);
  EXPECT_TRUE(c->chunked());
  // Without a chunked body too (the response ends with the connection).
  SseClient closing("127.0.0.1", port_, "/v1/a2a", ResubscribeBody(id),
                    {{"Last-Event-ID", std::to_string(last)}, {"Connection", "close"}});
  ASSERT_EQ(closing.status(), 200);
  EXPECT_FALSE(closing.chunked());
  EXPECT_EQ(chunks_->chunks_begun.load(), 0);  // both heads came before the chunk was made
  auto chunk = c->Next();
  ASSERT_TRUE(chunk.has_value());
  EXPECT_GT(std::stoll(chunk->id), last);
  auto same = closing.Next();
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->id, chunk->id);
}

// A client sends its next request the moment a stream's last chunk arrives, which can be
// before the server has stopped watching the connection for the client leaving: every
// request on the connection is answered, none is lost in between.
TEST_F(StreamingTest, BackToBackStreamsOnOneConnectionAreAllAnswered) {
  Start({});
  SseClient c("127.0.0.1", port_, "/v1/a2a", SendBody("message/stream", "echo", true, "m-back-0"));
  for (int i = 1; i <= 300; ++i) {
    ASSERT_EQ(c.status(), 200) << i;
    auto events = c.ReadToEnd(std::chrono::seconds(5));
    ASSERT_TRUE(c.ended()) << "stream " << i << " did not end";
    ASSERT_FALSE(events.empty()) << i;
    EXPECT_EQ(events.back().Json().at("result").at("final"), true) << i;
    if (i < 300)
      c.Again("/v1/a2a", SendBody("message/stream", "echo", true, "m-back-" + std::to_string(i)));
  }
  EXPECT_EQ(server_->open_connections(), 1u);
}

TEST_F(StreamingTest, TwoHundredObserversReceiveIdenticalOrderedEvents) {
  Start({}, 10, 16, std::chrono::milliseconds(30));
  std::string id = StartTask("chunks");
  constexpr int kObservers = 200;
  std::vector<std::vector<std::string>> seen(kObservers);
  std::vector<std::thread> readers;
  std::atomic<int> connected{0};
  for (int i = 0; i < kObservers; ++i) {
    readers.emplace_back([&, i] {
      auto c = Resubscribe(id, 0);  // all replay from the same cursor: identical streams
      ++connected;
      for (auto& ev : c->ReadToEnd()) seen[static_cast<size_t>(i)].push_back(ev.id + "|" + ev.data);
    });
  }
  for (auto& r : readers) r.join();
  WaitTerminal(id);
  auto expected = ExpectedProjection(id);
  ASSERT_EQ(seen[0].size(), expected.size() - 1);  // everything after event 0
  for (int i = 1; i < kObservers; ++i)
    EXPECT_EQ(seen[static_cast<size_t>(i)], seen[0]) << "observer " << i;
  EXPECT_EQ(chunks_->executions.load(), 1);
  EXPECT_EQ(service_.subscriber_count(id), 0u);
}

TEST_F(StreamingTest, ObserversWithoutCursorGetSnapshotThenOrderedLiveEvents) {
  Start({}, 8, 16, std::chrono::milliseconds(25));
  std::string id = StartTask("chunks");
  std::vector<std::thread> readers;
  std::atomic<int> ok{0};
  for (int i = 0; i < 20; ++i) {
    readers.emplace_back([&] {
      auto events = Resubscribe(id)->ReadToEnd();
      if (events.empty() || events[0].Json().at("result").at("kind") != "task") return;
      int64_t prev = -1;
      for (auto& ev : events) {
        if (std::stoll(ev.id) <= prev) return;
        prev = std::stoll(ev.id);
      }
      if (events.back().Json().at("result").at("status").at("state") == "completed") ++ok;
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(ok.load(), 20);
}

TEST_F(StreamingTest, StalledReaderIsCutWithAResumePointAndDoesNotStallOthers) {
  StreamOptions opts;
  opts.queue_limit = 4;
  Start(opts, 200, 32 * 1024, std::chrono::milliseconds(1));  // ~6.5 MB through the stream
  std::string id = StartTask("chunks");
  auto stalled = Resubscribe(id, 0);  // connected, but does not read for now
  auto fast = Resubscribe(id, 0);
  auto fast_events = fast->ReadToEnd();
  ASSERT_FALSE(fast_events.empty());
  EXPECT_EQ(fast_events.back().Json().at("result").at("status").at("state"), "completed");
  WaitTerminal(id);

  // Now the stalled reader catches up with what was in flight and learns where to resume.
  std::vector<SseEvent> partial = stalled->ReadToEnd();
  ASSERT_FALSE(partial.empty());
  const SseEvent& cut = partial.back();
  ASSERT_EQ(cut.event, "error") << cut.data;
  auto err = cut.Json().at("error");
  EXPECT_NE(std::string(err.at("message").as_string()).find("resubscribe with Last-Event-ID"),
            std::string::npos);
  int64_t resume = std::stoll(std::string(err.at("data").at("lastEventId").as_string()));
  EXPECT_EQ(resume, std::stoll(partial[partial.size() - 2].id));  // the last event it got
  auto rest = Resubscribe(id, resume)->ReadToEnd();
  std::vector<int64_t> ids;
  for (size_t i = 0; i + 1 < partial.size(); ++i) ids.push_back(std::stoll(partial[i].id));
  for (auto& ev : rest) ids.push_back(std::stoll(ev.id));
  auto expected = ExpectedProjection(id);
  ASSERT_EQ(ids.size(), expected.size() - 1);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], static_cast<int64_t>(i + 1));
}

TEST_F(StreamingTest, IdleStreamsGetHeartbeatComments) {
  StreamOptions opts;
  opts.heartbeat = std::chrono::milliseconds(50);
  Start(opts, 2, 16, std::chrono::milliseconds(400));
  std::string id = StartTask("chunks");
  auto c = Resubscribe(id);
  auto first = c->Next();
  ASSERT_TRUE(first && !first->comment);
  auto second = c->Next(std::chrono::milliseconds(300));
  ASSERT_TRUE(second.has_value());
  EXPECT_TRUE(second->comment);
}

TEST_F(StreamingTest, AClientLeavingFreesItsSubscriptionAtOnce) {
  Start({}, 3, 16, std::chrono::seconds(5));
  std::string id = StartTask("chunks");
  auto c = Resubscribe(id);
  ASSERT_TRUE(c->Next().has_value());
  EXPECT_EQ(service_.subscriber_count(id), 1u);
  c->Close();
  WaitFor([&] { return service_.subscriber_count(id) == 0; }, std::chrono::seconds(2));
  EXPECT_EQ(service_.subscriber_count(id), 0u);  // well before the 5 s the task still runs
}

TEST_F(StreamingTest, ResubscribeIsReadOnly) {
  Start({}, 3, 16, std::chrono::milliseconds(10));
  std::string id = StartTask("chunks");
  for (int i = 0; i < 5; ++i) Resubscribe(id)->ReadToEnd();
  WaitTerminal(id);
  EXPECT_EQ(chunks_->executions.load(), 1);
  EXPECT_EQ(CountLogged(id, "run.started"), 1);
  EXPECT_EQ(CountLogged(id, "a2a.task.submitted"), 1);
}

TEST_F(StreamingTest, ShutdownEndsStreamsWithAResumePoint) {
  Start({}, 3, 16, std::chrono::seconds(5));
  std::string id = StartTask("chunks");
  auto c = Resubscribe(id);
  auto first = c->Next();
  ASSERT_TRUE(first && !first->comment);
  server_->Stop();
  auto events = c->ReadToEnd(std::chrono::seconds(2));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "error");
  EXPECT_NE(events[0].data.find("shutting down; resubscribe with Last-Event-ID: " + first->id),
            std::string::npos)
      << events[0].data;
  EXPECT_TRUE(c->ended());
}

// Before the first event: v0.3 answers with a stream of one `error` event carrying the
// JSON-RPC error (what v0.3 clients read); v1.0 with a JSON error body.
TEST_F(StreamingTest, StreamingErrorsBeforeTheFirstEventAreOneErrorEventInV03AndJsonInV10) {
  Start({});
  SseClient c("127.0.0.1", port_, "/v1/a2a", ResubscribeBody("no-such-task"));
  EXPECT_EQ(c.status(), 200);
  EXPECT_EQ(c.content_type(), "text/event-stream");
  auto events = c.ReadToEnd();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event, "error");
  json::value error = json::parse(events[0].data);
  EXPECT_EQ(error.at("id"), json::value(2));
  EXPECT_EQ(error.at("error").at("code"), json::value(-32001));

  SseClient v10("127.0.0.1", port_, "/v1/a2a",
                json::serialize(json::object{{"jsonrpc", "2.0"},
                                             {"id", 3},
                                             {"method", "SubscribeToTask"},
                                             {"params", json::object{{"id", "no-such-task"}}}}),
                {{"A2A-Version", "1.0"}});
  EXPECT_EQ(v10.status(), 200);
  EXPECT_EQ(v10.content_type(), "application/json");
}

}  // namespace
}  // namespace a2ad::transport
