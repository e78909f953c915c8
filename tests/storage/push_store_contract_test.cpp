// The PushStore contract (push_store.hpp) and TaskCommit's push rows, run against every
// backend (STYLE.md #6): outbox rows exist iff their state change committed.
#include <gtest/gtest.h>

#include <memory>

#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/storage/sqlite/sqlite_push_store.hpp"
#include "a2ad/storage/postgres/postgres_store.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "pg_cluster.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::IsOk;

struct MemoryBackend {
  std::shared_ptr<MemoryTaskStore> mem;
  void Open() { mem = std::make_shared<MemoryTaskStore>(); }
  TaskStore& tasks() { return *mem; }
  PushStore& push() { return *mem; }
  void Close() { mem->Close(); }
};

struct SqliteBackend {
  storage_test::TempDir dir;
  SqliteOptions opts;
  std::unique_ptr<SqliteTaskStore> task_store;
  std::unique_ptr<SqlitePushStore> push_store;
  void Open() {
    auto t = SqliteTaskStore::Open(dir.File("a2ad.db"), opts);
    ASSERT_TRUE(t) << t.error().message;
    task_store = std::move(t).value();
    auto p = SqlitePushStore::Open(dir.File("a2ad.db"));
    ASSERT_TRUE(p) << p.error().message;
    push_store = std::move(p).value();
  }
  TaskStore& tasks() { return *task_store; }
  PushStore& push() { return *push_store; }
  void Close() {
    push_store->Close();
    task_store->Close();
  }
};

struct PostgresBackend {
  std::unique_ptr<PostgresStore> store;
  void Open() {
    auto s = PostgresStore::Open(test::FreshPgDatabase());
    ASSERT_TRUE(s) << s.error().message;
    store = std::move(s).value();
  }
  TaskStore& tasks() { return *store; }
  PushStore& push() { return *store; }
  void Close() { store->Close(); }
};

PushConfigRecord Config(const std::string& task, const std::string& id, int64_t at,
                        const std::string& token = "tok") {
  PushConfigRecord r;
  r.task_id = task;
  r.config.task_id = task;
  r.config.id = id;
  r.config.url = "https://hooks.example.com/" + id;
  r.config.token = token;
  r.config.wire_version = "0.3";
  r.config.authentication = protocol::AuthenticationInfo{"Bearer", "cred-" + id};
  r.created_at_ms = at;
  return r;
}

OutboxRow Row(const std::string& task, const std::string& id, int64_t due) {
  OutboxRow r;
  r.id = id;
  r.kind = "a2a";
  r.task_id = task;
  r.target_id = "cfg";
  r.url = "https://hooks.example.com/cfg";
  r.body = R"({"statusUpdate":{}})";
  r.content_type = "application/a2a+json";
  r.created_at_ms = due;
  r.next_attempt_at_ms = due;
  return r;
}

template <class Backend>
class PushStoreContractTest : public ::testing::Test {
 protected:
  void SetUp() override { backend_.Open(); }
  void TearDown() override { backend_.Close(); }
  Backend backend_;
};

using Backends = ::testing::Types<MemoryBackend, SqliteBackend, PostgresBackend>;
TYPED_TEST_SUITE(PushStoreContractTest, Backends);

TYPED_TEST(PushStoreContractTest, CommitWritesConfigsAndOutboxRowsAtomically) {
  auto& b = this->backend_;
  TaskCommit create = Create("t1");
  create.push_configs.push_back(Config("t1", "inline", 1000));
  create.outbox.push_back(Row("t1", "ev-1", 1000));
  ASSERT_TRUE(IsOk(CommitSync(b.tasks(), create)));
  auto cfg = b.push().GetConfig("t1", "inline");
  ASSERT_TRUE(IsOk(cfg));
  ASSERT_TRUE(cfg->has_value());
  EXPECT_EQ((*cfg)->config.token, "tok");
  EXPECT_EQ((*cfg)->config.wire_version, "0.3");
  ASSERT_TRUE((*cfg)->config.authentication);
  EXPECT_EQ((*cfg)->config.authentication->credentials, "cred-inline");

  // A commit that fails (the task already exists) writes none of its rows.
  TaskCommit stale = Create("t1");
  stale.outbox.push_back(Row("t1", "ev-lost", 2000));
  stale.push_configs.push_back(Config("t1", "lost", 2000));
  EXPECT_EQ(CommitSync(b.tasks(), stale).error().code, core::ErrorCode::kConflict);
  auto rows = b.push().ListOutbox("t1");
  ASSERT_TRUE(IsOk(rows));
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front(), Row("t1", "ev-1", 1000));
  EXPECT_FALSE(b.push().GetConfig("t1", "lost")->has_value());

  // A row for another task is a precondition violation.
  TaskCommit wrong = Append(create.record, TaskState::kWorking, 2000);
  wrong.outbox.push_back(Row("t2", "ev-x", 2000));
  EXPECT_EQ(CommitSync(b.tasks(), wrong).error().code, core::ErrorCode::kInvalidParams);
}

TYPED_TEST(PushStoreContractTest, ConfigCrudIsPerTaskAndUpserts) {
  auto& b = this->backend_;
  ASSERT_TRUE(IsOk(CommitSync(b.tasks(), Create("t1"))));
  ASSERT_TRUE(IsOk(CommitSync(b.tasks(), Create("t2"))));
  ASSERT_TRUE(IsOk(b.push().PutConfig(Config("t1", "b", 2000))));
  ASSERT_TRUE(IsOk(b.push().PutConfig(Config("t1", "a", 1000))));
  ASSERT_TRUE(IsOk(b.push().PutConfig(Config("t2", "a", 1000))));
  ASSERT_TRUE(IsOk(b.push().PutConfig(Config("t1", "b", 2000, "tok-2"))));  // replaces
  auto list = b.push().ListConfigs("t1");
  ASSERT_TRUE(IsOk(list));
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].config.id, "a");
  EXPECT_EQ((*list)[1].config.id, "b");
  EXPECT_EQ((*list)[1].config.token, "tok-2");
  PushConfigRecord unauth = Config("t2", "plain", 3000);
  unauth.config.authentication.reset();
  ASSERT_TRUE(IsOk(b.push().PutConfig(unauth)));
  EXPECT_FALSE((*b.push().GetConfig("t2", "plain"))->config.authentication);
  EXPECT_EQ(b.push().AllConfigs()->size(), 4u);
  // A terminal task's configs are no longer listed for the cache.
  auto t2 = b.tasks().Get("t2");
  ASSERT_TRUE(IsOk(CommitSync(b.tasks(), Append(**t2, TaskState::kCompleted, 5000))));
  EXPECT_EQ(b.push().AllConfigs()->size(), 2u);
  EXPECT_TRUE(*b.push().DeleteConfig("t1", "a"));
  EXPECT_FALSE(*b.push().DeleteConfig("t1", "a"));
  EXPECT_EQ(b.push().ListConfigs("t1")->size(), 1u);
  EXPECT_EQ(b.push().ListConfigs("t2")->size(), 2u);
  auto orphan = b.push().PutConfig(Config("nope", "a", 1));
  ASSERT_FALSE(orphan);
  EXPECT_EQ(orphan.error().code, core::ErrorCode::kTaskNotFound);
}

TYPED_TEST(PushStoreContractTest, DueRowsRetryAndDeadLetter) {
  auto& b = this->backend_;
  ASSERT_TRUE(IsOk(CommitSync(b.tasks(), Create("t1"))));
  ASSERT_TRUE(IsOk(b.push().Enqueue({Row("t1", "r1", 100), Row("t1", "r2", 50)})));
  EXPECT_EQ(b.push().Enqueue({Row("t1", "r1", 100)}).error().code, core::ErrorCode::kConflict);
  EXPECT_EQ(**b.push().NextDueAt(), 50);
  EXPECT_TRUE(b.push().DueOutbox(10, 10)->empty());
  auto due = b.push().DueOutbox(100, 10);
  ASSERT_EQ(due->size(), 2u);
  EXPECT_EQ((*due)[0].id, "r2");  // oldest due first
  EXPECT_EQ(b.push().DueOutbox(100, 1)->size(), 1u);

  OutboxRow retry = (*due)[0];
  retry.attempts = 1;
  retry.next_attempt_at_ms = 400;
  retry.last_error = "HTTP 500";
  ASSERT_TRUE(IsOk(b.push().UpdateOutbox(retry)));
  OutboxRow dead = (*due)[1];
  dead.attempts = 5;
  dead.state = OutboxState::kDead;
  dead.last_error = "HTTP 503";
  dead.finished_at_ms = 300;
  ASSERT_TRUE(IsOk(b.push().UpdateOutbox(dead)));
  EXPECT_EQ(**b.push().NextDueAt(), 400);
  EXPECT_TRUE(b.push().DueOutbox(399, 10)->empty());
  ASSERT_EQ(b.push().DueOutbox(400, 10)->size(), 1u);
  auto dead_list = b.push().ListDead(10);
  ASSERT_EQ(dead_list->size(), 1u);
  EXPECT_EQ(dead_list->front(), dead);
  OutboxRow missing = retry;
  missing.id = "nope";
  EXPECT_FALSE(b.push().UpdateOutbox(missing));

  retry.state = OutboxState::kDelivered;
  retry.finished_at_ms = 500;
  ASSERT_TRUE(IsOk(b.push().UpdateOutbox(retry)));
  EXPECT_FALSE(b.push().NextDueAt()->has_value());
}

TYPED_TEST(PushStoreContractTest, WebhookSubscriptions) {
  auto& b = this->backend_;
  WebhookRecord w{
      "wh-1",   "tenant-a", "https://hooks.example.com/w", {"run.completed", "run.failed"},
      "s3cret", 1000};
  ASSERT_TRUE(IsOk(b.push().PutWebhook(w)));
  EXPECT_EQ(b.push().PutWebhook(w).error().code, core::ErrorCode::kConflict);
  auto got = b.push().GetWebhook("wh-1");
  ASSERT_TRUE(IsOk(got));
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, w);
  EXPECT_EQ(b.push().AllWebhooks()->size(), 1u);
  EXPECT_TRUE(*b.push().DeleteWebhook("wh-1"));
  EXPECT_FALSE(*b.push().DeleteWebhook("wh-1"));
  EXPECT_FALSE(b.push().GetWebhook("wh-1")->has_value());
}

TEST(SqlitePushStore, RowsSurviveReopenAndFailedCommitsLeaveNone) {
  storage_test::TempDir dir;
  const std::string path = dir.File("a2ad.db");
  {
    SqliteOptions opts;
    int n = 0;
    opts.fail_commit_hook = [&n] { return ++n == 2; };  // the second commit fails
    auto tasks = SqliteTaskStore::Open(path, opts);
    ASSERT_TRUE(tasks);
    TaskCommit a = Create("t1");
    a.outbox.push_back(Row("t1", "kept", 1));
    ASSERT_TRUE(IsOk(CommitSync(**tasks, a)));
    TaskCommit b = Append(a.record, TaskState::kCompleted, 2);
    b.outbox.push_back(Row("t1", "rolled-back", 2));
    EXPECT_FALSE(CommitSync(**tasks, b));
    (*tasks)->Close();
  }
  auto tasks = SqliteTaskStore::Open(path);
  ASSERT_TRUE(tasks);
  auto push = SqlitePushStore::Open(path);
  ASSERT_TRUE(push) << push.error().message;
  auto rows = (*push)->ListOutbox("t1");
  ASSERT_TRUE(IsOk(rows));
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ(rows->front().id, "kept");
}

}  // namespace
}  // namespace a2ad::storage
