// The OPT store (ext/opt/opt_store.hpp) on a real SQLite file: a change that fails leaves what
// is stored and what the writer remembers as they were; an objective re-read after a reopen is
// the same; the outbox asks for a run exactly when the change that makes it due is written;
// events are gap-free per objective.
#include "a2ad/ext/opt/opt_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <filesystem>

#include "test_paths.hpp"

namespace a2ad::ext::opt {
namespace {
namespace asio = boost::asio;
using S = TaskStatus;

template <class T>
T Await(asio::io_context& io, asio::awaitable<T> a) {
  auto f = asio::co_spawn(io, std::move(a), asio::use_future);
  io.restart();
  io.run();
  return f.get();
}

class OptStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-opt-store");
    Open();
  }
  void TearDown() override {
    Close();
    std::filesystem::remove_all(dir_);
  }
  void Open() {
    storage::SqliteOptions opts;
    opts.components.push_back(OptStore::Migrations());
    auto db = storage::SqliteTaskStore::Open((dir_ / "a2ad.db").string(), opts);
    ASSERT_TRUE(db) << db.error().message;
    db_ = std::move(db).value();
    store_ = std::make_unique<OptStore>(*db_, Limits{});
  }
  void Close() {
    store_.reset();
    if (db_) db_->Close();
    db_.reset();
  }
  // An objective "o" with one plan "p" of `n` tasks t0.. (each depending on the one before),
  // naming skill `skill` ("" : none), executing or not.
  void Seed(int n, const std::string& skill = "", bool execute = false) {
    Objective o;
    o.id = "o";
    o.tenant = "t";
    o.owner = "me";
    o.name = "o";
    ASSERT_TRUE(Await(io_, store_->Create(o)));
    PlanSpec spec;
    spec.name = "p";
    spec.execute = execute;
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      TaskSpec t;
      t.name = "t" + std::to_string(i);
      t.skill = skill;
      if (i > 0) t.dependencies = {"task-" + std::to_string(i - 1)};
      spec.tasks.push_back(t);
      ids.push_back("t" + std::to_string(i));
    }
    auto added = Await(io_, store_->Update("t", OptStore::By::kObjective, "o",
                                         [spec, ids](Objective& ob) {
                                           return AddPlan(ob, spec, "p", ids, Limits{}, 1);
                                         },
                                         1));
    ASSERT_TRUE(added) << added.error().message;
  }
  Objective Get() {
    auto o = Await(io_, store_->Get("t", OptStore::By::kObjective, "o"));
    EXPECT_TRUE(o);
    return o ? o.value() : Objective{};
  }
  core::Result<OptStore::Written> Move(const std::string& task, S to, int64_t at) {
    return Await(io_, store_->Update("t", OptStore::By::kTask, task,
                                   [task, to, at](Objective& ob) {
                                     return SetTaskStatus(ob, task, to, at);
                                   },
                                   at));
  }

  std::filesystem::path dir_;
  asio::io_context io_;
  std::unique_ptr<storage::SqliteTaskStore> db_;
  std::unique_ptr<OptStore> store_;
};

TEST_F(OptStoreTest, AFailedChangeLeavesTheStoredAndTheRememberedObjectiveAsTheyWere) {
  Seed(2);
  ASSERT_TRUE(Move("t0", S::kWorking, 2));  // the writer remembers the objective now
  // A change that alters the tree and then fails.
  auto failed = Await(io_, store_->Update("t", OptStore::By::kTask, "t1",
                                        [](Objective& ob) -> core::Result<void> {
                                          FindTask(ob, "t1")->status = S::kCompleted;
                                          FindTask(ob, "t0")->name = "changed";
                                          return core::Error(core::ErrorCode::kInvalidParams, "no");
                                        },
                                        3));
  ASSERT_FALSE(failed);
  Objective now = Get();
  EXPECT_EQ(FindTask(now, "t1")->status, S::kPending);
  EXPECT_EQ(FindTask(now, "t0")->name, "t0");
  // The next change starts from what is stored, not from the failed change's leftovers.
  auto next = Move("t0", S::kCompleted, 4);
  ASSERT_TRUE(next);
  EXPECT_EQ(FindTask(next->objective, "t1")->status, S::kPending);
  EXPECT_EQ(FindTask(next->objective, "t0")->name, "t0");
  Objective stored = Get();
  EXPECT_EQ(FindTask(stored, "t0")->status, S::kCompleted);
}

TEST_F(OptStoreTest, WhatIsWrittenReadsBackWholeAfterAReopen) {
  Seed(3);
  ASSERT_TRUE(Move("t0", S::kCompleted, 2));
  ASSERT_TRUE(Move("t1", S::kInputRequired, 3));
  const Objective before = Get();
  EXPECT_EQ(before.status, ObjectiveStatus::kBlocked);
  Close();
  Open();
  const Objective after = Get();
  EXPECT_EQ(RowOf(after), RowOf(before));
  ASSERT_EQ(after.plans.size(), 1u);
  EXPECT_EQ(RowOf(after.plans[0]), RowOf(before.plans[0]));
  EXPECT_EQ(after.plans[0].tasks, before.plans[0].tasks);
  // Events: one per status that moved, numbered without a gap.
  auto events = store_->ReadEvents("o", -1, 1000);
  ASSERT_TRUE(events);
  for (size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i].sequence, static_cast<int64_t>(i));
  EXPECT_FALSE(events->back().last);
}

TEST_F(OptStoreTest, TheOutboxAsksForARunWhenItsTaskBecomesDueAndOnlyThen) {
  Seed(2, "work", true);
  auto pending = Await(io_, store_->PendingActions(10));
  ASSERT_TRUE(pending);
  ASSERT_EQ(pending->size(), 1u);  // t0 only: t1 waits for it
  const RunAction a = pending->front();
  EXPECT_EQ(a.kind, RunAction::Kind::kStart);
  EXPECT_EQ(a.run_id, RunIdFor("t0"));
  EXPECT_EQ(a.plan_task_id, "t0");
  EXPECT_EQ(a.tenant, "t");
  EXPECT_EQ(a.owner, "me");
  EXPECT_EQ(a.skill, "work");
  EXPECT_EQ(a.task_metadata.at(kObjectiveIdKey), "o");
  EXPECT_EQ(a.task_metadata.at(kPlanTaskIdKey), "t0");
  Objective o = Get();
  EXPECT_EQ(FindTask(o, "t0")->a2a_task_id, a.run_id);
  // A start that cannot be made fails its task, and its dependent with it.
  auto done = Await(io_, store_->ActionDone(a, std::string("no such workflow"), 5));
  ASSERT_TRUE(done);
  EXPECT_TRUE(Await(io_, store_->PendingActions(10))->empty());
  Objective after = Get();
  EXPECT_EQ(FindTask(after, "t0")->status, S::kFailed);
  EXPECT_EQ(FindTask(after, "t0")->error, "no such workflow");
  EXPECT_EQ(FindTask(after, "t1")->status, S::kCanceled);
  EXPECT_EQ(after.status, ObjectiveStatus::kFailed);
}

TEST_F(OptStoreTest, EndingTheObjectiveTakesBackItsStartsAndAsksToCancelThem) {
  Seed(1, "work", true);
  ASSERT_EQ(Await(io_, store_->PendingActions(10))->size(), 1u);
  auto canceled = Await(io_, store_->Update("t", OptStore::By::kObjective, "o",
                                          [](Objective& ob) {
                                            return SetObjectiveStatus(ob, ObjectiveStatus::kCanceled, 6);
                                          },
                                          6));
  ASSERT_TRUE(canceled);
  auto pending = Await(io_, store_->PendingActions(10));
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ(pending->front().kind, RunAction::Kind::kCancel);
  EXPECT_EQ(pending->front().run_id, RunIdFor("t0"));
}

}  // namespace
}  // namespace a2ad::ext::opt
