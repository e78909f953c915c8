// SqliteTaskStore's retention (PruneEvents): batches interleaved with commits, FIFO order
// with the commits, failed batches, Close during a prune, calls from a commit callback,
// and a version 1 database upgraded on open and pruned.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/storage/sqlite/sqlite_schema.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "sqlite_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::CommitAsync;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::IsOk;
using storage_test::MustOpen;
using storage_test::RawDb;
using storage_test::SqliteTaskStoreTest;
using storage_test::WriterGate;

// Records prune batches and holds the writer after the first one until Release().
class PruneGate {
 public:
  void Install(SqliteOptions& opts, std::vector<std::string>* order, std::mutex* order_mu) {
    opts.prune_batch_hook = [this, order, order_mu](size_t n) {
      bool first = false;
      {
        std::lock_guard lock(mu_);
        sizes_.push_back(n);
        first = sizes_.size() == 1;
      }
      if (order != nullptr) {
        std::lock_guard lock(*order_mu);
        order->push_back("prune " + std::to_string(n));
      }
      if (first) {
        entered_.set_value();
        release_.get_future().wait();
      }
    };
  }
  void WaitEntered() { entered_.get_future().wait(); }
  void Release() { release_.set_value(); }
  std::vector<size_t> sizes() {
    std::lock_guard lock(mu_);
    return sizes_;
  }

 private:
  std::mutex mu_;
  std::vector<size_t> sizes_;
  std::promise<void> entered_;
  std::promise<void> release_;
};

TEST_F(SqliteTaskStoreTest, LargePruneRunsInBatchesAndCommitsLandBetweenThem) {
  std::mutex order_mu;
  std::vector<std::string> order;
  PruneGate gate;
  SqliteOptions opts;  // prune_batch_events: the default 5000
  ASSERT_EQ(opts.prune_batch_events, 5000u);
  gate.Install(opts, &order, &order_mu);
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);

  // 20,000 events to prune: one log longer than a batch, and 13 of 1,000.
  ASSERT_TRUE(IsOk(CommitSync(*store, Create("big", "ctx", TaskState::kCompleted, 100, 7000))));
  for (int i = 0; i < 13; ++i) {
    ASSERT_TRUE(IsOk(CommitSync(
        *store, Create("t-" + std::to_string(i), "ctx", TaskState::kFailed, 200 + i, 1000))));
  }
  TaskCommit live = Create("live", "ctx", TaskState::kWorking, 1, 2);
  const TaskRecord live_record = live.record;
  ASSERT_TRUE(IsOk(CommitSync(*store, std::move(live))));

  auto prune = std::async(std::launch::async, [&] { return store->PruneEvents(1000); });
  gate.WaitEntered();  // batch 1 is committed; the writer waits before queueing batch 2
  std::vector<std::future<core::Result<void>>> commits;
  auto commit_logged = [&](TaskCommit c, std::string name) {
    auto done = std::make_shared<std::promise<core::Result<void>>>();
    commits.push_back(done->get_future());
    store->Commit(std::move(c), [&order, &order_mu, done, name](core::Result<void> r) {
      {
        std::lock_guard lock(order_mu);
        order.push_back(name);
      }
      done->set_value(std::move(r));
    });
  };
  commit_logged(Append(live_record, TaskState::kWorking, 2, 2), "commit live");
  commit_logged(Create("new", "ctx", TaskState::kCompleted, 300, 3), "commit new");
  gate.Release();

  auto pruned = prune.get();
  ASSERT_TRUE(IsOk(pruned));
  // "new" (terminal, old) was committed before batch 2, so this prune takes its log too.
  EXPECT_EQ(*pruned, 20003u);
  for (auto& f : commits) EXPECT_TRUE(IsOk(f.get()));
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{5000, 5000, 5000, 5000, 3}));
  {
    std::lock_guard lock(order_mu);
    EXPECT_EQ(order,
              (std::vector<std::string>{"prune 5000", "commit live", "commit new", "prune 5000",
                                        "prune 5000", "prune 5000", "prune 3"}))
        << "the commits accepted during the prune land before its next batch";
  }

  EXPECT_TRUE(store->ReadEvents("big", -1, 10)->empty());
  EXPECT_EQ((*store->Get("big"))->last_sequence, 6999);
  EXPECT_EQ(store->ReadEvents("live", -1, 10)->size(), 4u);
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM task_events"), 4);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM tasks WHERE pruned_through = last_sequence"), 15);
  EXPECT_EQ(raw.Int("SELECT pruned_through FROM tasks WHERE id = 'live'"), -1);
}

TEST_F(SqliteTaskStoreTest, PruneRunsAfterTheCommitsAcceptedBeforeIt) {
  WriterGate gate;
  SqliteOptions opts;
  gate.Install(opts);
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  auto first = gate.Hold(*store, Create("first"));  // the writer holds [first]
  auto done = CommitAsync(*store, Create("done", "ctx", TaskState::kCompleted, 500, 4));
  // Release once PruneEvents has most likely queued its job behind "done"; the result is the
  // same either way (the order is FIFO), the pause only makes the interesting case likely.
  std::thread releaser([&gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.Release();
  });
  auto pruned = store->PruneEvents(1000);
  releaser.join();
  ASSERT_TRUE(IsOk(pruned));
  EXPECT_EQ(*pruned, 4u);
  EXPECT_TRUE(IsOk(first.get()));
  EXPECT_TRUE(IsOk(done.get()));
  EXPECT_TRUE(store->ReadEvents("done", -1, 10)->empty());
}

TEST_F(SqliteTaskStoreTest, FailedPruneBatchRollsBackOnlyThatBatch) {
  PruneGate gate;
  SqliteOptions opts;
  opts.prune_batch_events = 2;
  gate.Install(opts, nullptr, nullptr);
  gate.Release();  // only records
  std::atomic<int> batches{0};
  opts.fail_prune_batch_hook = [&batches] { return ++batches == 2; };
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 3; ++i) {  // oldest first: a, b, c
    ASSERT_TRUE(IsOk(CommitSync(*store, Create(std::string(1, char('a' + i)), "ctx",
                                               TaskState::kCompleted, 100 * (i + 1), 2))));
  }
  const TaskRecord b_record = **store->Get("b");

  auto failed = store->PruneEvents(1000);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, core::ErrorCode::kInternal);
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{2}));      // the failed batch is not reported
  EXPECT_TRUE(store->ReadEvents("a", -1, 10)->empty());   // batch 1 stays done
  EXPECT_EQ(store->ReadEvents("b", -1, 10)->size(), 2u);  // batch 2 rolled back
  EXPECT_EQ(store->ReadEvents("c", -1, 10)->size(), 2u);
  EXPECT_EQ(**store->Get("b"), b_record);
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Int("SELECT pruned_through FROM tasks WHERE id = 'b'"), -1);
  }
  // The writer still serves commits, and a second call resumes.
  EXPECT_TRUE(IsOk(CommitSync(*store, Create("d"))));
  auto resumed = store->PruneEvents(1000);
  ASSERT_TRUE(IsOk(resumed));
  EXPECT_EQ(*resumed, 4u);
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{2, 2, 2}));  // and no empty last batch
  EXPECT_TRUE(store->ReadEvents("b", -1, 10)->empty());
  EXPECT_TRUE(store->ReadEvents("c", -1, 10)->empty());
}

TEST_F(SqliteTaskStoreTest, CloseDuringPruneStopsAfterTheCurrentBatch) {
  PruneGate gate;
  SqliteOptions opts;
  opts.prune_batch_events = 1;
  gate.Install(opts, nullptr, nullptr);
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(IsOk(CommitSync(*store, Create("done", "ctx", TaskState::kCompleted, 500, 3))));

  auto prune = std::async(std::launch::async, [&] { return store->PruneEvents(1000); });
  gate.WaitEntered();
  std::thread closer([&] { store->Close(); });
  // Wait until Close() refuses commits (it has begun), without blocking on the writer.
  for (int i = 0;; ++i) {
    auto refused = std::make_shared<std::atomic<bool>>(false);
    store->Commit(Create("probe-" + std::to_string(i)), [refused](core::Result<void> r) {
      if (!r.ok() && r.error().code == core::ErrorCode::kUnavailable) *refused = true;
    });
    if (refused->load()) break;
    std::this_thread::yield();
  }
  gate.Release();
  auto pruned = prune.get();
  closer.join();
  ASSERT_FALSE(pruned.ok());
  EXPECT_EQ(pruned.error().code, core::ErrorCode::kUnavailable);
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1}));

  auto reopened = MustOpen(path_);
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(reopened->ReadEvents("done", -1, 10)->size(), 2u);  // batch 1 is durable
  auto rest = reopened->PruneEvents(1000);
  ASSERT_TRUE(IsOk(rest));
  EXPECT_EQ(*rest, 2u);
}

TEST_F(SqliteTaskStoreTest, PruneFromACommitCallbackIsRefused) {
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  std::promise<core::Result<size_t>> inner;
  store->Commit(Create("task-1", "ctx", TaskState::kCompleted, 500, 1),
                [&](core::Result<void>) { inner.set_value(store->PruneEvents(1000)); });
  auto r = inner.get_future().get();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, core::ErrorCode::kInternal);
  EXPECT_EQ(*store->PruneEvents(1000), 1u);
}

TEST_F(SqliteTaskStoreTest, Version1DatabaseIsUpgradedOnOpenAndPrunable) {
  TaskCommit old_done = Create("old-done", "ctx", TaskState::kCompleted, 500, 3);
  TaskCommit live = Create("live", "ctx", TaskState::kWorking, 1, 2);
  const TaskRecord old_record = old_done.record;
  const std::vector<protocol::RunEvent> live_events = live.events;
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(old_done))));
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(live))));
  }
  {
    // Back to exactly what schema version 1 wrote.
    RawDb raw(path_);
    raw.DropVersion9();
    raw.Exec("DROP INDEX tasks_by_tenant_state");  // schema version 6
    raw.Exec("DROP INDEX tasks_by_updated");
    raw.Exec("DROP INDEX tasks_by_context");
    raw.Exec("DROP INDEX tasks_by_dedup_key");
    raw.Exec("ALTER TABLE tasks DROP COLUMN tenant");
    raw.Exec("ALTER TABLE tasks DROP COLUMN owner");
    raw.Exec("CREATE INDEX tasks_by_updated ON tasks(updated_at_ms DESC, id DESC)");
    raw.Exec("CREATE INDEX tasks_by_context ON tasks(context_id, updated_at_ms DESC, id DESC)");
    raw.Exec("DROP TABLE api_keys");           // schema version 7
    raw.Exec("DROP TABLE quarantined_tasks");  // schema version 5
    raw.Exec("DROP TABLE push_outbox");        // schema version 4
    raw.Exec("DROP TABLE push_configs");
    raw.Exec("DROP TABLE push_webhooks");
    raw.Exec("DROP INDEX tasks_prunable");
    raw.Exec("ALTER TABLE tasks DROP COLUMN pruned_through");
    raw.Exec("ALTER TABLE tasks DROP COLUMN run");
    raw.Exec("ALTER TABLE tasks DROP COLUMN a2a_state");
    raw.Exec("ALTER TABLE tasks DROP COLUMN dedup_key");
    raw.Exec("DELETE FROM schema_migrations WHERE version > 1");
    EXPECT_EQ(raw.Int("SELECT max(version) FROM schema_migrations"), 1);
  }
  SqliteOptions no_migrate;
  no_migrate.migrate_on_open = false;
  auto refused = SqliteTaskStore::Open(path_, no_migrate);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("a2ad migrate"), std::string::npos);

  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Int("SELECT max(version) FROM schema_migrations"),
              SqliteTaskStore::LatestSchemaVersion());
    EXPECT_EQ(raw.Int("SELECT count(*) FROM schema_migrations"),
              static_cast<int64_t>(sqlite::Migrations().size()));
    EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_schema WHERE name = 'push_outbox'"), 1);
    EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_schema WHERE name = 'tasks_prunable'"), 1);
    EXPECT_EQ(raw.Int("SELECT count(*) FROM tasks WHERE pruned_through = -1"), 2);
  }
  EXPECT_EQ(**store->Get("old-done"), old_record);
  EXPECT_EQ(store->ReadEvents("old-done", -1, 10)->size(), 3u);
  auto pruned = store->PruneEvents(1000);
  ASSERT_TRUE(IsOk(pruned));
  EXPECT_EQ(*pruned, 3u);
  EXPECT_TRUE(store->ReadEvents("old-done", -1, 10)->empty());
  EXPECT_EQ(*store->ReadEvents("live", -1, 10), live_events);
  EXPECT_EQ(**store->Get("old-done"), old_record);
}

TEST_F(SqliteTaskStoreTest, RejectsAZeroPruneBatch) {
  SqliteOptions opts;
  opts.prune_batch_events = 0;
  auto opened = SqliteTaskStore::Open(path_, opts);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, core::ErrorCode::kInvalidParams);
}

}  // namespace
}  // namespace a2ad::storage
