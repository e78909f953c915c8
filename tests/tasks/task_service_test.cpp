// TaskService over real stores: the log is the truth (folding it reproduces the stored
// snapshot), blocking/non-blocking sends, cancel racing an execution, recovery after a
// restart, failed commits, and concurrency.
#include "a2ad/tasks/task_service.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <filesystem>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/forwarding_task_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "run_on.hpp"
#include "wait_for.hpp"

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using S = protocol::TaskState;

// Commits run.started, waits `delay`, then completes (unless canceled meanwhile).
class SlowExecutor final : public Executor {
 public:
  explicit SlowExecutor(std::chrono::milliseconds delay) : delay_(delay) {}
  asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override {
    std::vector<EventDraft> start;
    start.push_back({"run.started", "", {}});
    if (!(co_await ctx->Commit(std::move(start))).ok()) co_return;
    asio::steady_timer t(co_await asio::this_coro::executor, delay_);
    co_await t.async_wait(asio::use_awaitable);
    std::vector<EventDraft> done;
    done.push_back({"run.completed", "", {}});
    auto r = co_await ctx->Commit(std::move(done));
    last_commit_ok = r.ok();
    if (!r.ok()) last_error = r.error().code;
  }
  std::atomic<bool> last_commit_ok{true};
  std::atomic<core::ErrorCode> last_error{core::ErrorCode::kInternal};

 private:
  std::chrono::milliseconds delay_;
};

// Parks at input-required; on a reply it does nothing (the reply itself moved it to working).
class ParkExecutor final : public Executor {
 public:
  asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override {
    ++executions;
    if (ctx->task().status.state != S::kSubmitted) co_return;
    std::vector<EventDraft> step;
    step.push_back({"run.started", "", {}});
    step.push_back({"node.suspended", "ask", {{"kind", "clarification"}}});
    (void)co_await ctx->Commit(std::move(step));
  }
  std::atomic<int> executions{0};
};

class ThrowingExecutor final : public Executor {
 public:
  asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext>) override {
    throw std::runtime_error("bug in a node");
    co_return;
  }
};

protocol::SendMessageRequest Send(const std::string& text, const std::string& skill = "",
                                  bool immediately = false) {
  protocol::SendMessageRequest r;
  r.message.message_id = "m-" + text;
  r.message.role = protocol::Role::kUser;
  r.message.parts.push_back(protocol::Part::Text(text));
  if (!skill.empty()) r.message.metadata["skillId"] = skill;
  r.configuration.return_immediately = immediately;
  return r;
}

class TaskServiceTest : public ::testing::Test {
 protected:
  explicit TaskServiceTest(storage::TaskStore* store = nullptr)
      : store_(store ? store : &memory_) {}

  void Make(TaskServiceOptions opts = {}) {
    service_ = std::make_unique<TaskService>(*store_, clock_, *ids_, io_.get_executor(), opts);
    service_->RegisterSkill({"echo"}, std::make_shared<EchoExecutor>());
    service_->RegisterSkill({"slow"}, slow_);
    service_->RegisterSkill({"throws"}, std::make_shared<ThrowingExecutor>());
    service_->RegisterSkill({"park"}, park_);
  }

  template <class T>
  T Run(asio::awaitable<T> aw) {
    return a2ad::testing::RunOn(io_, std::move(aw));
  }
  void Drain() {
    io_.restart();
    io_.run();
  }

  // Folding a task's stored log from nothing must give exactly its stored record.
  void ExpectLogFoldsToSnapshot(const std::string& task_id) {
    auto events = store_->ReadEvents(task_id, -1, 10000);
    ASSERT_TRUE(events.ok());
    storage::TaskRecord folded;
    for (const auto& e : events.value()) ASSERT_TRUE(ApplyEvent(folded, e).ok()) << e.type;
    auto stored = store_->Get(task_id);
    ASSERT_TRUE(stored.ok() && stored.value().has_value());
    EXPECT_EQ(folded, *stored.value()) << task_id;
  }

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore memory_;
  storage::TaskStore* store_;
  asio::io_context io_;
  std::shared_ptr<SlowExecutor> slow_ =
      std::make_shared<SlowExecutor>(std::chrono::milliseconds(200));
  std::shared_ptr<ParkExecutor> park_ = std::make_shared<ParkExecutor>();
  std::unique_ptr<TaskService> service_;
  // The caller of every request: the anonymous caller of the default tenant.
  const protocol::CallContext ctx_ =
      protocol::CallContext::Anonymous(protocol::Binding::kInternal, protocol::WireVersion::kV10);
};

TEST_F(TaskServiceTest, BlockingEchoCompletesAndTheLogFoldsToTheSnapshot) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("hello")));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status.state, S::kCompleted);
  ASSERT_EQ(t->artifacts.size(), 1u);
  EXPECT_EQ(t->artifacts[0].parts[0].text, "hello");
  auto events = store_->ReadEvents(t->id, -1, 100).value();
  std::vector<std::string> types;
  for (const auto& e : events) types.push_back(e.type);
  EXPECT_EQ(types, (std::vector<std::string>{"a2a.task.submitted", "run.started",
                                             "artifact.created", "run.completed"}));
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].sequence, static_cast<int64_t>(i));
  ExpectLogFoldsToSnapshot(t->id);
}

// Counts the commits a store receives (everything else forwards).
class CountingStore final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;
  void Commit(storage::TaskCommit c, CommitCallback done) override {
    ++commits;
    inner().Commit(std::move(c), std::move(done));
  }
  std::atomic<int> commits{0};
};

class TaskServiceCommitCountTest : public TaskServiceTest {
 protected:
  TaskServiceCommitCountTest() : TaskServiceTest(&counting_) {}
  storage::MemoryTaskStore inner_;
  CountingStore counting_{inner_};
};

// What the executor decides at once rides in the creating transaction for a blocking send
// (one commit, not two); a non-blocking send still answers with the task as submitted.
TEST_F(TaskServiceCommitCountTest, ABlockingEchoIsOneTransaction) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("one")));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status.state, S::kCompleted);
  Drain();
  EXPECT_EQ(counting_.commits.load(), 1);
  ExpectLogFoldsToSnapshot(t->id);
  auto n = Run(service_->SendMessage(ctx_, Send("two", "", true)));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->status.state, S::kSubmitted);
  Drain();
  EXPECT_EQ(counting_.commits.load(), 3);
  EXPECT_EQ(Run(service_->GetTask(ctx_, {"", n->id, {}}))->status.state, S::kCompleted);
}

// Holds commits until Release() (everything else forwards): a commit "in flight".
class HoldingStore final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;
  void Commit(storage::TaskCommit c, CommitCallback done) override {
    if (!hold) return inner().Commit(std::move(c), std::move(done));
    held_.emplace_back(std::move(c), std::move(done));
  }
  void Release() {
    hold = false;
    for (auto& [c, done] : std::exchange(held_, {})) inner().Commit(std::move(c), std::move(done));
  }
  size_t held() const { return held_.size(); }
  bool hold = false;

 private:
  std::vector<std::pair<storage::TaskCommit, CommitCallback>> held_;
};

class TaskServiceInFlightTest : public TaskServiceTest {
 protected:
  TaskServiceInFlightTest() : TaskServiceTest(&holding_) {}
  storage::MemoryTaskStore inner_;
  HoldingStore holding_{inner_};
};

// Stream items are made only for commits with a stream attached. A stream that attaches
// while a commit is in flight (its snapshot read does not see it yet) still gets that
// commit's own events, the same ones an observed commit produces, not a gap.
TEST_F(TaskServiceInFlightTest, AStreamAttachingDuringACommitGetsItsEvents) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("x", "park")));
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->status.state, S::kInputRequired);
  const int64_t before = inner_.Get(t->id).value()->last_sequence;

  holding_.hold = true;
  std::optional<core::Result<protocol::Task>> canceled;
  asio::co_spawn(io_, service_->CancelTask(ctx_, {"", t->id, {}}),
                 [&](std::exception_ptr ep, core::Result<protocol::Task> r) {
                   if (ep) std::rethrow_exception(ep);
                   canceled.emplace(std::move(r));
                 });
  io_.restart();
  for (int i = 0; i < 1000 && holding_.held() == 0; ++i) io_.run_one();
  ASSERT_EQ(holding_.held(), 1u) << "the cancel's commit is in flight";

  auto a2a = Run(service_->Subscribe(ctx_, t->id, std::nullopt, 16));
  auto raw = Run(service_->SubscribeRunEvents(ctx_, t->id, before, 16));
  ASSERT_TRUE(a2a.ok() && raw.ok());
  EXPECT_EQ(a2a->last_sequence, before);  // the snapshot does not have the cancel yet
  holding_.Release();
  Drain();
  ASSERT_TRUE(canceled && canceled->ok());

  auto item = a2a->subscription->TryNext();
  ASSERT_TRUE(item);
  EXPECT_EQ(item->event.kind, protocol::StreamEvent::Kind::kStatusUpdate);
  EXPECT_EQ(item->event.status_update.status.state, S::kCanceled);
  EXPECT_EQ(item->sequence, before + 1);
  EXPECT_TRUE(item->terminal);
  EXPECT_FALSE(a2a->subscription->TryNext()) << "one item per event, no repeat";
  auto raw_item = raw->subscription->TryNext();
  ASSERT_TRUE(raw_item && raw_item->run_event);
  EXPECT_EQ(raw_item->run_event->type, protocol::kEvRunCancelled);
  EXPECT_EQ(raw_item->sequence, before + 1);
  EXPECT_FALSE(raw->subscription->TryNext());
}

TEST_F(TaskServiceTest, BlockingSendReturnsTheWorkingTaskAfterTheTimeout) {
  TaskServiceOptions o;
  o.blocking_timeout = std::chrono::milliseconds(30);
  Make(o);
  auto t = Run(service_->SendMessage(ctx_, Send("x", "slow")));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status.state, S::kWorking);
  Drain();  // the run goes on and completes
  EXPECT_EQ(Run(service_->GetTask(ctx_, {"", t->id, std::nullopt}))->status.state, S::kCompleted);
  EXPECT_EQ(service_->running_executions(), 0u);
}

TEST_F(TaskServiceTest, CancelWhileWorkingWinsAndTheExecutionStops) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("x", "slow", true)));
  ASSERT_TRUE(t.ok());
  // Let the execution commit run.started, then cancel before it finishes its delay.
  for (int i = 0;
       i < 100 && Run(service_->GetTask(ctx_, {"", t->id, {}}))->status.state != S::kWorking; ++i)
    io_.run_one();
  auto c = Run(service_->CancelTask(ctx_, {"", t->id, {}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->status.state, S::kCanceled);
  Drain();
  EXPECT_FALSE(slow_->last_commit_ok.load());
  EXPECT_EQ(slow_->last_error.load(), core::ErrorCode::kUnsupportedOperation);
  EXPECT_EQ(Run(service_->GetTask(ctx_, {"", t->id, {}}))->status.state, S::kCanceled);
  ExpectLogFoldsToSnapshot(t->id);
}

TEST_F(TaskServiceTest, RecoverUnfinishedReDrivesSubmittedTasks) {
  // A task committed as submitted whose execution never ran (the process died).
  storage::TaskCommit c;
  protocol::RunEvent e;
  e.event_id = "e0";
  e.run_id = "orphan";
  e.type = "a2a.task.submitted";
  protocol::Message m;
  m.message_id = "m1";
  m.role = protocol::Role::kUser;
  m.parts.push_back(protocol::Part::Text("still here"));
  e.payload = {{"contextId", "c"}, {"skillId", "echo"}, {"message", protocol::MessageToJson(m)}};
  e.timestamp_ms = 1;
  ASSERT_TRUE(ApplyEvent(c.record, e).ok());
  c.events.push_back(e);
  bool ok = false;
  store_->Commit(c, [&](core::Result<void> r) { ok = r.ok(); });
  ASSERT_TRUE(ok);
  Make();
  auto n = service_->RecoverUnfinished();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value(), 1u);
  Drain();
  auto t = Run(service_->GetTask(ctx_, {"", "orphan", {}}));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status.state, S::kCompleted);
  EXPECT_EQ(t->artifacts.at(0).parts.at(0).text, "still here");
  ExpectLogFoldsToSnapshot("orphan");
}

TEST_F(TaskServiceTest, AThrowingExecutorFailsTheTaskWithTheReason) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("x", "throws", true)));
  ASSERT_TRUE(t.ok());
  Drain();
  EXPECT_EQ(service_->running_executions(), 0u);
  auto after = Run(service_->GetTask(ctx_, {"", t->id, {}}));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status.state, S::kFailed);
  EXPECT_EQ(after->metadata.at("openwop").at("error").at("message"), "bug in a node");
  ExpectLogFoldsToSnapshot(t->id);
}

TEST_F(TaskServiceTest, OfTwoRepliesToOneInterruptOnlyTheFirstIsAccepted) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("q", "park")));
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->status.state, S::kInputRequired);
  auto reply = [&](const std::string& text) {
    auto r = Send(text, "", true);
    r.message.task_id = t->id;
    return r;
  };
  // Both start before either commits: the check happens under the task's lock.
  std::optional<core::Result<protocol::Task>> a, b;
  asio::co_spawn(io_, service_->SendMessage(ctx_, reply("first")),
                 [&](std::exception_ptr, auto r) { a = r; });
  asio::co_spawn(io_, service_->SendMessage(ctx_, reply("second")),
                 [&](std::exception_ptr, auto r) { b = r; });
  Drain();
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(a->ok());
  ASSERT_FALSE(b->ok());
  EXPECT_EQ(b->error().code, core::ErrorCode::kUnsupportedOperation);
  EXPECT_NE(b->error().message.find("not waiting for input"), std::string::npos)
      << b->error().message;
  EXPECT_EQ(park_->executions.load(), 2);  // the start and the one accepted reply
  auto now = Run(service_->GetTask(ctx_, {"", t->id, {}}));
  EXPECT_EQ(now->status.state, S::kWorking);
  EXPECT_EQ(now->history.back().parts.at(0).text, "first");
  ExpectLogFoldsToSnapshot(t->id);
}

TEST_F(TaskServiceTest, ACursorIntoAPrunedLogGetsTheSnapshotMarkedCompacted) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("old")));
  ASSERT_TRUE(t.ok());
  auto replay = Run(service_->Subscribe(ctx_, t->id, 0, 16));
  ASSERT_TRUE(replay.ok());
  EXPECT_FALSE(replay->history_compacted);
  EXPECT_EQ(replay->backlog.size(), 3u);  // working, artifact, completed

  auto pruned = store_->PruneEvents(clock_.NowMs() + 1);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(pruned.value(), 4u);
  auto after = Run(service_->Subscribe(ctx_, t->id, 0, 16));
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->history_compacted);
  EXPECT_TRUE(after->task_terminal);
  ASSERT_EQ(after->backlog.size(), 1u);
  const auto& snap = after->backlog[0]->event;
  ASSERT_EQ(snap.kind, protocol::StreamEvent::Kind::kTask);
  EXPECT_EQ(snap.task.status.state, S::kCompleted);
  EXPECT_EQ(snap.task.metadata.at("a2ad").at("historyCompacted"), true);
  EXPECT_EQ(after->backlog[0]->sequence, 3);
  // Without a cursor nothing was missed: the plain snapshot.
  auto plain = Run(service_->Subscribe(ctx_, t->id, std::nullopt, 16));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->history_compacted);
  EXPECT_FALSE(plain->backlog[0]->event.task.metadata.contains("a2ad"));
  // Get is unaffected by pruning.
  EXPECT_EQ(Run(service_->GetTask(ctx_, {"", t->id, {}}))->artifacts.size(), 1u);
}

// A2A 1.1 generation (task_projection.hpp): a resubscriber that names the last generation it
// saw gets exactly the events after it; past the task's generation is an error.
TEST_F(TaskServiceTest, ASubscriptionByGenerationReplaysExactlyTheEventsAfterIt) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("gen")));
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(GenerationOf(*t), 4);  // task 1, working 2, artifact 3, completed 4
  auto generations = [](const StreamStart& s) {
    std::vector<int64_t> out;
    for (const auto& item : s.backlog) {
      const auto& e = item->event;
      out.push_back(e.kind == protocol::StreamEvent::Kind::kTask ? GenerationOf(e.task)
                    : e.kind == protocol::StreamEvent::Kind::kArtifactUpdate
                        ? e.artifact_update.metadata.at("generation").as_int64()
                        : e.status_update.metadata.at("generation").as_int64());
    }
    return out;
  };
  for (int64_t seen = 0; seen <= 4; ++seen) {
    auto s = Run(service_->Subscribe(ctx_, t->id, StreamCursor::Generation(seen), 16));
    ASSERT_TRUE(s.ok()) << seen;
    std::vector<int64_t> want;
    for (int64_t g = seen + 1; g <= 4; ++g) want.push_back(g);
    EXPECT_EQ(generations(*s), want) << seen;
    EXPECT_TRUE(s->task_terminal);
  }
  auto past = Run(service_->Subscribe(ctx_, t->id, StreamCursor::Generation(5), 16));
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, core::ErrorCode::kInvalidParams);
  EXPECT_NE(past.error().message.find("past the task's generation (4)"), std::string::npos)
      << past.error().message;
}

// currentGeneration: GetTask waits until the generation passes it (a slow task completing),
// at most blocking_timeout; a value already passed answers at once.
TEST_F(TaskServiceTest, GetTaskWithCurrentGenerationWaitsForTheNextChange) {
  TaskServiceOptions opts;
  opts.blocking_timeout = std::chrono::milliseconds(5000);
  Make(opts);
  auto t = Run(service_->SendMessage(ctx_, Send("lp", "slow", true)));
  ASSERT_TRUE(t.ok());
  auto now = Run(service_->GetTask(ctx_, {"", t->id, {}}));
  ASSERT_TRUE(now.ok());
  protocol::GetTaskRequest poll{"", t->id, {}, GenerationOf(*now)};
  auto later = Run(service_->GetTask(ctx_, poll));
  ASSERT_TRUE(later.ok());
  EXPECT_GT(GenerationOf(*later), GenerationOf(*now));
  poll.current_generation = 0;
  const auto start = std::chrono::steady_clock::now();
  auto at_once = Run(service_->GetTask(ctx_, poll));
  ASSERT_TRUE(at_once.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(4000));
}

TEST_F(TaskServiceTest, GetTaskWithCurrentGenerationAnswersAtTheTimeoutUnchanged) {
  TaskServiceOptions opts;
  opts.blocking_timeout = std::chrono::milliseconds(150);
  Make(opts);
  auto t = Run(service_->SendMessage(ctx_, Send("q", "park")));
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->status.state, S::kInputRequired);
  const auto start = std::chrono::steady_clock::now();
  auto same = Run(service_->GetTask(ctx_, {"", t->id, {}, GenerationOf(*t)}));
  ASSERT_TRUE(same.ok());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(GenerationOf(*same), GenerationOf(*t));
}

// ifGenerationMatch: a reply based on another generation is refused and writes nothing.
TEST_F(TaskServiceTest, AReplyWithAStaleGenerationIsRefusedAndChangesNothing) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("q", "park")));
  ASSERT_TRUE(t.ok());
  const int64_t g = GenerationOf(*t);
  ASSERT_EQ(g, 3);  // task, working, input-required
  auto reply = Send("answer", "", true);
  reply.message.task_id = t->id;
  reply.configuration.if_generation_match = g - 1;
  auto stale = Run(service_->SendMessage(ctx_, reply));
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, core::ErrorCode::kGenerationMismatch);
  EXPECT_EQ(stale.error().message,
            "Task generation mismatch: expected 2 but current generation is 3");
  EXPECT_EQ(stale.error().details,
            (std::vector<core::ErrorDetail>{
                {"taskId", t->id}, {"expectedGeneration", "2"}, {"currentGeneration", "3"}}));
  auto unchanged = Run(service_->GetTask(ctx_, {"", t->id, {}}));
  EXPECT_EQ(unchanged->status.state, S::kInputRequired);
  EXPECT_EQ(unchanged->history.size(), t->history.size());
  reply.configuration.if_generation_match = g;
  auto accepted = Run(service_->SendMessage(ctx_, reply));
  ASSERT_TRUE(accepted.ok()) << accepted.error().message;
  EXPECT_EQ(accepted->status.state, S::kWorking);
  ExpectLogFoldsToSnapshot(t->id);
}

TEST_F(TaskServiceTest, StopAcceptingRefusesSends) {
  Make();
  service_->StopAccepting();
  auto t = Run(service_->SendMessage(ctx_, Send("x")));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, core::ErrorCode::kUnavailable);
}

TEST_F(TaskServiceTest, ConcurrentSendsFromManyThreads) {
  Make();
  auto guard = asio::make_work_guard(io_);
  std::vector<std::thread> pool;
  for (int i = 0; i < 4; ++i) pool.emplace_back([this] { io_.run(); });
  std::atomic<int> done{0};
  std::vector<std::string> ids(200);
  for (int i = 0; i < 200; ++i) {
    asio::co_spawn(io_, service_->SendMessage(ctx_, Send("n" + std::to_string(i))),
                   [&, i](std::exception_ptr, core::Result<protocol::Task> r) {
                     if (r.ok() && r->status.state == S::kCompleted)
                       ids[static_cast<size_t>(i)] = r->id;
                     ++done;
                   });
  }
  EXPECT_TRUE(testing::WaitFor([&] { return done == 200; }, std::chrono::seconds(120))) << done;
  guard.reset();
  io_.stop();
  for (auto& t : pool) t.join();
  for (const auto& id : ids) {
    ASSERT_FALSE(id.empty());
    ExpectLogFoldsToSnapshot(id);
  }
}

// Constructed before (and destroyed after) the TaskServiceTest base that uses its store.
struct SqliteHolder {
  SqliteHolder() {
    path = (std::filesystem::temp_directory_path() /
            ("a2ad-svc-" + std::to_string(::getpid()) + ".db"))
               .string();
    Remove();
    storage::SqliteOptions o;
    o.fail_commit_hook = [this] { return fail_next.exchange(false); };
    store = std::move(storage::SqliteTaskStore::Open(path, o).value());
  }
  ~SqliteHolder() {
    store.reset();
    Remove();
  }
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  }
  std::atomic<bool> fail_next{false};
  std::string path;
  std::unique_ptr<storage::SqliteTaskStore> store;
};

class TaskServiceSqliteTest : public SqliteHolder, public TaskServiceTest {
 protected:
  TaskServiceSqliteTest() : TaskServiceTest(store.get()) {}
  // The production order (app/server.cpp): the store is closed, so its writer thread has
  // dropped every commit callback (they hold task slots, whose strands need the io_context),
  // before the io_context is destroyed.
  ~TaskServiceSqliteTest() override {
    store->Close();  // its last callbacks may post fan-out jobs naming the service
    service_.reset();
  }
  std::atomic<bool>& fail_next_ = fail_next;
};

TEST_F(TaskServiceSqliteTest, AFailedCommitIsReportedAndTheNextOneStartsFromTheStore) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("x", "slow", true)));
  ASSERT_TRUE(t.ok());
  Drain();
  ASSERT_EQ(Run(service_->GetTask(ctx_, {"", t->id, {}}))->status.state, S::kCompleted);

  fail_next_ = true;  // the creation commit of the next task fails
  auto failed = Run(service_->SendMessage(ctx_, Send("y")));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, core::ErrorCode::kInternal);
  EXPECT_EQ(store_->List({}).value().total_size, 1);

  auto ok = Run(service_->SendMessage(ctx_, Send("z")));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status.state, S::kCompleted);
  ExpectLogFoldsToSnapshot(ok->id);
}

TEST_F(TaskServiceSqliteTest, AFailedStepLeavesTheTaskAtItsLastCommittedState) {
  Make();
  auto t = Run(service_->SendMessage(ctx_, Send("x", "slow", true)));
  ASSERT_TRUE(t.ok());
  for (int i = 0;
       i < 100 && Run(service_->GetTask(ctx_, {"", t->id, {}}))->status.state != S::kWorking; ++i)
    io_.run_one();
  fail_next_ = true;  // run.completed fails to commit
  Drain();
  EXPECT_FALSE(slow_->last_commit_ok.load());
  EXPECT_EQ(Run(service_->GetTask(ctx_, {"", t->id, {}}))->status.state, S::kWorking);
  // The service reloads the task from the store: a cancel now commits on top of it.
  auto c = Run(service_->CancelTask(ctx_, {"", t->id, {}}));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->status.state, S::kCanceled);
  ExpectLogFoldsToSnapshot(t->id);
}

}  // namespace
}  // namespace a2ad::tasks
