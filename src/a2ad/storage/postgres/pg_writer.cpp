// PostgresStore's write path: Commit serializes a commit on the calling thread and queues it;
// the writer thread applies the queued commits in batches, one transaction each, and shows the
// commit participant what each batch wrote. See postgres_store.hpp ("Writes").
#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <string>
#include <utility>
#include <variant>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/a2a_task_state.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/commit_check.hpp"
#include "a2ad/storage/postgres/pg_push_rows.hpp"
#include "a2ad/storage/postgres/pg_sql.hpp"
#include "a2ad/storage/postgres/pg_store_impl.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/storage/writer_batch.hpp"

namespace a2ad::storage {
namespace {

using pg::ConfigParams;
using pg::kInsertOutbox;
using pg::kUpsertConfig;
using pg::OutboxParams;
using pg::Params;

const std::string kInsertTask =
    "INSERT INTO tasks(id, context_id, state, skill_id, created_at_ms, updated_at_ms,"
    " last_sequence, snapshot, run, a2a_state, dedup_key, tenant, owner, waits_for_event,"
    " wake_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
    " ON CONFLICT DO NOTHING";
// The sequence check: a writer whose expected sequence is not the stored one changes nothing.
const std::string kUpdateTask =
    "UPDATE tasks SET context_id = $2, state = $3, skill_id = $4, created_at_ms = $5,"
    " updated_at_ms = $6, last_sequence = $7, snapshot = $8, run = $9, a2a_state = $10,"
    " dedup_key = CASE WHEN $12 THEN NULL ELSE dedup_key END, waits_for_event = $13,"
    " wake_at_ms = $14 WHERE id = $1 AND last_sequence = $11";
// An execution's commit (TaskCommit::fence_epoch): also refused once its lease's epoch moved
// on. FOR SHARE: a takeover (which moves the epoch) waits for a commit in flight, and a commit
// after it sees the new epoch, so no commit of an older epoch lands after a takeover.
const std::string kUpdateTaskFenced =
    kUpdateTask +
    " AND EXISTS (SELECT 1 FROM run_leases WHERE task_id = $1 AND epoch = $15 FOR SHARE)";
// Leases (cluster.hpp): the creating commit takes the run's, the commit that ends it drops it.
const std::string kTakeLease =
    "INSERT INTO run_leases(task_id, holder, epoch) VALUES ($1, $2, 1) ON CONFLICT DO NOTHING";
const std::string kDropLease = "DELETE FROM run_leases WHERE task_id = $1";
// Taken before the task row by a commit that drops the lease, so that every writer locks a
// run's lease before its task row (a fenced commit takes it FOR SHARE, first, in its UPDATE):
// one lock order, no deadlock between an execution's step and a cancel from elsewhere.
const std::string kLockLease = "SELECT 1 FROM run_leases WHERE task_id = $1 FOR UPDATE";
const std::string kNotify = "SELECT pg_notify('a2ad_feed', $1)";
constexpr size_t kNotifyBytes = 7900;  // NOTIFY payloads are capped at 8000 bytes
// The retention window of an idempotency key ended (TaskCommit::dedup_takeover_before_ms):
// the older holder gives it back, unless the new task's id is the one taken (then the commit
// is refused as it is).
const std::string kTakeOverDedupKey =
    "UPDATE tasks SET dedup_key = NULL WHERE tenant = $1 AND dedup_key = $2"
    " AND created_at_ms < $3 AND NOT EXISTS (SELECT 1 FROM tasks WHERE id = $4)";
constexpr size_t kEventsPerStatement = 500;  // 7 parameters each, well under 65,535

core::Error Closed() { return core::Error(core::ErrorCode::kUnavailable, "task store is closed"); }

core::Error Fenced(const std::string& id) {
  return core::Error(core::ErrorCode::kConflict,
                     "run " + id + " is driven by another replica (its lease moved on)",
                     {{"taskId", id}, {"reason", "fenced"}});
}

core::Error Refused(const std::string& id, bool created) {
  return core::Error(core::ErrorCode::kConflict,
                     created ? "task " + id + " already exists (or its idempotency key is taken)"
                             : "task " + id + " changed meanwhile (sequence check)",
                     {{"taskId", id}, {"reason", created ? "exists" : "sequence"}});
}

// The change feed's notifications of the commits `include` picks: "<task id> <sequence>\n"
// lines, in payloads under NOTIFY's cap.
// Each payload starts with "@<holder>\n": a replica skips its own commits (published already).
template <class Pick>
std::vector<std::string> NotifyPayloads(const std::vector<PostgresStore::Impl::Pending>& batch,
                                        const std::string& holder, Pick include) {
  const std::string head = "@" + holder + "\n";
  std::vector<std::string> out(1, head);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (!include(i)) continue;
    const TaskRecord& r = batch[i].commit.Record();
    std::string line = r.task.id + " " + std::to_string(r.last_sequence) + "\n";
    if (out.back().size() + line.size() > kNotifyBytes) out.push_back(head);
    out.back() += line;
  }
  if (out.back().size() == head.size()) out.pop_back();
  return out;
}

}  // namespace

void PostgresStore::Impl::Commit(TaskCommit commit, CommitCallback done) {
  Pending p;
  p.done = std::move(done);
  p.result = CheckCommitPreconditions(commit);
  if (p.result) {
    const TaskRecord& r = commit.Record();
    protocol::AppendTask(p.snapshot, r.task, protocol::Wire::kV10);
    {
      protocol::JsonTextWriter run(p.run);
      protocol::WriteRunSnapshot(run, r.run);
    }
    {
      protocol::JsonTextWriter a2a_state(p.a2a_state);
      protocol::WriteA2ATaskState(a2a_state, r.task, r.run);
    }
    p.payloads.resize(commit.events.size());
    for (size_t i = 0; i < commit.events.size(); ++i)
      protocol::JsonTextWriter(p.payloads[i]).Object(commit.events[i].payload);
  }
  p.commit = std::move(commit);
  {
    std::unique_lock lock(queue_mu_);
    if (stopping_) {
      lock.unlock();
      if (p.done) p.done(Closed());
      return;
    }
    queue_.emplace_back(std::move(p));
  }
  queue_cv_.notify_one();
}

bool PostgresStore::Impl::Enqueue(std::function<void(pg::Connection*)> job) {
  {
    std::lock_guard lock(queue_mu_);
    if (stopping_) return false;
    queue_.emplace_back(Job{std::move(job)});
  }
  queue_cv_.notify_one();
  return true;
}

void PostgresStore::Impl::StartWriter() {
  writer_thread_ = std::thread([this] {
    core::SetThreadName("pg-writer");
    WriterLoop();
  });
}

void PostgresStore::Impl::StopWriter() {
  {
    std::lock_guard lock(queue_mu_);
    if (stopping_ && !writer_thread_.joinable()) return;
    stopping_ = true;
  }
  queue_cv_.notify_one();
  if (writer_thread_.joinable()) writer_thread_.join();
  writer_.reset();
}

bool PostgresStore::Impl::EnsureWriter() {
  if (writer_ && !writer_->Broken()) return true;
  writer_.reset();
  auto c = pg::Connection::Open(url_, opts_.statement_timeout_ms);
  if (!c) {
    core::LogWarn("task store: " + c.error().message);
    return false;
  }
  writer_ = std::move(c).value();
  return true;
}

void PostgresStore::Impl::WriterLoop() {
  for (;;) {
    std::vector<Pending> batch;
    std::function<void(pg::Connection*)> job;
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and every accepted job is done
      if (auto* j = std::get_if<Job>(&queue_.front())) {
        job = std::move(j->run);
        queue_.pop_front();
      } else {
        while (!queue_.empty() && batch.size() < opts_.max_batch_commits) {
          auto* p = std::get_if<Pending>(&queue_.front());
          if (!p) break;
          batch.push_back(std::move(*p));
          queue_.pop_front();
        }
      }
    }
    if (job) {
      job(EnsureWriter() ? writer_.get() : nullptr);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    RunBatch(batch);
    SettleBatch(batch, start, opts_.batch_observer, participant_);
  }
}

void PostgresStore::Impl::RunBatch(std::vector<Pending>& batch) {
  std::vector<core::Result<void>> checked;  // the precondition checks, kept for a second pass
  checked.reserve(batch.size());
  for (Pending& p : batch) checked.push_back(p.result);
  auto fail_all = [&](const core::Error& e) {
    for (size_t i = 0; i < batch.size(); ++i)
      if (checked[i]) batch[i].result = e;
  };
  // Pass 0: every statement of the batch in one pipeline (one round trip), then COMMIT. If a
  // commit is refused (its sequence check, a taken key) or a statement fails, that pass is
  // rolled back and pass 1 writes the batch again a statement at a time with a savepoint per
  // commit, so each commit gets its own outcome. A connection found lost before anything was
  // written is made again once.
  bool reconnected = false;
  for (int pass = 0; pass < 2; ++pass) {
    if (!EnsureWriter()) {
      fail_all(core::Error(core::ErrorCode::kUnavailable, "the database is unavailable",
                           {{"database", "postgresql"}}));
      return;
    }
    pg::Connection& w = *writer_;
    if (pass == 0) {
      auto piped = Pipeline(batch, checked);
      if (piped.outcome == Pipelined::kFailed) {
        if (w.Broken() && !reconnected) {  // an idle connection the server had closed
          reconnected = true;
          writer_.reset();
          --pass;
          continue;
        }
        errors_.fetch_add(1);
        fail_all(piped.error.error());
        if (!w.Broken()) (void)w.Run("ROLLBACK", "roll back a batch");
        return;
      }
      if (piped.outcome == Pipelined::kCareful) continue;
      for (size_t i = 0; i < batch.size(); ++i)
        if (checked[i]) batch[i].result = core::Ok{};
      const std::string before =
          participant_.before_commit ? TellParticipant(batch, checked, true) : "";
      if (auto committed = w.Run(before + "COMMIT", "commit a batch"); !committed) {
        errors_.fetch_add(1);
        core::LogWarn("task store: " + committed.error().message);
        fail_all(committed.error());
        if (!w.Broken()) (void)w.Run("ROLLBACK", "end a failed batch");  // (if still open)
      }
      return;
    }
    if (auto begun = w.Run("BEGIN", "begin a batch"); !begun) {
      if (w.Broken() && !reconnected) {
        reconnected = true;
        writer_.reset();
        --pass;
        continue;
      }
      errors_.fetch_add(1);
      fail_all(begun.error());
      return;
    }
    bool restart = false;
    for (size_t i = 0; i < batch.size(); ++i) {
      Pending& p = batch[i];
      if (!checked[i]) continue;
      const bool savepoint = true;
      if (savepoint) {
        if (auto s = w.Run("SAVEPOINT c", "savepoint"); !s) {
          p.result = std::move(s).error();
          continue;
        }
      }
      bool aborted = false;
      p.result = Apply(p, aborted);
      if (aborted) errors_.fetch_add(1);
      if (aborted && !savepoint) {
        restart = true;
        break;
      }
      if (savepoint) {
        auto undo = w.Run(aborted ? "ROLLBACK TO SAVEPOINT c; RELEASE SAVEPOINT c"
                                  : "RELEASE SAVEPOINT c",
                          "settle a savepoint");
        if (!undo && p.result) p.result = std::move(undo).error();
      }
    }
    if (restart) {
      (void)w.Run("ROLLBACK", "roll back a batch");
      continue;
    }
    // A notification that fails spoils the transaction (its COMMIT would roll back without an
    // error): the batch fails as a whole then, nothing reported durable.
    core::Result<void> notified = core::Ok{};
    for (const std::string& payload : NotifyPayloads(
             batch, opts_.lease_holder, [&](size_t i) { return checked[i].ok() && batch[i].result.ok(); }))
      if (notified)
        if (auto n = w.Exec(kNotify, Params().Add(payload), "notify the change feed"); !n)
          notified = std::move(n).error();
    if (!notified) {
      errors_.fetch_add(1);
      for (size_t i = 0; i < batch.size(); ++i)
        if (checked[i] && batch[i].result) batch[i].result = notified.error();
      if (!w.Broken()) (void)w.Run("ROLLBACK", "roll back a batch");
      return;
    }
    const std::string before =
        participant_.before_commit ? TellParticipant(batch, checked, false) : "";
    if (auto committed = w.Run(before + "COMMIT", "commit a batch"); !committed) {
      errors_.fetch_add(1);
      core::LogWarn("task store: " + committed.error().message);
      for (size_t i = 0; i < batch.size(); ++i)
        if (checked[i] && batch[i].result) batch[i].result = committed.error();
      if (!w.Broken()) (void)w.Run("ROLLBACK", "end a failed batch");  // (if still open)
    }
    return;
  }
}

void PostgresStore::Impl::SetCommitParticipant(CommitParticipant participant) {
  std::lock_guard lock(queue_mu_);
  participant_ = std::move(participant);
}

std::string PostgresStore::Impl::TellParticipant(std::vector<Pending>& batch,
                                                 const std::vector<core::Result<void>>& checked,
                                                 bool savepoint_taken) {
  std::string release = "RELEASE SAVEPOINT participant; ";
  std::vector<CommittedTask> written;
  written.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const Pending& p = batch[i];
    if (!checked[i] || !p.result) continue;
    const TaskRecord& r = p.commit.Record();
    CommittedTask t;
    t.id = r.task.id;
    t.context_id = r.task.context_id;
    t.tenant = r.tenant;
    t.owner = r.owner;
    t.snapshot = p.snapshot;
    t.state = static_cast<int64_t>(r.task.status.state);
    t.at_ms = r.updated_at_ms;
    t.created = p.commit.expected_last_sequence == -1;
    written.push_back(t);
  }
  if (written.empty()) return savepoint_taken ? release : "";
  // A statement that fails spoils the whole transaction in PostgreSQL: the participant's part
  // is kept in a savepoint, so the task commits of the batch never depend on it. (The pipelined
  // pass takes it in its pipeline; its release goes with the COMMIT.)
  pg::Connection& w = *writer_;
  if (!savepoint_taken) {
    if (auto saved = w.Run("SAVEPOINT participant", "savepoint"); !saved) {
      core::LogError("task store: the commit participant is skipped: " + saved.error().message);
      return "";
    }
  }
  std::string failed;
  try {
    pg::SqlTx tx(w);
    participant_.before_commit(tx, written);
  } catch (const std::exception& e) {
    failed = std::string("it threw: ") + e.what();
  }
  if (failed.empty() && w.InFailedTransaction()) failed = "a statement of it failed";
  if (!failed.empty()) {
    core::LogError("task store: the commit participant's writes are rolled back: " + failed);
    (void)w.Run("ROLLBACK TO SAVEPOINT participant", "roll back the participant");
  }
  return release;
}

namespace {

// The statements of one commit, shared by the pipelined pass and the careful one.
Params TaskParams(const PostgresStore::Impl::Pending& p) {
  const TaskCommit& c = p.commit;
  const TaskRecord& r = c.Record();
  Params q;
  q.Add(r.task.id).Add(r.task.context_id).Add(static_cast<int64_t>(r.task.status.state))
      .Add(r.skill_id).Add(r.created_at_ms).Add(r.updated_at_ms).Add(r.last_sequence)
      .Add(p.snapshot).Add(p.run).Add(p.a2a_state);
  if (c.expected_last_sequence == -1)
    q.AddOrNull(r.dedup_key).Add(r.tenant).Add(r.owner);
  else
    q.Add(c.expected_last_sequence).Add(c.releases_dedup_key);
  // Indexed: the runs a posted event resumes, what a restart starts again, when a parked run
  // wakes (stored_records.hpp).
  const bool unfinished = !protocol::IsTerminal(r.task.status.state);
  q.AddOrNull(unfinished ? EventAwaited(r.run) : std::string_view());
  if (std::optional<int64_t> wake = unfinished ? ParkedUntil(r.run) : std::nullopt)
    q.Add(*wake);
  else
    q.Null();
  if (c.expected_last_sequence != -1 && c.fence_epoch > 0) q.Add(c.fence_epoch);
  return q;
}

const std::string& TaskSql(const TaskCommit& c) {
  if (c.expected_last_sequence == -1) return kInsertTask;
  return c.fence_epoch > 0 ? kUpdateTaskFenced : kUpdateTask;
}

bool Terminal(const TaskCommit& c) { return protocol::IsTerminal(c.Record().task.status.state); }
bool TakesLease(const TaskCommit& c) {
  return c.expected_last_sequence == -1 && c.take_lease && !Terminal(c);
}
bool DropsLease(const TaskCommit& c) { return c.expected_last_sequence != -1 && Terminal(c); }

constexpr size_t kPreparedEventRows = 4;  // statements of up to 4 rows are prepared

std::string MakeEventsSql(size_t n) {
  std::string text =
      "INSERT INTO task_events(task_id, sequence, event_id, type, node_id, timestamp_ms,"
      " payload) VALUES ";
  for (size_t i = 0; i < n; ++i) {
    const size_t b = i * 7;
    text += (i ? ", ($" : "($") + std::to_string(b + 1);
    for (size_t k = 2; k <= 7; ++k) text += ", $" + std::to_string(b + k);
    text += ')';
  }
  return text;
}

// The INSERT of n events (7 parameters each): made once for up to kPreparedEventRows rows
// (those are prepared), else into `other`.
const std::string& EventsSql(size_t n, std::string& other) {
  static const auto made = [] {
    std::array<std::string, kPreparedEventRows + 1> a;
    for (size_t k = 1; k <= kPreparedEventRows; ++k) a[k] = MakeEventsSql(k);
    return a;
  }();
  if (n <= kPreparedEventRows) return made[n];
  other = MakeEventsSql(n);
  return other;
}

// The parameters of events [first, first + n) of `p`.
Params EventsParams(const PostgresStore::Impl::Pending& p, size_t first, size_t n) {
  const TaskCommit& c = p.commit;
  const std::string& id = c.Record().task.id;
  Params ev;
  for (size_t i = first; i < first + n; ++i) {
    const protocol::RunEvent& e = c.events[i];
    ev.Add(id).Add(e.sequence).Add(e.event_id).Add(e.type).Add(e.node_id).Add(e.timestamp_ms)
        .Add(p.payloads[i]);
  }
  return ev;
}

}  // namespace

PostgresStore::Impl::Pipelined PostgresStore::Impl::Pipeline(
    std::vector<Pending>& batch, const std::vector<core::Result<void>>& checked) {
  pg::Connection& w = *writer_;
  // Everything the pipeline runs is prepared first (a pipeline cannot wait for a prepare).
  const std::pair<const std::string*, int> statements[] = {
      {&kInsertTask, 14},  {&kUpdateTask, 13},   {&kUpdateTaskFenced, 14},
      {&kUpsertConfig, 8}, {&kInsertOutbox, 14}, {&kTakeLease, 2},
      {&kDropLease, 1},    {&kNotify, 1},        {&kLockLease, 1}};
  for (const auto& [sql, params] : statements)
    if (auto ok = w.Prepare(*sql, params, "prepare a statement"); !ok)
      return {Pipelined::kFailed, ok.error()};
  std::string unused;
  for (size_t n = 1; n <= kPreparedEventRows; ++n)
    if (auto ok = w.Prepare(EventsSql(n, unused), static_cast<int>(7 * n), "prepare a statement");
        !ok)
      return {Pipelined::kFailed, ok.error()};
  if (auto ok = w.EnterPipeline(); !ok) return {Pipelined::kFailed, ok.error()};
  // Which results must say "one row" (the task's INSERT or UPDATE: the sequence check).
  std::vector<bool> must_touch_one;
  core::Result<void> sent = core::Ok{};
  auto send = [&](std::string_view sql, const Params& params, bool prepared,
                  std::string_view what, bool touch_one) {
    if (!sent) return;
    sent = w.Send(sql, params, prepared, what);
    if (sent) must_touch_one.push_back(touch_one);
  };
  send("BEGIN", {}, false, "begin a batch", false);
  for (size_t i = 0; i < batch.size() && sent; ++i) {
    if (!checked[i]) continue;
    const Pending& p = batch[i];
    const TaskCommit& c = p.commit;
    if (DropsLease(c))
      send(kLockLease, Params().Add(c.Record().task.id), true, "lock a lease", false);
    send(TaskSql(c), TaskParams(p), true, "write a task", true);
    for (size_t first = 0; first < c.events.size(); first += kEventsPerStatement) {
      const size_t n = std::min(kEventsPerStatement, c.events.size() - first);
      std::string other;
      send(EventsSql(n, other), EventsParams(p, first, n), n <= kPreparedEventRows,
           "append events", false);
    }
    for (const PushConfigRecord& cfg : c.push_configs)
      send(kUpsertConfig, ConfigParams(cfg), true, "write a push config", false);
    for (const OutboxRow& o : c.outbox)
      send(kInsertOutbox, OutboxParams(o), true, "insert an outbox row", false);
    if (TakesLease(c))
      send(kTakeLease, Params().Add(c.Record().task.id).Add(opts_.lease_holder), true,
           "take a run's lease", false);
    if (DropsLease(c)) send(kDropLease, Params().Add(c.Record().task.id), true, "drop a lease", false);
  }
  for (const std::string& payload : NotifyPayloads(batch, opts_.lease_holder, [&](size_t i) { return checked[i].ok(); }))
    send(kNotify, Params().Add(payload), true, "notify the change feed", false);
  if (participant_.before_commit) send("SAVEPOINT participant", {}, false, "savepoint", false);
  // A NUL in a value stops the queueing (that commit fails on the careful way); a lost
  // connection fails the batch.
  bool clean = sent.ok();
  if (!sent && sent.error().code == core::ErrorCode::kUnavailable)
    return {Pipelined::kFailed, sent.error()};
  if (auto synced = w.Sync(); !synced) return {Pipelined::kFailed, synced.error()};
  for (size_t k = 0; k < must_touch_one.size(); ++k) {
    auto r = w.Next("a batch's statement");
    if (!r) {
      if (w.Broken()) return {Pipelined::kFailed, r.error()};
      clean = false;
      continue;
    }
    if (must_touch_one[k] && r->Affected() != 1) clean = false;  // refused: the careful way
  }
  if (!w.ExitPipeline()) return {Pipelined::kFailed, core::Error(core::ErrorCode::kUnavailable,
                                                                 "the database connection failed",
                                                                 {{"database", "postgresql"}})};
  if (clean) return {Pipelined::kWritten, core::Ok{}};
  errors_.fetch_add(1);
  if (auto rolled = w.Run("ROLLBACK", "roll back a batch"); !rolled && w.Broken())
    return {Pipelined::kFailed, rolled.error()};
  return {Pipelined::kCareful, core::Ok{}};
}

core::Result<void> PostgresStore::Impl::Apply(Pending& p, bool& aborted) {
  pg::Connection& w = *writer_;
  const TaskCommit& c = p.commit;
  const TaskRecord& r = c.Record();
  auto sql = [&](core::Result<pg::Rows> got) -> core::Result<pg::Rows> {
    if (!got) aborted = true;
    return got;
  };
  const Params task = TaskParams(p);
  if (DropsLease(c)) {
    auto locked =
        sql(w.Exec(kLockLease, Params().Add(r.task.id), "lock the lease of run " + r.task.id));
    if (!locked) return std::move(locked).error();
  }
  auto made = sql(w.Exec(TaskSql(c), task, "write task " + r.task.id));
  if (!made) return std::move(made).error();
  if (made->Affected() == 0) {
    if (c.expected_last_sequence != -1 && c.fence_epoch > 0) {
      auto lease = sql(w.Exec("SELECT epoch FROM run_leases WHERE task_id = $1",
                              Params().Add(r.task.id), "read a run's lease"));
      if (!lease) return std::move(lease).error();
      if (lease->size() == 0 || lease->Int(0, 0) != c.fence_epoch) return Fenced(r.task.id);
    }
    if (c.expected_last_sequence != -1) return Refused(r.task.id, false);
    if (r.dedup_key.empty() || c.dedup_takeover_before_ms <= 0) return Refused(r.task.id, true);
    Params take;
    take.Add(r.tenant).Add(r.dedup_key).Add(c.dedup_takeover_before_ms).Add(r.task.id);
    auto taken = sql(w.Exec(kTakeOverDedupKey, take, "take over an idempotency key"));
    if (!taken) return std::move(taken).error();
    if (taken->Affected() == 0) return Refused(r.task.id, true);
    made = sql(w.Exec(kInsertTask, task, "insert task " + r.task.id));
    if (!made) return std::move(made).error();
    if (made->Affected() == 0) {  // cannot happen: refuse the commit whole
      aborted = true;
      return Refused(r.task.id, true);
    }
  }
  for (size_t first = 0; first < c.events.size(); first += kEventsPerStatement) {
    const size_t n = std::min(kEventsPerStatement, c.events.size() - first);
    std::string other;
    const std::string& text = EventsSql(n, other);
    const Params params = EventsParams(p, first, n);
    const std::string what = "append events of task " + r.task.id;
    auto added = sql(n <= kPreparedEventRows ? w.Exec(text, params, what)
                                             : w.ExecOnce(text, params, what));
    if (!added) return std::move(added).error();
  }
  for (const PushConfigRecord& cfg : c.push_configs) {
    auto put = sql(w.Exec(kUpsertConfig, ConfigParams(cfg), "write a push config of task " + cfg.task_id));
    if (!put) return std::move(put).error();
  }
  for (const OutboxRow& o : c.outbox) {
    auto put = sql(w.Exec(kInsertOutbox, OutboxParams(o), "insert outbox row " + o.id));
    if (!put) return std::move(put).error();
  }
  if (TakesLease(c)) {
    auto took = sql(w.Exec(kTakeLease, Params().Add(r.task.id).Add(opts_.lease_holder),
                           "take the lease of run " + r.task.id));
    if (!took) return std::move(took).error();
  }
  if (DropsLease(c)) {
    auto dropped = sql(w.Exec(kDropLease, Params().Add(r.task.id), "drop the lease of run " + r.task.id));
    if (!dropped) return std::move(dropped).error();
  }
  return core::Ok{};
}

}  // namespace a2ad::storage
