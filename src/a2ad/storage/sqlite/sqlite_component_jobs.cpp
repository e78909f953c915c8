// SqliteTaskStore::Write and Read: what an extension's tables are written and read through
// (sqlite_task_store.hpp, "an extension's own tables").
#include <exception>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store_impl.hpp"

namespace a2ad::storage {
using sqlite::Closed;
using sqlite::Connection;
using sqlite::Internal;
using sqlite::Run;

void SqliteTaskStore::Write(ComponentJob job, CommitCallback done) {
  impl_->Write(std::move(job), std::move(done));
}

core::Result<void> SqliteTaskStore::Read(const ComponentJob& job) { return impl_->Read(job); }

core::Result<SqliteTaskStore::Counts> SqliteTaskStore::Count() {
  Counts out;
  auto read = impl_->Read([&out](Connection& db) -> core::Result<void> {
    {
      auto ps = db.Prepare(
          "SELECT state, count(*), sum(last_sequence - max(pruned_through, -1)) FROM tasks "
          "GROUP BY state");
      if (!ps) return std::move(ps).error();
      sqlite::Stmt s(*ps);
      int rc;
      while ((rc = s.Step()) == SQLITE_ROW) {
        out.tasks_by_state[s.Int(0)] = s.Int(1);
        out.events += s.Int(2);
      }
      if (rc != SQLITE_DONE) return db.Fail("count tasks", rc);
    }
    auto ps = db.Prepare("SELECT state, count(*) FROM push_outbox WHERE state IN (0, 2) GROUP BY state");
    if (!ps) return std::move(ps).error();
    sqlite::Stmt s(*ps);
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) (s.Int(0) == 0 ? out.outbox_pending : out.outbox_dead) = s.Int(1);
    if (rc != SQLITE_DONE) return db.Fail("count the push outbox", rc);
    return {};
  });
  if (!read) return std::move(read).error();
  return out;
}

void SqliteTaskStore::CheckWritable(CommitCallback done) {
  // The job runs inside the writer's BEGIN IMMEDIATE .. COMMIT: the write itself.
  impl_->Write(
      [](Connection& db) -> core::Result<void> {
        auto read = db.Prepare("PRAGMA user_version");
        if (!read) return std::move(read).error();
        int64_t version = 0;
        {
          sqlite::Stmt s(*read);
          if (const int rc = s.Step(); rc != SQLITE_ROW) return db.Fail("PRAGMA user_version", rc);
          version = s.Int(0);
        }
        const std::string set = "PRAGMA user_version=" + std::to_string(version);
        return db.Exec(set.c_str(), "write the database (a probe)");
      },
      std::move(done));
}

void SqliteTaskStore::SetCommitParticipant(CommitParticipant participant) {
  impl_->SetCommitParticipant(std::move(participant));
}

void SqliteTaskStore::Impl::SetCommitParticipant(CommitParticipant participant) {
  std::lock_guard lock(queue_mu_);
  participant_ = std::move(participant);
}

void SqliteTaskStore::Impl::Write(ComponentJob job, CommitCallback done) {
  auto w = std::make_unique<WriteJob>(WriteJob{std::move(job), std::move(done)});
  {
    std::unique_lock lock(queue_mu_);
    if (!stopping_) {
      queue_.emplace_back(std::move(w));
      lock.unlock();
      queue_cv_.notify_one();
      return;
    }
  }
  if (w->done) w->done(Closed());
}

void SqliteTaskStore::Impl::RunWriteJob(WriteJob& w) {
  core::Result<void> result = Run(*writer_, "BEGIN IMMEDIATE");
  if (result) {
    try {
      result = w.job(*writer_);
    } catch (const std::exception& e) {
      result = Internal(std::string("task store writer: a component's write threw: ") + e.what());
    }
    if (result) result = Run(*writer_, "COMMIT");
    if (!result && sqlite3_get_autocommit(writer_->handle()) == 0) (void)Run(*writer_, "ROLLBACK");
  }
  if (!w.done) return;
  try {
    w.done(std::move(result));
  } catch (const std::exception& e) {
    core::LogError(std::string("task store: a component's write callback threw: ") + e.what());
  }
}

core::Result<void> SqliteTaskStore::Impl::Read(const ComponentJob& job) {
  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  if (auto begun = Run(db, "BEGIN"); !begun) return begun;
  core::Result<void> result;
  try {
    result = job(db);
  } catch (const std::exception& e) {
    result = Internal(std::string("task store: a component's read threw: ") + e.what());
  }
  (void)Run(db, result ? "COMMIT" : "ROLLBACK");
  return result;
}

}  // namespace a2ad::storage
