// SqliteTaskStore's retention: PruneEvents queues a prune job behind the commits accepted
// before it; the writer thread runs it one batch (transaction) per turn, and queues it
// again while candidates remain. See sqlite_task_store.hpp ("Retention").
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store_impl.hpp"

namespace a2ad::storage {
namespace {

using sqlite::Closed;
using sqlite::Connection;
using sqlite::Internal;
using sqlite::Run;
using sqlite::Stmt;

constexpr const char* kDeleteEvents =
    "DELETE FROM task_events WHERE task_id = ?1 AND sequence > ?2 AND sequence <= ?3";
constexpr const char* kSetPrunedThrough = "UPDATE tasks SET pruned_through = ?2 WHERE id = ?1";

}  // namespace

core::Result<size_t> SqliteTaskStore::Impl::PruneEvents(int64_t terminal_before_ms) {
  auto job = std::make_unique<PruneJob>();
  job->terminal_before_ms = terminal_before_ms;
  std::future<core::Result<size_t>> result = job->done.get_future();
  {
    std::lock_guard lock(queue_mu_);
    if (stopping_) return Closed();
    if (WritingHere()) {
      return Internal(
          "SqliteTaskStore::PruneEvents called from a commit callback: it would wait for "
          "itself");
    }
    queue_.emplace_back(std::move(job));
  }
  queue_cv_.notify_one();
  return result.get();
}

void SqliteTaskStore::Impl::RunPruneBatch(std::unique_ptr<PruneJob> job, bool stopping) {
  auto closed_during_prune = [&job] {
    return core::Error(core::ErrorCode::kUnavailable, "task store closed during PruneEvents (" +
                                                          std::to_string(job->deleted) +
                                                          " events deleted before)");
  };
  if (stopping) {
    job->done.set_value(closed_during_prune());
    return;
  }
  core::Result<PruneBatch> batch = PruneBatch{};
  try {
    batch = WritePruneBatch(job->terminal_before_ms);
  } catch (const std::exception& e) {
    if (sqlite3_get_autocommit(writer_->handle()) == 0) (void)Run(*writer_, "ROLLBACK");
    batch = Internal(std::string("task store writer: prune: ") + e.what());
  }
  if (!batch) {
    job->done.set_value(std::move(batch).error());
    return;
  }
  job->deleted += batch->deleted;
  if (opts_.prune_batch_hook) {
    try {
      opts_.prune_batch_hook(batch->deleted);
    } catch (const std::exception& e) {
      core::LogError(std::string("task store: prune_batch_hook threw: ") + e.what());
    }
  }
  if (!batch->more) {
    job->done.set_value(job->deleted);
    return;
  }
  {
    // Behind the commits accepted meanwhile: they are applied before the next batch.
    std::lock_guard lock(queue_mu_);
    if (!stopping_) {
      queue_.emplace_back(std::move(job));
      return;
    }
  }
  job->done.set_value(closed_during_prune());
}

core::Result<SqliteTaskStore::Impl::PruneBatch> SqliteTaskStore::Impl::WritePruneBatch(
    int64_t terminal_before_ms) {
  Connection& db = *writer_;
  struct Candidate {
    std::string id;
    int64_t pruned_through;
    int64_t last_sequence;
  };
  // Every candidate has at least one event, so `limit` candidates fill any batch.
  auto select_candidates = [&](size_t limit) -> core::Result<std::vector<Candidate>> {
    auto prepared = db.Prepare(sqlite::kSelectPrunableTasks);
    if (!prepared) return std::move(prepared).error();
    Stmt select(*prepared);
    select.Bind(1, terminal_before_ms);
    select.Bind(2,
                static_cast<int64_t>(std::min<size_t>(limit, std::numeric_limits<int64_t>::max())));
    std::vector<Candidate> out;
    for (;;) {
      const int rc = select.Step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db.Fail("select prune candidates", rc);
      out.push_back({std::string(select.Text(0)), select.Int(1), select.Int(2)});
    }
    return out;
  };

  if (auto begun = Run(db, "BEGIN IMMEDIATE"); !begun) return std::move(begun).error();
  auto rollback = [&db](core::Error e) -> core::Result<PruneBatch> {
    if (sqlite3_get_autocommit(db.handle()) == 0) (void)Run(db, "ROLLBACK");
    return e;
  };

  PruneBatch batch;
  uint64_t budget = opts_.prune_batch_events;  // sequences this batch may still delete
  auto candidates = select_candidates(opts_.prune_batch_events);
  if (!candidates) return rollback(std::move(candidates).error());
  for (const Candidate& c : *candidates) {
    // A log longer than the budget loses a prefix now, the rest in a later batch.
    const auto pending = static_cast<uint64_t>(c.last_sequence - c.pruned_through);
    const int64_t upto =
        pending <= budget ? c.last_sequence : c.pruned_through + static_cast<int64_t>(budget);
    {
      auto prepared = db.Prepare(kDeleteEvents);
      if (!prepared) return rollback(std::move(prepared).error());
      Stmt erase(*prepared);
      erase.Bind(1, c.id);
      erase.Bind(2, c.pruned_through);
      erase.Bind(3, upto);
      if (const int rc = erase.Step(); rc != SQLITE_DONE) {
        return rollback(db.Fail("prune events of task " + c.id, rc));
      }
      batch.deleted += static_cast<size_t>(sqlite3_changes64(db.handle()));
    }
    {
      auto prepared = db.Prepare(kSetPrunedThrough);
      if (!prepared) return rollback(std::move(prepared).error());
      Stmt update(*prepared);
      update.Bind(1, c.id);
      update.Bind(2, upto);
      if (const int rc = update.Step(); rc != SQLITE_DONE) {
        return rollback(db.Fail("record pruned events of task " + c.id, rc));
      }
    }
    budget -= static_cast<uint64_t>(upto - c.pruned_through);
    if (budget == 0) break;
  }
  if (budget == 0) {
    // A full batch: look whether anything is left, so the last batch is never empty.
    auto left = select_candidates(1);
    if (!left) return rollback(std::move(left).error());
    batch.more = !left->empty();
  }
  if (opts_.fail_prune_batch_hook && opts_.fail_prune_batch_hook()) {
    return rollback(
        Internal("sqlite '" + path_ + "': prune COMMIT failed (fail_prune_batch_hook)"));
  }
  if (auto committed = Run(db, "COMMIT"); !committed) return rollback(std::move(committed).error());
  return batch;
}

}  // namespace a2ad::storage
