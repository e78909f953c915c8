// The wake timer (wake_timer.hpp) over a real store and the service: runs parked with a wake time
// hold no execution, each is executed once at its time, in order; one answered before its
// time is left alone; a park committed after the timer started (NoteWake) is woken too; a
// stopped timer ends its loop (the io_context runs out of work).
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/forwarding_task_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "wait_for.hpp"

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using protocol::TaskState;

// A parked run's executor, as the workflow engine's: a time ahead is left to the timer; a due
// one ends the run. Notes when each run was woken.
class TimedGate final : public Executor {
 public:
  asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override {
    const std::optional<int64_t> until = storage::ParkedUntil(ctx->record().run);
    if (!until || *until <= 0 || ctx->WakeLater(*until)) co_return;
    {
      std::lock_guard lock(mu_);
      woken_[ctx->task_id()].push_back(core::SystemClock().NowMs());
    }
    std::vector<EventDraft> end(1);
    end[0].type = protocol::kEvRunCompleted;
    (void)co_await ctx->Commit(std::move(end));
  }
  bool WakesParked() const override { return true; }
  std::map<std::string, std::vector<int64_t>> woken() {
    std::lock_guard lock(mu_);
    return woken_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<int64_t>> woken_;
};

// The store as the service sees it: counts the wake timer's looks (ListWakes), for a test to
// wait until the timer has looked instead of sleeping.
class LookCountingStore final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;
  core::Result<std::vector<storage::Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                                     size_t limit,
                                                     std::string_view holder) override {
    auto page = inner().ListWakes(after_ms, after_id, limit, holder);
    ++looks_;
    return page;
  }
  int looks() const { return looks_.load(); }

 private:
  std::atomic<int> looks_{0};
};

class WakeTimerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service_ = std::make_unique<TaskService>(seen_, clock_, *ids_, io_.get_executor(),
                                             TaskServiceOptions{});
    service_->RegisterSkill({"timed"}, gate_);
  }
  void TearDown() override {
    service_->StopAccepting();
    work_.reset();
    if (thread_.joinable()) thread_.join();
  }
  void Run() {
    service_->StartWakes();
    thread_ = std::thread([this] { io_.run(); });
  }
  // A task parked at a gate that times out at `at_ms` (0: none), as its log folds to.
  void Park(const std::string& id, int64_t at_ms) {
    storage::TaskCommit c;
    protocol::Message m;
    m.message_id = "m-" + id;
    m.role = protocol::Role::kUser;
    m.parts.push_back(protocol::Part::Text("go"));
    protocol::RunEvent submitted;
    submitted.event_id = id + "-0";
    submitted.run_id = id;
    submitted.sequence = 0;
    submitted.type = protocol::kEvTaskSubmitted;
    submitted.timestamp_ms = 1;
    submitted.payload = {
        {"contextId", "c"}, {"skillId", "timed"}, {"message", protocol::MessageToJson(m)}};
    protocol::RunEvent asks = submitted;
    asks.event_id = id + "-1";
    asks.sequence = 1;
    asks.type = protocol::kEvInputRequired;
    json::object interrupt{{"interruptId", "i"}};
    if (at_ms > 0) interrupt["expiresAt"] = at_ms;
    asks.payload = {{"kind", "clarification"}, {"interrupt", std::move(interrupt)}};
    asks.node_id = "ask";
    for (auto* e : {&submitted, &asks}) {
      ASSERT_TRUE(ApplyEvent(c.record, *e).ok()) << e->type;
      c.events.push_back(*e);
    }
    ASSERT_EQ(c.record.task.status.state, TaskState::kInputRequired);
    bool ok = false;
    store_.Commit(c, [&](core::Result<void> r) { ok = r.ok(); });
    ASSERT_TRUE(ok);
  }
  TaskState State(const std::string& id) { return (*store_.Get(id))->task.status.state; }
  // Waits (bounded) until `id` is completed.
  bool WaitCompleted(const std::string& id) {
    return testing::WaitFor([&] { return State(id) == TaskState::kCompleted; },
                            std::chrono::seconds(10));
  }
  // Waits (bounded) until the timer has read the store's wake times once.
  bool WaitLooked() {
    return testing::WaitFor([&] { return seen_.looks() > 0; }, std::chrono::seconds(4));
  }
  static int64_t Now() { return core::SystemClock().NowMs(); }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::thread thread_;
  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore store_;
  LookCountingStore seen_{store_};
  std::shared_ptr<TimedGate> gate_ = std::make_shared<TimedGate>();
  std::unique_ptr<TaskService> service_;
};

TEST_F(WakeTimerTest, EachRunIsWokenOnceAtItsTimeInOrder) {
  const int64_t t0 = Now();
  Park("late", t0 + 600);
  Park("overdue", t0 - 5000);  // came due while nothing ran: woken at the start
  Park("soon", t0 + 300);
  Park("never", 0);  // no timeout: waits for its answer
  Run();
  ASSERT_TRUE(WaitCompleted("late"));
  ASSERT_TRUE(WaitCompleted("soon"));
  ASSERT_TRUE(WaitCompleted("overdue"));
  const auto woken = gate_->woken();
  ASSERT_EQ(woken.count("never"), 0u);
  EXPECT_EQ(State("never"), TaskState::kInputRequired);
  for (const char* id : {"overdue", "soon", "late"}) ASSERT_EQ(woken.at(id).size(), 1u) << id;
  EXPECT_GE(woken.at("soon")[0], t0 + 300);
  EXPECT_GE(woken.at("late")[0], t0 + 600);
  EXPECT_LE(woken.at("overdue")[0], woken.at("soon")[0]);
  EXPECT_LE(woken.at("soon")[0], woken.at("late")[0]);
  EXPECT_EQ(service_->running_executions(), 0u);
}

TEST_F(WakeTimerTest, AParkNotedAfterTheStartIsWokenAndAnAnsweredRunIsNot) {
  Run();
  ASSERT_TRUE(WaitLooked());  // the loop has looked: none
  const int64_t t0 = Now();
  Park("parked-later", t0 + 300);
  Park("answered", t0 + 200);
  EXPECT_TRUE(service_->NoteWake(t0 + 200));  // as a park committed by this process notes
  // Answered before its time (another commit: running again, no wake time).
  storage::TaskRecord rec = **store_.Get("answered");
  storage::TaskCommit answer;
  answer.record = rec;
  answer.expected_last_sequence = rec.last_sequence;
  protocol::RunEvent resumed;
  resumed.event_id = "answered-2";
  resumed.run_id = "answered";
  resumed.sequence = rec.last_sequence + 1;
  resumed.type = protocol::kEvRunResumed;
  resumed.timestamp_ms = t0;
  ASSERT_TRUE(ApplyEvent(answer.record, resumed).ok());
  answer.events.push_back(resumed);
  bool ok = false;
  store_.Commit(answer, [&](core::Result<void> r) { ok = r.ok(); });
  ASSERT_TRUE(ok);
  ASSERT_FALSE(storage::ParkedUntil((*store_.Get("answered"))->run).has_value());

  ASSERT_TRUE(WaitCompleted("parked-later"));  // found at the time NoteWake brought forward
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(100));  // (answered was due at t0+200)
  EXPECT_EQ(gate_->woken().count("answered"), 0u);
}

TEST_F(WakeTimerTest, AStoppedTimerEndsItsLoop) {
  Run();
  ASSERT_TRUE(WaitLooked());  // waiting on its timer
  service_->StopAccepting();
  EXPECT_FALSE(service_->NoteWake(Now() + 1000));
  work_.reset();
  thread_.join();  // io_.run() returned: nothing of the timer is left waiting
  SUCCEED();
}

}  // namespace
}  // namespace a2ad::tasks
