// SqliteTaskStore's write path: Commit reduces a commit to its columns on the calling
// thread and queues it; the writer thread applies the queued commits in batches (one
// transaction, a savepoint per commit when one fails halfway); the checkpointer thread keeps
// the WAL short. See sqlite_task_store.hpp ("Writes") and sqlite_task_store_impl.hpp.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/a2a_task_state.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/commit_check.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_push_store.hpp"
#include "a2ad/storage/sqlite/sqlite_sql.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store_impl.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/storage/writer_batch.hpp"

namespace a2ad::storage {
namespace {

using sqlite::Closed;
using sqlite::ConfigureReadWrite;
using sqlite::Connection;
using sqlite::Internal;
using sqlite::Run;
using sqlite::Stmt;

constexpr const char* kSelectLastSequence = "SELECT last_sequence FROM tasks WHERE id = ?1";
constexpr const char* kInsertTask =
    "INSERT INTO tasks(id, context_id, state, skill_id, created_at_ms, updated_at_ms,"
    " last_sequence, snapshot, run, a2a_state, dedup_key, tenant, owner, wake_at_ms,"
    " waits_for_event) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
constexpr const char* kUpdateTask =
    "UPDATE tasks SET context_id = ?2, state = ?3, skill_id = ?4, created_at_ms = ?5,"
    " updated_at_ms = ?6, last_sequence = ?7, snapshot = ?8, run = ?9, a2a_state = ?10,"
    " wake_at_ms = ?14, waits_for_event = ?15 WHERE id = ?1 AND last_sequence = ?11";
constexpr const char* kReleaseDedupKey = "UPDATE tasks SET dedup_key = NULL WHERE id = ?1";
// The retention window of an idempotency key ended (TaskCommit::dedup_takeover_before_ms).
constexpr const char* kTakeOverDedupKey =
    "UPDATE tasks SET dedup_key = NULL WHERE tenant = ?1 AND dedup_key = ?2 AND created_at_ms < ?3";
constexpr const char* kInsertEvent =
    "INSERT INTO task_events(task_id, sequence, event_id, type, node_id, timestamp_ms, payload)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

}  // namespace

void SqliteTaskStore::Impl::StartCheckpointer() {
  if (opts_.checkpoint_pages == 0) return;
  auto opened = Connection::Open(path_, SQLITE_OPEN_READWRITE, opts_.busy_timeout_ms);
  if (opened) {
    if (auto configured = ConfigureReadWrite(**opened, opts_.synchronous_full); !configured)
      opened = std::move(configured).error();
  }
  if (!opened) {  // not fatal: the writer keeps SQLite's automatic checkpoints
    core::LogWarn("task store: no background checkpoints (" + opened.error().message +
                  "); the writer checkpoints the WAL itself");
    return;
  }
  checkpointer_ = std::move(opened).value();
  // Replaces the automatic checkpoint hook of the writer connection.
  sqlite3_wal_hook(writer_->handle(), &Impl::OnWalCommit, this);
  checkpoint_thread_ = std::thread([this] {
    core::SetThreadName("sqlite-ckpt");
    CheckpointerLoop();
  });
}

int SqliteTaskStore::Impl::OnWalCommit(void* self, sqlite3* db, const char*, int wal_pages) {
  auto* impl = static_cast<Impl*>(self);
  const size_t threshold = impl->opts_.checkpoint_pages;
  // The WAL restarts from its beginning only when a write transaction begins with every frame
  // copied, which a background checkpoint never achieves while the writer keeps appending:
  // under steady load the file grew by gigabytes a minute. Past kWalRestartFactor times the
  // threshold, the writer copies the frames the last background checkpoint left (those
  // appended while it ran: a short stretch) itself, so its next transaction restarts the WAL.
  // A caller writing its own commit leaves that copy (and its fsyncs) to the writer thread.
  if (static_cast<size_t>(wal_pages) >= kWalRestartFactor * threshold) {
    if (std::this_thread::get_id() == impl->writer_thread_.get_id()) {
      impl->CheckpointForRestart(db);
    } else {
      std::lock_guard lock(impl->queue_mu_);  // the caller wakes the writer when done
      impl->restart_due_ = true;
    }
    return SQLITE_OK;
  }
  // Frames appended since the last checkpoint: the writer keeps appending while one runs, so
  // counting from the WAL's size alone would checkpoint back to back, copying the same hot
  // pages again and again.
  int backfilled = impl->checkpoint_backfilled_.load();
  if (wal_pages < backfilled) backfilled = 0;  // the WAL restarted from its beginning
  if (static_cast<size_t>(wal_pages - backfilled) < threshold ||
      impl->checkpoint_pending_.exchange(true)) {
    return SQLITE_OK;
  }
  {
    std::lock_guard lock(impl->checkpoint_mu_);
    impl->checkpoint_wanted_ = true;
  }
  impl->checkpoint_cv_.notify_one();
  return SQLITE_OK;
}

void SqliteTaskStore::Impl::CheckpointForRestart(sqlite3* db) {
  if (checkpoint_pending_.exchange(true)) return;  // the checkpointer is at it
  int total = 0, copied = 0;
  const int rc = sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, &total, &copied);
  checkpoint_backfilled_ = rc == SQLITE_OK ? copied : 0;
  checkpoint_pending_ = false;
}

void SqliteTaskStore::Impl::CheckpointerLoop() {
  std::unique_lock lock(checkpoint_mu_);
  for (;;) {
    checkpoint_cv_.wait(lock, [&] { return checkpoint_wanted_ || checkpoint_stop_; });
    if (checkpoint_stop_) return;
    checkpoint_wanted_ = false;
    lock.unlock();
    int wal_pages = 0, copied = 0;
    const int rc = sqlite3_wal_checkpoint_v2(checkpointer_->handle(), nullptr,
                                             SQLITE_CHECKPOINT_PASSIVE, &wal_pages, &copied);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY)
      core::LogWarn("task store: WAL checkpoint failed: " +
                    std::string(sqlite3_errmsg(checkpointer_->handle())));
    // The next commit that appends another checkpoint_pages frames asks again.
    checkpoint_backfilled_ = rc == SQLITE_OK ? copied : 0;
    checkpoint_pending_ = false;
    lock.lock();
  }
}

void SqliteTaskStore::Impl::StopCheckpointer() {
  if (!checkpoint_thread_.joinable()) return;
  {
    std::lock_guard lock(checkpoint_mu_);
    checkpoint_stop_ = true;
  }
  checkpoint_cv_.notify_one();
  checkpoint_thread_.join();
  checkpointer_.reset();
}

void SqliteTaskStore::Impl::Commit(TaskCommit commit, CommitCallback done) {
  Pending p;
  p.done = std::move(done);
  p.result = CheckCommitPreconditions(commit);
  if (p.result) {
    const TaskRecord& r = commit.Record();
    // JSON is serialized straight into the buffer (no intermediate strings).
    protocol::JsonTextWriter json(p.text);
    size_t estimate = 2048;
    for (const protocol::RunEvent& e : commit.events) estimate += 256 + e.type.size();
    p.text.reserve(estimate);
    p.id = p.Append(r.task.id);
    p.context_id = p.Append(r.task.context_id);
    p.skill_id = p.Append(r.skill_id);
    p.dedup_key = p.Append(r.dedup_key);
    p.tenant = p.Append(r.tenant);
    p.owner = p.Append(r.owner);
    p.snapshot = p.Appended([&] { protocol::AppendTask(p.text, r.task, protocol::Wire::kV10); });
    p.run = p.Appended([&] { protocol::WriteRunSnapshot(json, r.run); });
    p.a2a_state = p.Appended([&] { protocol::WriteA2ATaskState(json, r.task, r.run); });
    // Indexed: what a restart starts again, when a parked run wakes, what a posted event finds.
    if (!protocol::IsTerminal(r.task.status.state)) {
      p.wake_at_ms = ParkedUntil(r.run);
      p.waits_for_event = p.Append(EventAwaited(r.run));
    }
    p.state = static_cast<int64_t>(r.task.status.state);
    p.created_at_ms = r.created_at_ms;
    p.updated_at_ms = r.updated_at_ms;
    p.last_sequence = r.last_sequence;
    p.releases_dedup_key = commit.releases_dedup_key;
    p.dedup_takeover_before_ms = commit.dedup_takeover_before_ms;
    p.expected_last_sequence = commit.expected_last_sequence;
    p.events.reserve(commit.events.size());
    for (const protocol::RunEvent& e : commit.events) {
      EventRow row;
      row.sequence = e.sequence;
      row.timestamp_ms = e.timestamp_ms;
      row.event_id = p.Append(e.event_id);
      row.type = p.Append(e.type);
      row.node_id = p.Append(e.node_id);
      row.payload = p.Appended([&] { json.Object(e.payload); });
      p.events.push_back(row);
    }
    p.push_configs = std::move(commit.push_configs);
    p.outbox = std::move(commit.outbox);
    if (p.text.size() > UINT32_MAX)  // spans are 32-bit offsets
      p.result = core::Error(core::ErrorCode::kInvalidParams,
                             "task " + r.task.id + ": a commit of more than 4 GiB of text");
  }
  {
    std::unique_lock lock(queue_mu_);
    if (stopping_) {
      lock.unlock();
      if (p.done) p.done(Closed());
      return;
    }
    // An idle writer and nothing queued: this thread writes the commit itself, saving the
    // writer's wake-up and the wake-up back (a quarter of the CPU of a send at one
    // connection). Not with synchronous=FULL, whose fsync would hold the caller's thread.
    // Not while the WAL's restart checkpoint is due either: callers that kept finding the
    // writer idle would keep it from that checkpoint, and the WAL would grow without bound
    // (60 MB in TheWalStaysBoundedUnderSteadyWrites on a loaded machine).
    if (opts_.synchronous_full || writing_ || restart_due_ || !queue_.empty()) {
      queue_.emplace_back(std::move(p));
      queue_cv_.notify_one();  // under the lock, as in WriteOnCaller
      return;
    }
    writing_ = true;
  }
  WriteOnCaller(std::move(p));
}

void SqliteTaskStore::Impl::WriteOnCaller(Pending p) {
  // The caller never waits for another connection's write lock (busy_timeout: a migration,
  // a repair, the sqlite3 shell): if it is taken, the commit goes to the writer thread, first
  // in line (it was called before whatever queued meanwhile).
  const bool begin = p.result.ok();  // a commit refused by its checks writes nothing
  if (begin) {
    sqlite3_busy_timeout(writer_->handle(), 0);
    const bool begun = Run(*writer_, "BEGIN IMMEDIATE").ok();
    sqlite3_busy_timeout(writer_->handle(), opts_.busy_timeout_ms);
    if (!begun) {
      std::lock_guard lock(queue_mu_);
      writing_ = false;
      queue_.emplace_front(std::move(p));
      queue_cv_.notify_all();  // under the lock: see below
      return;
    }
  }
  std::vector<Pending> batch;
  batch.push_back(std::move(p));
  {
    const WriterHere here(this);
    ApplyBatch(batch, begin);
  }
  // Notified under the lock: once writing_ is false, Close() may finish and destroy the store
  // (the callback may have told its owner it could), so nothing of it is touched after.
  std::lock_guard lock(queue_mu_);
  writing_ = false;
  if (!queue_.empty() || stopping_ || restart_due_) queue_cv_.notify_all();
}

void SqliteTaskStore::Impl::WriterLoop() {
  const WriterHere here(this);
  bool held = false;  // writing_ is this thread's
  for (;;) {
    std::vector<Pending> batch;
    std::unique_ptr<PruneJob> prune;
    std::unique_ptr<WriteJob> write;
    bool stopping = false;
    bool restart = false;
    {
      std::unique_lock lock(queue_mu_);
      if (std::exchange(held, false)) writing_ = false;
      // Not while a caller writes a commit itself (Commit): the connection is its.
      queue_cv_.wait(lock,
                     [&] { return (!queue_.empty() || stopping_ || restart_due_) && !writing_; });
      restart = std::exchange(restart_due_, false);
      if (queue_.empty() && !restart) return;  // stopping, and every accepted job is done
      writing_ = held = true;
      stopping = stopping_;
      if (restart) {
        // The WAL's restart checkpoint a caller's commit left (OnWalCommit); the queue next.
      } else if (auto* job = std::get_if<std::unique_ptr<PruneJob>>(&queue_.front())) {
        prune = std::move(*job);
        queue_.pop_front();
      } else if (auto* w = std::get_if<std::unique_ptr<WriteJob>>(&queue_.front())) {
        write = std::move(*w);
        queue_.pop_front();
      } else {
        // A batch is the run of commits up to the next prune job (or the cap).
        while (!queue_.empty() && batch.size() < opts_.max_batch_commits) {
          auto* pending = std::get_if<Pending>(&queue_.front());
          if (pending == nullptr) break;
          batch.push_back(std::move(*pending));
          queue_.pop_front();
        }
      }
    }
    if (restart) {
      CheckpointForRestart(writer_->handle());
    } else if (prune) {
      RunPruneBatch(std::move(prune), stopping);
    } else if (write) {
      RunWriteJob(*write);
    } else {
      ApplyBatch(batch);
    }
  }
}

void SqliteTaskStore::Impl::ApplyBatch(std::vector<Pending>& batch, bool begun) {
  const auto started = std::chrono::steady_clock::now();
  try {
    if (opts_.batch_hook) opts_.batch_hook(batch.size());
    WriteBatch(batch, begun);
  } catch (const std::exception& e) {
    // A bug or resource exhaustion: nothing of this batch may be reported as written.
    if (sqlite3_get_autocommit(writer_->handle()) == 0) (void)Run(*writer_, "ROLLBACK");
    for (Pending& p : batch) {
      if (p.result) p.result = Internal(std::string("task store writer: ") + e.what());
    }
  }
  SettleBatch(batch, started, opts_.batch_observer, participant_);
}

void SqliteTaskStore::Impl::WriteBatch(std::vector<Pending>& batch, bool begun) {
  // (Never with `begun`: a caller begins a transaction only for a commit that passed.)
  if (std::none_of(batch.begin(), batch.end(), [](const Pending& p) { return p.result.ok(); })) {
    return;
  }
  // Savepoints isolate the commits of a batch from each other, but each one costs two
  // statements and a copy of every page it touches into the statement journal. Most
  // batches need none: a commit refused by its checks (conflict) has written nothing. So
  // the batch is first written without them; only when a commit fails after writing rows
  // is the transaction rolled back and the batch written again, a savepoint per commit.
  // The fault hook of tests is consulted inside a savepoint, so it always gets them.
  const bool savepoints = static_cast<bool>(opts_.fail_commit_hook);
  if (savepoints) {
    (void)WriteBatchOnce(batch, true, begun);
    return;
  }
  if (!WriteBatchOnce(batch, false, begun)) (void)WriteBatchOnce(batch, true, false);
}

bool SqliteTaskStore::Impl::WriteBatchOnce(std::vector<Pending>& batch, bool savepoints,
                                           bool begun) {
  auto fail_succeeded = [&batch](const core::Error& error) {
    for (Pending& p : batch) {
      if (p.result) p.result = error;
    }
  };
  if (!begun) {
    if (auto started = Run(*writer_, "BEGIN IMMEDIATE"); !started) {
      fail_succeeded(started.error());
      return true;
    }
  }
  bool aborted = false;
  std::vector<core::Result<void>> outcome;
  if (!savepoints) outcome.resize(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    Pending& p = batch[i];
    if (!p.result) continue;
    if (savepoints) {
      p.result = ApplyInSavepoint(p, aborted);
      if (aborted) break;
      continue;
    }
    bool wrote = false;
    outcome[i] = WriteCommit(p, wrote);
    if (!outcome[i] && (wrote || sqlite3_get_autocommit(writer_->handle()) != 0)) {
      // Partial rows of this commit are in the transaction (or SQLite ended it): undo it
      // all and let the caller redo the batch with savepoints (results are untouched).
      if (sqlite3_get_autocommit(writer_->handle()) == 0) (void)Run(*writer_, "ROLLBACK");
      return false;
    }
  }
  if (!savepoints) {
    for (size_t i = 0; i < batch.size(); ++i)
      if (batch[i].result) batch[i].result = std::move(outcome[i]);
  }
  if (aborted) {
    // SQLite rolled back the whole transaction (or a savepoint could not be undone): the
    // commits applied so far are lost too.
    if (sqlite3_get_autocommit(writer_->handle()) == 0) (void)Run(*writer_, "ROLLBACK");
    fail_succeeded(Internal("sqlite '" + path_ + "': batch transaction aborted"));
    return true;
  }
  if (participant_.before_commit) TellParticipant(batch);
  core::Result<void> committed =
      opts_.fail_batch_hook && opts_.fail_batch_hook()
          ? core::Result<void>(Internal("sqlite '" + path_ + "': COMMIT failed (fail_batch_hook)"))
          : Run(*writer_, "COMMIT");
  if (!committed) {
    if (sqlite3_get_autocommit(writer_->handle()) == 0) (void)Run(*writer_, "ROLLBACK");
    fail_succeeded(committed.error());
  }
  return true;
}

void SqliteTaskStore::Impl::TellParticipant(std::vector<Pending>& batch) {
  std::vector<CommittedTask> written;
  written.reserve(batch.size());
  for (const Pending& p : batch) {
    if (!p.result) continue;
    CommittedTask t;
    t.id = p.View(p.id);
    t.context_id = p.View(p.context_id);
    t.tenant = p.View(p.tenant);
    t.owner = p.View(p.owner);
    t.snapshot = p.View(p.snapshot);
    t.state = p.state;
    t.at_ms = p.updated_at_ms;
    t.created = p.expected_last_sequence == -1;
    written.push_back(t);
  }
  if (written.empty()) return;
  try {
    sqlite::SqlTx tx(*writer_);
    participant_.before_commit(tx, written);
  } catch (const std::exception& e) {
    core::LogError(std::string("task store: a commit participant threw: ") + e.what());
  }
}

core::Result<void> SqliteTaskStore::Impl::ApplyInSavepoint(Pending& p, bool& aborted) {
  if (auto saved = Run(*writer_, "SAVEPOINT task_commit"); !saved) {
    aborted = sqlite3_get_autocommit(writer_->handle()) != 0;
    return saved;
  }
  bool wrote = false;
  core::Result<void> written = WriteCommit(p, wrote);
  if (written && opts_.fail_commit_hook && opts_.fail_commit_hook()) {
    written = Internal("sqlite '" + path_ + "': commit of task " + std::string(p.View(p.id)) +
                       " failed (fail_commit_hook)");
  }
  if (!written) {
    if (sqlite3_get_autocommit(writer_->handle()) != 0 ||
        !Run(*writer_, "ROLLBACK TO task_commit") || !Run(*writer_, "RELEASE task_commit")) {
      aborted = true;
    }
    return written;
  }
  if (!Run(*writer_, "RELEASE task_commit")) {
    aborted = true;
    return Internal("sqlite '" + path_ + "': release savepoint failed");
  }
  return core::Ok{};
}

core::Result<void> SqliteTaskStore::Impl::WriteCommit(Pending& p, bool& wrote) {
  Connection& db = *writer_;
  const std::string_view id_view = p.View(p.id);
  const std::string id(id_view);  // for error messages

  // No reads before the write: the task row's constraints decide. A creation fails on the
  // primary key (the task exists) or the unique dedup key; an update names the expected
  // last sequence in its WHERE clause. A statement that fails that way has written nothing
  // (SQLite undoes the statement, not the transaction), so `wrote` stays false; only then
  // is the stored row read, to say what conflicted.
  const bool creating = p.expected_last_sequence == -1;
  {
    auto prepared = db.Prepare(creating ? kInsertTask : kUpdateTask);
    if (!prepared) return std::move(prepared).error();
    Stmt write(*prepared);
    write.BindStatic(1, id_view);
    write.BindStatic(2, p.View(p.context_id));
    write.Bind(3, p.state);
    write.BindStatic(4, p.View(p.skill_id));
    write.Bind(5, p.created_at_ms);
    write.Bind(6, p.updated_at_ms);
    write.Bind(7, p.last_sequence);
    write.BindStatic(8, p.View(p.snapshot));
    write.BindStatic(9, p.View(p.run));
    write.BindStatic(10, p.View(p.a2a_state));
    if (creating) {
      if (p.dedup_key.size == 0)
        write.BindNull(11);
      else
        write.BindStatic(11, p.View(p.dedup_key));
      write.BindStatic(12, p.View(p.tenant));
      write.BindStatic(13, p.View(p.owner));
    } else {
      write.Bind(11, p.expected_last_sequence);
    }
    if (p.wake_at_ms)
      write.Bind(14, *p.wake_at_ms);
    else
      write.BindNull(14);
    if (p.waits_for_event.size == 0)
      write.BindNull(15);
    else
      write.BindStatic(15, p.View(p.waits_for_event));
    int rc = write.Step();
    if (creating && rc == SQLITE_CONSTRAINT_UNIQUE && p.dedup_takeover_before_ms > 0) {
      // The key's holder may be past the retention window: it gives the key back, and the
      // insert is tried once more (in the same transaction, so both or neither happen).
      auto takeover_prepared = db.Prepare(kTakeOverDedupKey);
      if (!takeover_prepared) return std::move(takeover_prepared).error();
      Stmt takeover(*takeover_prepared);
      takeover.BindStatic(1, p.View(p.tenant));
      takeover.BindStatic(2, p.View(p.dedup_key));
      takeover.Bind(3, p.dedup_takeover_before_ms);
      if (const int t = takeover.Step(); t != SQLITE_DONE)
        return db.Fail("take over the dedup key for task " + id, t);
      if (sqlite3_changes(db.handle()) == 1) {
        wrote = true;  // the holder's row changed: a failure now must roll it back
        sqlite3_reset(*prepared);
        rc = write.Step();
      }
    }
    // The primary key is the task id; the only other unique index is (tenant, dedup key).
    if (creating && rc == SQLITE_CONSTRAINT_PRIMARYKEY)
      return core::Error(core::ErrorCode::kConflict, "task " + id + " already exists");
    if (creating && rc == SQLITE_CONSTRAINT_UNIQUE)
      return core::Error(core::ErrorCode::kConflict, "dedup key already used");
    if (rc != SQLITE_DONE) return db.Fail("write task " + id, rc);
    if (!creating && sqlite3_changes(db.handle()) == 0) {
      auto select_prepared = db.Prepare(kSelectLastSequence);
      if (!select_prepared) return std::move(select_prepared).error();
      Stmt select(*select_prepared);
      select.BindStatic(1, id_view);
      const int found = select.Step();
      if (found == SQLITE_DONE)
        return core::Error(core::ErrorCode::kConflict,
                           "task " + id + " does not exist (expected last sequence " +
                               std::to_string(p.expected_last_sequence) + ")");
      if (found != SQLITE_ROW) return db.Fail("read last sequence of task " + id, found);
      return core::Error(core::ErrorCode::kConflict, "task " + id + ": stored last sequence is " +
                                                         std::to_string(select.Int(0)) +
                                                         ", expected " +
                                                         std::to_string(p.expected_last_sequence));
    }
    wrote = true;
  }
  if (!creating && p.releases_dedup_key) {  // rare: a creator's first follow-up message
    auto release_prepared = db.Prepare(kReleaseDedupKey);
    if (!release_prepared) return std::move(release_prepared).error();
    Stmt release(*release_prepared);
    release.BindStatic(1, id_view);
    if (const int rc = release.Step(); rc != SQLITE_DONE)
      return db.Fail("release the dedup key of task " + id, rc);
  }
  auto prepared = db.Prepare(kInsertEvent);
  if (!prepared) return std::move(prepared).error();
  for (const EventRow& e : p.events) {
    Stmt insert(*prepared);
    insert.BindStatic(1, id_view);
    insert.Bind(2, e.sequence);
    insert.BindStatic(3, p.View(e.event_id));
    insert.BindStatic(4, p.View(e.type));
    insert.BindStatic(5, p.View(e.node_id));
    insert.Bind(6, e.timestamp_ms);
    insert.BindStatic(7, p.View(e.payload));
    if (const int rc = insert.Step(); rc != SQLITE_DONE) {
      return db.Fail("append event " + std::to_string(e.sequence) + " of task " + id, rc);
    }
  }
  // push configs and outbox rows of this change
  if (auto pushed = sqlite::WritePushRows(db, p.push_configs, p.outbox); !pushed) return pushed;
  return core::Ok{};
}

}  // namespace a2ad::storage
