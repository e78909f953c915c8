#pragma once
// Internal to storage_sqlite, included only by the files that implement SqliteTaskStore:
// SqliteTaskStore::Impl, its writer queue (Pending, PruneJob, Job) and the small helpers
// those files share. The contract, the write path, the reads and retention are described
// in sqlite_task_store.hpp; this header keeps them apart in files:
//   sqlite_task_store.cpp    Open, Migrate, Start, Close, the public methods, the helpers below
//   sqlite_writer.cpp        Commit (on the calling thread), the writer thread and its batches
//                            with savepoints, the WAL checkpointer thread
//   sqlite_retention.cpp     PruneEvents and its batches (jobs of the writer queue)
//   sqlite_task_queries.cpp  Get, FindByDedupKey, List, ReadEvents (reader connections)
//   sqlite_component_jobs.cpp  Write and Read of extensions' tables
//   sqlite_reader_pool.hpp   the pool of reader connections
//
// Thread safety: Commit, PruneEvents, the reads and Close may be called from any thread
// (PruneEvents and Close not from a commit callback, see sqlite_task_store.hpp). Once
// Start() has run, writer_ and every function of the writer thread (WriterLoop and what it
// calls: batches, prune batches, WriteCommit) belong to the writer thread; the queue and
// stopping_ are guarded by queue_mu_, the checkpointer's state by checkpoint_mu_ (or is
// atomic), quarantine_logged_ by quarantine_mu_. The helpers are pure or use only the
// connection they are given (one thread at a time, sqlite_connection.hpp).
#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/push_store.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_reader_pool.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

namespace sqlite {

/// kUnavailable "task store is closed": a call after Close().
core::Error Closed();

/// kInternal with `message`.
core::Error Internal(std::string message);

// Runs one cached statement that returns no rows (BEGIN, SAVEPOINT, COMMIT, ...).
core::Result<void> Run(Connection& db, const char* sql);

// Pragmas of every read-write connection. journal_mode is persistent in the file; the
// others are per connection.
core::Result<void> ConfigureReadWrite(Connection& db, std::optional<bool> synchronous_full);
/// One real write, rolled into a transaction of its own (the header's user_version set to
/// what it is): an error when the database cannot be written (read-only file or directory,
/// full disk, I/O error), with the `sqlite` detail of the failing step.
core::Result<void> ProbeWritable(Connection& db);

}  // namespace sqlite

class SqliteTaskStore::Impl {
 public:
  Impl(std::string path, SqliteOptions opts, std::unique_ptr<sqlite::Connection> writer)
      : path_(std::move(path)),
        opts_(std::move(opts)),
        writer_(std::move(writer)),
        readers_(path_, opts_.reader_connections, opts_.busy_timeout_ms) {}

  ~Impl() { Close(); }

  void Start();  // the checkpointer, then the writer thread

  void Commit(TaskCommit commit, CommitCallback done);
  core::Result<std::optional<TaskRecord>> Get(std::string_view task_id);
  /// Get's statement on `db`; `rc` is its step's result code.
  core::Result<std::optional<TaskRecord>> GetOn(sqlite::Connection& db, std::string_view task_id,
                                                bool with_run, int& rc);
  core::Result<std::optional<TaskRecord>> FindByDedupKey(std::string_view tenant,
                                                         std::string_view key);
  std::optional<core::Result<std::optional<TaskRecord>>> TryGet(std::string_view task_id,
                                                                bool with_run);
  core::Result<TaskPage> List(const TaskQuery& query);
  core::Result<TaskPage> ListRunnable(std::string_view after_id, size_t limit);
  core::Result<std::vector<Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                            size_t limit);
  core::Result<std::vector<std::string>> WaitingOnEvent(std::string_view tenant,
                                                        std::string_view name);
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                           int64_t after_sequence, size_t limit);
  core::Result<size_t> PruneEvents(int64_t terminal_before_ms);
  void Write(ComponentJob job, CommitCallback done);
  core::Result<void> Read(const ComponentJob& job);
  void SetCommitParticipant(CommitParticipant participant);
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
    Span id, context_id, skill_id, dedup_key, tenant, owner, snapshot, run, a2a_state;
    Span waits_for_event;              // empty: NULL (stored_records.hpp EventAwaited)
    std::optional<int64_t> wake_at_ms;  // nullopt: NULL (stored_records.hpp ParkedUntil)
    int64_t state = 0;
    int64_t created_at_ms = 0;
    int64_t updated_at_ms = 0;
    int64_t last_sequence = -1;
    int64_t expected_last_sequence = -1;
    bool releases_dedup_key = false;  // TaskCommit::releases_dedup_key
    int64_t dedup_takeover_before_ms = 0;  // TaskCommit::dedup_takeover_before_ms
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

  // One Write() of a component (sqlite_task_store.hpp).
  struct WriteJob {
    ComponentJob job;
    CommitCallback done;
  };

  // The writer's queue: commits, prune jobs and components' writes, in call order.
  using Job = std::variant<Pending, std::unique_ptr<PruneJob>, std::unique_ptr<WriteJob>>;

  void WriterLoop();
  // Background checkpoints (SqliteOptions::checkpoint_pages): the writer's WAL hook wakes
  // the checkpointer thread once the WAL has grown past the threshold.
  void StartCheckpointer();
  void CheckpointerLoop();
  static int OnWalCommit(void* self, sqlite3* db, const char* schema, int wal_pages);
  void StopCheckpointer();
  void RunPruneBatch(std::unique_ptr<PruneJob> job, bool stopping);
  void RunWriteJob(WriteJob& job);
  core::Result<PruneBatch> WritePruneBatch(int64_t terminal_before_ms);
  // A commit written on the caller's thread (the writer idle, nothing queued; Commit).
  void WriteOnCaller(Pending p);
  // `begun`: the transaction has been begun (BEGIN IMMEDIATE) for the batch already.
  void ApplyBatch(std::vector<Pending>& batch, bool begun = false);
  void WriteBatch(std::vector<Pending>& batch, bool begun);
  // Writes the batch's commits in one transaction; see the comment at its definition.
  // Returns false (transaction rolled back, nothing reported) when a commit failed after
  // writing some of its rows without savepoints: the caller writes the batch again with them.
  bool WriteBatchOnce(std::vector<Pending>& batch, bool savepoints, bool begun);
  // Copies what the last background checkpoint left, so that the next transaction restarts
  // the WAL (OnWalCommit); skipped while the checkpointer runs.
  void CheckpointForRestart(sqlite3* db);
  core::Result<void> ApplyInSavepoint(Pending& p, bool& aborted);
  // The commit participant's look at the commits of `batch` that were written, before COMMIT.
  void TellParticipant(std::vector<Pending>& batch);
  // `wrote` becomes true once a row of `p` has been written (a failure after that leaves
  // partial rows in the transaction; one before it leaves nothing).
  core::Result<void> WriteCommit(Pending& p, bool& wrote);

  const std::string path_;
  const SqliteOptions opts_;
  std::unique_ptr<sqlite::Connection> writer_;  // used by whoever set writing_ (under queue_mu_)
  sqlite::ReaderPool readers_;

  std::mutex quarantine_mu_;
  std::unordered_set<std::string> quarantine_logged_;  // task ids (bounded)

  CommitParticipant participant_;  // set under queue_mu_ before serving; used by the writer

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Job> queue_;
  bool stopping_ = false;
  bool writing_ = false;      // the writer connection is in use (by the writer thread or a caller)
  bool restart_due_ = false;  // a caller's commit left the WAL's restart checkpoint to the writer
  std::thread writer_thread_;

  // Which store's writer connection the current thread is using: the writer thread's, or a
  // caller's writing its own commit (Commit). Commit callbacks run there, so a call that
  // waits for the writer (PruneEvents, Close) from one would wait for itself.
  static inline thread_local const Impl* writer_here_ = nullptr;
  class WriterHere {
   public:
    explicit WriterHere(const Impl* impl) : before_(std::exchange(writer_here_, impl)) {}
    ~WriterHere() { writer_here_ = before_; }
    WriterHere(const WriterHere&) = delete;
    WriterHere& operator=(const WriterHere&) = delete;

   private:
    const Impl* before_;
  };
  bool WritingHere() const { return writer_here_ == this; }

  std::unique_ptr<sqlite::Connection> checkpointer_;  // used only by checkpoint_thread_
  std::thread checkpoint_thread_;
  std::mutex checkpoint_mu_;
  std::condition_variable checkpoint_cv_;
  bool checkpoint_wanted_ = false;               // guarded by checkpoint_mu_
  bool checkpoint_stop_ = false;                 // guarded by checkpoint_mu_
  std::atomic<bool> checkpoint_pending_{false};  // set by the hook, cleared by the thread
  std::atomic<int> checkpoint_backfilled_{0};    // WAL frames the last checkpoint copied
  // Past this many times checkpoint_pages the writer checkpoints itself (OnWalCommit).
  static constexpr size_t kWalRestartFactor = 4;

  std::mutex close_mu_;
  bool closed_ = false;
};

}  // namespace a2ad::storage
