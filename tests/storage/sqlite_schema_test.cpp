// SqliteTaskStore's schema beyond the contract: schema version 6 (tenants and owners) on an
// older database, the plans of the List queries (every request's list is one tenant's and
// must be served by an index that leads with it, in order, without a sort), and the
// per-component migrations extensions own their tables with (sqlite_migration.hpp).
#include "a2ad/storage/sqlite/sqlite_schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <boost/json/parse.hpp>

#include <string>
#include <thread>
#include <vector>

#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "sqlite_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::Ids;
using storage_test::IsOk;
using storage_test::MustOpen;
using storage_test::RawDb;
using storage_test::SqliteTaskStoreTest;

// ---- schema version 9 ---------------------------------------------------------------------

// The runs unfinished at the upgrade are read once by the step (SQLite's JSON functions): the
// same answers as the writer's reading (stored_records.hpp ParkedUntil, EventAwaited), and a
// row whose run text does not read neither stops the upgrade nor counts as parked.
TEST_F(SqliteTaskStoreTest, Version8DatabaseGetsItsParkedRunsReadOnOpen) {
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"a-running", R"({"status":"running"})"},
      {"b-gate", R"({"status":"waiting-input","interrupt":{"interruptId":"i"}})"},
      {"c-timed", R"({"status":"waiting-approval","interrupt":{"expiresAt":5000}})"},
      {"d-child", R"({"status":"waiting-input","waitingOn":{"childRunId":"x"}})"},
      {"e-paused", R"({"status":"paused","pause":{"triggerAtMs":9000,"timeoutAtMs":7000.0}})"},
      {"f-event", R"({"status":"paused","pause":{"conditions":{"onEvent":"ci.done"}}})"},
      {"g-damaged", R"({"status":"running"})"},
  };
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    for (const auto& [id, run] : runs) {
      TaskCommit c = Create(id, "ctx", TaskState::kWorking);
      c.record.run = protocol::RunSnapshotFromJson(boost::json::parse(run).as_object());
      ASSERT_TRUE(IsOk(CommitSync(*store, std::move(c))));
    }
  }
  {
    RawDb raw(path_);
    raw.DropVersion9();
    raw.Exec("UPDATE tasks SET run = 'not json {' WHERE id = 'g-damaged'");
    raw.Exec("DELETE FROM schema_migrations WHERE version > 8");
  }
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  auto runnable = store->ListRunnable("", 100);
  ASSERT_TRUE(IsOk(runnable));
  std::vector<std::string> ids = runnable->unreadable;
  for (const auto& r : runnable->records) ids.push_back(r.task.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"a-running", "d-child", "g-damaged"}));
  auto wakes = store->ListWakes(0, "", 100, "");
  ASSERT_TRUE(IsOk(wakes));
  ASSERT_EQ(wakes->size(), 2u);
  EXPECT_EQ((*wakes)[0].task_id, "c-timed");
  EXPECT_EQ((*wakes)[0].at_ms, 5000);
  EXPECT_EQ((*wakes)[1].task_id, "e-paused");
  EXPECT_EQ((*wakes)[1].at_ms, 7000);
  EXPECT_EQ(store->UnfinishedRunsWaitingFor(kDefaultTenant, "ci.done")->value(),
            std::vector<std::string>{"f-event"});
}

// ---- schema version 6 ---------------------------------------------------------------------

TEST_F(SqliteTaskStoreTest, Version5DatabaseGetsTenantsAndOwnersOnOpen) {
  TaskCommit keyed = Create("keyed", "ctx", TaskState::kWorking, 1000, 2);
  keyed.record.dedup_key = "a2a\nanonymous\nm-1";
  const TaskRecord keyed_record = keyed.record;
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(keyed))));
  }
  {
    // Back to exactly what schema version 5 had.
    RawDb raw(path_);
    raw.DropVersion9();
    raw.Exec("DROP INDEX tasks_by_tenant_state");
    raw.Exec("DROP INDEX tasks_by_updated");
    raw.Exec("DROP INDEX tasks_by_context");
    raw.Exec("DROP INDEX tasks_by_dedup_key");
    raw.Exec("ALTER TABLE tasks DROP COLUMN tenant");
    raw.Exec("ALTER TABLE tasks DROP COLUMN owner");
    raw.Exec("CREATE INDEX tasks_by_updated ON tasks(updated_at_ms DESC, id DESC)");
    raw.Exec("CREATE INDEX tasks_by_context ON tasks(context_id, updated_at_ms DESC, id DESC)");
    raw.Exec(
        "CREATE UNIQUE INDEX tasks_by_dedup_key ON tasks(dedup_key) WHERE dedup_key IS NOT NULL");
    raw.Exec("DROP TABLE api_keys");                              // schema version 7
    raw.Exec("ALTER TABLE push_outbox DROP COLUMN traceparent");  // schema version 8
    raw.Exec("DELETE FROM schema_migrations WHERE version > 5");
  }
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Int("SELECT max(version) FROM schema_migrations"), sqlite::LatestVersion());
    EXPECT_EQ(raw.Int("SELECT count(*) FROM tasks WHERE tenant = 'default' AND owner = "
                      "'anonymous'"),
              1);
  }
  const TaskRecord got = **store->Get("keyed");
  EXPECT_EQ(got, keyed_record);  // the defaults are what the record said all along
  EXPECT_EQ(got.tenant, "default");
  EXPECT_EQ(got.owner, "anonymous");
  EXPECT_EQ((*store->FindByDedupKey("default", "a2a\nanonymous\nm-1"))->task.id, "keyed");
  // The key is now per tenant: another tenant may use it, the same one may not.
  TaskCommit other = Create("other");
  other.record.tenant = "acme";
  other.record.dedup_key = keyed_record.dedup_key;
  EXPECT_TRUE(IsOk(CommitSync(*store, std::move(other))));
  TaskCommit same = Create("same");
  same.record.dedup_key = keyed_record.dedup_key;
  auto refused = CommitSync(*store, std::move(same));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, core::ErrorCode::kConflict);
}

// ---- plans ----------------------------------------------------------------------------------

class SqliteListPlanTest : public SqliteTaskStoreTest {
 protected:
  void SetUp() override {
    store_ = MustOpen(path_);
    ASSERT_NE(store_, nullptr);
    // Ten tenants, twenty tasks each, in a few contexts and states.
    for (int t = 0; t < 10; ++t)
      for (int i = 0; i < 20; ++i) {
        const TaskState state = i % 3 == 0 ? TaskState::kWorking : TaskState::kCompleted;
        TaskCommit c = Create("t" + std::to_string(t) + "-" + std::to_string(i),
                              "ctx-" + std::to_string(i % 4), state, 1000 + i);
        c.record.tenant = "tenant-" + std::to_string(t);
        c.record.owner = "owner-" + std::to_string(i % 2);
        c.record.dedup_key = "key-" + std::to_string(i);
        ASSERT_TRUE(IsOk(CommitSync(*store_, std::move(c))));
      }
  }

  // The plan of `sql`, one step a line.
  std::string Plan(const std::string& sql) {
    RawDb raw(path_);
    std::string plan;
    for (const auto& step : raw.Column("EXPLAIN QUERY PLAN " + sql, 3)) plan += step + "\n";
    return plan;
  }

  // The page query of `q` is a search of `index` with `terms`, already in order.
  void ExpectKeyed(const TaskQuery& q, bool cursor, const std::string& index,
                   const std::string& terms) {
    for (bool analyzed : {false, true}) {
      if (analyzed) RawDb(path_).Exec("ANALYZE");  // with statistics too
      const std::string plan = Plan(sqlite::ListTasksSql(q, cursor, false));
      EXPECT_NE(plan.find("SEARCH tasks USING INDEX " + index + " (" + terms), std::string::npos)
          << plan;
      EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << plan;  // no sort
      EXPECT_EQ(plan.find("SCAN tasks"), std::string::npos) << plan;
      const std::string count = Plan(sqlite::ListTasksSql(q, false, true));
      EXPECT_EQ(count.find("SCAN tasks"), std::string::npos) << count;
    }
  }

  std::unique_ptr<SqliteTaskStore> store_;
};

TEST_F(SqliteListPlanTest, ATenantsListIsASearchOfAnIndexThatLeadsWithTheTenant) {
  TaskQuery q;
  q.tenant = "tenant-3";
  ExpectKeyed(q, false, "tasks_by_updated", "tenant=?");
  ExpectKeyed(q, true, "tasks_by_updated", "tenant=?");  // the keyset cursor, too
}

TEST_F(SqliteListPlanTest, ATenantsListByContextUsesTheTenantContextIndex) {
  TaskQuery q;
  q.tenant = "tenant-3";
  q.context_id = "ctx-1";
  ExpectKeyed(q, true, "tasks_by_context", "tenant=? AND context_id=?");
}

TEST_F(SqliteListPlanTest, ATenantsListByStateUsesTheTenantStateIndex) {
  TaskQuery q;
  q.tenant = "tenant-3";
  q.state = TaskState::kWorking;
  ExpectKeyed(q, true, "tasks_by_tenant_state", "tenant=? AND state=?");
}

// The one scan of every tenant (the cancels resent at a start: cancelled within a window)
// reads the partial index of cancelled tasks, not every task.
TEST_F(SqliteListPlanTest, TheRecoveryScanOfEveryTenantUsesTheCancelledIndex) {
  TaskQuery q;
  q.all_tenants = true;
  q.state = TaskState::kCanceled;
  q.updated_at_or_after_ms = 1000;
  ExpectKeyed(q, false, "tasks_cancelled", "updated_at_ms>?");
  ExpectKeyed(q, true, "tasks_cancelled", "updated_at_ms>? AND (updated_at_ms,id)<(?,?)");
}

TEST_F(SqliteListPlanTest, AnIdempotencyKeyIsFoundThroughItsUniqueIndex) {
  const std::string plan = Plan("SELECT id FROM tasks WHERE tenant = ?1 AND dedup_key = ?2");
  EXPECT_NE(plan.find("SEARCH tasks USING INDEX tasks_by_dedup_key (tenant=? AND dedup_key=?)"),
            std::string::npos)
      << plan;
}

// ---- schema version 10 --------------------------------------------------------------------

// The List indexes as version 9 made them: descending.
void MakeListIndexesDescending(RawDb& raw) {
  raw.Exec("DROP INDEX tasks_by_updated");
  raw.Exec("CREATE INDEX tasks_by_updated ON tasks(tenant, updated_at_ms DESC, id DESC)");
  raw.Exec("DROP INDEX tasks_by_context");
  raw.Exec(
      "CREATE INDEX tasks_by_context ON tasks(tenant, context_id, updated_at_ms DESC, id DESC)");
  raw.Exec("DROP INDEX tasks_by_tenant_state");
  raw.Exec(
      "CREATE INDEX tasks_by_tenant_state ON tasks(tenant, state, updated_at_ms DESC, id DESC)");
  raw.Exec("DROP INDEX tasks_cancelled");
  raw.Exec("CREATE INDEX tasks_cancelled ON tasks(updated_at_ms DESC, id DESC) WHERE state = 5");
}

// How much of the leaf pages of `index` is in use, in thousandths.
int64_t LeafFillPerMille(RawDb& raw, const std::string& index) {
  return raw.Int("SELECT 1000 * sum(pgsize - unused) / sum(pgsize) FROM dbstat WHERE name = '" +
                 index + "' AND pagetype = 'leaf'");
}

TEST_F(SqliteTaskStoreTest, Version9DatabaseGetsAscendingListIndexesOnOpen) {
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    for (int i = 0; i < 3; ++i)
      ASSERT_TRUE(IsOk(CommitSync(*store, Create("t" + std::to_string(i), "ctx",
                                                 TaskState::kCanceled, int64_t{1000} * (i + 1)))));
  }
  {
    RawDb raw(path_);
    MakeListIndexesDescending(raw);
    raw.Exec("DELETE FROM schema_migrations WHERE version > 9");
  }
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Int("SELECT max(version) FROM schema_migrations"), 10);
    EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = "
                      "'tasks' AND sql LIKE '%DESC%'"),
              0);
  }
  TaskQuery by_context;
  by_context.context_id = "ctx";
  EXPECT_EQ(Ids(store->List(by_context)->records), (std::vector<std::string>{"t2", "t1", "t0"}));
  TaskQuery cancelled;
  cancelled.all_tenants = true;
  cancelled.state = TaskState::kCanceled;
  cancelled.updated_at_or_after_ms = 2000;
  EXPECT_EQ(Ids(store->List(cancelled)->records), (std::vector<std::string>{"t2", "t1"}));
}

// Each task written lands at the right edge of the List indexes, where SQLite fills pages
// before it starts a new one. Descending (version 9), it landed at the left edge and every
// insert moved cells between the first leaves: half-empty leaves, and about two pages
// written per index per task.
TEST_F(SqliteTaskStoreTest, TheListIndexesArePackedAsTasksAreWritten) {
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 2000; ++i)
    ASSERT_TRUE(IsOk(CommitSync(
        *store, Create("t" + std::to_string(100000 + i), "ctx", TaskState::kCompleted, 1000 + i))));
  RawDb raw(path_);
  for (const char* index : {"tasks_by_updated", "tasks_by_context", "tasks_by_tenant_state"})
    EXPECT_GT(LeafFillPerMille(raw, index), 800) << index;
}

// ---- per-component migrations ---------------------------------------------------------------

const std::vector<sqlite::Migration> kPlansV1 = {
    {1,
     "CREATE TABLE opt_plans (id TEXT PRIMARY KEY NOT NULL,"
     " task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE) STRICT;"},
};
const std::vector<sqlite::Migration> kPlansV2 = {
    kPlansV1[0],
    {2,
     "ALTER TABLE opt_plans ADD COLUMN title TEXT NOT NULL DEFAULT '';"
     "CREATE INDEX opt_plans_by_task ON opt_plans(task_id);"},
};

TEST_F(SqliteTaskStoreTest, OpenAppliesComponentMigrationsAfterTheCoreSchema) {
  SqliteOptions opts;
  opts.components = {{"opt", kPlansV1}, {"other", {{1, "CREATE TABLE other_t (x INTEGER);"}}}};
  {
    auto store = MustOpen(path_, opts);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(IsOk(CommitSync(*store, Create("task-1"))));
  }
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT max(version) FROM component_migrations WHERE component = 'opt'"), 1);
  EXPECT_EQ(raw.Int("SELECT max(version) FROM component_migrations WHERE component = 'other'"), 1);
  EXPECT_GT(raw.Int("SELECT min(applied_at_ms) FROM component_migrations"), 1600000000000);
  // A component's tables may reference the core's.
  raw.Exec("PRAGMA foreign_keys=ON");
  raw.Exec("INSERT INTO opt_plans(id, task_id) VALUES ('p-1', 'task-1')");
  EXPECT_EQ(raw.Int("SELECT count(*) FROM opt_plans"), 1);
  EXPECT_EQ(*SqliteTaskStore::ComponentVersion(path_, "opt"), 1);
  EXPECT_EQ(*SqliteTaskStore::ComponentVersion(path_, "never"), 0);
}

TEST_F(SqliteTaskStoreTest, AComponentMovesOnlyByItsNewStepsAndReopeningIsANoOp) {
  ASSERT_EQ(*SqliteTaskStore::MigrateComponent(path_, "opt", kPlansV1), 1);
  ASSERT_EQ(*SqliteTaskStore::MigrateComponent(path_, "opt", kPlansV1), 1);  // idempotent
  {
    RawDb raw(path_);
    raw.Exec(
        "INSERT INTO tasks(id, context_id, state, skill_id, created_at_ms, updated_at_ms,"
        " last_sequence, snapshot) VALUES ('t', 'c', 1, 's', 1, 1, -1, '{}')");
    raw.Exec("INSERT INTO opt_plans(id, task_id) VALUES ('p-1', 't')");
  }
  SqliteOptions opts;
  opts.components = {{"opt", kPlansV2}};
  { ASSERT_NE(MustOpen(path_, opts), nullptr); }
  { ASSERT_NE(MustOpen(path_, opts), nullptr); }
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM component_migrations WHERE component = 'opt'"), 2);
  EXPECT_EQ(raw.Text("SELECT title || 'x' FROM opt_plans WHERE id = 'p-1'"), "x");  // kept
  EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_schema WHERE name = 'opt_plans_by_task'"), 1);
}

TEST_F(SqliteTaskStoreTest, AFailedComponentStepIsRolledBackAndEarlierStepsStay) {
  std::vector<sqlite::Migration> broken = kPlansV2;
  broken.push_back({3,
                    "CREATE TABLE opt_half (x INTEGER);"
                    "ALTER TABLE no_such_table ADD COLUMN y INTEGER;"});
  auto failed = SqliteTaskStore::MigrateComponent(path_, "opt", broken);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, core::ErrorCode::kInternal);
  {
    RawDb raw(path_);
    EXPECT_EQ(raw.Int("SELECT max(version) FROM component_migrations WHERE component = 'opt'"), 2);
    EXPECT_EQ(raw.Int("SELECT count(*) FROM sqlite_schema WHERE name = 'opt_half'"), 0);
  }
  SqliteOptions opts;
  opts.components = {{"opt", broken}};
  auto refused = SqliteTaskStore::Open(path_, opts);  // Open reports it too
  ASSERT_FALSE(refused.ok());
  broken[2].sql = "CREATE TABLE opt_half (x INTEGER);";
  EXPECT_EQ(*SqliteTaskStore::MigrateComponent(path_, "opt", broken), 3);
}

TEST_F(SqliteTaskStoreTest, AComponentNewerThanTheBuildIsRefusedAndLeftAlone) {
  ASSERT_EQ(*SqliteTaskStore::MigrateComponent(path_, "opt", kPlansV2), 2);
  auto older = SqliteTaskStore::MigrateComponent(path_, "opt", kPlansV1);
  ASSERT_FALSE(older.ok());
  EXPECT_EQ(older.error().code, core::ErrorCode::kInternal);
  EXPECT_NE(older.error().message.find("newer"), std::string::npos) << older.error().message;
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT max(version) FROM component_migrations WHERE component = 'opt'"), 2);
}

TEST_F(SqliteTaskStoreTest, MalformedComponentListsAreInvalidParams) {
  const std::vector<std::vector<sqlite::Migration>> bad = {
      {{2, "SELECT 1;"}},                    // does not start at 1
      {{1, "SELECT 1;"}, {3, "SELECT 1;"}},  // a gap
      {{1, nullptr}},                        // no SQL
  };
  for (const auto& list : bad) {
    auto r = SqliteTaskStore::MigrateComponent(path_, "opt", list);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
  }
  auto unnamed = SqliteTaskStore::MigrateComponent(path_, "", kPlansV1);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(unnamed.error().code, core::ErrorCode::kInvalidParams);
}

TEST_F(SqliteTaskStoreTest, WithoutAutoMigrateABehindComponentIsRefused) {
  ASSERT_EQ(*SqliteTaskStore::MigrateComponent(path_, "opt", kPlansV1), 1);
  SqliteOptions opts;
  opts.migrate_on_open = false;
  opts.components = {{"opt", kPlansV2}};
  auto refused = SqliteTaskStore::Open(path_, opts);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("component 'opt'"), std::string::npos)
      << refused.error().message;
  ASSERT_EQ(*SqliteTaskStore::MigrateComponent(path_, "opt", kPlansV2), 2);
  EXPECT_NE(MustOpen(path_, opts), nullptr);
}

TEST_F(SqliteTaskStoreTest, ConcurrentComponentMigratorsApplyEveryStepOnce) {
  // Each step creates a table: applying one twice would fail. Both migrators succeed.
  std::vector<sqlite::Migration> steps;
  static const std::vector<std::string> kSql = [] {
    std::vector<std::string> v;
    for (int i = 1; i <= 8; ++i) v.push_back("CREATE TABLE race_" + std::to_string(i) + " (x);");
    return v;
  }();
  for (int i = 0; i < 8; ++i) steps.push_back({i + 1, kSql[static_cast<size_t>(i)].c_str()});
  ASSERT_TRUE(SqliteTaskStore::Migrate(path_).ok());
  std::vector<core::Result<int>> results(4, core::Result<int>(0));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t)
    threads.emplace_back(
        [&, t] { results[t] = SqliteTaskStore::MigrateComponent(path_, "race", steps); });
  for (auto& th : threads) th.join();
  for (const auto& r : results) {
    ASSERT_TRUE(IsOk(r));
    EXPECT_EQ(*r, 8);
  }
  RawDb raw(path_);
  EXPECT_EQ(raw.Int("SELECT count(*) FROM component_migrations WHERE component = 'race'"), 8);
}

}  // namespace
}  // namespace a2ad::storage
