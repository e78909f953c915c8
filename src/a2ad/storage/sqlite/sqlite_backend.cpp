// See sqlite_backend.hpp.
#include "a2ad/storage/sqlite/sqlite_backend.hpp"

#include <filesystem>

#include "a2ad/storage/sqlite/sqlite_sql.hpp"

namespace a2ad::storage {

std::string SqliteBackend::PathIn(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "a2ad.db").string();
}

core::Result<std::unique_ptr<SqliteBackend>> SqliteBackend::Open(const std::string& data_dir,
                                                                 SqliteOptions opts) {
  std::unique_ptr<SqliteBackend> b(new SqliteBackend());
  b->path_ = PathIn(data_dir);
  auto tasks = SqliteTaskStore::Open(b->path_, std::move(opts));
  if (!tasks) return std::move(tasks).error();
  b->tasks_ = std::move(tasks).value();
  auto push = SqlitePushStore::Open(b->path_);
  if (!push) return std::move(push).error();
  b->push_ = std::move(push).value();
  auto keys = sqlite::SqliteApiKeyStore::Open(b->path_);
  if (!keys) return std::move(keys).error();
  b->keys_ = std::move(keys).value();
  return b;
}

SqliteBackend::~SqliteBackend() { Close(); }

std::string SqliteBackend::Where() const {
  return path_ + " (SQLite WAL, synchronous=" + tasks_->synchronous() + ")";
}

void SqliteBackend::CheckWritable(std::function<void(core::Result<void>)> done) {
  tasks_->CheckWritable(std::move(done));
}

core::Result<StoreCounts> SqliteBackend::Count() {
  auto c = tasks_->Count();
  if (!c) return std::move(c).error();
  return StoreCounts{std::move(c->tasks_by_state), c->events, c->outbox_pending, c->outbox_dead};
}

void SqliteBackend::Write(sql::Job job, TaskStore::CommitCallback done) {
  tasks_->Write(
      [job = std::move(job)](sqlite::Connection& db) {
        sqlite::SqlTx tx(db);
        return job(tx);
      },
      std::move(done));
}

core::Result<void> SqliteBackend::Read(const sql::Job& job) {
  return tasks_->Read([&job](sqlite::Connection& db) {
    sqlite::SqlTx tx(db);
    return job(tx);
  });
}

void SqliteBackend::SetCommitParticipant(CommitParticipant participant) {
  tasks_->SetCommitParticipant(std::move(participant));
}

core::Result<int> SqliteBackend::MigrateComponent(const ComponentMigrations& component) {
  return SqliteTaskStore::MigrateComponent(path_, component.component, component.sqlite);
}

void SqliteBackend::Close() {
  if (closed_) return;
  closed_ = true;
  if (push_) push_->Close();  // (a backend that failed to open has some parts only)
  if (tasks_) tasks_->Close();
}

}  // namespace a2ad::storage
