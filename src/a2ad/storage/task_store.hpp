#pragma once
// TaskStore: the durable home of every task (ARCHITECTURE.md "Durability model").
// Per task it keeps the snapshot (the fold of the log, kept for fast reads) and the
// append-only event log of RunEventDocs with a gap-free per-task sequence starting at 0.
// Snapshot and appended events are written in ONE transaction.
//
// Implementations: storage/memory (tests), storage/sqlite (embedded default).
// Only app/ names a concrete class (STYLE.md #2).
//
// Tenants: every task belongs to one tenant (TaskRecord::tenant, set at creation and never
// changed). Lists are always scoped to one tenant (TaskQuery::tenant) unless the server scans
// for itself (TaskQuery::all_tenants); idempotency keys are unique per tenant. Get and
// ReadEvents take a task id alone (ids are unique across tenants): deciding who may see a
// task is the service's job (tasks::TaskService answers "not found" for another tenant's).
//
// Threads: every member is thread-safe. Commit must not block for long (it queues, applies
// in memory, or, SQLite with an idle writer, writes one transaction without waiting for any
// lock): TaskService calls it under a task's lock, which is what orders one task's commits.
// Every other call may block (a network database, a busy SQLite file): TaskService never
// calls them on an I/O thread nor under a task's lock; it runs them on its read executor
// (tasks/read_executor.hpp).
#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/run_snapshot.hpp"
#include "a2ad/storage/push_store.hpp"

namespace a2ad::storage {

/// TaskRecord::tenant of a task created without a tenant (and of every task stored before
/// tenants existed); the tenant of protocol::CallContext's anonymous principal.
inline constexpr const char* kDefaultTenant = protocol::kDefaultTenant;
/// TaskRecord::owner of a task created without authentication.
inline constexpr const char* kAnonymousOwner = protocol::kAnonymousPrincipal;

/// The stored snapshot of one task plus the bookkeeping the service needs.
struct TaskRecord {
  protocol::Task task;   // full snapshot: status, history, artifacts, metadata, context
  std::string skill_id;  // which skill/workflow runs this task
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;   // = task.status.timestamp_ms of the last transition
  int64_t last_sequence = -1;  // sequence of the newest event in the log; -1: empty log
  /// The OpenWOP RunSnapshot (protocol/run_snapshot.hpp) folded from the same log
  /// (tasks/run_projection.hpp); empty() for a task no run event touched yet.
  protocol::RunSnapshot run;
  /// Set at creation for idempotent creation (the same caller's same A2A messageId or
  /// Idempotency-Key): unique among the tasks of `tenant`; "" for none.
  std::string dedup_key;
  /// The tenant the task belongs to (protocol::CallContext::tenant() of its creator); tasks
  /// stored before tenants existed are "default". Written by the creating commit only: a
  /// later commit's tenant and owner are ignored (a task never changes hands).
  std::string tenant = kDefaultTenant;
  /// The principal that created the task (CallContext::caller()); "anonymous" for tasks
  /// created without authentication (and for every task stored before owners existed).
  std::string owner = kAnonymousOwner;
  friend bool operator==(const TaskRecord&, const TaskRecord&) = default;
};

/// The W3C traceparent a run keeps, run.metadata.openwop.traceparent (the span of the request
/// that started it, core/trace.hpp); "" for none or one that is not valid.
std::string RunTraceparent(const TaskRecord& record);

/// One atomic change of one task.
struct TaskCommit {
  TaskRecord record;  // replaces the stored snapshot (or creates it)
  /// The same record shared with the caller instead (TaskService keeps it as the task's
  /// newest state), so that a commit does not copy it; when set, `record` is not used.
  std::shared_ptr<const TaskRecord> shared_record;
  std::vector<protocol::RunEvent> events;  // appended; sequences are expected+1, expected+2, ...
  int64_t expected_last_sequence = -1;     // -1: the task must not exist yet
  // Push notifications (push_store.hpp), written in the same transaction:
  std::vector<PushConfigRecord> push_configs;  // upserted (inline configs of message/send)
  std::vector<OutboxRow> outbox;               // inserted (pending)
  /// The stored record's dedup key is given back (the record's is now ""): another task of
  /// the tenant may be created with it (tasks/accepted_messages.hpp: the retry window of a
  /// first message ends when its sender sends the task another).
  bool releases_dedup_key = false;
  /// Creating commits only: the idempotency retention window (accepted_messages.hpp). When
  /// > 0 and the record's dedup key is held by a task of the tenant created before this time
  /// (created_at_ms < dedup_takeover_before_ms), that task gives the key back (its stored key
  /// is cleared) and this task takes it, in the same transaction; a key held by a newer task
  /// is kConflict as always. 0: never taken over. Costs nothing unless the key is in use.
  int64_t dedup_takeover_before_ms = 0;
  /// Several replicas (cluster.hpp); engines without leases ignore both. Creating commits: the
  /// committing process takes the run's lease at epoch 1. Other commits: > 0, the epoch of the
  /// execution writing it, refused (kConflict, reason "fenced") once the lease moved on.
  bool take_lease = false;
  int64_t fence_epoch = 0;

  /// The record this commit writes (`shared_record` if set, else `record`).
  const TaskRecord& Record() const { return shared_record ? *shared_record : record; }
};

/// Filters of ListTasks (WIRE.md §11.2). Results are ordered by updated_at_ms descending,
/// then task id descending.
struct TaskQuery {
  /// Required: only this tenant's tasks match (an empty tenant is kInvalidParams), unless
  /// all_tenants is set.
  std::string tenant = kDefaultTenant;
  /// Every tenant's tasks: for the server's own scans (recovery after a restart), never for
  /// a request. `tenant` is then ignored.
  bool all_tenants = false;
  std::string owner;                         // empty: any
  std::string context_id;                    // empty: any
  std::string skill_id;                      // empty: any (the workflow, a console's filter)
  std::optional<protocol::TaskState> state;  // nullopt: any
  std::optional<int64_t> updated_at_or_after_ms;
  int32_t page_size = 50;  // caller validates 1..100
  std::string page_token;  // "" for the first page; else from TaskPage
};

struct TaskPage {
  std::vector<TaskRecord> records;
  std::string next_page_token;  // "" when this is the last page
  int32_t total_size = 0;       // number of tasks matching the filters (ignoring the cursor),
                                // unreadable ones included
  /// Tasks of this page whose stored record cannot be read (damaged text, see
  /// `a2ad doctor`): left out of `records`, so one bad row never fails a list. They count
  /// toward the page size, so a page may hold fewer records than asked for even when more
  /// follow.
  std::vector<std::string> unreadable;
};

/// A parked run's wake time (stored_records.hpp ParkedUntil, `tasks.wake_at_ms`).
struct Wake {
  std::string task_id;
  int64_t at_ms = 0;
  int64_t lease_epoch = 0;  // listed for a lease holder: the epoch it holds the run's lease at
};

class TaskStore {
 public:
  virtual ~TaskStore() = default;

  using CommitCallback = std::function<void(core::Result<void>)>;

  /// Writes `commit` atomically. Preconditions: events have run_id == record.task.id and
  /// consecutive sequences starting at expected_last_sequence + 1; record.last_sequence equals
  /// the last event's sequence (or expected_last_sequence when events is empty).
  /// Errors (through `done`): kConflict if the stored last sequence differs from
  /// expected_last_sequence (including "already exists" for -1); kInvalidParams if the
  /// preconditions are violated; kUnavailable after Close(); kInternal on storage failure.
  /// Nothing is written on error. `done` runs exactly once, after the transaction is
  /// committed (or failed), on an unspecified thread (SQLite: its writer thread, or the
  /// caller's before Commit returns); it must not block. Commits are applied in call order.
  /// Thread-safe.
  virtual void Commit(TaskCommit commit, CommitCallback done) = 0;

  /// The task's record, or nullopt if unknown. Thread-safe; sees every commit whose `done`
  /// has run. A record that is stored but cannot be read (damaged text) is kDataCorrupt with
  /// a `taskId` detail: it is quarantined in place, the rest of the store is unaffected.
  virtual core::Result<std::optional<TaskRecord>> Get(std::string_view task_id) = 0;

  /// Get's answer when the store can give it without waiting, else nullopt: for the I/O
  /// threads, which hand a read that would wait to the read executor (tasks/read_executor.hpp)
  /// instead. Without `with_run` the store may leave TaskRecord::run empty (and unchecked),
  /// for a caller that needs the A2A task only (tasks/get). SQLite answers from an idle reader
  /// connection and gives up at once, rather than wait, when every reader is lent out or a lock is
  /// held (sqlite_task_store.hpp "Reads"); memory always answers; the default (a network database)
  /// never does. Thread-safe.
  virtual std::optional<core::Result<std::optional<TaskRecord>>> TryGet(std::string_view,
                                                                        bool /*with_run*/) {
    return std::nullopt;
  }

  using GetCallback = std::function<void(core::Result<std::optional<TaskRecord>>)>;
  /// Whether the store takes QueueGet (a network database: PostgreSQL).
  virtual bool QueuesGets() const { return false; }
  /// Get without a thread of the caller's waiting (only when QueuesGets()): `done` gets Get's
  /// answer, once, on a thread of the store's (or before QueueGet returns, with kUnavailable,
  /// after Close()). Gets queued together are sent together: one round trip and one thread
  /// wake-up for many, where Get costs a read thread's per read. Gets are answered in the order
  /// they were queued. Thread-safe.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): the stores that queue keep both
  virtual void QueueGet(std::string /*task_id*/, GetCallback done) {
    done(core::Error(core::ErrorCode::kInternal, "this store queues no gets"));
  }

  /// The task of `tenant` created with `dedup_key` (TaskRecord::dedup_key), or nullopt.
  /// Creating a second task of one tenant with a key that tenant already used fails with
  /// kConflict (unless the holder is older than TaskCommit::dedup_takeover_before_ms);
  /// another tenant may use the same key. Thread-safe.
  virtual core::Result<std::optional<TaskRecord>> FindByDedupKey(std::string_view tenant,
                                                                 std::string_view key) = 0;

  /// A page of tasks matching `query`. kInvalidParams for a malformed page_token or an empty
  /// tenant (without all_tenants). Records that cannot be read are skipped and named in
  /// TaskPage::unreadable, never an error.
  virtual core::Result<TaskPage> List(const TaskQuery& query) = 0;

  /// Events of `task_id` with sequence > after_sequence, ascending, at most `limit`.
  /// Unknown task: empty vector. An event that cannot be read: kDataCorrupt (taskId detail).
  virtual core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                                   int64_t after_sequence,
                                                                   size_t limit) = 0;

  /// Retention: deletes the logged events of every task whose snapshot is in a terminal state
  /// (completed, failed, canceled, rejected) and whose updated_at_ms < terminal_before_ms.
  /// Snapshots (TaskRecord, including last_sequence) are kept, so Get and List are unchanged;
  /// ReadEvents of such a task returns an empty vector afterwards. Sequences are unaffected: a
  /// later commit to such a task still expects last_sequence and appends last_sequence + 1
  /// (those new events are pruned again by a later call if the task still qualifies).
  /// Returns the number of events deleted. Runs through the writer (ordered after commits
  /// already accepted) in bounded batches so it never holds the write lock for long; commits
  /// accepted meanwhile interleave with the batches, and a reader may see a task's log
  /// partly pruned (a suffix of it) until the call returns. Errors: kUnavailable after (or
  /// during) Close(); kInternal on storage failure. Batches finished before an error stay
  /// done; calling again resumes. Thread-safe; blocks the caller (meant for a background
  /// timer, not request handlers); must not be called from a `done` callback.
  virtual core::Result<size_t> PruneEvents(int64_t terminal_before_ms) = 0;

  /// Ids of `tenant`'s unfinished tasks whose run, as last committed, is paused until the
  /// event `name` (stored_records.hpp EventAwaited, indexed by the SQL stores), so that a
  /// posted event finds the runs it resumes whether or not an execution (on any replica)
  /// holds them. nullopt: the store keeps no such index (the engine's own then serves).
  /// Blocks the caller.
  virtual core::Result<std::optional<std::vector<std::string>>> UnfinishedRunsWaitingFor(
      std::string_view /*tenant*/, std::string_view /*name*/) {
    return std::optional<std::vector<std::string>>{};
  }

  /// The unfinished tasks of every tenant that are not parked (stored_records.hpp
  /// ParkedUntil: none is stored for them), by id after `after_id` ("" from the first), up to
  /// `limit` rows: what needs an execution after a restart. A parked run is not listed, so a
  /// restart costs the runs in flight, not the runs waiting. next_page_token is the last id
  /// read when more may follow (the next call's `after_id`), else "". Blocks the caller.
  virtual core::Result<TaskPage> ListRunnable(std::string_view after_id, size_t limit) = 0;

  /// The parked runs with a wake time (ParkedUntil > 0), ordered by (time, id), after
  /// (`after_ms`, `after_id`), up to `limit`. `holder` non-empty (several replicas): only the
  /// runs whose lease that process holds (cluster.hpp), with the lease's epoch, so that their
  /// executions run at that lease and never take it from a newer one; a store without leases
  /// ignores it.
  /// Blocks the caller.
  virtual core::Result<std::vector<Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                                    size_t limit, std::string_view holder) = 0;

  /// Waits for every commit already accepted to finish, then refuses new ones
  /// (kUnavailable). Idempotent. Called once on shutdown. Reads after Close() return
  /// kUnavailable too (backends release their connections). Must not be called from a
  /// `done` callback.
  virtual void Close() = 0;
};

}  // namespace a2ad::storage
