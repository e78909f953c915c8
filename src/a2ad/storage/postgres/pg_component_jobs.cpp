// PostgresStore::Write, Read and the migrations of extensions' tables (postgres_store.hpp,
// "Extensions' tables"; backend.hpp, "components").
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/postgres/pg_schema.hpp"
#include "a2ad/storage/postgres/pg_sql.hpp"
#include "a2ad/storage/postgres/pg_store_impl.hpp"

namespace a2ad::storage {
namespace {

core::Error Closed() { return core::Error(core::ErrorCode::kUnavailable, "task store is closed"); }

// `job` on `c`, which is in a transaction: an exception is an error, and so is a statement
// that failed while `job` went on (the transaction would only roll back at COMMIT).
core::Result<void> RunJob(const sql::Job& job, pg::Connection& c, const char* what) {
  core::Result<void> result;
  try {
    pg::SqlTx tx(c);
    result = job(tx);
  } catch (const std::exception& e) {
    result = core::Error(core::ErrorCode::kInternal,
                         std::string("task store: a component's ") + what + " threw: " + e.what());
  }
  if (result && c.InFailedTransaction())
    result = core::Error(core::ErrorCode::kInternal,
                         std::string("task store: a statement of a component's ") + what +
                             " failed and the transaction was rolled back",
                         {{"database", "postgresql"}});
  return result;
}

}  // namespace

void PostgresStore::Write(sql::Job job, CommitCallback done) {
  auto shared =
      std::make_shared<std::pair<sql::Job, CommitCallback>>(std::move(job), std::move(done));
  const bool queued = impl_->Enqueue([this, shared](pg::Connection* c) {
    core::Result<void> result;
    if (!c) {
      result = core::Error(core::ErrorCode::kUnavailable, "the database is unavailable",
                           {{"database", "postgresql"}});
    } else {
      result = c->Run("BEGIN", "begin a component's write");
      if (result) {
        result = RunJob(shared->first, *c, "write");
        if (result) result = c->Run("COMMIT", "commit a component's write");
        if (!result && !c->Broken()) (void)c->Run("ROLLBACK", "roll back a component's write");
      }
      if (!result) impl_->errors_.fetch_add(1);
    }
    if (!shared->second) return;
    try {
      shared->second(std::move(result));
    } catch (const std::exception& e) {
      core::LogError(std::string("task store: a component's write callback threw: ") + e.what());
    }
  });
  if (!queued && shared->second) shared->second(Closed());
}

core::Result<void> PostgresStore::Read(const sql::Job& job) {
  for (int attempt = 0;; ++attempt) {
    auto lease = impl_->Borrow();
    if (!lease) return std::move(lease).error();
    pg::Connection& c = **lease;
    // One snapshot for every statement of the job, and no writes.
    if (auto begun = c.Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "begin a read");
        !begun) {
      impl_->errors_.fetch_add(1);
      if (c.Broken() && attempt == 0) continue;  // a connection lost while idle: once more
      return begun;
    }
    core::Result<void> result = RunJob(job, c, "read");
    if (result) {
      result = c.Run("COMMIT", "end a read");
    } else if (!c.Broken()) {
      (void)c.Run("ROLLBACK", "end a read");
    }
    if (!result) impl_->errors_.fetch_add(1);
    return result;
  }
}

void PostgresStore::SetCommitParticipant(CommitParticipant participant) {
  impl_->SetCommitParticipant(std::move(participant));
}

core::Result<int> PostgresStore::Migrate(const std::string& url,
                                         const std::vector<ComponentMigrations>& components) {
  auto c = pg::Connection::Open(url, 0);
  if (!c) return std::move(c).error();
  return pg::Migrate(**c, components);
}

core::Result<int> PostgresStore::MigrateComponent(const std::string& url,
                                                  const ComponentMigrations& component) {
  auto c = pg::Connection::Open(url, 0);
  if (!c) return std::move(c).error();
  if (auto migrated = pg::Migrate(**c, {component}); !migrated) return std::move(migrated).error();
  return pg::ComponentVersion(**c, component.component);
}

core::Result<int> PostgresStore::ComponentVersion(const std::string& url,
                                                  std::string_view component) {
  auto c = pg::Connection::Open(url, 0);
  if (!c) return std::move(c).error();
  return pg::ComponentVersion(**c, component);
}

}  // namespace a2ad::storage
