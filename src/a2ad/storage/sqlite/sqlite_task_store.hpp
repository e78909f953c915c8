#pragma once
// SqliteTaskStore: the embedded default TaskStore, on SQLite 3 in WAL mode
// (ARCHITECTURE.md "Durability model" and "Concurrency model"). Contract: task_store.hpp.
// The schema and its migrations are described in sqlite_schema.hpp.
//
// Writes: ONE writer connection, used by a dedicated writer thread fed by a FIFO queue, so
// commits are applied in call order. When the writer is idle and nothing is queued, Commit
// writes the commit itself on the calling thread (a batch of one; not with synchronous_full,
// whose fsync would hold the caller); commits arriving meanwhile queue for the writer
// thread, which starts once the caller is done. The writer takes every queued commit (up to
// SqliteOptions::max_batch_commits, and up to a queued prune job: see Retention) and applies them
// in one transaction, each inside its own SAVEPOINT: a commit that fails its sequence check
// (kConflict) or a storage step rolls back to its savepoint alone, the rest of the batch still
// commits. The callbacks of a batch run on the writer thread (or, for a commit written by its
// caller, on the caller's thread before Commit returns), in call order, after the outer COMMIT
// (or with the error); if the outer COMMIT fails, every commit of the batch that had succeeded gets
// kInternal (the ones that had already failed keep their own error). Precondition checks
// and JSON serialization run on the calling thread, so the writer does only SQL.
//
// Reads: Get/List/ReadEvents are thread-safe. They borrow one of a small pool of
// read-only connections (SqliteOptions::reader_connections, opened lazily; callers wait
// when all are busy). A pool rather than one connection per calling thread keeps file
// descriptors and page caches bounded however many threads call, and lets Close() release
// every connection. In WAL mode each read transaction sees every transaction committed
// before it began, so a read sees every commit whose callback has already run. List reads
// the count and the page in one read transaction. TryGet is Get that never waits: it takes
// only an idle connection (never opens one), with a busy timeout of 0 for its statement, so
// that a read that would have to wait for a lock (in WAL mode only while another process
// recovers the WAL after a crash) answers nullopt at once instead of after busy_timeout_ms;
// the caller's Get then waits, off the I/O thread.
//
// Retention (PruneEvents): a prune is a job in the same FIFO queue as the commits, so it
// starts after every commit accepted before it. Each turn of the writer runs one prune
// batch: ONE transaction that deletes at most SqliteOptions::prune_batch_events events
// (whole tasks, or a prefix of a task's log when it is longer than what is left of the
// batch) and advances tasks.pruned_through; if candidates remain, the job goes back to the
// END of the queue, so commits accepted meanwhile are applied between two batches. The
// candidates come from the partial index tasks_prunable (sqlite_schema.hpp, version 2):
// only terminal tasks that still have events, oldest first, so the cost of a prune is
// proportional to what it deletes. The calling thread waits for the last batch.
//
// Durability: see SqliteOptions::synchronous_full.
//
// Thread safety: every TaskStore member may be called from any thread (PruneEvents and
// Close not from a commit callback); the static functions too (each opens its own
// connection).
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/sql.hpp"
#include "a2ad/storage/sqlite/sqlite_migration.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

namespace sqlite {
class Connection;
}

struct SqliteOptions {
  /// false (default): PRAGMA synchronous=NORMAL. In WAL mode a commit whose callback ran
  /// survives a crash or SIGKILL of the process, but an OS crash or power loss may lose the
  /// most recent commits (the database stays consistent). true: synchronous=FULL, the WAL
  /// is fsynced at every batch COMMIT, so acknowledged commits also survive power loss, at
  /// the price of one fsync per batch.
  bool synchronous_full = false;
  /// PRAGMA busy_timeout of every connection (another process, e.g. `a2ad migrate`, holding
  /// the write lock; WAL checkpoints).
  int busy_timeout_ms = 5000;
  /// Most commits applied in one transaction. At least 1.
  size_t max_batch_commits = 256;
  /// Size of the read-only connection pool. At least 1.
  size_t reader_connections = 4;
  /// Most events one PruneEvents batch (transaction) deletes. At least 1.
  size_t prune_batch_events = 5000;
  /// WAL size, in pages, at which a background thread with its own connection checkpoints
  /// the WAL into the database (PASSIVE: it never blocks the writer or readers), so that
  /// copying pages and the checkpoint's fsyncs stay off the writer thread and out of commit
  /// latency. Under steady load those never copy the frames appended while they run, so past
  /// 4x this size the writer copies that remainder itself and the WAL restarts: the WAL stays
  /// near 4x this size (its file is cut back to 64 MB after a burst). 0: SQLite's automatic
  /// checkpoint, run by the writer after the commit that takes the WAL past 1000 pages.
  size_t checkpoint_pages = 1000;
  /// Open() applies pending migrations. If false, a database below the latest version is
  /// refused (run `a2ad migrate`).
  bool migrate_on_open = true;
  /// Extensions' own tables (sqlite_migration.hpp): Open() brings each component to its
  /// latest version after the core schema, in this order (with migrate_on_open false, a
  /// component below its latest version is refused like the core schema).
  std::vector<sqlite::ComponentMigrations> components;

  // ---- fault injection and observation for tests (STYLE.md #5). Run on the writer thread.
  /// Consulted once per commit that passed its checks, after its rows were written inside
  /// its savepoint. true: that commit is rolled back to its savepoint and fails with
  /// kInternal; the rest of the batch is unaffected.
  std::function<bool()> fail_commit_hook;
  /// Consulted once per batch just before the outer COMMIT. true: the batch transaction is
  /// rolled back as if COMMIT had failed.
  std::function<bool()> fail_batch_hook;
  /// Called with the number of commits of each batch before it is applied. A test may block
  /// in it to let commits queue up behind the writer.
  std::function<void(size_t batch_size)> batch_hook;
  /// Called after each batch of commits is settled, with its size and how long writing it
  /// took (metrics).
  std::function<void(size_t batch_size, double seconds)> batch_observer;
  /// Called after each PruneEvents batch is committed, with the number of events it deleted,
  /// before the next batch is queued. A test may block in it to let commits queue up.
  std::function<void(size_t events_deleted)> prune_batch_hook;
  /// Consulted once per PruneEvents batch just before its COMMIT. true: that batch is rolled
  /// back as if COMMIT had failed, and PruneEvents returns kInternal.
  std::function<bool()> fail_prune_batch_hook;
};

class SqliteTaskStore final : public TaskStore {
 public:
  /// Opens (creating if missing) the database at `path`, applies PRAGMA journal_mode=WAL,
  /// synchronous, busy_timeout and foreign_keys=ON, migrates it (see
  /// SqliteOptions::migrate_on_open), and starts the writer thread.
  /// Errors: kInvalidParams for an empty path, ":memory:" or bad options; kInternal if the
  /// file cannot be opened, WAL cannot be enabled, a migration fails, or the schema is
  /// newer than LatestSchemaVersion() (the message says so and names both versions).
  static core::Result<std::unique_ptr<SqliteTaskStore>> Open(const std::string& path,
                                                             SqliteOptions opts = {});

  /// Brings the database at `path` (created if missing, left in WAL mode) to
  /// LatestSchemaVersion() and returns the resulting version. For `a2ad migrate`; may run
  /// while a server has the database open (it waits up to the default busy timeout).
  /// Same errors as Open().
  static core::Result<int> Migrate(const std::string& path);

  /// The schema version this build writes and reads.
  static int LatestSchemaVersion();

  /// Brings the tables of extension `component` in the database at `path` to the last
  /// version of `migrations` (sqlite_migration.hpp), after bringing the core schema to
  /// LatestSchemaVersion(); returns the component's resulting version. For an extension's
  /// `migrate`; Open() does the same for SqliteOptions::components. May run while a server
  /// has the database open. Errors: those of Migrate(); kInvalidParams for an empty name or
  /// versions not 1..N in order; kInternal if the database holds a newer version of the
  /// component (nothing changed) or a step fails (rolled back; earlier steps stay).
  static core::Result<int> MigrateComponent(const std::string& path, std::string_view component,
                                            const std::vector<sqlite::Migration>& migrations);

  /// The version of `component` recorded in the database at `path` (0: never migrated).
  static core::Result<int> ComponentVersion(const std::string& path, std::string_view component);

  /// PRAGMA synchronous of the writer connection as SQLite reports it after Open:
  /// "normal" or "full" (SqliteOptions::synchronous_full).
  const std::string& synchronous() const { return synchronous_; }

  /// Calls Close().
  ~SqliteTaskStore() override;

  /// After Close(), `done` runs inline on the calling thread with kUnavailable.
  void Commit(TaskCommit commit, CommitCallback done) override;
  core::Result<std::optional<TaskRecord>> Get(std::string_view task_id) override;
  /// See TaskStore and "Reads" above.
  std::optional<core::Result<std::optional<TaskRecord>>> TryGet(std::string_view task_id,
                                                                bool with_run) override;
  core::Result<std::optional<TaskRecord>> FindByDedupKey(std::string_view tenant,
                                                         std::string_view key) override;
  core::Result<TaskPage> List(const TaskQuery& query) override;
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                           int64_t after_sequence,
                                                           size_t limit) override;
  /// See TaskStore and "Retention" above. A prune in progress when Close() is called stops
  /// after its current batch and returns kUnavailable. Called on the writer thread (from a
  /// commit callback): kInternal, since waiting would deadlock.
  core::Result<size_t> PruneEvents(int64_t terminal_before_ms) override;
  core::Result<std::optional<std::vector<std::string>>> UnfinishedRunsWaitingFor(
      std::string_view tenant, std::string_view name) override;
  core::Result<TaskPage> ListRunnable(std::string_view after_id, size_t limit) override;
  core::Result<std::vector<Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                            size_t limit, std::string_view holder) override;
  /// Drains the queue (every accepted commit is applied and its callback run), stops the
  /// writer thread, waits for in-flight reads, and closes every connection.
  void Close() override;

  // ---- an extension's own tables (SqliteOptions::components) ----------------------------
  /// What a component runs on a connection (sqlite_connection.hpp); an error rolls back.
  /// SqliteBackend hands it to extensions as storage/sql.hpp's handle (sqlite_sql.hpp).
  using ComponentJob = std::function<core::Result<void>(sqlite::Connection&)>;
  /// Runs `job` on the writer thread in a transaction of its own (BEGIN IMMEDIATE .. COMMIT),
  /// queued in call order with Commit and PruneEvents: it sees every commit accepted before
  /// it. An error from `job` or from COMMIT rolls the transaction back and is given to `done`,
  /// which runs once afterwards on the writer thread and must not block. After Close(),
  /// `done` runs inline with kUnavailable. Thread-safe.
  void Write(ComponentJob job, CommitCallback done);
  /// Runs `job` on a pooled reader connection inside one read transaction (one snapshot);
  /// blocks the caller. kUnavailable after Close(). Thread-safe.
  core::Result<void> Read(const ComponentJob& job);
  /// The commit participant (storage/sql.hpp): its statements run on the writer connection,
  /// inside the batch's transaction, through a sql::Tx.
  using CommittedTask = storage::CommittedTask;
  using CommitParticipant = storage::CommitParticipant;
  void SetCommitParticipant(CommitParticipant participant);

  /// What the metrics count (app/metrics_setup.hpp), read in one read transaction: tasks by
  /// state (protocol::TaskState), the event log's rows, the push outbox's pending and dead
  /// rows. Blocking (a pooled reader): call it off the I/O threads.
  struct Counts {
    std::map<int64_t, int64_t> tasks_by_state;
    int64_t events = 0;
    int64_t outbox_pending = 0;
    int64_t outbox_dead = 0;
  };
  core::Result<Counts> Count();

  /// Whether the database can be written now: one real write (its header's user_version set
  /// to what it is), queued on the writer like a commit; `done` gets the error (with its
  /// `sqlite` detail) or Ok, on the writer thread. For readiness probes.
  void CheckWritable(CommitCallback done);

 private:
  class Impl;
  explicit SqliteTaskStore(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::string synchronous_ = "unknown";
};

}  // namespace a2ad::storage
