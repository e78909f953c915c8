// Several replicas on one PostgreSQL database, at the store (issue 31; storage/cluster.hpp):
// a run's lease taken by its creating commit, moved on by Acquire, and a commit of the older
// epoch refused by the database; orphaned leases claimed once each, spread, a live holder's
// never; the change feed hands another holder's commits on and skips its own; push deliveries
// claimed by one replica at a time, their outcomes written by the claimer only, a dead one's
// taken over.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/storage/postgres/pg_cluster.hpp"
#include "a2ad/storage/postgres/postgres_store.hpp"
#include "pg_cluster.hpp"
#include "task_store_fixtures.hpp"
#include "wait_for.hpp"

namespace a2ad::storage {
namespace {
using namespace std::chrono_literals;
using namespace storage_test;

// A replica: its store (creating commits take leases in its name) and its cluster handle.
struct Replica {
  Replica(const std::string& url, const std::string& id, std::chrono::milliseconds ttl = 10s)
      : holder(PgCluster::MakeHolder(id)) {
    PostgresOptions o;
    o.lease_holder = holder;
    o.replica_id = id;
    auto s = PostgresStore::Open(url, std::move(o));
    EXPECT_TRUE(s) << s.error().message;
    store = std::move(s).value();
    cluster = std::make_unique<PgCluster>(url, ClusterOptions{id, ttl}, holder);
    EXPECT_TRUE(cluster->Heartbeat().ok());
  }
  std::string holder;
  std::unique_ptr<PostgresStore> store;
  std::unique_ptr<PgCluster> cluster;
};

TEST(PgReplicas, ACommitOfAnEpochThatMovedOnIsRefused) {
  const std::string url = test::FreshPgDatabase();
  Replica a(url, "a"), b(url, "b");
  TaskCommit create = Create("run-1");
  create.take_lease = true;
  ASSERT_TRUE(IsOk(CommitSync(*a.store, create)));
  // a executes at epoch 1.
  EXPECT_TRUE(a.cluster->Holds("run-1", 1).value());
  EXPECT_FALSE(b.cluster->Holds("run-1", 1).value());
  TaskCommit step = Append(create.record, protocol::TaskState::kWorking, 2000);
  step.fence_epoch = 1;
  ASSERT_TRUE(IsOk(CommitSync(*a.store, step)));
  // b takes the run over (an answer received there): epoch 2.
  auto taken = b.cluster->Acquire("run-1");
  ASSERT_TRUE(IsOk(taken));
  EXPECT_EQ(taken.value(), 2);
  // a, about to call out, learns it lost the run (the effect fence).
  EXPECT_FALSE(a.cluster->Holds("run-1", 1).value());
  EXPECT_TRUE(b.cluster->Holds("run-1", 2).value());
  TaskCommit late = Append(step.record, protocol::TaskState::kWorking, 3000);
  late.fence_epoch = 1;
  auto refused = CommitSync(*a.store, late);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, core::ErrorCode::kConflict);
  EXPECT_EQ(refused.error().Detail("reason"), "fenced") << refused.error().message;
  // The same step at the new epoch lands; the one that ends the run drops the lease.
  late.fence_epoch = 2;
  ASSERT_TRUE(IsOk(CommitSync(*b.store, late)));
  TaskCommit done = Append(late.record, protocol::TaskState::kCompleted, 4000);
  done.fence_epoch = 2;
  ASSERT_TRUE(IsOk(CommitSync(*b.store, done)));
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM run_leases"), "0");
  // Without a fence (a request's commit), the sequence check alone applies.
  EXPECT_EQ(test::PgQuery(url, "SELECT state FROM tasks WHERE id = 'run-1'"), "3");
}

TEST(PgReplicas, OrphansAreClaimedOnceEachAndALiveHoldersNever) {
  const std::string url = test::FreshPgDatabase();
  Replica dead(url, "dead", 1000ms), live(url, "live");
  for (int i = 0; i < 40; ++i) {
    TaskCommit c = Create("run-" + std::to_string(i));
    c.take_lease = true;
    ASSERT_TRUE(IsOk(CommitSync(*(i % 2 ? live.store : dead.store), c)));
  }
  Replica x(url, "x"), y(url, "y");
  // Nothing is an orphan while both holders live.
  ASSERT_TRUE(dead.cluster->Heartbeat().ok());
  EXPECT_TRUE(x.cluster->ClaimOrphans(100)->empty());
  std::this_thread::sleep_for(1100ms);  // `dead` stops renewing: its 20 leases are orphans
  ASSERT_TRUE(live.cluster->Heartbeat().ok());
  std::vector<Cluster::Claimed> got_x, got_y;
  size_t largest = 0;  // (each thread's own)
  std::mutex largest_mu;
  auto claim = [&](PgCluster& c, std::vector<Cluster::Claimed>& got) {
    for (int i = 0; i < 10; ++i) {
      auto batch = c.ClaimOrphans(3);
      if (!batch) continue;
      std::lock_guard lock(largest_mu);
      largest = std::max(largest, batch->size());
      got.insert(got.end(), batch->begin(), batch->end());
    }
  };
  std::thread tx([&] { claim(*x.cluster, got_x); });
  std::thread ty([&] { claim(*y.cluster, got_y); });
  tx.join();
  ty.join();
  std::set<std::string> ids;
  for (const auto* got : {&got_x, &got_y})
    for (const auto& c : *got) {
      EXPECT_TRUE(ids.insert(c.task_id).second) << c.task_id << " claimed twice";
      EXPECT_EQ(c.from, dead.holder);
      EXPECT_EQ(c.epoch, 2);
    }
  EXPECT_EQ(ids.size(), 20u);
  EXPECT_LE(largest, 3u);  // a few at a time: the others are left to other replicas
  // The same replica id started again takes its earlier process's leases at once.
  Replica live_again(url, "live");
  auto own = live_again.cluster->ClaimOrphans(100);
  ASSERT_TRUE(IsOk(own));
  EXPECT_EQ(own->size(), 20u);
  // Leaving makes every lease an orphan at once. The replica that leaves is one that claimed
  // some (under load one thread can claim all 20 before the other's first look).
  const bool x_leaves = !got_x.empty();
  Replica& leaver = x_leaves ? x : y;
  Replica& taker = x_leaves ? y : x;
  ASSERT_TRUE(leaver.cluster->Leave().ok());
  auto after = taker.cluster->ClaimOrphans(100);
  ASSERT_TRUE(IsOk(after));
  EXPECT_EQ(after->size(), (x_leaves ? got_x : got_y).size());
  // A run given up (this replica cannot execute it) is the next looker's, at a later epoch;
  // a stale epoch gives nothing up.
  ASSERT_FALSE(after->empty());
  const Cluster::Claimed& one = after->front();
  ASSERT_TRUE(taker.cluster->Abandon(one.task_id, one.epoch - 1).ok());
  EXPECT_TRUE(live_again.cluster->ClaimOrphans(100)->empty());
  ASSERT_TRUE(taker.cluster->Abandon(one.task_id, one.epoch).ok());
  auto again = live_again.cluster->ClaimOrphans(100);
  ASSERT_TRUE(IsOk(again));
  ASSERT_EQ(again->size(), 1u);
  EXPECT_EQ(again->front().task_id, one.task_id);
  EXPECT_EQ(again->front().epoch, one.epoch + 1);
  EXPECT_EQ(again->front().from, "");
}

// POST /v1/events on any replica: the runs paused until an event are found by the indexed
// column each commit writes (waits_for_event), and found again after a migration from a
// schema without it (the runs paused then are read once).
TEST(PgReplicas, TheRunsPausedUntilAnEventAreFoundByItsName) {
  const std::string url = test::FreshPgDatabase();
  auto paused_until = [](const std::string& event) {
    return protocol::RunSnapshotFromJson(
        boost::json::parse(R"({"status":"paused","pause":{"conditions":{"onEvent":")" + event +
                           R"("}}})")
            .as_object());
  };
  {
    Replica a(url, "a");
    TaskCommit waits = Create("run-w", "ctx", protocol::TaskState::kWorking);
    waits.record.run = paused_until("build.done");
    TaskCommit other = Create("run-o", "ctx", protocol::TaskState::kWorking);
    other.record.run = paused_until("deploy.done");
    TaskCommit running = Create("run-r", "ctx", protocol::TaskState::kWorking);
    running.record.run =
        protocol::RunSnapshotFromJson(boost::json::parse(R"({"status":"running"})").as_object());
    for (auto* c : {&waits, &other, &running}) ASSERT_TRUE(IsOk(CommitSync(*a.store, *c)));
    auto found = a.store->UnfinishedRunsWaitingFor(kDefaultTenant, "build.done");
    ASSERT_TRUE(IsOk(found));
    ASSERT_TRUE(found->has_value());
    EXPECT_EQ(**found, std::vector<std::string>{"run-w"});
    EXPECT_TRUE(a.store->UnfinishedRunsWaitingFor("another-tenant", "build.done")->value().empty());
    // Resumed: no longer found.
    TaskCommit resumed = Append(waits.record, protocol::TaskState::kWorking, 2000);
    resumed.record.run =
        protocol::RunSnapshotFromJson(boost::json::parse(R"({"status":"running"})").as_object());
    ASSERT_TRUE(IsOk(CommitSync(*a.store, resumed)));
    EXPECT_TRUE(a.store->UnfinishedRunsWaitingFor(kDefaultTenant, "build.done")->value().empty());
  }
  // A database of the schema before the column: its paused runs are read at the migration.
  test::PgQuery(url, "DROP INDEX tasks_waiting_on_event");
  test::PgQuery(url, "ALTER TABLE tasks DROP COLUMN waits_for_event");
  test::PgQuery(url, "DROP INDEX tasks_runnable");  // and step 5's column
  test::PgQuery(url, "DROP INDEX tasks_wake");
  test::PgQuery(url, "ALTER TABLE tasks DROP COLUMN wake_at_ms");
  test::PgQuery(url, "DELETE FROM a2ad_schema WHERE component = 'core' AND version >= 4");
  test::PgQuery(url, "UPDATE tasks SET run = 'not json {' WHERE id = 'run-r'");  // damaged
  Replica again(url, "a");
  auto found = again.store->UnfinishedRunsWaitingFor(kDefaultTenant, "deploy.done");
  ASSERT_TRUE(IsOk(found));
  EXPECT_EQ(found->value(), std::vector<std::string>{"run-o"});
  // Step 5 read the same runs: paused (parked, no time: not listed), resumed and damaged
  // (not parked: listed for a restart).
  auto runnable = again.store->ListRunnable("", 100);
  ASSERT_TRUE(IsOk(runnable));
  ASSERT_EQ(runnable->records.size(), 1u);
  EXPECT_EQ(runnable->records.front().task.id, "run-w");
  EXPECT_EQ(runnable->unreadable, std::vector<std::string>{"run-r"});
}

// Step 5 reads the wake times of the runs unfinished at the upgrade, as the writer does
// (stored_records.hpp ParkedUntil); each replica's wake timer reads only the runs it leases.
TEST(PgReplicas, TheWakeTimesAreReadAtTheUpgradeAndByTheirLeaseHolder) {
  const std::string url = test::FreshPgDatabase();
  {
    Replica a(url, "a");
    TaskCommit gate = Create("run-g", "ctx", protocol::TaskState::kInputRequired);
    gate.record.run = protocol::RunSnapshotFromJson(
        boost::json::parse(R"({"status":"waiting-input","interrupt":{"expiresAt":5000}})")
            .as_object());
    TaskCommit paused = Create("run-p", "ctx", protocol::TaskState::kWorking);
    paused.record.run = protocol::RunSnapshotFromJson(
        boost::json::parse(R"({"status":"paused","pause":{"triggerAtMs":9000,"timeoutAtMs":7000}})")
            .as_object());
    for (auto* c : {&gate, &paused}) ASSERT_TRUE(IsOk(CommitSync(*a.store, *c)));
    ASSERT_TRUE(IsOk(a.cluster->Heartbeat()));
    ASSERT_TRUE(IsOk(a.cluster->Acquire("run-p")));
    auto mine = a.store->ListWakes(0, "", 10, a.cluster->holder());
    ASSERT_TRUE(IsOk(mine));
    ASSERT_EQ(mine->size(), 1u);
    EXPECT_EQ(mine->front().task_id, "run-p");
    EXPECT_TRUE(a.store->ListWakes(0, "", 10, "someone-else")->empty());
  }
  test::PgQuery(url, "DROP INDEX tasks_runnable");
  test::PgQuery(url, "DROP INDEX tasks_wake");
  test::PgQuery(url, "ALTER TABLE tasks DROP COLUMN wake_at_ms");
  test::PgQuery(url, "DELETE FROM a2ad_schema WHERE component = 'core' AND version = 5");
  Replica again(url, "a");
  auto wakes = again.store->ListWakes(0, "", 10, "");
  ASSERT_TRUE(IsOk(wakes));
  ASSERT_EQ(wakes->size(), 2u);
  EXPECT_EQ((*wakes)[0].task_id, "run-g");
  EXPECT_EQ((*wakes)[0].at_ms, 5000);
  EXPECT_EQ((*wakes)[1].task_id, "run-p");
  EXPECT_EQ((*wakes)[1].at_ms, 7000);
  EXPECT_TRUE(again.store->ListRunnable("", 10)->records.empty());
}

// The claim on an ended run's leftover work (resending its peers' cancels at a start): one
// live replica at a time, this one's own claim not taken twice, a dead one's taken over.
TEST(PgReplicas, AnIdleRunIsClaimedByOneLiveReplicaAtATime) {
  const std::string url = test::FreshPgDatabase();
  Replica a(url, "a", 1000ms), b(url, "b");
  for (const char* id : {"run-x", "run-y"}) ASSERT_TRUE(IsOk(CommitSync(*a.store, Create(id))));
  auto first = a.cluster->ClaimIdle("run-x");
  ASSERT_TRUE(IsOk(first));
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ(**first, 1);
  EXPECT_FALSE(b.cluster->ClaimIdle("run-x")->has_value());  // a lives: left alone
  EXPECT_FALSE(a.cluster->ClaimIdle("run-x")->has_value());  // nor claimed twice by a
  ASSERT_TRUE(a.cluster->Release("run-x", 1).ok());
  auto again = b.cluster->ClaimIdle("run-x");  // given up: anyone's
  ASSERT_TRUE(IsOk(again));
  ASSERT_TRUE(again->has_value());
  EXPECT_EQ(**again, 1);
  ASSERT_TRUE(IsOk(a.cluster->ClaimIdle("run-y")));
  std::this_thread::sleep_for(1100ms);  // a stops renewing: its claim expires with it
  auto taken = b.cluster->ClaimIdle("run-y");
  ASSERT_TRUE(IsOk(taken));
  ASSERT_TRUE(taken->has_value());
  EXPECT_EQ(**taken, 2);
  EXPECT_FALSE(a.cluster->ClaimIdle("run-y")->has_value());
}

TEST(PgReplicas, TheFeedHandsOnAnotherHoldersCommitsAndNudgesAndSkipsItsOwn) {
  const std::string url = test::FreshPgDatabase();
  Replica a(url, "a"), b(url, "b");
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<std::string, int64_t>> seen;
  int resyncs = 0;
  std::vector<std::pair<std::string, std::string>> nudges;
  Cluster::Feed feed;
  feed.on_commit = [&](const std::string& id, int64_t seq) {
    std::lock_guard lock(mu);
    seen.emplace_back(id, seq);
    cv.notify_all();
  };
  feed.on_resync = [&] {
    std::lock_guard lock(mu);
    ++resyncs;
    cv.notify_all();
  };
  feed.on_nudge = [&](const std::string& id, const std::string& key) {
    std::lock_guard lock(mu);
    nudges.emplace_back(id, key);
    cv.notify_all();
  };
  a.cluster->Listen(std::move(feed), 1h);
  {
    std::unique_lock lock(mu);  // listening (its first resync) before anything is written
    ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return resyncs > 0; }));
  }
  ASSERT_TRUE(IsOk(CommitSync(*a.store, Create("own"))));
  TaskCommit other = Create("other");
  ASSERT_TRUE(IsOk(CommitSync(*b.store, other)));
  ASSERT_TRUE(IsOk(CommitSync(*b.store, Append(other.record, protocol::TaskState::kWorking, 2000, 3))));
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return seen.size() >= 2; }));
  lock.unlock();
  testing::GiveTimeToMisbehave(200ms);  // (for a commit of a's own to arrive too)
  lock.lock();
  const std::vector<std::pair<std::string, int64_t>> want{{"other", 0}, {"other", 3}};
  EXPECT_EQ(seen, want);
  lock.unlock();
  // A nudge handed on by another holder arrives (a key with spaces intact); its own does not.
  ASSERT_TRUE(IsOk(a.cluster->Nudge("own", "mine")));
  ASSERT_TRUE(IsOk(b.cluster->Nudge("other", "peer-push node 1")));
  lock.lock();
  ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return !nudges.empty(); }));
  lock.unlock();
  testing::GiveTimeToMisbehave(200ms);  // (for its own nudge to arrive too)
  lock.lock();
  const std::vector<std::pair<std::string, std::string>> nudged{{"other", "peer-push node 1"}};
  EXPECT_EQ(nudges, nudged);
  lock.unlock();
  a.cluster->Stop();
}

OutboxRow Row(int i) {
  OutboxRow o;
  o.id = "ev-" + std::to_string(i);
  o.kind = "a2a";
  o.task_id = "t";
  o.target_id = "cfg";
  o.url = "https://example.invalid/hook";
  o.body = "{}";
  o.content_type = "application/json";
  o.created_at_ms = 1000 + i;
  o.next_attempt_at_ms = 1000 + i;
  return o;
}

TEST(PgReplicas, APushDeliveryIsClaimedByOneReplicaAtATime) {
  const std::string url = test::FreshPgDatabase();
  Replica a(url, "a", 1000ms), b(url, "b");
  std::vector<OutboxRow> rows;
  for (int i = 0; i < 30; ++i) rows.push_back(Row(i));
  ASSERT_TRUE(IsOk(a.store->Enqueue(rows)));
  ASSERT_TRUE(a.cluster->Heartbeat().ok());
  std::vector<OutboxRow> got_a, got_b;
  std::thread ta([&] { got_a = a.store->DueOutbox(5000, 20).value(); });
  std::thread tb([&] { got_b = b.store->DueOutbox(5000, 20).value(); });
  ta.join();
  tb.join();
  std::set<std::string> ids;
  for (const auto* got : {&got_a, &got_b})
    for (const auto& r : *got) EXPECT_TRUE(ids.insert(r.id).second) << r.id << " claimed twice";
  EXPECT_EQ(ids.size(), 30u);
  // Claimed rows stay with their replica while it lives (its own reads see them again).
  EXPECT_TRUE(b.store->DueOutbox(5000, 100)->size() == got_b.size());
  EXPECT_EQ(a.store->DueOutbox(5000, 100)->size(), got_a.size());
  // An outcome gives the claim up: a retry is anyone's.
  ASSERT_FALSE(got_a.empty());
  OutboxRow retry = got_a.front();
  retry.attempts = 1;
  retry.next_attempt_at_ms = 4000;
  // Only the claimer writes it (a replica thought dead, whose claim was taken, writes nothing).
  EXPECT_FALSE(b.store->UpdateOutbox(retry).ok());
  ASSERT_TRUE(IsOk(a.store->UpdateOutbox(retry)));
  auto b_now = b.store->DueOutbox(5000, 100);
  EXPECT_EQ(b_now->size(), got_b.size() + 1);
  // A replica that stops renewing loses its claims.
  std::this_thread::sleep_for(1100ms);
  ASSERT_TRUE(b.cluster->Heartbeat().ok());
  EXPECT_EQ(b.store->DueOutbox(5000, 100)->size(), 30u);
}

}  // namespace
}  // namespace a2ad::storage
