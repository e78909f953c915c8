// SqliteTaskStore beyond the shared contract: durability, migrations, batching, faults and
// snapshot fidelity.
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <future>
#include <mutex>
#include <thread>

#include "a2ad/storage/sqlite/sqlite_push_store.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::CommitAsync;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::Event;
using storage_test::Ids;
using storage_test::IsOk;

// Direct SQL access to the file, to look behind the store.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    int64_t v = -12345;
    if (sqlite3_step(stmt) == SQLITE_ROW) v = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
  }
  std::string Text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    std::string v;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      v = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return v;
  }
  std::vector<std::string> Column(const std::string& sql, int column) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    std::vector<std::string> out;
    while (sqlite3_step(stmt) == SQLITE_ROW)
      out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, column)));
    sqlite3_finalize(stmt);
    return out;
  }
  void Exec(const std::string& sql) {
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }

 private:
  sqlite3* db_ = nullptr;
};

std::unique_ptr<SqliteTaskStore> MustOpen(const std::string& path, SqliteOptions opts = {}) {
  auto opened = SqliteTaskStore::Open(path, std::move(opts));
  if (!opened) {
    ADD_FAILURE() << opened.error().message;
    return nullptr;
  }
  return std::move(opened).value();
}

// Holds the writer inside its first batch until Release(), so that the commits issued
// meanwhile queue up and form the next batch. Records every batch size.
class WriterGate {
 public:
  void Install(SqliteOptions& opts) {
    opts.batch_hook = [this](size_t n) {
      bool first = false;
      {
        std::lock_guard lock(mu_);
        sizes_.push_back(n);
        first = sizes_.size() == 1;
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

class SqliteTaskStoreTest : public ::testing::Test {
 protected:
  storage_test::TempDir dir_;
  std::string path_ = dir_.File("tasks.db");
};

TEST_F(SqliteTaskStoreTest, PersistsAcrossCloseAndReopen) {
  TaskCommit a = Create("task-a", "ctx-1", TaskState::kSubmitted, 1000, 3);
  TaskCommit b = Create("task-b", "ctx-2", TaskState::kWorking, 2000, 1);
  TaskCommit a2 = Append(a.record, TaskState::kCompleted, 3000, 2);
  std::vector<protocol::RunEvent> a_events = a.events;
  a_events.insert(a_events.end(), a2.events.begin(), a2.events.end());
  const TaskRecord a_final = a2.record;
  const TaskRecord b_final = b.record;
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(a))));
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(b))));
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(a2))));
  }  // destructor closes
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  auto got = store->Get("task-a");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, a_final);
  auto events = store->ReadEvents("task-a", -1, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(*events, a_events);
  auto page = store->List(TaskQuery{});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Ids(page->records), (std::vector<std::string>{"task-a", "task-b"}));
  EXPECT_EQ(page->records[1], b_final);
  // And the log continues where it stopped.
  EXPECT_TRUE(IsOk(CommitSync(*store, Append(a_final, TaskState::kCompleted, 4000))));
}

TEST_F(SqliteTaskStoreTest, AcknowledgedCommitsSurviveSigkill) {
  constexpr int kCommits = 25;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto opened = SqliteTaskStore::Open(path_);
    if (!opened) ::_exit(3);
    auto& store = **opened;
    for (int i = 0; i < kCommits; ++i) {
      store.Commit(Create("task-" + std::to_string(i), "ctx", TaskState::kWorking, 1000 + i, 2),
                   [fd = fds[1]](core::Result<void> r) {
                     const char byte = r.ok() ? 'k' : 'x';
                     if (::write(fd, &byte, 1) != 1) ::_exit(4);
                   });
    }
    for (;;) ::pause();  // never closes the store: killed with commits acknowledged
  }
  ::close(fds[1]);
  std::string acks;
  char buf[64];
  while (acks.size() < kCommits) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    acks.append(buf, static_cast<size_t>(n));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fds[0]);
  ASSERT_EQ(acks, std::string(kCommits, 'k'));
  ASSERT_TRUE(WIFSIGNALED(status));

  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < kCommits; ++i) {
    const std::string id = "task-" + std::to_string(i);
    auto got = store->Get(id);
    ASSERT_TRUE(got.ok() && got->has_value()) << id;
    EXPECT_EQ((*got)->last_sequence, 1);
    auto events = store->ReadEvents(id, -1, 10);
    ASSERT_TRUE(events.ok());
    EXPECT_EQ(events->size(), 2u);
  }
}

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
                    " 'tasks_by_state', 'tasks_prunable')"),
            6);
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

TEST_F(SqliteTaskStoreTest, ABatchKeepsItsGoodCommitsWhenOneConflicts) {
  WriterGate gate;
  SqliteOptions opts;
  gate.Install(opts);
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);

  TaskCommit a = Create("task-a", "ctx", TaskState::kSubmitted, 1000, 1);
  const TaskRecord a_record = a.record;
  auto fa = CommitAsync(*store, std::move(a));
  gate.WaitEntered();  // the writer holds batch [a]; the next ones queue up

  TaskCommit b = Create("task-b", "ctx", TaskState::kSubmitted, 1000, 1);
  TaskCommit b2 = Append(b.record, TaskState::kWorking, 2000, 2);  // same batch as b
  const TaskRecord b2_record = b2.record;
  auto fb = CommitAsync(*store, std::move(b));
  auto fdup = CommitAsync(*store, Create("task-a", "other", TaskState::kFailed, 5000, 2));
  auto fb2 = CommitAsync(*store, std::move(b2));
  TaskRecord stale = b2_record;
  stale.last_sequence = 0;
  auto fstale = CommitAsync(*store, Append(stale, TaskState::kFailed, 9000));
  auto fc = CommitAsync(*store, Create("task-c", "ctx", TaskState::kSubmitted, 1000, 1));
  // The same idempotency key twice in one batch: the second creation is the conflict.
  TaskCommit d = Create("task-d", "ctx", TaskState::kSubmitted, 1000, 1);
  d.record.dedup_key = "caller\nmessage-1";
  TaskCommit e = Create("task-e", "ctx", TaskState::kSubmitted, 1000, 2);
  e.record.dedup_key = d.record.dedup_key;
  auto fd = CommitAsync(*store, std::move(d));
  auto fe = CommitAsync(*store, std::move(e));
  gate.Release();

  EXPECT_TRUE(fa.get().ok());
  EXPECT_TRUE(fb.get().ok());
  auto dup = fdup.get();
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, core::ErrorCode::kConflict);
  EXPECT_TRUE(fb2.get().ok());
  auto stale_result = fstale.get();
  ASSERT_FALSE(stale_result.ok());
  EXPECT_EQ(stale_result.error().code, core::ErrorCode::kConflict);
  EXPECT_TRUE(fc.get().ok());
  EXPECT_TRUE(fd.get().ok());
  auto dup_key = fe.get();
  ASSERT_FALSE(dup_key.ok());
  EXPECT_EQ(dup_key.error().code, core::ErrorCode::kConflict);
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 7}));

  EXPECT_EQ(**store->Get("task-a"), a_record);
  EXPECT_EQ(store->ReadEvents("task-a", -1, 10)->size(), 1u);
  EXPECT_EQ(**store->Get("task-b"), b2_record);
  EXPECT_EQ(store->ReadEvents("task-b", -1, 10)->size(), 3u);
  EXPECT_TRUE(store->Get("task-c")->has_value());
  EXPECT_EQ((*store->FindByDedupKey("caller\nmessage-1"))->task.id, "task-d");
  EXPECT_FALSE(store->Get("task-e")->has_value());
  EXPECT_TRUE(store->ReadEvents("task-e", -1, 10)->empty());
}

TEST_F(SqliteTaskStoreTest, BatchIsCappedAtMaxBatchCommits) {
  WriterGate gate;
  SqliteOptions opts;
  opts.max_batch_commits = 3;
  gate.Install(opts);
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  std::vector<std::future<core::Result<void>>> results;
  results.push_back(CommitAsync(*store, Create("task-0")));
  gate.WaitEntered();
  for (int i = 1; i <= 7; ++i)
    results.push_back(CommitAsync(*store, Create("task-" + std::to_string(i))));
  gate.Release();
  for (auto& f : results) EXPECT_TRUE(f.get().ok());
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 3, 3, 1}));
  EXPECT_EQ(store->List(TaskQuery{})->total_size, 8);
}

TEST_F(SqliteTaskStoreTest, FailCommitHookFailsOnlyThatCommit) {
  WriterGate gate;
  SqliteOptions opts;
  gate.Install(opts);
  std::atomic<int> calls{0};
  opts.fail_commit_hook = [&calls] { return ++calls == 3; };  // the third commit reaching SQL
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);

  TaskCommit a = Create("task-a", "ctx", TaskState::kSubmitted, 1000, 1);
  TaskCommit a2 = Append(a.record, TaskState::kWorking, 2000, 1);
  const TaskRecord a_record = a.record;
  auto fa = CommitAsync(*store, std::move(a));
  gate.WaitEntered();
  auto fb = CommitAsync(*store, Create("task-b"));
  auto fa2 = CommitAsync(*store, std::move(a2));  // third: fails, rolled back alone
  auto fc = CommitAsync(*store, Create("task-c"));
  gate.Release();

  EXPECT_TRUE(fa.get().ok());
  EXPECT_TRUE(fb.get().ok());
  auto failed = fa2.get();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, core::ErrorCode::kInternal);
  EXPECT_TRUE(fc.get().ok());
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 3}));

  EXPECT_EQ(**store->Get("task-a"), a_record);  // nothing of the failed commit
  EXPECT_EQ(store->ReadEvents("task-a", -1, 10)->size(), 1u);
  EXPECT_TRUE(store->Get("task-b")->has_value());
  EXPECT_TRUE(store->Get("task-c")->has_value());
  // The same change succeeds on retry.
  EXPECT_TRUE(IsOk(CommitSync(*store, Append(a_record, TaskState::kWorking, 2000, 1))));
}

TEST_F(SqliteTaskStoreTest, FailedBatchCommitFailsEveryCommitOfTheBatch) {
  WriterGate gate;
  SqliteOptions opts;
  gate.Install(opts);
  std::atomic<int> batches{0};
  opts.fail_batch_hook = [&batches] { return ++batches == 2; };
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);

  auto f0 = CommitAsync(*store, Create("task-0"));
  gate.WaitEntered();
  auto f1 = CommitAsync(*store, Create("task-1"));
  auto f2 = CommitAsync(*store, Create("task-2"));
  auto fdup = CommitAsync(*store, Create("task-0"));  // fails on its own anyway
  gate.Release();

  EXPECT_TRUE(f0.get().ok());
  for (auto* f : {&f1, &f2}) {
    auto r = f->get();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, core::ErrorCode::kInternal);
  }
  auto dup = fdup.get();
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, core::ErrorCode::kConflict);  // keeps its own error
  EXPECT_FALSE(store->Get("task-1")->has_value());
  EXPECT_FALSE(store->Get("task-2")->has_value());
  EXPECT_TRUE(store->ReadEvents("task-1", -1, 10)->empty());
  // The writer recovers.
  EXPECT_TRUE(IsOk(CommitSync(*store, Create("task-1"))));
  EXPECT_TRUE(store->Get("task-1")->has_value());
}

protocol::Part FilePart(protocol::Part::Kind kind, std::string text) {
  protocol::Part p;
  p.kind = kind;
  p.text = std::move(text);
  p.filename = "report.pdf";
  p.media_type = "application/pdf";
  p.metadata["pages"] = 3;
  return p;
}

protocol::Task RichTask() {
  using protocol::Part;
  protocol::Task t;
  t.id = "0190a3c4-0000-7000-8000-000000000001";
  t.context_id = "ctx-rich";
  t.status.state = TaskState::kInputRequired;
  t.status.timestamp_ms = 1767225600123;
  protocol::Message ask;
  ask.message_id = "m-ask";
  ask.context_id = t.context_id;
  ask.task_id = t.id;
  ask.role = protocol::Role::kAgent;
  ask.parts = {Part::Text("Approve the refund? ✓ \"quoted\"\n")};
  ask.metadata["interruptId"] = "int-1";
  t.status.message = ask;

  protocol::Message user;
  user.message_id = "m-1";
  user.context_id = t.context_id;
  user.task_id = t.id;
  user.role = protocol::Role::kUser;
  Part text = Part::Text("refund order 42");
  text.metadata["lang"] = "en";
  Part data = Part::Data(
      boost::json::object{{"order", 42},
                          {"amount", 19.99},
                          {"negative", -7},
                          {"flag", true},
                          {"none", nullptr},
                          {"list", boost::json::array{1, "x", boost::json::object{{"k", "v"}}}}});
  data.media_type = "application/json";
  user.parts = {text, data, FilePart(Part::Kind::kRaw, "aGVsbG8="),
                FilePart(Part::Kind::kUrl, "https://example.com/r.pdf")};
  user.metadata["source"] = "test";
  user.extensions = {"https://example.com/ext/v1"};
  user.reference_task_ids = {"task-older"};
  t.history = {user, ask};

  protocol::Artifact a;
  a.artifact_id = "art-1";
  a.name = "summary";
  a.description = "what happened";
  a.parts = {Part::Text("done"), Part::Data(boost::json::array{1, 2, 3}),
             FilePart(Part::Kind::kRaw, "AAEC"), FilePart(Part::Kind::kUrl, "https://x.test/a")};
  a.metadata["chunk"] = 1;
  a.extensions = {"https://example.com/ext/v2"};
  protocol::Artifact empty;
  empty.artifact_id = "art-2";
  empty.parts = {Part::Text("")};
  t.artifacts = {a, empty};

  t.metadata["workflowId"] = "wf-refund";
  t.metadata["nested"] = boost::json::object{{"deep", boost::json::object{{"n", 1}}}};
  return t;
}

TEST_F(SqliteTaskStoreTest, SnapshotRoundTripsExactly) {
  TaskCommit c;
  c.record.task = RichTask();
  c.record.skill_id = "refund";
  c.record.created_at_ms = 1767225600000;
  c.record.updated_at_ms = c.record.task.status.timestamp_ms;
  c.record.last_sequence = 0;
  c.events = {Event(c.record.task.id, 0)};
  c.events[0].payload["unicode"] = "żółw 🐢";
  c.events[0].payload["double"] = 0.1;
  const TaskCommit sent = c;
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(c))));
    auto got = store->Get(sent.record.task.id);
    ASSERT_TRUE(got.ok() && got->has_value()) << (got.ok() ? "missing" : got.error().message);
    EXPECT_EQ(**got, sent.record);
    EXPECT_EQ((*got)->task.history, sent.record.task.history);
    EXPECT_EQ((*got)->task.artifacts, sent.record.task.artifacts);
    EXPECT_EQ((*got)->task.status, sent.record.task.status);
    EXPECT_EQ((*got)->task.metadata, sent.record.task.metadata);
  }
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  auto got = store->Get(sent.record.task.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, sent.record);
  auto events = store->ReadEvents(sent.record.task.id, -1, 10);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(*events, sent.events);
  auto page = store->List(TaskQuery{});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->records.size(), 1u);
  EXPECT_EQ(page->records[0], sent.record);
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

// ---- Retention (PruneEvents) ------------------------------------------------------------

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
  auto first = CommitAsync(*store, Create("first"));
  gate.WaitEntered();  // the writer holds [first]
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
    raw.Exec("DROP TABLE quarantined_tasks");  // schema version 5
    raw.Exec("DROP TABLE push_outbox");  // schema version 4
    raw.Exec("DROP TABLE push_configs");
    raw.Exec("DROP TABLE push_webhooks");
    raw.Exec("DROP INDEX tasks_prunable");
    raw.Exec("DROP INDEX tasks_by_dedup_key");
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
