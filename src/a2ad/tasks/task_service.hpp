#pragma once
// TaskService: the ONLY writer of task state (ARCHITECTURE.md). It turns A2A requests into
// run events, folds them into the snapshot (task_projection.hpp), commits both through the
// TaskStore in one transaction, and only then tells waiters. It hands tasks to executors
// (executor.hpp) and serializes all mutations of one task.
//
// Where each part lives: task_service.cpp (the A2A operations), run_requests.cpp (the
// OpenWOP side: runs, interrupts, cancels), task_reader.cpp (TaskReader: tasks/get, lists,
// records, events, waits, the streams that follow a task), pause.cpp (PauseControl: pausing),
// executions.cpp (Executions: executions, recovery, nudges and the wake timer), wake_timer.cpp
// (the wake timer's loop, WakeTimer),
// replicas.cpp (other replicas' commits, adopted runs). Every write goes through the TaskWriter
// (task_writer.hpp: per-task slots, commits, fan-out to streams, waits, idempotent creation), which
// knows nothing of skills or executions.
//
// Callers: every request method takes the protocol::CallContext of the request first. A
// task belongs to the tenant of the context that created it and is owned by its principal
// (TaskRecord::tenant / owner); another tenant's task is "not found" (kTaskNotFound) for
// every method, lists are the caller's tenant's, and idempotency (an A2A messageId, an
// Idempotency-Key, a reply's messageId) is per (tenant, principal). Answers record the
// context's principal (decidedBy / resolvedBy). Work the server starts itself (recovery,
// durable timers, child runs, interrupt timeouts) acts with the run's own context
// (RunCallContext in executor.hpp). The context is read during the call only, but the
// methods are coroutines: `ctx` (like every reference argument) must outlive the returned
// awaitable; co_await it where it is made, or keep the context alive (co_spawn).
//
// Threads and locks: the store calls that may block (reads) run on the service's read
// executor (read_executor.hpp, TaskServiceOptions::read_threads), never on an I/O thread and
// never under a task's lock; the awaiting coroutine resumes on its own executor. The one
// exception is a read of one task the store can answer without waiting (TaskStore::TryGet,
// SQLite's idle reader): that runs where it is asked, never under a task's lock. A task's
// lock (TaskSlot::mu, task_writer.hpp) is held only to assign sequences and queue the commit
// (TaskStore::Commit, which does not block); a stale cached head is re-read before it is
// taken. Commit callbacks run on the store's thread (SQLite: its writer) and only publish.
//
// Thread safety: every public member is safe to call from any I/O thread concurrently.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/array.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/storage/cluster.hpp"
#include "a2ad/storage/task_store.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/tasks/pause.hpp"
#include "a2ad/tasks/subscription.hpp"

namespace a2ad::tasks {

class ReadExecutor;
class PauseControl;
class TaskReader;
class TaskWriter;
class Executions;
struct TaskSlot;

struct TaskServiceOptions {
  /// Several replicas on one database (storage/cluster.hpp): executions hold their run's
  /// lease and their commits are fenced by it. nullptr: this process holds every run.
  storage::Cluster* cluster = nullptr;
  /// Several replicas: state kept beside the tasks that another replica may have changed
  /// (push configs, webhooks), read again for a task this replica is about to drive or that
  /// another replica committed to, and all of it on a resync. Blocking; never on an I/O
  /// thread (the read executor, the cluster's threads).
  std::function<void(const std::string& task_id)> refresh_task;
  std::function<void()> refresh_all;
  /// Skill used when a message names none (message.metadata.skillId).
  std::string default_skill = "echo";
  /// Longest a blocking send waits for a terminal or interrupted state; after it the
  /// current (still working) task is returned and the run goes on.
  std::chrono::milliseconds blocking_timeout{30000};

  // ---- push notifications (push/PushService; wired by app/) ----
  /// Vets an inline push config of message/send for `task_id` (SSRF guard, auth scheme;
  /// fills a missing id). Unset: inline configs are refused (kPushNotificationNotSupported).
  /// A vetted config is written in the same commit as the task's creation (or the reply).
  std::function<boost::asio::awaitable<core::Result<void>>(protocol::PushNotificationConfig&,
                                                           const std::string& task_id)>
      vet_push_config;
  /// Called inside every commit, under the task's lock, with the task's previous record
  /// (nullptr when creating) and the commit about to be written: adds push outbox rows to
  /// commit.outbox (same transaction). Must not block.
  std::function<void(const storage::TaskRecord* previous, storage::TaskCommit& commit)> on_commit;

  /// Threads of the read executor (read_executor.hpp) that runs every store read. 0 runs
  /// reads inline (only for single-threaded deterministic harnesses); a few suffice for SQLite (its
  /// reader pool bounds parallel reads anyway), a network database wants about as many as the
  /// requests it should serve in parallel.
  size_t read_threads = 4;

  /// An extension's say in a message that creates a task (the OPT extension's
  /// opt/v1/objective), before anything is stored or deduplicated: it may set the message's
  /// contextId and add keys to the new task's metadata (`task_metadata`, kept from its first
  /// event on); an error refuses the message. Unset: nothing.
  std::function<boost::asio::awaitable<core::Result<void>>(
      const protocol::CallContext&, protocol::SendMessageRequest&, boost::json::object& task_metadata)>
      prepare_new_task;

  /// RecoverUnfinished also hands the tasks cancelled within this long before the restart to
  /// their executor's AfterCancel again (a peer's task a cancel did not reach: the host
  /// stopped first, or the peer was down). 8 days: a peer call's longest deadline, and a day.
  std::chrono::milliseconds after_cancel_recovery{8LL * 24 * 3600 * 1000};

  /// How long a task keeps its creation key (a first message's messageId, an
  /// Idempotency-Key): a send with the same key within it is a retry answered with that
  /// task, whatever happened to the task meanwhile (accepted_messages.hpp). After it, the
  /// key may start a new task. 0: keys are kept for ever.
  std::chrono::milliseconds idempotency_retention{24LL * 3600 * 1000};
};

/// Where a resubscribing client left off: the last event it saw, by log sequence (the SSE
/// `id:`, Last-Event-ID) or by generation (metadata.generation, task_projection.hpp).
struct StreamCursor {
  StreamCursor(int64_t sequence) : value(sequence) {}  // NOLINT: a sequence is the usual cursor
  static StreamCursor Generation(int64_t g) {
    StreamCursor c(g);
    c.by_generation = true;
    return c;
  }
  int64_t value = 0;
  bool by_generation = false;
};

/// How a stream begins: the items to send first (a snapshot, or the events a cursor
/// missed), then the live subscription, from which items with sequence <= last_sequence are
/// skipped (they were in the backlog).
struct StreamStart {
  std::shared_ptr<Subscription> subscription;
  std::vector<StreamItemPtr> backlog;
  int64_t last_sequence = -1;
  bool task_terminal = false;      // the task was already terminal: close after the backlog
  bool history_compacted = false;  // the cursor's events were pruned; the backlog is a snapshot
  std::shared_ptr<void> detach;    // detaches the subscription from its task when released
  /// SubscribeRunEvents: the record as read with the backlog (OpenWOP streamMode=values
  /// starts with its run snapshot).
  std::shared_ptr<const storage::TaskRecord> record;
};

struct SkillInfo {
  std::string id;
  std::string name;
  std::string description;
  std::vector<std::string> tags;
  std::vector<std::string> examples;
  std::string version;
  // The OpenWOP WorkflowDefinition (null for built-ins); shared, never changed.
  std::shared_ptr<const boost::json::object> definition;
  bool is_public = true;           // false: on the authenticated extended card only
};

/// A run started other than by an A2A message: POST /v1/runs, a sub-workflow node.
struct StartRunRequest {
  std::string skill_id;  // the workflow
  boost::json::object inputs;
  boost::json::array tags;
  boost::json::object metadata;
  std::string transport = "rest";
  /// Empty: a fresh id. Else the id to create; if it exists already the existing run is
  /// returned (replayed), which makes idempotency keys and crash-recovered child creation
  /// atomic through the store's primary key.
  std::string run_id;
  std::string request_digest;  // kept with the run; compared on replay by the caller
  /// Idempotent creation by key (e.g. "rest\n<caller>\nPOST /v1/runs\n<Idempotency-Key>"):
  /// a run of the caller's tenant created with the same key is returned (replayed) instead
  /// of starting another. The key names the principal; the service scopes it to the tenant.
  std::string dedup_key;
  std::string parent_run_id;
  std::string parent_node_id;
  /// The task's contextId; empty: the run id.
  std::string context_id;
  /// Keys the A2A task's metadata starts with (an extension's: the OPT extension's
  /// opt/v1/* keys of a plan task's run).
  boost::json::object task_metadata;
  /// The executor's first steps ride along with the creating commit (Executor::FirstSteps):
  /// a run that finishes at once is one commit.
  bool first_steps_inline = false;
};

struct StartedRun {
  std::shared_ptr<const storage::TaskRecord> record;
  bool replayed = false;  // the run existed already (same id)
};

/// An id derived from a name (SHA-256, formatted as a UUID version 8): the same caller's
/// same idempotency key always names the same run.
std::string NameBasedId(std::string_view name);

class TaskService {
 public:
  using CallContext = protocol::CallContext;

  TaskService(storage::TaskStore& store, const core::Clock& clock, core::IdGenerator& ids,
              boost::asio::any_io_executor io, TaskServiceOptions options);
  /// Waits for the store reads in flight (read_executor.hpp).
  ~TaskService();
  TaskService(const TaskService&) = delete;
  TaskService& operator=(const TaskService&) = delete;

  /// Registers a skill; call before serving.
  void RegisterSkill(SkillInfo info, std::shared_ptr<Executor> executor);
  const std::vector<SkillInfo>& skills() const { return skill_infos_; }

  // ---- A2A (task_service.cpp) -------------------------------------------------------------

  /// message/send, SendMessage. A message without taskId creates a task of ctx's tenant,
  /// owned by ctx's principal (server-made id, contextId reused or generated) running the
  /// skill named by message.metadata.skillId (else the default skill); the same principal's
  /// same messageId in the same tenant is the same task (a retry). A message with taskId
  /// continues an interrupted task; such a reply is idempotent by (principal, messageId): a
  /// retry of an accepted reply (same parts) writes nothing and is answered with the task as
  /// it is now, whatever its state (for a blocking send, once settled as the first answer
  /// was). Blocking (default) waits until the task is terminal or interrupted (or the
  /// blocking timeout); return_immediately returns the task as created.
  /// Errors: kInvalidParams (role, unknown skill, contextId mismatch, a reply's messageId
  /// already used for other parts of the task, an answer its executor refuses), kTaskNotFound
  /// (also another tenant's task), kUnsupportedOperation (terminal task, or a task not
  /// waiting for input), kPushNotificationNotSupported (an inline push config while push is
  /// off), an inline push config refused by vet_push_config, kUnavailable (shutting down).
  boost::asio::awaitable<core::Result<protocol::Task>> SendMessage(
      const CallContext& ctx, protocol::SendMessageRequest req);

  /// The Message a new message (no taskId) is answered with instead of a task, when the skill
  /// it names has one (Executor::DirectReply): messageId fresh, contextId the message's (or a
  /// fresh one), role agent. nullopt otherwise (also for a skill that is not known: SendMessage
  /// reports that). Nothing is stored. Call before SendMessage / SendStreamingMessage.
  std::optional<protocol::Message> DirectReply(const protocol::SendMessageRequest& req);

  /// message/stream, SendStreamingMessage: SendMessage, but returns a stream that begins with
  /// the accepted task's snapshot and follows its execution. Same errors as SendMessage.
  boost::asio::awaitable<core::Result<StreamStart>> SendStreamingMessage(
      const CallContext& ctx, protocol::SendMessageRequest req, size_t queue_capacity);

  /// tasks/resubscribe, SubscribeToTask: a read-only stream of an existing task. With a
  /// cursor the backlog is every projected event after it (or, if those events were pruned
  /// by retention, the snapshot with history_compacted); without, the current snapshot.
  /// Never re-executes anything. kTaskNotFound (also another tenant's task); kInvalidParams
  /// for a cursor beyond the task's last event (or generation).
  boost::asio::awaitable<core::Result<StreamStart>> Subscribe(const CallContext& ctx,
                                                              std::string task_id,
                                                              std::optional<StreamCursor> after,
                                                              size_t queue_capacity);

  /// tasks/get, GetTask. kTaskNotFound (also another tenant's task).
  boost::asio::awaitable<core::Result<protocol::Task>> GetTask(const CallContext& ctx,
                                                               protocol::GetTaskRequest req);

  /// ListTasks: ctx's tenant's tasks. Newest status first; cursor pagination.
  boost::asio::awaitable<core::Result<protocol::ListTasksResponse>> ListTasks(
      const CallContext& ctx, protocol::ListTasksRequest req);

  /// Writes a push config of the task `record.task_id` (already vetted, tenant already
  /// checked) as a commit of that task: ordered with the task's other commits under its lock,
  /// so every commit after it produces outbox rows for the config (TaskServiceOptions::
  /// on_commit sees it in commit.push_configs first), and one that came before does not need
  /// to. Completes once durable. kTaskNotFound for an unknown task.
  boost::asio::awaitable<core::Result<void>> WritePushConfig(storage::PushConfigRecord record);

  /// tasks/cancel, CancelTask. Commits run.cancelled and tells the execution to stop.
  /// Canceling a canceled task returns it unchanged. kTaskNotFound (also another tenant's
  /// task), kTaskNotCancelable.
  boost::asio::awaitable<core::Result<protocol::Task>> CancelTask(const CallContext& ctx,
                                                                  protocol::CancelTaskRequest req);

  // ---- OpenWOP (run_requests.cpp) -----------------------------------------------------------

  /// nullopt when `inputs` suit skill `skill_id` (what StartRun would accept), else why not
  /// (kInvalidParams for an unknown skill, naming the available ones).
  std::optional<core::Error> CheckRunInputs(const std::string& skill_id,
                                            const boost::json::object& inputs) const;

  /// Starts a run of `req.skill_id` for ctx's tenant, owned by ctx's principal (no A2A
  /// message: the task's history gets a user message carrying the inputs as a data part).
  /// kInvalidParams for an unknown skill.
  boost::asio::awaitable<core::Result<StartedRun>> StartRun(const CallContext& ctx,
                                                            StartRunRequest req);

  /// Resolves the open interrupt of run `run_id` (REST, interrupt token, timeout) as ctx's
  /// principal (ResolveRequest::caller is set from it: decidedBy / resolvedBy). Errors carry
  /// a `reason` detail with the OpenWOP code (interrupt_not_found,
  /// interrupt_already_resolved, validation_error); kTaskNotFound for an unknown run (also
  /// another tenant's).
  boost::asio::awaitable<core::Result<RecordPtr>> ResolveInterrupt(const CallContext& ctx,
                                                                   std::string run_id,
                                                                   ResolveRequest req);

  /// Ends the sleeps of `task_id`'s execution made with SleepUntilNudged(.., key) (a peer's
  /// push for the node that follows it: it looks at the peer's task again). When the run
  /// sleeps under no such key here, and `forward` (several replicas), the nudge goes to the
  /// other replicas (Cluster::Nudge, off this thread). Thread-safe; never blocks.
  void Nudge(const std::string& task_id, const std::string& key, bool forward = true);

  /// Cancels a run (and, depth first, its unfinished child runs with reason
  /// "parent-cancelled"). Same results as CancelTask.
  boost::asio::awaitable<core::Result<protocol::Task>> CancelRun(const CallContext& ctx,
                                                                 std::string run_id,
                                                                 std::string reason,
                                                                 std::string parent_run_id = {});

  /// The stored record (task + run snapshot), or nullopt (also for another tenant's).
  boost::asio::awaitable<core::Result<std::optional<storage::TaskRecord>>> GetRecord(
      const CallContext& ctx, std::string id);
  /// Whether ctx's principal may answer the interrupt `record` waits on (Executor::MayAnswer:
  /// an approver inbox lists only those). A hint; answering decides again.
  bool MayAnswer(const CallContext& ctx, const storage::TaskRecord& record) const {
    const Executor* e = ExecutorFor(record.skill_id);
    return !e || e->MayAnswer(record, ctx.principal);
  }
  /// A page of ctx's tenant's records (the query's tenant is ctx's, whatever it says).
  boost::asio::awaitable<core::Result<storage::TaskPage>> ListRecords(const CallContext& ctx,
                                                                      storage::TaskQuery q);
  /// The logged events of `id` after `after_sequence`, at most `limit`; empty for an
  /// unknown run or another tenant's.
  boost::asio::awaitable<core::Result<std::vector<protocol::RunEvent>>> ReadEvents(
      const CallContext& ctx, std::string id, int64_t after_sequence, size_t limit);
  /// Waits (at most `timeout`) until the published record of `id` satisfies `pred`;
  /// returns the newest published record (nullptr if none was published since start, or the
  /// run is another tenant's).
  boost::asio::awaitable<RecordPtr> WaitForRecord(
      const CallContext& ctx, std::string id, std::function<bool(const storage::TaskRecord&)> pred,
      std::chrono::milliseconds timeout);
  /// A stream of the raw run events of `id` after `after_sequence` (-1: from the start):
  /// the backlog read from the log, then live (every StreamItem has run_event set).
  /// kTaskNotFound (also another tenant's run).
  boost::asio::awaitable<core::Result<StreamStart>> SubscribeRunEvents(const CallContext& ctx,
                                                                       std::string id,
                                                                       int64_t after_sequence,
                                                                       size_t queue_capacity);

  // ---- pausing (PauseControl: pause_control.hpp, pause.cpp; the pause extension serves them)

  /// Pauses run `req.task_id` of ctx's tenant: commits run.paused (the task stays working
  /// with metadata.pause) before answering, with a fresh handle (resumeToken). A pause by the
  /// same initiator again answers the open pause unchanged. The step in flight: as
  /// Executor::PlanPause says per mode (finish_step lets it commit, interrupt_immediate stops
  /// it now, wait_for_completion lets its node finish); a child run it waits for is paused
  /// with it. Errors: kTaskNotFound; kTaskNotPausable (terminal, waiting at a gate, paused by
  /// the other initiator); kUnsupportedOperation (a skill that cannot pause); kInvalidParams.
  boost::asio::awaitable<core::Result<RecordPtr>> PauseTask(const CallContext& ctx,
                                                            PauseTaskRequest req);
  /// Resumes run `req.task_id`: commits run.resumed {previousState, cause, ...} and starts
  /// its execution again (the state before the pause: working). A timer request decides
  /// itself: trigger due -> condition_fired, timeout due -> resume (cause timeout) or fail the
  /// run (onTimeout fail). Errors: kTaskNotFound; kTaskNotPausable (not paused, terminal);
  /// kResumeHandleMismatch; kConflict with reason not_due (a timer that woke early).
  boost::asio::awaitable<core::Result<RecordPtr>> ResumeTask(const CallContext& ctx,
                                                             ResumeTaskRequest req);
  /// An event posted by a caller (POST /v1/events): resumes every run of ctx's tenant paused
  /// until event `name` (conditions.onEvent), with `payload` as the resume input (cause
  /// external_event). Returns their ids (none waiting: empty). Nothing is kept for a run that
  /// starts waiting later. kInvalidParams for a name that is empty or over 256 characters.
  boost::asio::awaitable<core::Result<std::vector<std::string>>> PostEvent(
      const CallContext& ctx, std::string name, boost::json::value payload);

  // ---- the server's own work (Executions, executions.hpp) -----------------------------------

  /// Starts the execution of every unfinished run of every tenant that is not
  /// parked (TaskStore::ListRunnable), each acting with its own run's context; and spawns
  /// Executor::AfterCancel again for every task cancelled within
  /// options.after_cancel_recovery (at least once: what it stops outside the host may be
  /// asked again). Call once, after a restart, before serving: it blocks on store reads (not
  /// on an I/O thread). Returns how many were re-driven. A parked run costs nothing here.
  /// With `runs` false, only the AfterCancel part (several replicas: the runs are adopted by
  /// leases instead, Adopt).
  core::Result<size_t> RecoverUnfinished(bool runs = true);
  /// A run is parked until `at_ms` (a commit of this process, or a run adopted here): the
  /// wake timer looks at the store again by then. Any thread. False while no timer runs
  /// (StartWakes): the caller then waits for the time itself.
  bool NoteWake(int64_t at_ms);

  // ---- several replicas (replicas.cpp; storage/cluster.hpp) ---------------------------------

  /// A commit of another replica up to `sequence` (the change feed): the streams, waits and
  /// execution here that follow the task catch up from the store. Any thread; does not block.
  void ObserveCommit(const std::string& task_id, int64_t sequence);
  /// Something may have been missed (the feed's connection was lost): every task followed
  /// here catches up.
  void Resync();
  /// Runs whose leases this replica just took (Cluster::ClaimOrphans): each is executed from
  /// its last committed step (a finished one's lease is given up). Blocks on store reads: not
  /// on an I/O thread. Returns how many executions started.
  size_t Adopt(const std::vector<storage::Cluster::Claimed>& claimed);

  /// Refuses new sends from now on (kUnavailable), and ends the wake timer.
  void StopAccepting();

  /// Starts the wake timer (wake_timer.hpp): a run parked with a wake time (a gate's timeout, a
  /// pause's timer) holds no execution while it waits; the timer reads the due runs from the
  /// store and starts them, overdue ones at once. The server starts it before recovery; until
  /// then (and in tests that never start it) a parked execution waits for its time itself.
  /// Once; it runs until StopAccepting.
  void StartWakes();

  // ---- observability and tests ---------------------------------------------------------------

  /// Streams currently attached to `task_id`.
  size_t subscriber_count(const std::string& task_id);
  /// True while some coroutine holds `task_id`'s lock (TaskStore test doubles assert it is
  /// not held when they are called).
  bool task_locked(const std::string& task_id);
  /// Number of executions still running.
  size_t running_executions() const;

 private:
  using Slot = TaskSlot;  // the per-task state of the writer (task_writer.hpp)
  struct Accepted;

  /// Reads the task and publishes it if newer (a commit of another replica: replicas.cpp).
  boost::asio::awaitable<void> CatchUp(std::shared_ptr<Slot> slot, bool records);

  // The A2A send (task_service.cpp).
  boost::asio::awaitable<core::Result<Accepted>> AcceptNew(const CallContext& ctx,
                                                           protocol::SendMessageRequest& req,
                                                           std::shared_ptr<Subscription> attach,
                                                           bool first_steps_inline);
  boost::asio::awaitable<core::Result<Accepted>> AcceptReply(const CallContext& ctx,
                                                             protocol::SendMessageRequest& req,
                                                             std::shared_ptr<Subscription> attach);
  boost::asio::awaitable<core::Result<Accepted>> Accept(const CallContext& ctx,
                                                        protocol::SendMessageRequest& req,
                                                        std::shared_ptr<Subscription> attach,
                                                        bool first_steps_inline = false);

  Executor* ExecutorFor(const std::string& skill_id) const;
  /// The skill a new message names (message, then request metadata `skillId`), else the
  /// default skill; kInvalidParams when `skillId` is not a string.
  core::Result<std::string> SkillOf(const protocol::SendMessageRequest& req) const;
  /// The registered skill ids, comma-separated (for "unknown skill" messages).
  std::string AvailableSkills() const;

  storage::TaskStore& store_;
  const core::Clock& clock_;
  core::IdGenerator& ids_;
  boost::asio::any_io_executor io_;
  TaskServiceOptions options_;
  std::vector<SkillInfo> skill_infos_;
  std::unordered_map<std::string, std::shared_ptr<Executor>> executors_;
  // Executions, recovery, nudges and the wake timer (executions.hpp). Destroyed after the
  // parts below: its wake timer's loop is stopped by then (the destructor stops it first).
  std::unique_ptr<Executions> runs_;
  // The writer uses reads_; reads_ is made first (in the constructor) and destroyed (joined)
  // first, while the writer and everything else its reads use still exist.
  std::unique_ptr<TaskWriter> writer_;
  std::unique_ptr<TaskReader> reader_;  // reads, waits and streams (task_reader.hpp)
  std::unique_ptr<PauseControl> pauses_;  // pause.cpp
  // Last member: destroyed (joined) first.
  std::unique_ptr<ReadExecutor> reads_;
};

}  // namespace a2ad::tasks
