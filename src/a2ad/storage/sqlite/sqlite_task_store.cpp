#include "a2ad/storage/sqlite/sqlite_task_store.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <exception>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <utility>
#include <variant>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/commit_check.hpp"
#include "a2ad/storage/page_cursor.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_push_store.hpp"
#include "a2ad/storage/sqlite/sqlite_records.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"

namespace a2ad::storage {
namespace {

using sqlite::Connection;
using sqlite::Stmt;

constexpr const char* kSelectLastSequence = "SELECT last_sequence FROM tasks WHERE id = ?1";
constexpr const char* kInsertTask =
    "INSERT INTO tasks(id, context_id, state, skill_id, created_at_ms, updated_at_ms,"
    " last_sequence, snapshot, run, a2a_state, dedup_key)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
constexpr const char* kUpdateTask =
    "UPDATE tasks SET context_id = ?2, state = ?3, skill_id = ?4, created_at_ms = ?5,"
    " updated_at_ms = ?6, last_sequence = ?7, snapshot = ?8, run = ?9, a2a_state = ?10"
    " WHERE id = ?1 AND last_sequence = ?11";
constexpr const char* kInsertEvent =
    "INSERT INTO task_events(task_id, sequence, event_id, type, node_id, timestamp_ms, payload)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
constexpr const char* kRecordColumns =
    "id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run, a2a_state,"
    " dedup_key";
constexpr const char* kSelectTask =
    "SELECT id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run, a2a_state,"
    " dedup_key FROM tasks WHERE id = ?1";
constexpr const char* kSelectByDedupKey =
    "SELECT id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run, a2a_state,"
    " dedup_key FROM tasks WHERE dedup_key = ?1";
constexpr const char* kSelectEvents =
    "SELECT sequence, event_id, type, node_id, timestamp_ms, payload FROM task_events"
    " WHERE task_id = ?1 AND sequence > ?2 ORDER BY sequence LIMIT ?3";
constexpr const char* kDeleteEvents =
    "DELETE FROM task_events WHERE task_id = ?1 AND sequence > ?2 AND sequence <= ?3";
constexpr const char* kSetPrunedThrough = "UPDATE tasks SET pruned_through = ?2 WHERE id = ?1";

core::Error Closed() { return core::Error(core::ErrorCode::kUnavailable, "task store is closed"); }

core::Error Internal(std::string message) {
  return core::Error(core::ErrorCode::kInternal, std::move(message));
}

// Runs one cached statement that returns no rows (BEGIN, SAVEPOINT, COMMIT, ...).
core::Result<void> Run(Connection& db, const char* sql) {
  auto prepared = db.Prepare(sql);
  if (!prepared) return std::move(prepared).error();
  Stmt stmt(*prepared);
  if (const int rc = stmt.Step(); rc != SQLITE_DONE && rc != SQLITE_ROW) return db.Fail(sql, rc);
  return core::Ok{};
}

// Pragmas of every read-write connection. journal_mode is persistent in the file; the
// others are per connection.
core::Result<void> ConfigureReadWrite(Connection& db, std::optional<bool> synchronous_full) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db.handle(), "PRAGMA journal_mode=WAL", -1, &raw, nullptr);
  std::string mode;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(raw);
    if (rc == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
      mode = text != nullptr ? text : "";
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(raw);
  if (rc != SQLITE_OK) return db.Fail("PRAGMA journal_mode=WAL", rc);
  if (mode != "wal") {
    return Internal("sqlite '" + db.path() + "': cannot enable WAL mode (journal_mode is '" + mode +
                    "')");
  }
  if (synchronous_full) {
    const char* sync = *synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL";
    if (auto set = db.Exec(sync, "set synchronous"); !set) return set;
  }
  return db.Exec("PRAGMA foreign_keys=ON", "enable foreign keys");
}

// The row of a SELECT of kRecordColumns. kDataCorrupt when its text does not read.
core::Result<TaskRecord> ReadRecord(const Stmt& row) {
  sqlite::StoredTask stored;
  stored.id = row.Text(0);
  stored.skill_id = row.Text(1);
  stored.created_at_ms = row.Int(2);
  stored.updated_at_ms = row.Int(3);
  stored.last_sequence = row.Int(4);
  stored.snapshot = row.Text(5);
  stored.run = row.Text(6);
  stored.a2a_state = row.Text(7);
  stored.dedup_key = row.Text(8);
  return sqlite::DecodeStoredTask(stored);
}

// A read-only connection pool. Connections open lazily up to `max`; Acquire waits while
// all are lent out. Close waits for every lease to come back, then closes them all.
class ReaderPool {
 public:
  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<Connection> connection)
        : pool_(pool), connection_(std::move(connection)) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), connection_(std::move(other.connection_)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (connection_) pool_->Release(std::move(connection_));
    }
    Connection& connection() { return *connection_; }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Connection> connection_;
  };

  ReaderPool(std::string path, size_t max, int busy_timeout_ms)
      : path_(std::move(path)), max_(max), busy_timeout_ms_(busy_timeout_ms) {}

  core::Result<Lease> Acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return closed_ || !idle_.empty() || open_ < max_; });
    if (closed_) return Closed();
    if (!idle_.empty()) {
      std::unique_ptr<Connection> connection = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(connection));
    }
    ++open_;
    lock.unlock();
    auto opened = Connection::Open(path_, SQLITE_OPEN_READONLY, busy_timeout_ms_);
    if (!opened) {
      lock.lock();
      --open_;
      cv_.notify_all();
      return std::move(opened).error();
    }
    return Lease(this, std::move(opened).value());
  }

  void Close() {
    std::unique_lock lock(mu_);
    closed_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return idle_.size() == open_; });
    idle_.clear();
    open_ = 0;
  }

 private:
  void Release(std::unique_ptr<Connection> connection) {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(connection));
    cv_.notify_all();  // an acquirer or Close
  }

  const std::string path_;
  const size_t max_;
  const int busy_timeout_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;
  size_t open_ = 0;  // lent out + idle
  bool closed_ = false;
};

// An explicit read transaction, so several statements see one snapshot. Rolls back unless
// committed.
class ReadTransaction {
 public:
  explicit ReadTransaction(Connection& db) : db_(db) {}
  ~ReadTransaction() {
    if (begun_) (void)Run(db_, "ROLLBACK");
  }
  core::Result<void> Begin() {
    auto begun = Run(db_, "BEGIN");
    begun_ = begun.ok();
    return begun;
  }
  core::Result<void> Commit() {
    begun_ = false;
    return Run(db_, "COMMIT");
  }

 private:
  Connection& db_;
  bool begun_ = false;
};

}  // namespace

// ---- Impl -------------------------------------------------------------------------------

class SqliteTaskStore::Impl {
 public:
  Impl(std::string path, SqliteOptions opts, std::unique_ptr<Connection> writer)
      : path_(std::move(path)),
        opts_(std::move(opts)),
        writer_(std::move(writer)),
        readers_(path_, opts_.reader_connections, opts_.busy_timeout_ms) {}

  ~Impl() { Close(); }

  void Start() {
    StartCheckpointer();
    writer_thread_ = std::thread([this] {
      core::SetThreadName("sqlite-writer");
      WriterLoop();
    });
    writer_id_ = writer_thread_.get_id();
  }

  void Commit(TaskCommit commit, CommitCallback done);
  core::Result<std::optional<TaskRecord>> Get(std::string_view task_id);
  core::Result<std::optional<TaskRecord>> FindByDedupKey(std::string_view key);
  core::Result<TaskPage> List(const TaskQuery& query);
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                           int64_t after_sequence, size_t limit);
  core::Result<size_t> PruneEvents(int64_t terminal_before_ms);
  void Close();

 private:
  // A record that does not read (kDataCorrupt): logged the first time this process meets
  // it (the client gets a short message; `a2ad doctor` lists and repairs), returned as is.
  core::Error Quarantined(core::Error e);

  // One queued commit, reduced on the calling thread to what the writer binds: the
  // record's and events' columns, with all their text (ids, JSON of the snapshot, run, A2A
  // state and event payloads) in one buffer. The caller's TaskCommit (task, JSON trees,
  // events) is destroyed on the thread that built it, so the writer frees one buffer per
  // commit instead of hundreds of nodes allocated by another thread.
  struct Span {
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  struct EventRow {
    int64_t sequence = 0;
    int64_t timestamp_ms = 0;
    Span event_id, type, node_id, payload;
  };
  struct Pending {
    std::string text;
    Span id, context_id, skill_id, dedup_key, snapshot, run, a2a_state;
    int64_t state = 0;
    int64_t created_at_ms = 0;
    int64_t updated_at_ms = 0;
    int64_t last_sequence = -1;
    int64_t expected_last_sequence = -1;
    std::vector<EventRow> events;
    // Push notifications (rare): written by WritePushRows in the same transaction.
    std::vector<PushConfigRecord> push_configs;
    std::vector<OutboxRow> outbox;
    CommitCallback done;
    core::Result<void> result;  // an error here (precondition) skips the database

    std::string_view View(Span s) const { return std::string_view(text).substr(s.offset, s.size); }
    /// The span of what `write()` appends to `text` (offsets: `text` may grow meanwhile).
    template <class Write>
    Span Appended(Write&& write) {
      const size_t at = text.size();
      write();
      return Span{static_cast<uint32_t>(at), static_cast<uint32_t>(text.size() - at)};
    }
    Span Append(std::string_view v) {
      return Appended([&] { text.append(v); });
    }
  };

  // One PruneEvents call, queued once per batch until it is done.
  struct PruneJob {
    int64_t terminal_before_ms = 0;
    size_t deleted = 0;  // by the batches committed so far
    std::promise<core::Result<size_t>> done;
  };

  struct PruneBatch {
    size_t deleted = 0;
    bool more = false;  // candidates remain
  };

  // The writer's queue: commits and prune jobs, in call order.
  using Job = std::variant<Pending, std::unique_ptr<PruneJob>>;

  void WriterLoop();
  // Background checkpoints (SqliteOptions::checkpoint_pages): the writer's WAL hook wakes
  // the checkpointer thread once the WAL has grown past the threshold.
  void StartCheckpointer();
  void CheckpointerLoop();
  static int OnWalCommit(void* self, sqlite3* db, const char* schema, int wal_pages);
  void StopCheckpointer();
  void RunPruneBatch(std::unique_ptr<PruneJob> job, bool stopping);
  core::Result<PruneBatch> WritePruneBatch(int64_t terminal_before_ms);
  void ApplyBatch(std::vector<Pending>& batch);
  void WriteBatch(std::vector<Pending>& batch);
  // Writes the batch's commits in one transaction; see the comment at its definition.
  // Returns false (transaction rolled back, nothing reported) when a commit failed after
  // writing some of its rows without savepoints: the caller writes the batch again with them.
  bool WriteBatchOnce(std::vector<Pending>& batch, bool savepoints);
  core::Result<void> ApplyInSavepoint(Pending& p, bool& aborted);
  // `wrote` becomes true once a row of `p` has been written (a failure after that leaves
  // partial rows in the transaction; one before it leaves nothing).
  core::Result<void> WriteCommit(Pending& p, bool& wrote);

  const std::string path_;
  const SqliteOptions opts_;
  std::unique_ptr<Connection> writer_;  // used only by the writer thread once started
  ReaderPool readers_;

  std::mutex quarantine_mu_;
  std::unordered_set<std::string> quarantine_logged_;  // task ids (bounded)

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  std::thread writer_thread_;
  std::thread::id writer_id_;  // set by Start(), before any other thread sees this object

  std::unique_ptr<Connection> checkpointer_;  // used only by checkpoint_thread_
  std::thread checkpoint_thread_;
  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_wanted_ = false;               // guarded by checkpoint_mu_
  bool checkpoint_stop_ = false;                 // guarded by checkpoint_mu_
  std::atomic<bool> checkpoint_pending_{false};  // set by the hook, cleared by the thread
  std::atomic<int> checkpoint_backfilled_{0};    // WAL frames the last checkpoint copied

  std::mutex close_mu_;
  bool closed_ = false;
};

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

int SqliteTaskStore::Impl::OnWalCommit(void* self, sqlite3*, const char*, int wal_pages) {
  auto* impl = static_cast<Impl*>(self);
  // Frames appended since the last checkpoint: the writer keeps appending while one runs, so
  // the WAL may never be fully copied and restart under steady load; counting from its size
  // alone would then checkpoint back to back, copying the same hot pages again and again.
  int backfilled = impl->checkpoint_backfilled_.load();
  if (wal_pages < backfilled) backfilled = 0;  // the WAL restarted from its beginning
  if (static_cast<size_t>(wal_pages - backfilled) < impl->opts_.checkpoint_pages ||
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
    p.snapshot = p.Appended([&] { protocol::v10::AppendTaskJson(p.text, r.task); });
    p.run = p.Appended([&] { json.Object(r.run); });
    p.a2a_state = p.Appended([&] { json.Object(r.a2a_state); });
    p.state = static_cast<int64_t>(r.task.status.state);
    p.created_at_ms = r.created_at_ms;
    p.updated_at_ms = r.updated_at_ms;
    p.last_sequence = r.last_sequence;
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
    queue_.emplace_back(std::move(p));
  }
  queue_cv_.notify_one();
}

core::Result<size_t> SqliteTaskStore::Impl::PruneEvents(int64_t terminal_before_ms) {
  auto job = std::make_unique<PruneJob>();
  job->terminal_before_ms = terminal_before_ms;
  std::future<core::Result<size_t>> result = job->done.get_future();
  {
    std::lock_guard lock(queue_mu_);
    if (stopping_) return Closed();
    // Checked while the writer runs (not stopping_): a joined thread's id may be reused.
    if (std::this_thread::get_id() == writer_id_) {
      return Internal(
          "SqliteTaskStore::PruneEvents called on the writer thread (from a commit "
          "callback): it would wait for itself");
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

void SqliteTaskStore::Impl::WriterLoop() {
  for (;;) {
    std::vector<Pending> batch;
    std::unique_ptr<PruneJob> prune;
    bool stopping = false;
    {
      std::unique_lock lock(queue_mu_);
      queue_cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and every accepted job is done
      stopping = stopping_;
      if (auto* job = std::get_if<std::unique_ptr<PruneJob>>(&queue_.front())) {
        prune = std::move(*job);
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
    if (prune) {
      RunPruneBatch(std::move(prune), stopping);
    } else {
      ApplyBatch(batch);
    }
  }
}

void SqliteTaskStore::Impl::ApplyBatch(std::vector<Pending>& batch) {
  try {
    if (opts_.batch_hook) opts_.batch_hook(batch.size());
    WriteBatch(batch);
  } catch (const std::exception& e) {
    // A bug or resource exhaustion: nothing of this batch may be reported as written.
    if (sqlite3_get_autocommit(writer_->handle()) == 0) (void)Run(*writer_, "ROLLBACK");
    for (Pending& p : batch) {
      if (p.result) p.result = Internal(std::string("task store writer: ") + e.what());
    }
  }
  for (Pending& p : batch) {
    if (!p.done) continue;
    try {
      p.done(std::move(p.result));
    } catch (const std::exception& e) {
      core::LogError(std::string("task store: commit callback threw: ") + e.what());
    } catch (...) {
      core::LogError("task store: commit callback threw");
    }
  }
}

void SqliteTaskStore::Impl::WriteBatch(std::vector<Pending>& batch) {
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
  if (savepoints || !WriteBatchOnce(batch, false)) (void)WriteBatchOnce(batch, true);
}

bool SqliteTaskStore::Impl::WriteBatchOnce(std::vector<Pending>& batch, bool savepoints) {
  auto fail_succeeded = [&batch](const core::Error& error) {
    for (Pending& p : batch) {
      if (p.result) p.result = error;
    }
  };
  if (auto begun = Run(*writer_, "BEGIN IMMEDIATE"); !begun) {
    fail_succeeded(begun.error());
    return true;
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
    } else {
      write.Bind(11, p.expected_last_sequence);
    }
    const int rc = write.Step();
    // The primary key is the task id; the only other unique index is the dedup key.
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
  return sqlite::WritePushRows(db, p.push_configs,
                               p.outbox);  // push configs and outbox rows of this change
}

core::Error SqliteTaskStore::Impl::Quarantined(core::Error e) {
  std::string task_id;
  for (const auto& [k, v] : e.details)
    if (k == "taskId") task_id = v;
  bool first = false;
  {
    std::lock_guard lock(quarantine_mu_);
    if (quarantine_logged_.size() < 10000) first = quarantine_logged_.insert(task_id).second;
  }
  if (first)
    core::LogError("task store: " + e.message +
                   "; the task is skipped (lists, recovery) and refused (reads) until repaired: "
                   "run `a2ad doctor --data-dir DIR`");
  return e;
}

core::Result<std::optional<TaskRecord>> SqliteTaskStore::Impl::Get(std::string_view task_id) {
  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  auto prepared = db.Prepare(kSelectTask);
  if (!prepared) return std::move(prepared).error();
  Stmt select(*prepared);
  select.Bind(1, task_id);
  const int rc = select.Step();
  if (rc == SQLITE_DONE) return std::optional<TaskRecord>();
  if (rc != SQLITE_ROW) return db.Fail("read task", rc);
  auto record = ReadRecord(select);
  if (!record) return Quarantined(std::move(record).error());
  return std::optional<TaskRecord>(std::move(record).value());
}

core::Result<std::optional<TaskRecord>> SqliteTaskStore::Impl::FindByDedupKey(
    std::string_view key) {
  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  auto prepared = db.Prepare(kSelectByDedupKey);
  if (!prepared) return std::move(prepared).error();
  Stmt select(*prepared);
  select.Bind(1, key);
  const int rc = select.Step();
  if (rc == SQLITE_DONE) return std::optional<TaskRecord>();
  if (rc != SQLITE_ROW) return db.Fail("read task by dedup key", rc);
  auto record = ReadRecord(select);
  if (!record) return Quarantined(std::move(record).error());
  return std::optional<TaskRecord>(std::move(record).value());
}

core::Result<TaskPage> SqliteTaskStore::Impl::List(const TaskQuery& query) {
  auto started = StartPage(query);
  if (!started) return std::move(started).error();
  std::optional<PageCursor> cursor = std::move(started).value();

  // One SQL text per filter combination, so each shape gets its own cached plan and the
  // planner sees plain equality/range terms it can serve from an index.
  std::string where;
  auto add = [&where](const char* term) {
    where += where.empty() ? " WHERE " : " AND ";
    where += term;
  };
  if (!query.context_id.empty()) add("context_id = :ctx");
  if (query.state) add("state = :state");
  if (query.updated_at_or_after_ms) add("updated_at_ms >= :after");
  const std::string count_sql = "SELECT count(*) FROM tasks" + where;
  if (cursor) add("(updated_at_ms, id) < (:cursor_updated, :cursor_id)");
  const std::string page_sql = std::string("SELECT ") + kRecordColumns + " FROM tasks" + where +
                               " ORDER BY updated_at_ms DESC, id DESC LIMIT :limit";
  auto bind_filters = [&](Stmt& stmt) {
    if (!query.context_id.empty()) stmt.Bind(":ctx", query.context_id);
    if (query.state) stmt.Bind(":state", static_cast<int64_t>(*query.state));
    if (query.updated_at_or_after_ms) stmt.Bind(":after", *query.updated_at_or_after_ms);
  };

  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  ReadTransaction txn(db);
  if (auto begun = txn.Begin(); !begun) return std::move(begun).error();

  TaskPage page;
  {
    auto prepared = db.Prepare(count_sql);
    if (!prepared) return std::move(prepared).error();
    Stmt count(*prepared);
    bind_filters(count);
    const int rc = count.Step();
    if (rc != SQLITE_ROW) return db.Fail("count tasks", rc);
    page.total_size = static_cast<int32_t>(count.Int(0));
  }
  {
    auto prepared = db.Prepare(page_sql);
    if (!prepared) return std::move(prepared).error();
    Stmt select(*prepared);
    bind_filters(select);
    if (cursor) {
      select.Bind(":cursor_updated", cursor->updated_at_ms);
      select.Bind(":cursor_id", cursor->task_id);
    }
    // One row more than the page tells whether another page follows.
    select.Bind(":limit", static_cast<int64_t>(query.page_size) + 1);
    bool more = false;
    size_t rows = 0;  // read, readable or not
    int64_t last_updated = 0;
    std::string last_id;
    for (;;) {
      const int rc = select.Step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db.Fail("list tasks", rc);
      if (rows == static_cast<size_t>(query.page_size)) {
        more = true;
        break;
      }
      // The cursor is the row's own columns, so a page that ends with an unreadable row
      // still moves on past it.
      last_updated = select.Int(3);
      last_id = std::string(select.Text(0));
      ++rows;
      auto record = ReadRecord(select);
      if (!record) {
        page.unreadable.push_back(last_id);
        (void)Quarantined(std::move(record).error());
        continue;
      }
      page.records.push_back(std::move(record).value());
    }
    if (more) page.next_page_token = EncodePageToken({last_updated, last_id});
  }
  if (auto committed = txn.Commit(); !committed) return std::move(committed).error();
  return page;
}

core::Result<std::vector<protocol::RunEvent>> SqliteTaskStore::Impl::ReadEvents(
    std::string_view task_id, int64_t after_sequence, size_t limit) {
  std::vector<protocol::RunEvent> events;
  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  if (limit == 0) return events;
  Connection& db = lease->connection();
  auto prepared = db.Prepare(kSelectEvents);
  if (!prepared) return std::move(prepared).error();
  Stmt select(*prepared);
  select.Bind(1, task_id);
  select.Bind(2, after_sequence);
  select.Bind(3,
              static_cast<int64_t>(std::min<size_t>(limit, std::numeric_limits<int64_t>::max())));
  for (;;) {
    const int rc = select.Step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return db.Fail("read events", rc);
    protocol::RunEvent e;
    e.run_id = std::string(task_id);
    e.sequence = select.Int(0);
    e.event_id = std::string(select.Text(1));
    e.type = std::string(select.Text(2));
    e.node_id = std::string(select.Text(3));
    e.timestamp_ms = select.Int(4);
    auto payload = sqlite::DecodeEventPayload(task_id, e.sequence, select.Text(5));
    if (!payload) return Quarantined(std::move(payload).error());
    e.payload = std::move(payload).value();
    events.push_back(std::move(e));
  }
  return events;
}

void SqliteTaskStore::Impl::Close() {
  std::lock_guard close_lock(close_mu_);
  if (closed_) return;
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (writer_thread_.joinable()) {
    if (writer_thread_.get_id() == std::this_thread::get_id()) {
      // A `done` callback called Close(): joining would deadlock (task_store.hpp forbids it).
      core::LogError("SqliteTaskStore::Close called from a commit callback");
      std::abort();
    }
    writer_thread_.join();
  }
  StopCheckpointer();
  readers_.Close();
  writer_.reset();  // the last connection to close checkpoints the WAL
  closed_ = true;
}

// ---- SqliteTaskStore ---------------------------------------------------------------------

SqliteTaskStore::SqliteTaskStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteTaskStore::~SqliteTaskStore() { Close(); }

core::Result<std::unique_ptr<SqliteTaskStore>> SqliteTaskStore::Open(const std::string& path,
                                                                     SqliteOptions opts) {
  if (path.empty() || path == ":memory:") {
    return core::Error(core::ErrorCode::kInvalidParams,
                       "sqlite: a database file path is required (not '" + path + "')");
  }
  if (opts.max_batch_commits < 1 || opts.reader_connections < 1 || opts.prune_batch_events < 1 ||
      opts.busy_timeout_ms < 0) {
    return core::Error(core::ErrorCode::kInvalidParams,
                       "sqlite: max_batch_commits, reader_connections and prune_batch_events "
                       "must be at least 1, busy_timeout_ms not negative");
  }
  if (sqlite3_threadsafe() == 0) {
    return Internal("sqlite: the linked libsqlite3 is built without thread support");
  }
  auto writer =
      Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, opts.busy_timeout_ms);
  if (!writer) return std::move(writer).error();
  Connection& db = **writer;
  if (auto configured = ConfigureReadWrite(db, opts.synchronous_full); !configured) {
    return std::move(configured).error();
  }
  if (opts.migrate_on_open) {
    if (auto migrated = sqlite::MigrateToLatest(db); !migrated) return std::move(migrated).error();
  } else {
    auto version = sqlite::CurrentVersion(db);
    if (!version) return std::move(version).error();
    if (*version > sqlite::LatestVersion()) return sqlite::NewerSchemaError(path, *version);
    if (*version < sqlite::LatestVersion()) {
      return Internal("sqlite '" + path + "': database schema version " + std::to_string(*version) +
                      " is older than " + std::to_string(sqlite::LatestVersion()) +
                      "; run `a2ad migrate`");
    }
  }
  // What the writer connection really runs with (PRAGMA synchronous reads back 1 or 2).
  std::string synchronous = "unknown";
  if (auto prepared = db.Prepare("PRAGMA synchronous")) {
    Stmt read(*prepared);
    if (read.Step() == SQLITE_ROW) {
      static constexpr const char* kLevels[] = {"off", "normal", "full", "extra"};
      const int64_t level = read.Int(0);
      if (level >= 0 && level <= 3) synchronous = kLevels[level];
    }
  }
  auto impl = std::make_unique<Impl>(path, std::move(opts), std::move(writer).value());
  impl->Start();
  auto store = std::unique_ptr<SqliteTaskStore>(new SqliteTaskStore(std::move(impl)));
  store->synchronous_ = std::move(synchronous);
  return store;
}

core::Result<int> SqliteTaskStore::Migrate(const std::string& path) {
  if (path.empty() || path == ":memory:") {
    return core::Error(core::ErrorCode::kInvalidParams,
                       "sqlite: a database file path is required (not '" + path + "')");
  }
  auto db = Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                             SqliteOptions{}.busy_timeout_ms);
  if (!db) return std::move(db).error();
  if (auto configured = ConfigureReadWrite(**db, std::nullopt); !configured) {
    return std::move(configured).error();
  }
  return sqlite::MigrateToLatest(**db);
}

int SqliteTaskStore::LatestSchemaVersion() { return sqlite::LatestVersion(); }

void SqliteTaskStore::Commit(TaskCommit commit, CommitCallback done) {
  impl_->Commit(std::move(commit), std::move(done));
}

core::Result<std::optional<TaskRecord>> SqliteTaskStore::Get(std::string_view task_id) {
  return impl_->Get(task_id);
}

core::Result<TaskPage> SqliteTaskStore::List(const TaskQuery& query) { return impl_->List(query); }

core::Result<std::optional<TaskRecord>> SqliteTaskStore::FindByDedupKey(std::string_view key) {
  return impl_->FindByDedupKey(key);
}

core::Result<std::vector<protocol::RunEvent>> SqliteTaskStore::ReadEvents(std::string_view task_id,
                                                                          int64_t after_sequence,
                                                                          size_t limit) {
  return impl_->ReadEvents(task_id, after_sequence, limit);
}

core::Result<size_t> SqliteTaskStore::PruneEvents(int64_t terminal_before_ms) {
  return impl_->PruneEvents(terminal_before_ms);
}

void SqliteTaskStore::Close() { impl_->Close(); }

}  // namespace a2ad::storage
