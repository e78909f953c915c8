#pragma once
// The executor port (ARCHITECTURE.md: tasks/ owns it, workflow/ implements it). An executor
// runs a task in steps; each step is a list of run events committed atomically through the
// ExecutionContext. It may stop at an interrupt (node.suspended => input-required) and is
// started again with the client's reply; it may be asked to cancel.
//
// Thread safety: an ExecutionContext is used by its one execution (a coroutine on its own
// strand); cancel_requested() may be read from anywhere. Executor's methods other than
// Execute() are called concurrently from any I/O thread (Resolve under the task's lock):
// they must be pure functions of their arguments (no store calls, no blocking).
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::tasks {

/// A committed record as the task service shares it: immutable, read by many at once.
using RecordPtr = std::shared_ptr<const storage::TaskRecord>;

/// An event to append; the service stamps eventId, runId, timestamp and sequence.
struct EventDraft {
  std::string type;
  std::string node_id;
  boost::json::object payload;
};

class ExecutionContext {
 public:
  virtual ~ExecutionContext() = default;
  virtual const std::string& task_id() const = 0;
  virtual const std::string& skill_id() const = 0;
  /// The task as it was when this execution began (after the triggering message was stored).
  virtual const protocol::Task& task() const = 0;
  /// The message that started or resumed this execution.
  virtual const protocol::Message& message() const = 0;
  /// The whole record (task, run snapshot) as it was when this execution began.
  virtual const storage::TaskRecord& record() const = 0;
  /// Commit, returning the whole new record (the run snapshot included).
  virtual boost::asio::awaitable<core::Result<std::shared_ptr<const storage::TaskRecord>>> Apply(
      std::vector<EventDraft> step) = 0;
  /// Sleeps until the wall-clock time `epoch_ms` (a durable timer's deadline, which the
  /// executor logged before sleeping). Returns false early when a cancel is requested.
  virtual boost::asio::awaitable<bool> SleepUntil(int64_t epoch_ms) = 0;
  /// SleepUntil that TaskService::Nudge(task_id, `key`) also ends early (true): a peer's
  /// push telling a node that waits on it to look again. Only sleeps under that key wake.
  virtual boost::asio::awaitable<bool> SleepUntilNudged(int64_t epoch_ms, std::string key) = 0;
  /// A run parked until `epoch_ms` (its committed record says so: storage::ParkedUntil):
  /// true when the service wakes it then (its wake timer starts a new execution), so this
  /// execution returns now and holds nothing while the run waits; false (the time is due
  /// already, or the context has no timer): SleepUntil it here.
  virtual bool WakeLater(int64_t epoch_ms) {
    (void)epoch_ms;
    return false;
  }
  /// Appends `step` to the task's log and updates its snapshot in one transaction; completes
  /// once durable. Returns the new snapshot. Errors: kUnsupportedOperation when the step's
  /// state change is not allowed (e.g. the task was canceled meanwhile: stop executing),
  /// kInternal/kUnavailable on storage failure.
  virtual boost::asio::awaitable<core::Result<protocol::Task>> Commit(
      std::vector<EventDraft> step) = 0;
  /// True once a cancel was requested; executors check it between steps.
  virtual bool cancel_requested() const = 0;
  /// Several replicas: whether this execution still holds the run (its lease was not taken
  /// over while it was frozen or cut off), asked of the database. Executors ask it before a
  /// call out of the host (and before each retry): false means stop, the run is executed
  /// elsewhere, or (the database cannot be read) it is executed again here later. One
  /// process holding every run: true.
  virtual boost::asio::awaitable<bool> HoldsRun() { co_return true; }
  /// The context the server's own work for this run acts with (RunCallContext of its
  /// record): child runs, interrupt timeouts, re-reads go through TaskService with it, so
  /// they stay in the run's tenant whoever triggered this execution.
  virtual const protocol::CallContext& call_context() const = 0;
};

using storage::RunTraceparent;
/// `metadata` with openwop.traceparent set to `traceparent`, unless it holds a valid one
/// already (a caller of POST /v1/runs may name the run's parent itself) or `traceparent` is
/// "".
void KeepTraceparent(boost::json::object& metadata, const std::string& traceparent);

/// The context of work the server does for a run on its own (recovery, durable timers,
/// child runs, interrupt timeouts): the run's tenant, its owner as the principal, every
/// scope, the internal binding. Never the default tenant by accident.
inline protocol::CallContext RunCallContext(const storage::TaskRecord& run) {
  protocol::CallContext ctx;
  ctx.principal.id = run.owner;
  ctx.principal.tenant = run.tenant;
  ctx.binding = protocol::Binding::kInternal;
  ctx.traceparent = RunTraceparent(run);
  return ctx;
}

/// A caller's answer to a run's open interrupt: an A2A reply message, or a REST resume value.
struct ResolveRequest {
  std::string node_id;                             // empty: whichever node is waiting
  std::optional<boost::json::value> resume_value;  // REST / interrupt token
  const protocol::Message* message = nullptr;      // A2A reply (resume value derived from it)
  std::string caller;  // the answering principal (decidedBy): set by TaskService from the call's
                       // context (protocol::CallContext::caller())
  /// The whole answering principal (its authentication and scopes), set by TaskService with
  /// `caller`: approval gates check who may answer with it (workflow/approval_policy.hpp).
  protocol::Principal principal;
  std::string via;  // "a2a" | "rest" | "token" | "timeout"
};

/// What resolving an interrupt commits (after the reply message, for A2A).
struct Resolution {
  std::vector<EventDraft> events;
  /// False when the answer does not end the wait (an approval "ask", a vote that leaves a
  /// quorum open): the run stays waiting and no execution starts.
  bool resumes = true;
  /// The answer was given already (the same quorum vote again): nothing is written, not even
  /// the A2A reply message, and the caller is answered with the record as it is. Implies
  /// `resumes` false and no `events`.
  bool changes_nothing = false;
  /// The executor's events move the task out of input-required themselves (node.resumed);
  /// the A2A reply is then logged without changing the state.
  bool explicit_resume = false;
};

/// What a pause does to a run's step in flight (Executor::PlanPause; tasks/pause.hpp).
struct PausePlan {
  /// The node in flight whose step may still commit while paused (finish_step,
  /// wait_for_completion); "" when none is in flight.
  std::string in_flight_node;
  /// interrupt_immediate: the node in flight is abandoned (its state reset by the pause entry)
  /// and starts again from its beginning on resume.
  std::string abandon_node;
  /// The node waits for this child run: the pause is passed on to the child (finish_step,
  /// interrupt_immediate) and the child resumed with the run.
  std::string child_run_id;
  bool cascade = false;
};

class Executor {
 public:
  /// Whether this executor can park `current` as `mode` asks (pause extension), and what the
  /// pause does to its step in flight. Called under the task's lock: pure. Default: the
  /// skill cannot be paused (kUnsupportedOperation).
  virtual core::Result<PausePlan> PlanPause(const storage::TaskRecord& current,
                                            std::string_view mode) const {
    (void)current;
    (void)mode;
    return core::Error(core::ErrorCode::kUnsupportedOperation,
                       "this skill cannot be paused (only workflow runs can)");
  }
  virtual ~Executor() = default;
  /// Checks an answer against the open interrupt of `current` (called under the task's lock,
  /// so racing answers are decided one at a time: pure, no store calls, no blocking) and
  /// returns the events that resolve it.
  /// An error refuses the answer and nothing is written. The default accepts any A2A reply.
  virtual core::Result<Resolution> Resolve(const storage::TaskRecord& current,
                                           const ResolveRequest& request) {
    (void)current;
    if (!request.message)
      return core::Error(core::ErrorCode::kUnsupportedOperation,
                         "this skill takes answers only as A2A messages");
    return Resolution{};
  }
  /// Checks a new run's inputs before anything is created (A2A send, POST /v1/runs, child
  /// runs): an error refuses the request. The default accepts anything.
  virtual std::optional<core::Error> CheckInputs(const boost::json::object& inputs) const {
    (void)inputs;
    return std::nullopt;
  }
  /// A Message to answer a new message with, instead of a task (A2A lets an agent answer a
  /// message with a message): SendMessage returns it and stores nothing, so a retry is
  /// answered again. Pure; called on an I/O thread before anything is written. Only `parts`
  /// (and `metadata`) of the result are used: the service sets the ids and the agent role.
  /// Default: none (every message starts or continues a task).
  virtual std::optional<protocol::Message> DirectReply(const protocol::Message& message) const {
    (void)message;
    return std::nullopt;
  }
  /// True if a message into a task that is submitted or working (no open interrupt) is
  /// taken: appended to the history while the execution goes on as it was (the message
  /// starts nothing). Default false: such a message is refused (-32004, "not waiting for
  /// input"), since a workflow reads input only at its gates.
  virtual bool TakesMessagesWhileWorking() const { return false; }
  /// True if a run of this skill parked with a wake time (storage::ParkedUntil: a gate's
  /// timeout, a pause's timer) is executed at that time by the service's wake timer, which
  /// reads the times from the store: after a restart, a takeover or a park alike. No
  /// execution is held while it waits. Default false: nothing wakes a parked run.
  virtual bool WakesParked() const { return false; }
  /// True only for the built-in conformance agent: a first message's messageId stops being a
  /// retry once its sender addresses the task (the A2A conformance kit reuses one messageId
  /// for every task it creates). Every other skill keeps the retry for the idempotency
  /// retention window (accepted_messages.hpp, A2aDedupKey).
  virtual bool ReusesFirstMessageIds() const { return false; }
  /// Whether `who` may answer the interrupt `current` waits on (an approver inbox lists only
  /// those): a restricted approval gate's approvers, anyone for other interrupts. A hint for
  /// listing; Resolve decides again. Default: true.
  virtual bool MayAnswer(const storage::TaskRecord& current,
                         const protocol::Principal& who) const {
    (void)current;
    (void)who;
    return true;
  }
  /// The next step, if it can be decided synchronously from `current` (a just-created task,
  /// or the record the previous answer left): it is committed in the creating transaction,
  /// and asked again until it returns none (one commit instead of several for a task that
  /// finishes at once). Execute() then starts from the state they leave. Default: none.
  virtual std::vector<EventDraft> FirstSteps(const storage::TaskRecord& current) const {
    (void)current;
    return {};
  }
  /// After the run `rec` was cancelled (committed): stop work it has out of the host (an A2A
  /// peer's task). Spawned by the service, not awaited by the canceller; best effort: a
  /// crash before it runs leaves that work alone. Default: nothing.
  virtual boost::asio::awaitable<void> AfterCancel(std::shared_ptr<const storage::TaskRecord> rec) {
    (void)rec;
    co_return;
  }
  /// Runs the task from wherever its log says it is until it ends or parks at an interrupt.
  /// Called for a new task, for a reply to an interrupted task, and on restart for a task
  /// found unfinished; so it must derive its position from ctx->task() (never repeat a
  /// committed step). Runs on an I/O thread; must not block.
  virtual boost::asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) = 0;
};

}  // namespace a2ad::tasks
