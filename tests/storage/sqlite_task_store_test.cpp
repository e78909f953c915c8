// SqliteTaskStore beyond the shared contract: opening (WAL, options, paths), schema
// versions and migrations, concurrent reads on the reader pool, and the plan of a startup
// query. Durability: sqlite_durability_test.cpp; batching and faults:
// sqlite_writer_test.cpp; retention: sqlite_retention_test.cpp.
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/storage/sqlite/sqlite_push_store.hpp"
#include "sqlite_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::IsOk;
using storage_test::MustOpen;
using storage_test::RawDb;
using storage_test::SqliteTaskStoreTest;

TEST_F(SqliteTaskStoreTest, OpenEnablesWalAndRecordsTheSchemaVersion) {
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    RawDb raw(path_);
    EXPECT_EQ(raw.Text("PRAGMA journal_mode"), "wal");
  }
  RawDb raw(path_);
  const int latest = SqliteTaskStore::LatestSchemaVersion();
  EXPECT_GE(latest, 1);
  EXPECT_EQ(raw.Int("SELECT max(version) FROM schema_migrations"), latest);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM schema_migrations"), latest);
  EXPECT_GT(raw.Int("SELECT min(applied_at_ms) FROM schema_migrations"), 1600000000000);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_schema WHERE name IN "
                    "('tasks', 'task_events', 'tasks_by_updated', 'tasks_by_context',"
                    " 'tasks_cancelled', 'tasks_prunable', 'tasks_runnable', 'tasks_wake')"),
            8);
}

TEST_F(SqliteTaskStoreTest, MigrateCreatesAndIsIdempotent) {
  auto first = SqliteTaskStore::Migrate(path_);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(*first, SqliteTaskStore::LatestSchemaVersion());
  auto again = SqliteTaskStore::Migrate(path_);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, SqliteTaskStore::LatestSchemaVersion());
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Int("SELECT count(*) FROM schema_migrations"),
              SqliteTaskStore::LatestSchemaVersion());
  }
  SqliteOptions opts;
  opts.migrate_on_open = false;  // already migrated: accepted
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(IsOk(CommitSync(*store, Create("task-1"))));
}

TEST_F(SqliteTaskStoreTest, UnmigratedDatabaseIsRefusedWithoutAutoMigrate) {
  SqliteOptions opts;
  opts.migrate_on_open = false;
  auto opened = SqliteTaskStore::Open(path_, opts);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message.find("a2ad migrate"), std::string::npos)
      << opened.error().message;
}

TEST_F(SqliteTaskStoreTest, RefusesASchemaNewerThanTheCode) {
  ASSERT_TRUE(SqliteTaskStore::Migrate(path_).ok());
  const int newer = SqliteTaskStore::LatestSchemaVersion() + 1;
  {
    RawDb raw(path_);
    raw.Exec("INSERT INTO schema_migrations(version, applied_at_ms) VALUES (" +
             std::to_string(newer) + ", 1)");
  }
  auto opened = SqliteTaskStore::Open(path_);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.error().code, core::ErrorCode::kInternal);
  const std::string& message = opened.error().message;
  EXPECT_NE(message.find("newer"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(newer)), std::string::npos) << message;
  auto migrated = SqliteTaskStore::Migrate(path_);
  ASSERT_FALSE(migrated.ok());
  EXPECT_NE(migrated.error().message.find("newer"), std::string::npos);
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT max(version) FROM schema_migrations"), newer);  // untouched
}

TEST_F(SqliteTaskStoreTest, RejectsUnusablePaths) {
  for (const std::string& path : {std::string(), std::string(":memory:")}) {
    auto opened = SqliteTaskStore::Open(path);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.error().code, core::ErrorCode::kInvalidParams);
  }
  auto missing_dir = SqliteTaskStore::Open(dir_.File("no/such/dir/tasks.db"));
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_EQ(missing_dir.error().code, core::ErrorCode::kInternal);
  EXPECT_NE(missing_dir.error().message.find("no/such/dir"), std::string::npos);
}

TEST_F(SqliteTaskStoreTest, ManyConcurrentReadersShareASmallPool) {
  SqliteOptions opts;
  opts.reader_connections = 1;
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(IsOk(CommitSync(*store, Create("task-1", "ctx", TaskState::kWorking, 1000, 3))));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto got = store->Get("task-1");
        auto events = store->ReadEvents("task-1", -1, 10);
        auto page = store->List(TaskQuery{});
        if (!got.ok() || !got->has_value() || !events.ok() || events->size() != 3 || !page.ok() ||
            page->total_size != 1) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// TryGet (task_store.hpp) answers as Get does from an idle reader, and gives up at once when
// every reader is lent out. (Its other way out, a lock held by another process, cannot be
// made to happen here: in WAL mode no process can lock readers out while this one has the
// file open, short of a crash recovery.)
TEST_F(SqliteTaskStoreTest, TryGetAnswersFromAnIdleReaderAndNeverWaits) {
  SqliteOptions opts;
  opts.reader_connections = 1;
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  TaskCommit created = Create("task-1", "ctx", TaskState::kWorking, 1000, 3);
  created.record.run.run_id = "task-1";
  created.record.run.status = "running";
  ASSERT_TRUE(IsOk(CommitSync(*store, std::move(created))));
  EXPECT_FALSE(store->TryGet("task-1", true)) << "no reader is open yet: it does not open one";
  auto got = store->Get("task-1");  // opens the one reader
  ASSERT_TRUE(got.ok() && got->has_value());
  auto now = store->TryGet("task-1", true);
  ASSERT_TRUE(now && now->ok() && now->value());
  EXPECT_EQ(*now->value(), **got);
  EXPECT_EQ(now->value()->run.status, "running");
  auto task_only = store->TryGet("task-1", false);  // without the run
  ASSERT_TRUE(task_only && task_only->ok() && task_only->value());
  EXPECT_EQ(task_only->value()->task, (*got)->task);
  EXPECT_EQ(task_only->value()->last_sequence, 2);
  EXPECT_TRUE(task_only->value()->run.empty());
  auto unknown = store->TryGet("task-2", true);
  ASSERT_TRUE(unknown && unknown->ok());
  EXPECT_FALSE(unknown->value());

  // The reader lent out (a read transaction in progress on another thread).
  std::atomic<bool> lent{false}, give_back{false};
  std::thread holder([&] {
    (void)store->Read([&](sqlite::Connection&) -> core::Result<void> {
      lent = true;
      while (!give_back) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return core::Ok{};
    });
  });
  while (!lent) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_FALSE(store->TryGet("task-1", true));
  give_back = true;
  holder.join();

  auto after = store->TryGet("task-1", true);
  ASSERT_TRUE(after && after->ok() && after->value()) << "the reader is back";
}

// SQLite's memory statistics take a process-wide mutex on every allocation, which the writer
// and the readers would share; the store's first connection turns them off, and then SQLite
// counts nothing (sqlite3_memory_used stays 0 however much it allocates).
TEST_F(SqliteTaskStoreTest, TheStoreRunsSqliteWithoutMemoryStatistics) {
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(IsOk(CommitSync(
        *store, Create("task-" + std::to_string(i), "ctx", TaskState::kWorking, 1000 + i, 3))));
  ASSERT_TRUE(store->Get("task-7").ok());
  EXPECT_EQ(sqlite3_memory_used(), 0);
}

// tasks.a2a_state is not read back (the record derives it), but it is the RFC 0100 view an
// operator's SQL and an earlier release read: every commit writes it for the task as
// committed.
TEST_F(SqliteTaskStoreTest, EveryCommitWritesTheA2ATaskStateColumn) {
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(IsOk(CommitSync(*store, Create("task-1", "ctx", TaskState::kWorking, 1000, 1))));
  RawDb raw(path_);
  const std::string query = "SELECT a2a_state FROM tasks WHERE id = 'task-1'";
  EXPECT_EQ(raw.Text(query),
            R"({"taskId":"task-1","runId":"task-1","contextId":"ctx","state":"working",)"
            R"("updatedAt":"1970-01-01T00:00:01.000Z"})");
  auto got = store->Get("task-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  ASSERT_TRUE(IsOk(CommitSync(*store, storage_test::Append(**got, TaskState::kCompleted, 2500))));
  EXPECT_EQ(raw.Text(query),
            R"({"taskId":"task-1","runId":"task-1","contextId":"ctx","state":"completed",)"
            R"("updatedAt":"1970-01-01T00:00:02.500Z"})");
}

// Every start reads the push configs of unfinished tasks (PushService::WarmCache). The query
// must start from push_configs and look each task up by its key: a plan that scans the
// tasks (or one of their indexes) costs seconds at a million stored tasks.
TEST_F(SqliteTaskStoreTest, StartupPushConfigQueryDoesNotScanTheTasks) {
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 50; ++i)
    ASSERT_TRUE(IsOk(CommitSync(*store, Create("task-" + std::to_string(i)))));
  RawDb raw(path_);
  raw.Exec("ANALYZE");  // with statistics too, the plan stays keyed
  std::string plan;
  for (const auto& step :
       raw.Column(std::string("EXPLAIN QUERY PLAN ") + sqlite::kActiveConfigsQuery, 3))
    plan += step + "\n";
  EXPECT_EQ(plan.find("SCAN tasks"), std::string::npos) << plan;
  EXPECT_NE(plan.find("SEARCH tasks USING"), std::string::npos) << plan;
}

}  // namespace
}  // namespace a2ad::storage
