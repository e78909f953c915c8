// The OPT store (ext/opt/opt_store.hpp) on every backend (storage/backend.hpp: a SQLite file,
// a PostgreSQL database of the test cluster), through the same statements: a change that fails
// leaves what is stored and what the writer remembers as they were; an objective re-read after a
// reopen is the same; the outbox asks for a run exactly when the change that makes it due is
// written; events are gap-free per objective; a plan task linked to a task of this host takes
// that task's states in the task's own commits (the commit participant); a server sees what
// another server on the same database wrote, and on PostgreSQL a change racing another
// server's writes nothing.
#include "a2ad/ext/opt/opt_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include "a2ad/storage/postgres/pg_backend.hpp"
#include "a2ad/storage/sqlite/sqlite_backend.hpp"
#include "pg_cluster.hpp"
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

// The backends, each opened (and reopened) on the same data.
struct OnSqlite {
  std::filesystem::path dir = testing::FreshTestDir("a2ad-opt-store");
  ~OnSqlite() { std::filesystem::remove_all(dir); }
  core::Result<std::unique_ptr<storage::Backend>> Open() {
    storage::SqliteOptions opts;
    opts.components.push_back(OptStore::Migrations());
    auto b = storage::SqliteBackend::Open(dir.string(), opts);
    if (!b) return std::move(b).error();
    return std::unique_ptr<storage::Backend>(std::move(b).value());
  }
};

struct OnPostgres {
  std::string url = test::FreshPgDatabase();
  core::Result<std::unique_ptr<storage::Backend>> Open() {
    storage::PostgresOptions opts;
    opts.components.push_back(OptStore::Migrations());
    auto b = storage::PostgresBackend::Open(url, opts);
    if (!b) return std::move(b).error();
    return std::unique_ptr<storage::Backend>(std::move(b).value());
  }
};

class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, OnPostgres> ? "Postgres" : "Sqlite";
  }
};

template <class Backend>
class OptStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }
  void TearDown() override { Close(); }
  void Open() {
    auto db = backend_.Open();
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
  // An objective `oid` with one plan of `n` tasks, each depending on the one before ("o":
  // plan "p", tasks "t0", "t1", ...; another: "<oid>-p", "<oid>-t0", ...).
  void Seed(int n, const std::string& skill = "", bool execute = false,
            const std::string& oid = "o") {
    const std::string prefix = oid == "o" ? "" : oid + "-";
    Objective o;
    o.id = oid;
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
      ids.push_back(prefix + "t" + std::to_string(i));
    }
    auto added = Await(io_, store_->Update(
                                "t", OptStore::By::kObjective, oid,
                                [spec, ids, plan = prefix + "p"](Objective& ob) {
                                  return AddPlan(ob, spec, plan, ids, Limits{}, 1);
                                },
                                1));
    ASSERT_TRUE(added) << added.error().message;
  }
  Objective Get() {
    auto o = Await(io_, store_->Get("t", OptStore::By::kObjective, "o"));
    EXPECT_TRUE(o) << o.error().message;
    return o ? o.value() : Objective{};
  }
  core::Result<OptStore::Written> Move(const std::string& task, S to, int64_t at) {
    return Await(
        io_, store_->Update(
                 "t", OptStore::By::kTask, task,
                 [task, to, at](Objective& ob) { return SetTaskStatus(ob, task, to, at); }, at));
  }
  // A commit of A2A task `id` (tenant "t") in `state`: its creation (one event) when
  // `expected` is -1, else a change of its snapshot alone.
  core::Result<void> CommitTask(const std::string& id, protocol::TaskState state, int64_t at,
                                int64_t expected) {
    storage::TaskCommit c;
    c.record.task.id = id;
    c.record.task.context_id = "ctx-" + id;
    c.record.task.status.state = state;
    c.record.task.status.timestamp_ms = at;
    c.record.skill_id = "echo";
    c.record.created_at_ms = 1;
    c.record.updated_at_ms = at;
    c.record.tenant = "t";
    c.record.owner = "me";
    c.expected_last_sequence = expected;
    if (expected == -1) {
      protocol::RunEvent e;
      e.event_id = id + "-0";
      e.run_id = id;
      e.type = protocol::kEvTaskSubmitted;
      e.timestamp_ms = at;
      e.sequence = 0;
      c.events.push_back(e);
    }
    c.record.last_sequence = 0;
    std::promise<core::Result<void>> done;
    db_->Tasks().Commit(std::move(c), [&done](core::Result<void> r) { done.set_value(r); });
    return done.get_future().get();
  }
  void ExpectGapFreeEvents() {
    auto events = store_->ReadEvents("o", -1, 1000);
    ASSERT_TRUE(events) << events.error().message;
    for (size_t i = 0; i < events->size(); ++i)
      EXPECT_EQ((*events)[i].sequence, static_cast<int64_t>(i));
  }

  Backend backend_;  // outlives db_ (the SQLite directory is removed after Close)
  asio::io_context io_;
  std::unique_ptr<storage::Backend> db_;
  std::unique_ptr<OptStore> store_;
};

using Backends = ::testing::Types<OnSqlite, OnPostgres>;
TYPED_TEST_SUITE(OptStoreTest, Backends, BackendNames);

TYPED_TEST(OptStoreTest, AFailedChangeLeavesTheStoredAndTheRememberedObjectiveAsTheyWere) {
  this->Seed(2);
  ASSERT_TRUE(this->Move("t0", S::kWorking, 2));  // the writer remembers the objective now
  // A change that alters the tree and then fails.
  auto failed = Await(this->io_, this->store_->Update(
                                     "t", OptStore::By::kTask, "t1",
                                     [](Objective& ob) -> core::Result<void> {
                                       FindTask(ob, "t1")->status = S::kCompleted;
                                       FindTask(ob, "t0")->name = "changed";
                                       return core::Error(core::ErrorCode::kInvalidParams, "no");
                                     },
                                     3));
  ASSERT_FALSE(failed);
  Objective now = this->Get();
  EXPECT_EQ(FindTask(now, "t1")->status, S::kPending);
  EXPECT_EQ(FindTask(now, "t0")->name, "t0");
  // The next change starts from what is stored, not from the failed change's leftovers.
  auto next = this->Move("t0", S::kCompleted, 4);
  ASSERT_TRUE(next);
  EXPECT_EQ(FindTask(next->objective, "t1")->status, S::kPending);
  EXPECT_EQ(FindTask(next->objective, "t0")->name, "t0");
  Objective stored = this->Get();
  EXPECT_EQ(FindTask(stored, "t0")->status, S::kCompleted);
}

TYPED_TEST(OptStoreTest, WhatIsWrittenReadsBackWholeAfterAReopen) {
  this->Seed(3);
  ASSERT_TRUE(this->Move("t0", S::kCompleted, 2));
  ASSERT_TRUE(this->Move("t1", S::kInputRequired, 3));
  const Objective before = this->Get();
  EXPECT_EQ(before.status, ObjectiveStatus::kBlocked);
  this->Close();
  this->Open();
  const Objective after = this->Get();
  EXPECT_EQ(RowOf(after), RowOf(before));
  ASSERT_EQ(after.plans.size(), 1u);
  EXPECT_EQ(RowOf(after.plans[0]), RowOf(before.plans[0]));
  EXPECT_EQ(after.plans[0].tasks, before.plans[0].tasks);
  // Events: one per status that moved, numbered without a gap.
  auto events = this->store_->ReadEvents("o", -1, 1000);
  ASSERT_TRUE(events);
  ASSERT_FALSE(events->empty());
  for (size_t i = 0; i < events->size(); ++i)
    EXPECT_EQ((*events)[i].sequence, static_cast<int64_t>(i));
  EXPECT_FALSE(events->back().last);
  // A page of them, and the objective with its last event's sequence, read in one snapshot.
  auto page = this->store_->ReadEvents("o", 1, 2);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ(page->front().sequence, 2);
  auto snapshot = this->store_->Snapshot("t", "o");
  ASSERT_TRUE(snapshot) << snapshot.error().message;
  EXPECT_EQ(snapshot->second, events->back().sequence);
  EXPECT_FALSE(this->store_->Snapshot("other", "o"));  // another tenant's: not found
}

TYPED_TEST(OptStoreTest, ObjectivesListNewestFirstByPagesAndByStatus) {
  for (int i = 0; i < 5; ++i) {
    Objective o;
    o.id = "o" + std::to_string(i);
    o.tenant = "t";
    o.owner = "me";
    o.name = o.id;
    o.created_at_ms = o.updated_at_ms = 100 + (i % 2);  // ties: ordered by id
    ASSERT_TRUE(Await(this->io_, this->store_->Create(o)));
  }
  Objective foreign;
  foreign.id = "x";
  foreign.tenant = "other";
  foreign.name = "x";
  ASSERT_TRUE(Await(this->io_, this->store_->Create(foreign)));
  std::vector<std::string> seen;
  std::string token;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = Await(this->io_, this->store_->List("t", std::nullopt, 2, token));
    ASSERT_TRUE(page) << page.error().message;
    EXPECT_EQ(page->total_size, 5);
    for (const auto& o : page->objectives) seen.push_back(o.id);
    token = page->next_page_token;
    if (token.empty()) break;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"o3", "o1", "o4", "o2", "o0"}));
  auto none = Await(this->io_, this->store_->List("t", ObjectiveStatus::kCompleted, 10, ""));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->total_size, 0);
  EXPECT_TRUE(none->objectives.empty());
  auto bad = Await(this->io_, this->store_->List("t", std::nullopt, 2, "not a token"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, core::ErrorCode::kInvalidParams);
}

TYPED_TEST(OptStoreTest, TheOutboxAsksForARunWhenItsTaskBecomesDueAndOnlyThen) {
  this->Seed(2, "work", true);
  auto pending = Await(this->io_, this->store_->ClaimActions("me", 1000, 10));
  ASSERT_TRUE(pending) << pending.error().message;
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
  Objective o = this->Get();
  EXPECT_EQ(FindTask(o, "t0")->a2a_task_id, a.run_id);
  // A start that cannot be made fails its task, and its dependent with it.
  auto done = Await(this->io_, this->store_->ActionDone(a, std::string("no such workflow"), 5));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(Await(this->io_, this->store_->ClaimActions("me", 1000, 10))->empty());
  Objective after = this->Get();
  EXPECT_EQ(FindTask(after, "t0")->status, S::kFailed);
  EXPECT_EQ(FindTask(after, "t0")->error, "no such workflow");
  EXPECT_EQ(FindTask(after, "t1")->status, S::kCanceled);
  EXPECT_EQ(after.status, ObjectiveStatus::kFailed);
}

// Several replicas: an outbox row is handed to one claimant at a time; its own claimant gets
// it again (renewed), another only once the claim expired.
TYPED_TEST(OptStoreTest, AnOutboxRowIsClaimedByOneReplicaUntilItsClaimExpires) {
  this->Seed(1, "work", true);
  auto claim = [&](const std::string& who, int64_t now) {
    auto got = Await(this->io_, this->store_->ClaimActions(who, now, 10));
    EXPECT_TRUE(got) << got.error().message;
    return got ? got->size() : 0u;
  };
  EXPECT_EQ(claim("r0", 1000), 1u);
  EXPECT_EQ(claim("r1", 1000), 0u);
  EXPECT_EQ(claim("r1", 1000 + OptStore::kClaimMs - 1), 0u);
  EXPECT_EQ(claim("r0", 2000), 1u);  // renewed: until 2000 + kClaimMs
  EXPECT_EQ(claim("r1", 1000 + OptStore::kClaimMs), 0u);
  EXPECT_EQ(claim("r1", 2000 + OptStore::kClaimMs), 1u);  // expired: taken over
  EXPECT_EQ(claim("r0", 2000 + OptStore::kClaimMs), 0u);
}

// Claims raced from many threads (on PostgreSQL, two replicas: two backends, each with its
// own writer, on one database): each row handed out once.
TYPED_TEST(OptStoreTest, RacedClaimsHandEachRowToOneClaimant) {
  for (int i = 0; i < 6; ++i) this->Seed(1, "work", true, "o" + std::to_string(i));
  std::unique_ptr<storage::Backend> other_db;
  std::unique_ptr<OptStore> other;
  if constexpr (std::is_same_v<TypeParam, OnPostgres>) {
    auto db = this->backend_.Open();
    ASSERT_TRUE(db) << db.error().message;
    other_db = std::move(db).value();
    other = std::make_unique<OptStore>(*other_db, Limits{});
  }
  OptStore* stores[2] = {this->store_.get(), other ? other.get() : this->store_.get()};
  std::vector<std::string> runs[4];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      asio::io_context io;
      for (int round = 0; round < 3; ++round) {
        auto got = Await(io, stores[t % 2]->ClaimActions("r" + std::to_string(t), 1000, 2));
        ASSERT_TRUE(got) << got.error().message;
        for (const auto& a : *got) runs[t].push_back(a.run_id);
      }
    });
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  size_t handed = 0;
  for (const auto& r : runs) {
    all.insert(r.begin(), r.end());
    handed += std::set<std::string>(r.begin(), r.end()).size();
  }
  EXPECT_EQ(all.size(), 6u);
  EXPECT_EQ(handed, 6u);  // no run handed to two claimants
  other.reset();
  if (other_db) other_db->Close();
}

TYPED_TEST(OptStoreTest, EndingTheObjectiveTakesBackItsStartsAndAsksToCancelThem) {
  this->Seed(1, "work", true);
  ASSERT_EQ(Await(this->io_, this->store_->ClaimActions("me", 1000, 10))->size(), 1u);
  auto canceled = Await(
      this->io_,
      this->store_->Update(
          "t", OptStore::By::kObjective, "o",
          [](Objective& ob) { return SetObjectiveStatus(ob, ObjectiveStatus::kCanceled, 6); }, 6));
  ASSERT_TRUE(canceled) << canceled.error().message;
  auto pending = Await(this->io_, this->store_->ClaimActions("me", 1000, 10));
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ(pending->front().kind, RunAction::Kind::kCancel);
  EXPECT_EQ(pending->front().run_id, RunIdFor("t0"));
}

TYPED_TEST(OptStoreTest, ALinkedPlanTaskFollowsItsTaskInTheTasksOwnCommits) {
  std::mutex mu;
  std::vector<std::string> told;  // objectives the listener heard of
  this->store_->SetListener({[&](const std::string& id) {
                               std::lock_guard lock(mu);
                               told.push_back(id);
                             },
                             {}});
  this->store_->FollowTasks();
  this->Seed(2);
  using protocol::TaskState;
  ASSERT_TRUE(this->CommitTask("a2a-1", TaskState::kSubmitted, 10, -1));
  // Linked: it lends its state at once, read in the link's transaction.
  auto linked = Await(this->io_, this->store_->Link("t", "t0", "a2a-1", 11));
  ASSERT_TRUE(linked) << linked.error().message;
  EXPECT_EQ(FindTask(linked->objective, "t0")->status, S::kSubmitted);
  // Every later commit of the task moves the plan task, and the rollup above it, in its own
  // transaction: what a read sees once the commit is acknowledged.
  ASSERT_TRUE(this->CommitTask("a2a-1", TaskState::kWorking, 12, 0));
  Objective working = this->Get();
  EXPECT_EQ(FindTask(working, "t0")->status, S::kWorking);
  EXPECT_EQ(working.status, ObjectiveStatus::kWorking);
  ASSERT_TRUE(this->CommitTask("a2a-1", TaskState::kCompleted, 13, 0));
  Objective done = this->Get();
  EXPECT_EQ(FindTask(done, "t0")->status, S::kCompleted);
  EXPECT_EQ(FindTask(done, "t1")->status, S::kPending);  // not linked: stays as it is
  {
    std::lock_guard lock(mu);
    EXPECT_GE(std::count(told.begin(), told.end(), "o"), 2);  // after each commit
  }
  // A commit the store refuses (a stale sequence) moves nothing.
  EXPECT_FALSE(this->CommitTask("a2a-1", TaskState::kFailed, 14, 7));
  Objective after = this->Get();
  EXPECT_EQ(FindTask(after, "t0")->status, S::kCompleted);
  this->ExpectGapFreeEvents();
  // A task of another tenant is another agent's: linked, it lends nothing and is not followed.
  auto foreign = Await(this->io_, this->store_->Link("t", "t1", "not-here", 15));
  ASSERT_TRUE(foreign) << foreign.error().message;
  EXPECT_FALSE(FindTask(foreign->objective, "t1")->mirrors);
}

TYPED_TEST(OptStoreTest, AServerSeesWhatAnotherServerOnTheSameDatabaseWrote) {
  this->Seed(2);
  ASSERT_TRUE(this->Move("t0", S::kWorking, 2));  // this writer remembers the objective
  // Another server (a second backend and store on the same database) changes it.
  {
    auto other_db = this->backend_.Open();
    ASSERT_TRUE(other_db) << other_db.error().message;
    OptStore other(**other_db, Limits{});
    asio::io_context io;
    auto moved =
        Await(io, other.Update(
                      "t", OptStore::By::kTask, "t1",
                      [](Objective& ob) { return SetTaskStatus(ob, "t1", S::kWorking, 3); }, 3));
    ASSERT_TRUE(moved) << moved.error().message;
    (*other_db)->Close();
  }
  // This writer finds a newer version than it remembers and starts from what is stored.
  ASSERT_TRUE(this->Move("t0", S::kCompleted, 4));
  Objective now = this->Get();
  EXPECT_EQ(FindTask(now, "t0")->status, S::kCompleted);
  EXPECT_EQ(FindTask(now, "t1")->status, S::kWorking);
  this->ExpectGapFreeEvents();
}

// Two servers on one PostgreSQL database, each with its own writer, may change one objective at
// once (on SQLite the write lock keeps them apart): the one that finds it written meanwhile
// writes nothing and says so (kUnavailable: try again).
TEST(OptStorePostgresTest, AChangeRacingAnotherServersWritesNothing) {
  OnPostgres backend;
  auto db = backend.Open();
  ASSERT_TRUE(db) << db.error().message;
  auto other_db = backend.Open();
  ASSERT_TRUE(other_db) << other_db.error().message;
  OptStore store(**db, Limits{});
  OptStore other(**other_db, Limits{});
  asio::io_context io;
  Objective o;
  o.id = "o";
  o.tenant = "t";
  o.name = "o";
  ASSERT_TRUE(Await(io, store.Create(o)));
  const auto before = store.ReadEvents("o", -1, 100);
  ASSERT_TRUE(before);
  // While this server's change runs (the objective read, nothing written yet), the other
  // server renames it and commits.
  auto raced = Await(io, store.Update(
                             "t", OptStore::By::kObjective, "o",
                             [&other](Objective& ob) -> core::Result<void> {
                               asio::io_context other_io;
                               auto renamed =
                                   Await(other_io, other.Update(
                                                       "t", OptStore::By::kObjective, "o",
                                                       [](Objective& x) {
                                                         x.name = "theirs";
                                                         return core::Result<void>();
                                                       },
                                                       5));
                               if (!renamed) return std::move(renamed).error();
                               ob.name = "mine";
                               return SetObjectiveStatus(ob, ObjectiveStatus::kCanceled, 6);
                             },
                             6));
  ASSERT_FALSE(raced);
  EXPECT_EQ(raced.error().code, core::ErrorCode::kUnavailable) << raced.error().message;
  auto stored = Await(io, store.Get("t", OptStore::By::kObjective, "o"));
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->name, "theirs");
  EXPECT_NE(stored->status, ObjectiveStatus::kCanceled);
  const auto after = store.ReadEvents("o", -1, 100);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->size(), before->size());  // none of the refused change's events
  // Tried again, the change starts from what the other server wrote.
  auto again = Await(
      io,
      store.Update(
          "t", OptStore::By::kObjective, "o",
          [](Objective& ob) { return SetObjectiveStatus(ob, ObjectiveStatus::kCanceled, 7); }, 7));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->objective.name, "theirs");
  (*other_db)->Close();
  (*db)->Close();
}

}  // namespace
}  // namespace a2ad::ext::opt
