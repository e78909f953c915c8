// The TaskStore contract on parked runs (task_store.hpp ListRunnable, ListWakes,
// UnfinishedRunsWaitingFor; stored_records.hpp ParkedUntil), run against every backend: a
// restart lists only the runs in flight, the wake timer reads the parked runs' times in order,
// a posted event finds the runs paused until it. Each commit rewrites what is read.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

#include "a2ad/storage/stored_records.hpp"
#include "task_store_backends.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::BackendNames;
using storage_test::Backends;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::IsOk;
using V = std::vector<std::string>;

protocol::RunSnapshot RunOf(const char* text) {
  return protocol::RunSnapshotFromJson(boost::json::parse(text).as_object());
}

// The run snapshots of the cases below.
const char* kRunning = R"({"status":"running"})";
const char* kAtGate = R"({"status":"waiting-input","interrupt":{"interruptId":"i1"}})";
const char* kAtTimedGate = R"({"status":"waiting-approval","interrupt":{"expiresAt":5000}})";
const char* kFollowingChild =
    R"({"status":"waiting-input","waitingOn":{"childRunId":"c"},"interrupt":{"expiresAt":1}})";
const char* kPausedWithTimers =
    R"({"status":"paused","pause":{"triggerAtMs":9000,"timeoutAtMs":7000}})";
const char* kPausedForEvent = R"({"status":"paused","pause":{"conditions":{"onEvent":"ci.done"}}})";

TEST(ParkedUntil, ReadsTheGateOrThePauseOfARun) {
  EXPECT_EQ(ParkedUntil(RunOf(kRunning)), std::nullopt);
  EXPECT_EQ(ParkedUntil(RunOf(R"({"status":"completed"})")), std::nullopt);
  EXPECT_EQ(ParkedUntil(RunOf(kAtGate)), 0);
  EXPECT_EQ(ParkedUntil(RunOf(kAtTimedGate)), 5000);
  // A run waiting for its child's gate follows the child: it needs its execution.
  EXPECT_EQ(ParkedUntil(RunOf(kFollowingChild)), std::nullopt);
  EXPECT_EQ(ParkedUntil(RunOf(kPausedWithTimers)), 7000);  // the earlier timer
  EXPECT_EQ(ParkedUntil(RunOf(R"({"status":"paused","pause":{"triggerAtMs":9000}})")), 9000);
  EXPECT_EQ(ParkedUntil(RunOf(kPausedForEvent)), 0);
  EXPECT_EQ(ParkedUntil(RunOf(R"({"status":"paused"})")), 0);
  EXPECT_EQ(ParkedUntil(RunOf(R"({"status":"paused","pause":{"timeoutAtMs":-5}})")), 0);
}

template <class Backend>
class ParkedRunsTest : public storage_test::BackendTest<Backend> {
 protected:
  using storage_test::BackendTest<Backend>::store_;
  using storage_test::BackendTest<Backend>::store;
  // Creates `id` in `state` with run snapshot `run`; returns the stored record.
  TaskRecord Make(const std::string& id, TaskState state, const char* run) {
    TaskCommit c = Create(id, "ctx", state);
    c.record.run = RunOf(run);
    EXPECT_TRUE(IsOk(CommitSync(*store_, c)));
    return c.record;
  }
  V Runnable(const std::string& after = "", size_t limit = 100) {
    auto page = store_->ListRunnable(after, limit);
    EXPECT_TRUE(IsOk(page));
    V ids;
    if (page.ok())
      for (const auto& r : page->records) ids.push_back(r.task.id);
    return ids;
  }
  std::vector<std::pair<std::string, int64_t>> Wakes(int64_t after_ms = 0,
                                                     const std::string& after_id = "",
                                                     size_t limit = 100) {
    auto wakes = store_->ListWakes(after_ms, after_id, limit, "");
    EXPECT_TRUE(IsOk(wakes));
    std::vector<std::pair<std::string, int64_t>> out;
    if (wakes.ok())
      for (const auto& w : *wakes) out.emplace_back(w.task_id, w.at_ms);
    return out;
  }

};

TYPED_TEST_SUITE(ParkedRunsTest, Backends, BackendNames);

TYPED_TEST(ParkedRunsTest, ARestartListsOnlyTheRunsInFlight) {
  this->Make("a-submitted", TaskState::kSubmitted, R"({"status":"pending"})");
  this->Make("b-running", TaskState::kWorking, kRunning);
  this->Make("c-gate", TaskState::kInputRequired, kAtGate);
  this->Make("d-timed-gate", TaskState::kInputRequired, kAtTimedGate);
  this->Make("e-child", TaskState::kInputRequired, kFollowingChild);
  this->Make("f-paused", TaskState::kWorking, kPausedWithTimers);
  this->Make("g-done", TaskState::kCompleted, R"({"status":"completed"})");
  EXPECT_EQ(this->Runnable(), (V{"a-submitted", "b-running", "e-child"}));
  // Paged by id: the token is the last id read.
  auto first = this->store().ListRunnable("", 2);
  ASSERT_TRUE(IsOk(first));
  ASSERT_EQ(first->records.size(), 2u);
  EXPECT_EQ(first->next_page_token, "b-running");
  EXPECT_EQ(this->Runnable(first->next_page_token, 2), V{"e-child"});
}

TYPED_TEST(ParkedRunsTest, EachCommitRewritesWhetherARunIsParked) {
  TaskRecord r = this->Make("run", TaskState::kWorking, kRunning);
  EXPECT_EQ(this->Runnable(), V{"run"});
  EXPECT_TRUE(this->Wakes().empty());
  // Parks at a timed gate: no longer runnable, woken at 5000.
  TaskCommit parks = Append(r, TaskState::kInputRequired, 2000);
  parks.record.run = RunOf(kAtTimedGate);
  ASSERT_TRUE(IsOk(CommitSync(this->store(), parks)));
  EXPECT_TRUE(this->Runnable().empty());
  EXPECT_EQ(this->Wakes(), (std::vector<std::pair<std::string, int64_t>>{{"run", 5000}}));
  // Answered: running again, no wake time.
  TaskCommit answered = Append(parks.record, TaskState::kWorking, 3000);
  answered.record.run = RunOf(kRunning);
  ASSERT_TRUE(IsOk(CommitSync(this->store(), answered)));
  EXPECT_EQ(this->Runnable(), V{"run"});
  EXPECT_TRUE(this->Wakes().empty());
  // Ended while its snapshot still says it waits (a cancel of a parked run): neither.
  TaskCommit cancelled = Append(answered.record, TaskState::kCanceled, 4000);
  cancelled.record.run = RunOf(kAtTimedGate);
  ASSERT_TRUE(IsOk(CommitSync(this->store(), cancelled)));
  EXPECT_TRUE(this->Runnable().empty());
  EXPECT_TRUE(this->Wakes().empty());
}

TYPED_TEST(ParkedRunsTest, TheWakeTimesAreReadInOrderAfterACursor) {
  this->Make("x", TaskState::kInputRequired, R"({"status":"waiting-input","interrupt":{"expiresAt":300}})");
  this->Make("b", TaskState::kInputRequired, R"({"status":"waiting-input","interrupt":{"expiresAt":100}})");
  this->Make("a", TaskState::kInputRequired, R"({"status":"waiting-input","interrupt":{"expiresAt":300}})");
  this->Make("p", TaskState::kWorking, R"({"status":"paused","pause":{"timeoutAtMs":200}})");
  this->Make("untimed", TaskState::kInputRequired, kAtGate);
  using W = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(this->Wakes(), (W{{"b", 100}, {"p", 200}, {"a", 300}, {"x", 300}}));
  EXPECT_EQ(this->Wakes(0, "", 2), (W{{"b", 100}, {"p", 200}}));
  // After (time, id): a tie on the time is broken by the id.
  EXPECT_EQ(this->Wakes(200, "p"), (W{{"a", 300}, {"x", 300}}));
  EXPECT_EQ(this->Wakes(300, "a"), (W{{"x", 300}}));
  EXPECT_TRUE(this->Wakes(300, "x").empty());
}

TYPED_TEST(ParkedRunsTest, APostedEventFindsTheRunsPausedUntilIt) {
  TaskRecord waits = this->Make("w", TaskState::kWorking, kPausedForEvent);
  this->Make("other", TaskState::kWorking,
             R"({"status":"paused","pause":{"conditions":{"onEvent":"deploy.done"}}})");
  this->Make("gate", TaskState::kInputRequired, kAtGate);
  auto found = this->store().UnfinishedRunsWaitingFor(kDefaultTenant, "ci.done");
  ASSERT_TRUE(IsOk(found));
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(**found, V{"w"});
  EXPECT_TRUE(this->store().UnfinishedRunsWaitingFor("another", "ci.done")->value().empty());
  TaskCommit resumed = Append(waits, TaskState::kWorking, 2000);
  resumed.record.run = RunOf(kRunning);
  ASSERT_TRUE(IsOk(CommitSync(this->store(), resumed)));
  EXPECT_TRUE(this->store().UnfinishedRunsWaitingFor(kDefaultTenant, "ci.done")->value().empty());
}

}  // namespace
}  // namespace a2ad::storage
