// What an extension's tables get from every backend (storage/backend.hpp "components",
// storage/sql.hpp): one statement text with $1..$n parameters on every engine, rows read back as
// text or integers, writes on the store's writer ordered with the task commits, reads in one
// snapshot, a commit participant inside the task commits' transaction that can never fail them,
// and component migrations per engine.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <set>

#include "a2ad/storage/postgres/pg_backend.hpp"
#include "a2ad/storage/sqlite/sqlite_backend.hpp"
#include "pg_cluster.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::IsOk;

core::Result<void> Done(core::Result<sql::Rows> r) {
  if (!r) return std::move(r).error();
  return {};
}

// One table per engine, the same shape.
ComponentMigrations Probe(int versions = 1) {
  ComponentMigrations c{"probe",
                        {{1,
                          "CREATE TABLE probe (id TEXT PRIMARY KEY, n INTEGER, "
                          "note TEXT) STRICT;"}},
                        {{1, "CREATE TABLE probe (id text PRIMARY KEY, n bigint, note text);"}}};
  if (versions > 1) {
    c.sqlite.push_back({2, "ALTER TABLE probe ADD COLUMN extra INTEGER;"});
    c.postgresql.push_back({2, "ALTER TABLE probe ADD COLUMN extra bigint;"});
  }
  return c;
}

struct OnSqlite {
  storage_test::TempDir dir;
  core::Result<std::unique_ptr<Backend>> Open(std::vector<ComponentMigrations> components,
                                              bool migrate = true) {
    SqliteOptions opts;
    opts.components = std::move(components);
    opts.migrate_on_open = migrate;
    auto b = SqliteBackend::Open(dir.path().string(), opts);
    if (!b) return std::move(b).error();
    return std::unique_ptr<Backend>(std::move(b).value());
  }
};

struct OnPostgres {
  std::string url = test::FreshPgDatabase();
  core::Result<std::unique_ptr<Backend>> Open(std::vector<ComponentMigrations> components,
                                              bool migrate = true) {
    PostgresOptions opts;
    opts.components = std::move(components);
    opts.migrate_on_open = migrate;
    auto b = PostgresBackend::Open(url, opts);
    if (!b) return std::move(b).error();
    return std::unique_ptr<Backend>(std::move(b).value());
  }
};

class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, OnPostgres> ? "Postgres" : "Sqlite";
  }
};

template <class Engine>
class BackendSqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto b = engine_.Open({Probe()});
    ASSERT_TRUE(b) << b.error().message;
    db_ = std::move(b).value();
  }
  void TearDown() override {
    if (db_) db_->Close();
  }
  core::Result<void> Write(sql::Job job) {
    std::promise<core::Result<void>> done;
    db_->Write(std::move(job), [&done](core::Result<void> r) { done.set_value(std::move(r)); });
    return done.get_future().get();
  }
  // The probe's rows, "id=n" (n "null" for NULL), in id order.
  std::vector<std::string> ProbeRows() {
    std::vector<std::string> out;
    auto read = db_->Read([&](sql::Tx& tx) -> core::Result<void> {
      auto rows = tx.Exec("SELECT id, n FROM probe ORDER BY id");
      if (!rows) return std::move(rows).error();
      for (int i = 0; i < rows->size(); ++i)
        out.push_back(std::string(rows->Text(i, 0)) + "=" +
                      (rows->IsNull(i, 1) ? "null" : std::to_string(rows->Int(i, 1))));
      return {};
    });
    EXPECT_TRUE(read) << read.error().message;
    return out;
  }

  Engine engine_;  // outlives db_
  std::unique_ptr<Backend> db_;
};

using Engines = ::testing::Types<OnSqlite, OnPostgres>;
TYPED_TEST_SUITE(BackendSqlTest, Engines, BackendNames);

TYPED_TEST(BackendSqlTest, OneStatementTextWithDollarParametersRunsOnEveryEngine) {
  auto wrote = this->Write([](sql::Tx& tx) -> core::Result<void> {
    auto in = tx.Exec("INSERT INTO probe (id, n, note) VALUES ($1, $2, $3)",
                      {std::string("a"), int64_t{21}, sql::Value()});
    if (!in) return std::move(in).error();
    EXPECT_EQ(in->Affected(), 1);
    // A parameter used twice, and the parameters in another order than their numbers.
    auto doubled = tx.Exec(
        "UPDATE probe SET n = n * 2, note = $1 WHERE id = $3 AND n = $2 AND "
        "note IS NULL AND n < $2 + 1",
        {std::string("twice"), int64_t{21}, std::string("a")});
    if (!doubled) return std::move(doubled).error();
    EXPECT_EQ(doubled->Affected(), 1);
    auto none = tx.Exec("INSERT INTO probe (id, n) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                        {std::string("a"), int64_t{1}});
    if (!none) return std::move(none).error();
    EXPECT_EQ(none->Affected(), 0);
    return Done(tx.Exec("INSERT INTO probe (id) VALUES ($1)", {sql::TextOrNull("b")}));
  });
  ASSERT_TRUE(wrote) << wrote.error().message;
  EXPECT_EQ(this->ProbeRows(), (std::vector<std::string>{"a=42", "b=null"}));
  auto read = this->db_->Read([](sql::Tx& tx) -> core::Result<void> {
    auto rows = tx.Exec("SELECT note, n, id FROM probe WHERE id = $1 AND n > $2 LIMIT $3",
                        {std::string("a"), int64_t{-1}, int64_t{10}});
    if (!rows) return std::move(rows).error();
    EXPECT_EQ(rows->size(), 1);
    EXPECT_EQ(rows->columns(), 3);
    EXPECT_EQ(rows->Text(0, 0), "twice");
    EXPECT_EQ(rows->Int(0, 1), 42);
    EXPECT_EQ(rows->Affected(), 0);  // a query changes nothing
    auto empty = tx.Exec("SELECT id FROM probe WHERE id = $1", {std::string("zzz")});
    if (!empty) return std::move(empty).error();
    EXPECT_EQ(empty->size(), 0);
    return {};
  });
  EXPECT_TRUE(read) << read.error().message;
}

TYPED_TEST(BackendSqlTest, AParameterNotUsedOrNotGivenIsAnErrorOnEveryEngine) {
  auto unused = this->Write([](sql::Tx& tx) {
    return Done(tx.Exec("INSERT INTO probe (id) VALUES ($1)", {std::string("a"), int64_t{1}}));
  });
  EXPECT_FALSE(unused);
  auto missing = this->Write([](sql::Tx& tx) {
    return Done(tx.Exec("INSERT INTO probe (id, n) VALUES ($1, $2)", {std::string("a")}));
  });
  EXPECT_FALSE(missing);
  EXPECT_TRUE(this->ProbeRows().empty());  // both rolled back
}

TYPED_TEST(BackendSqlTest, AFailedWriteRollsBackWholeAndTheNextOneWrites) {
  auto failed = this->Write([](sql::Tx& tx) -> core::Result<void> {
    if (auto in = tx.Exec("INSERT INTO probe (id) VALUES ($1)", {std::string("a")}); !in)
      return std::move(in).error();
    return Done(tx.Exec("INSERT INTO probe (id) VALUES ($1)", {std::string("a")}));
  });
  EXPECT_FALSE(failed);
  EXPECT_TRUE(this->ProbeRows().empty());
  // The writer goes on.
  auto ok = this->Write([](sql::Tx& tx) {
    return Done(
        tx.Exec("INSERT INTO probe (id, n) VALUES ($1, $2)", {std::string("b"), int64_t{2}}));
  });
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(this->ProbeRows(), (std::vector<std::string>{"b=2"}));
}

TYPED_TEST(BackendSqlTest, AWriteSeesEveryTaskCommitAcceptedBeforeIt) {
  std::promise<core::Result<void>> committed;
  this->db_->Tasks().Commit(Create("task-1"),
                            [&](core::Result<void> r) { committed.set_value(std::move(r)); });
  int64_t state = -1;
  auto wrote = this->Write([&state](sql::Tx& tx) -> core::Result<void> {
    auto rows = tx.Exec("SELECT state FROM tasks WHERE id = $1", {std::string("task-1")});
    if (!rows) return std::move(rows).error();
    if (rows->size() == 1) state = rows->Int(0, 0);
    return {};
  });
  ASSERT_TRUE(wrote) << wrote.error().message;
  EXPECT_TRUE(IsOk(committed.get_future().get()));
  EXPECT_EQ(state, static_cast<int64_t>(TaskState::kSubmitted));
}

TYPED_TEST(BackendSqlTest, TheParticipantWritesInTheTaskCommitsTransaction) {
  std::mutex mu;
  std::vector<bool> batches;  // after_batch's `committed`, in order
  std::set<std::string> seen_created;
  CommitParticipant p;
  p.before_commit = [&](sql::Tx& tx, const std::vector<CommittedTask>& tasks) {
    for (const CommittedTask& t : tasks) {
      {
        std::lock_guard lock(mu);
        if (t.created) seen_created.insert(std::string(t.id));
      }
      EXPECT_EQ(t.tenant, kDefaultTenant);
      EXPECT_FALSE(t.snapshot.empty());
      auto up = tx.Exec(
          "INSERT INTO probe (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = excluded.n",
          {std::string(t.id), t.state});
      EXPECT_TRUE(up) << up.error().message;
    }
  };
  p.after_batch = [&](bool committed) {
    std::lock_guard lock(mu);
    batches.push_back(committed);
  };
  this->db_->SetCommitParticipant(std::move(p));
  ASSERT_TRUE(IsOk(CommitSync(this->db_->Tasks(), Create("task-1"))));
  // Refused (the task exists): neither shown to the participant nor written.
  auto again = CommitSync(this->db_->Tasks(), Create("task-1", "ctx-2", TaskState::kWorking));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, core::ErrorCode::kConflict);
  ASSERT_TRUE(IsOk(CommitSync(this->db_->Tasks(), Create("task-2", "ctx-1", TaskState::kWorking))));
  EXPECT_EQ(this->ProbeRows(),
            (std::vector<std::string>{"task-1=" + std::to_string(int(TaskState::kSubmitted)),
                                      "task-2=" + std::to_string(int(TaskState::kWorking))}));
  std::lock_guard lock(mu);
  EXPECT_EQ(seen_created, (std::set<std::string>{"task-1", "task-2"}));
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_TRUE(batches[0]);
  EXPECT_FALSE(batches[1]);  // nothing of it committed
  EXPECT_TRUE(batches[2]);
}

TYPED_TEST(BackendSqlTest, AParticipantThatFailsNeverFailsTheTaskCommits) {
  std::atomic<int> calls{0};
  CommitParticipant p;
  p.before_commit = [&](sql::Tx& tx, const std::vector<CommittedTask>&) {
    ++calls;
    (void)tx.Exec("INSERT INTO probe (id) VALUES ($1)", {std::string("x")});
    (void)tx.Exec("SELECT nothing FROM no_such_table");  // fails (and spoils a PG transaction)
    if (calls == 2) throw std::runtime_error("participant bug");
  };
  this->db_->SetCommitParticipant(std::move(p));
  ASSERT_TRUE(IsOk(CommitSync(this->db_->Tasks(), Create("task-1"))));
  ASSERT_TRUE(IsOk(CommitSync(this->db_->Tasks(), Create("task-2"))));
  EXPECT_EQ(calls.load(), 2);
  for (const char* id : {"task-1", "task-2"}) {
    auto got = this->db_->Tasks().Get(id);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_TRUE(got->has_value()) << id;
  }
}

TYPED_TEST(BackendSqlTest, ComponentsMigratePerEngineAndANewerOneIsRefused) {
  EXPECT_EQ(*this->db_->MigrateComponent(Probe()), 1);  // current: nothing to do
  auto v2 = this->db_->MigrateComponent(Probe(2));
  ASSERT_TRUE(v2) << v2.error().message;
  EXPECT_EQ(*v2, 2);
  auto wrote = this->Write([](sql::Tx& tx) {
    return Done(
        tx.Exec("INSERT INTO probe (id, extra) VALUES ($1, $2)", {std::string("a"), int64_t{7}}));
  });
  EXPECT_TRUE(wrote) << wrote.error().message;
  this->db_->Close();
  this->db_.reset();
  // A build that knows version 1 only refuses the database, and changes nothing.
  auto older = this->engine_.Open({Probe(1)});
  ASSERT_FALSE(older);
  EXPECT_EQ(older.error().code, core::ErrorCode::kInternal);
  EXPECT_NE(older.error().message.find("probe"), std::string::npos) << older.error().message;
  // Without migrating on open, a component below its latest version is refused too.
  auto unmigrated = this->engine_.Open({Probe(2),
                                        {"later",
                                         {{1, "CREATE TABLE later_t (x INTEGER);"}},
                                         {{1, "CREATE TABLE later_t (x integer);"}}}},
                                       false);
  ASSERT_FALSE(unmigrated);
  EXPECT_NE(unmigrated.error().message.find("later"), std::string::npos)
      << unmigrated.error().message;
  auto reopened = this->engine_.Open({Probe(2)}, false);
  ASSERT_TRUE(reopened) << reopened.error().message;
  this->db_ = std::move(reopened).value();
  EXPECT_EQ(this->ProbeRows(), (std::vector<std::string>{"a=null"}));
}

TYPED_TEST(BackendSqlTest, AComponentListThatIsNotOneToNIsRefused) {
  ComponentMigrations bad = Probe();
  bad.sqlite = {{2, "CREATE TABLE x (a INTEGER);"}};
  bad.postgresql = {{2, "CREATE TABLE x (a integer);"}};
  auto r = this->db_->MigrateComponent(bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
}

}  // namespace
}  // namespace a2ad::storage
