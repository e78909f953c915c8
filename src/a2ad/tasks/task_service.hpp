#pragma once
// TaskService: the ONLY writer of task state (ARCHITECTURE.md). It turns A2A requests into
// run events, folds them into the snapshot (task_projection.hpp), commits both through the
// TaskStore in one transaction, and only then tells waiters. It hands tasks to executors
// (executor.hpp) and serializes all mutations of one task.
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
#include <string>
#include <unordered_map>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/storage/task_store.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/tasks/subscription.hpp"

namespace a2ad::tasks {

struct TaskServiceOptions {
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
};

struct SkillInfo {
  std::string id;
  std::string name;
  std::string description;
  std::vector<std::string> tags;
  std::vector<std::string> examples;
  std::string version;
  boost::json::object definition;  // the OpenWOP WorkflowDefinition ({} for built-ins)
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
  /// Idempotent creation by key (e.g. an Idempotency-Key): a run created with the same key
  /// is returned (replayed) instead of starting another.
  std::string dedup_key;
  std::string parent_run_id;
  std::string parent_node_id;
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
  TaskService(storage::TaskStore& store, const core::Clock& clock, core::IdGenerator& ids,
              boost::asio::any_io_executor io, TaskServiceOptions options);
  ~TaskService();
  TaskService(const TaskService&) = delete;
  TaskService& operator=(const TaskService&) = delete;

  /// Registers a skill; call before serving.
  void RegisterSkill(SkillInfo info, std::shared_ptr<Executor> executor);
  const std::vector<SkillInfo>& skills() const { return skill_infos_; }

  /// message/send, SendMessage. A message without taskId creates a task (server-made id,
  /// contextId reused or generated) running the skill named by message.metadata.skillId
  /// (else the default skill). A message with taskId continues an interrupted task; such a
  /// reply is idempotent by messageId: a retry of an accepted reply (same parts) writes
  /// nothing and is answered with the task as it is now, whatever its state (for a blocking
  /// send, once settled as the first answer was).
  /// Blocking (default) waits until the task is terminal or interrupted (or the blocking
  /// timeout); return_immediately returns the task as created.
  /// Errors: kInvalidParams (role, unknown skill, contextId mismatch, a reply's messageId
  /// already used for other parts of the task, an answer its executor refuses), kTaskNotFound,
  /// kUnsupportedOperation (terminal task, or a task not waiting for input),
  /// kPushNotificationNotSupported (an inline push config while push is off), an inline
  /// push config refused by vet_push_config, kUnavailable (shutting down).
  boost::asio::awaitable<core::Result<protocol::Task>> SendMessage(
      protocol::SendMessageRequest req);

  /// message/stream, SendStreamingMessage: SendMessage, but returns a stream that begins with
  /// the accepted task's snapshot and follows its execution. Same errors as SendMessage.
  boost::asio::awaitable<core::Result<StreamStart>> SendStreamingMessage(
      protocol::SendMessageRequest req, size_t queue_capacity);

  /// tasks/resubscribe, SubscribeToTask: a read-only stream of an existing task. With
  /// `after_sequence` (Last-Event-ID) the backlog is every projected event after it (or, if
  /// those events were pruned by retention, the snapshot with history_compacted); without,
  /// the current snapshot. Never re-executes anything. kTaskNotFound; kInvalidParams for a
  /// cursor beyond the task's last event.
  core::Result<StreamStart> Subscribe(const std::string& task_id,
                                      std::optional<int64_t> after_sequence, size_t queue_capacity);

  /// tasks/get, GetTask. kTaskNotFound.
  core::Result<protocol::Task> GetTask(const protocol::GetTaskRequest& req);

  /// ListTasks. Newest status first; cursor pagination.
  core::Result<protocol::ListTasksResponse> ListTasks(const protocol::ListTasksRequest& req);

  /// tasks/cancel, CancelTask. Commits run.cancelled and tells the execution to stop.
  /// Canceling a canceled task returns it unchanged. kTaskNotFound, kTaskNotCancelable.
  boost::asio::awaitable<core::Result<protocol::Task>> CancelTask(protocol::CancelTaskRequest req);

  /// Starts the execution of every task found `submitted` or `working` (call once, after a
  /// restart). Returns how many were re-driven.
  core::Result<size_t> RecoverUnfinished();

  /// Starts a run of `req.skill_id` (no A2A message: the task's history gets a user message
  /// carrying the inputs as a data part). kInvalidParams for an unknown skill.
  boost::asio::awaitable<core::Result<StartedRun>> StartRun(StartRunRequest req);

  /// Resolves the open interrupt of run `run_id` (REST, interrupt token). Errors carry a
  /// `reason` detail with the OpenWOP code (interrupt_not_found, interrupt_already_resolved,
  /// validation_error); kTaskNotFound for an unknown run.
  boost::asio::awaitable<core::Result<std::shared_ptr<const storage::TaskRecord>>> ResolveInterrupt(
      const std::string& run_id, ResolveRequest req);

  /// Cancels a run (and, depth first, its unfinished child runs with reason
  /// "parent-cancelled"). Same results as CancelTask.
  boost::asio::awaitable<core::Result<protocol::Task>> CancelRun(std::string run_id,
                                                                 std::string reason,
                                                                 std::string parent_run_id = {});

  /// The stored record (task + run snapshot), or nullopt.
  core::Result<std::optional<storage::TaskRecord>> GetRecord(const std::string& id);
  core::Result<storage::TaskPage> ListRecords(const storage::TaskQuery& q);
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(const std::string& id,
                                                           int64_t after_sequence, size_t limit);
  /// Waits (at most `timeout`) until the published record of `id` satisfies `pred`;
  /// returns the newest published record (nullptr if none was published since start).
  boost::asio::awaitable<std::shared_ptr<const storage::TaskRecord>> WaitForRecord(
      const std::string& id, std::function<bool(const storage::TaskRecord&)> pred,
      std::chrono::milliseconds timeout);
  /// A stream of the raw run events of `id` (every StreamItem has run_event set) after
  /// `after_sequence` (-1: from the start): the backlog read from the log, then live.
  core::Result<StreamStart> SubscribeRunEvents(const std::string& id, int64_t after_sequence,
                                               size_t queue_capacity);

  /// Refuses new sends from now on (kUnavailable).
  void StopAccepting() { accepting_ = false; }
  /// Streams currently attached to `task_id` (observability and tests).
  size_t subscriber_count(const std::string& task_id);
  /// Number of executions still running.
  size_t running_executions() const { return running_.load(); }

  struct Slot;
  /// Checked under the task's lock against its newest state before a step is applied;
  /// an error refuses the step (nothing is written). It may complete the step (e.g. with the
  /// events that resolve an interrupt, which depend on that newest state), or empty it:
  /// nothing to write (a retried reply), and the newest record is returned once durable.
  using Precondition = std::function<std::optional<core::Error>(const storage::TaskRecord&,
                                                                std::vector<EventDraft>& step)>;
  /// More events for the same commit, given the record after `step` (an executor's first
  /// steps riding along with a task's creation).
  using Extension = std::function<std::vector<EventDraft>(const storage::TaskRecord&)>;

  /// Commits one step for the slot's task (used by ExecutionContext and the request paths).
  boost::asio::awaitable<core::Result<protocol::Task>> CommitStep(std::shared_ptr<Slot> slot,
                                                                  std::vector<EventDraft> step,
                                                                  bool creating = false,
                                                                  Precondition precondition = {});

 private:
  class Context;
  struct Accepted;
  std::shared_ptr<Slot> Acquire(const std::string& task_id);
  boost::asio::awaitable<core::Result<std::shared_ptr<const storage::TaskRecord>>> CommitRecord(
      std::shared_ptr<Slot> slot, std::vector<EventDraft> step, bool creating,
      Precondition precondition, Extension extend = {});
  boost::asio::awaitable<core::Result<Accepted>> Accept(protocol::SendMessageRequest& req,
                                                        std::shared_ptr<Subscription> attach,
                                                        bool first_steps_inline = false);
  std::shared_ptr<void> Attach(const std::shared_ptr<Slot>& slot,
                               const std::shared_ptr<Subscription>& sub);
  void StartExecution(std::shared_ptr<Slot> slot, std::shared_ptr<const storage::TaskRecord> rec,
                      const protocol::Message& message, const std::string& skill_id);
  boost::asio::awaitable<std::shared_ptr<const storage::TaskRecord>> WaitUntil(
      std::shared_ptr<Slot> slot, std::function<bool(const storage::TaskRecord&)> pred,
      std::chrono::milliseconds timeout);
  boost::asio::awaitable<core::Result<std::shared_ptr<const storage::TaskRecord>>> Create(
      std::shared_ptr<Slot> slot, std::string dedup_key, std::vector<EventDraft> step,
      bool& replayed, Extension extend = {});
  /// The stream items of a commit made without them (no stream was attached when it was
  /// made; one attached while it was in flight).
  std::vector<StreamItemPtr> LateItems(const std::shared_ptr<const storage::TaskRecord>& before,
                                       const storage::TaskRecord& after, int64_t expected);
  Executor* ExecutorFor(const std::string& skill_id) const;
  protocol::Task Shape(protocol::Task t, const std::optional<int32_t>& history_length) const;

  storage::TaskStore& store_;
  const core::Clock& clock_;
  core::IdGenerator& ids_;
  boost::asio::any_io_executor io_;
  TaskServiceOptions options_;
  std::vector<SkillInfo> skill_infos_;
  std::unordered_map<std::string, std::shared_ptr<Executor>> executors_;
  std::atomic<bool> accepting_{true};
  std::atomic<size_t> running_{0};
  std::mutex slots_mu_;
  std::unordered_map<std::string, std::weak_ptr<Slot>> slots_;
};

}  // namespace a2ad::tasks
