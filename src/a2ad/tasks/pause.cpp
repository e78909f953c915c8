// Pausing runs (pause.hpp): the pure rules of the log, and TaskService's PauseTask, ResumeTask
// and PostEvent (PauseControl, pause_control.hpp: each decided under the task's lock,
// committed before it is answered).
#include "a2ad/tasks/pause.hpp"

#include <algorithm>
#include <cmath>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/tasks/pause_control.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/tasks/task_reader.hpp"
#include "a2ad/tasks/task_writer.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::IntOr;
using protocol::ObjOr;
using protocol::Str;

bool IsPauseMode(std::string_view mode) {
  return mode == kFinishStep || mode == kInterruptImmediate || mode == kWaitForCompletion;
}

namespace {

constexpr int64_t kMaxPauseMs = 30LL * 24 * 3600 * 1000;  // timers up to 30 days ahead
constexpr size_t kMaxEventName = 256;

Error Invalid(std::string field, const std::string& what) {
  return Error(ErrorCode::kInvalidParams, field + ": " + what, {{"field", field}});
}

}  // namespace

Result<PauseConditions> NormalizeConditions(const json::value& conditions, int64_t now_ms,
                                            std::string_view field) {
  PauseConditions out;
  const std::string base(field);
  if (conditions.is_null()) return out;
  if (!conditions.is_object()) return Invalid(base, "expected an object");
  for (const auto& kv : conditions.get_object()) {
    const std::string f = base + "." + std::string(kv.key());
    const json::value& v = kv.value();
    if (kv.key() == "onEvent") {
      if (!v.is_string() || v.get_string().empty() || v.get_string().size() > kMaxEventName)
        return Invalid(f, "expected an event name (1 to 256 characters)");
      out.normalized["onEvent"] = v;
    } else if (kv.key() == "trigger") {
      int64_t at = 0;
      if (v.is_string()) {
        if (!core::ParseTimestamp(v.get_string(), at))
          return Invalid(f, "expected an RFC 3339 time such as 2026-11-24T09:00:00Z");
      } else if (v.is_object() && v.get_object().size() == 1 &&
                 v.get_object().contains("afterMs") && v.get_object().at("afterMs").is_number()) {
        const double after = v.get_object().at("afterMs").to_number<double>();
        if (after < 0 || after > kMaxPauseMs) return Invalid(f + ".afterMs", "0 to 30 days");
        at = now_ms + static_cast<int64_t>(after);
      } else {
        return Invalid(f, "expected an RFC 3339 time or {\"afterMs\": n}");
      }
      if (at - now_ms > kMaxPauseMs) return Invalid(f, "more than 30 days ahead");
      out.trigger_at_ms = std::max<int64_t>(at, 1);
      out.normalized["trigger"] = core::FormatTimestamp(out.trigger_at_ms);
    } else if (kv.key() == "timeout") {
      if (!v.is_object()) return Invalid(f, "expected {durationMinutes, onTimeout}");
      json::object t;
      for (const auto& m : v.get_object()) {
        if (m.key() == "durationMinutes") {
          if (!m.value().is_number()) return Invalid(f + ".durationMinutes", "expected a number");
          const double minutes = m.value().to_number<double>();
          if (!(minutes > 0) || minutes * 60000 > kMaxPauseMs)
            return Invalid(f + ".durationMinutes", "expected more than 0, at most 30 days");
          t["durationMinutes"] = m.value();
          out.timeout_at_ms = now_ms + static_cast<int64_t>(std::llround(minutes * 60000));
        } else if (m.key() == "onTimeout") {
          if (m.value() != json::value("fail") && m.value() != json::value("resume"))
            return Invalid(f + ".onTimeout", "expected \"fail\" or \"resume\"");
          t["onTimeout"] = m.value();
        } else {
          return Invalid(f + "." + std::string(m.key()),
                         "unknown member (durationMinutes, onTimeout)");
        }
      }
      if (!t.contains("durationMinutes")) return Invalid(f + ".durationMinutes", "required");
      if (!t.contains("onTimeout")) t["onTimeout"] = "fail";
      out.normalized["timeout"] = std::move(t);
    } else {
      return Invalid(f, "unknown condition (onEvent, trigger, timeout)");
    }
  }
  return out;
}

json::object PauseEntry(const PauseEntryFields& f) {
  const PauseTaskRequest& r = f.request;
  json::object p{{"initiatedBy", r.initiated_by},
                 {"reason", r.reason},
                 {"mode", r.mode},
                 {"resumeToken", f.handle},
                 {"pausedAt", core::FormatTimestamp(f.now_ms)},
                 {"resumable", true},
                 {"resumeMode", r.initiated_by == "agent" ? "condition_or_explicit" : "explicit"},
                 {"previousState", f.a2a_state},
                 {"previousStatus", f.run_status}};
  if (!r.conditions.empty()) p["conditions"] = r.conditions;
  if (r.trigger_at_ms > 0) p["triggerAtMs"] = r.trigger_at_ms;
  if (r.timeout_at_ms > 0) p["timeoutAtMs"] = r.timeout_at_ms;
  int64_t until = 0;
  for (int64_t t : {r.trigger_at_ms, r.timeout_at_ms})
    if (t > 0 && (until == 0 || t < until)) until = t;
  if (until > 0) p["pausedUntil"] = core::FormatTimestamp(until);
  if (!r.summary.empty()) p["summary"] = r.summary;
  if (!r.metadata.empty()) p["metadata"] = r.metadata;
  if (!r.cascaded_from.empty()) p["cascadedFrom"] = r.cascaded_from;
  if (const PausePlan* plan = f.plan) {
    if (!plan->in_flight_node.empty()) p["inFlightNode"] = plan->in_flight_node;
    if (!plan->abandon_node.empty()) p["abandonNode"] = plan->abandon_node;
    if (!plan->child_run_id.empty()) {
      p["childRunId"] = plan->child_run_id;
      p["cascade"] = plan->cascade;
    }
  }
  if (!f.node_id.empty()) p["nodeId"] = f.node_id;
  if (!f.caller.empty()) p["caller"] = f.caller;
  return p;
}

const json::object* OpenPause(const protocol::RunSnapshot& run) {
  if (run.status != "paused" || !run.pause) return nullptr;
  return &*run.pause;
}

std::string PausedStateName(const json::object& pause) {
  return Str(pause, "initiatedBy") == "agent" ? "paused-by-agent" : "paused-by-client";
}

bool PauseAdmits(const protocol::RunSnapshot& run, const std::vector<EventDraft>& step) {
  const json::object* p = OpenPause(run);
  if (!p) return true;
  const std::string_view mode = Str(*p, "mode");
  const std::string_view node = Str(*p, "inFlightNode");
  if (mode == kInterruptImmediate || node.empty() || step.empty()) return false;
  if (const protocol::NodeState* st = run.Node(node); !st || st->status != "running") return false;
  bool ends_node = false;
  for (const auto& e : step) {
    if (e.node_id != node) return false;
    if (e.type == protocol::kEvNodeCompleted || e.type == protocol::kEvNodeEffect) {
      ends_node = true;  // an effect's result is logged: the call in flight is over
    } else if (e.type == protocol::kEvChildStatus) {
      if (mode != kWaitForCompletion || Str(e.payload, "status") != "running") return false;
    } else if (e.type != protocol::kEvArtifactCreated && e.type != protocol::kEvVariableChanged) {
      return false;
    }
  }
  return ends_node || mode == kWaitForCompletion;
}

// ---- PauseControl --------------------------------------------------------------------------

namespace {

Error NotPausable(const std::string& id, std::string why) {
  return Error(ErrorCode::kTaskNotPausable, "task " + id + " " + std::move(why), {{"taskId", id}});
}

std::string StateName(protocol::TaskState s) { return std::string(protocol::TaskStateLabel(s)); }

}  // namespace

PauseControl::PauseControl(TaskWriter& writer, TaskReader& reader, storage::TaskStore& store,
                           ReadExecutor& reads, const core::Clock& clock, core::IdGenerator& ids,
                           ExecutorFor executor_for, Redrive redrive)
    : writer_(writer),
      reader_(reader),
      store_(store),
      reads_(reads),
      clock_(clock),
      ids_(ids),
      executor_for_(std::move(executor_for)),
      redrive_(std::move(redrive)) {}

asio::awaitable<Result<RecordPtr>> PauseControl::Pause(const CallContext& ctx,
                                                       PauseTaskRequest req) {
  if (!IsPauseMode(req.mode))
    co_return Invalid("params.mode", "unknown mode '" + req.mode +
                                         "' (finish_step, interrupt_immediate, "
                                         "wait_for_completion)");
  auto visible = co_await reader_.Visible(ctx, req.task_id);
  if (!visible) co_return std::move(visible).error();
  Executor* ex = executor_for_(visible.value().skill_id);
  if (!ex)
    co_return Error(ErrorCode::kUnsupportedOperation,
                    "task " + req.task_id + " runs no known skill; it cannot be paused");
  auto slot = writer_.Acquire(req.task_id);
  const std::string handle = "suspend-" + ids_.Next();
  const std::string id = req.task_id;
  PausePlan plan;
  bool repeated = false;
  auto decide = [&](const storage::TaskRecord& head,
                    std::vector<EventDraft>& step) -> std::optional<Error> {
    repeated = false;  // (asked again when a commit is retried on a newer state)
    plan = PausePlan{};
    const protocol::TaskState s = head.task.status.state;
    if (protocol::IsTerminal(s))
      return NotPausable(id, "is " + StateName(s) + "; a finished task cannot be paused");
    if (protocol::IsInterrupted(s))
      return NotPausable(id, "is " + StateName(s) +
                                 ": it waits for an answer; answer or cancel it (a task "
                                 "cannot be paused at a gate)");
    if (const json::object* open = OpenPause(head.run)) {
      if (Str(*open, "initiatedBy") == req.initiated_by) {
        repeated = true;  // the same pause again: the same handle, nothing written
        step.clear();
        return std::nullopt;
      }
      return NotPausable(
          id, "is already " + PausedStateName(*open) + "; resume it with its handle or cancel it");
    }
    auto planned = ex->PlanPause(head, req.mode);
    if (!planned) return std::move(planned).error();
    plan = planned.value();
    PauseEntryFields f{req,
                       handle,
                       clock_.NowMs(),
                       std::string(RunStatus(head.run)),
                       StateName(s),
                       &plan,
                       {},
                       req.cascaded_from.empty() ? ctx.caller() : std::string()};
    step = OneEvent(protocol::kEvRunPaused, PauseEntry(f));
    return std::nullopt;
  };
  auto r = co_await writer_.CommitRecord(slot, {}, false, decide);
  if (!r) co_return std::move(r).error();
  RecordPtr rec = std::move(r).value();
  if (repeated) co_return rec;
  // The step in flight stops now (interrupt_immediate; an agent pause parks at once); a new
  // execution sleeps until the pause's timers, if it has any.
  if (req.mode == kInterruptImmediate) redrive_(slot, rec);
  if (plan.cascade && !plan.child_run_id.empty()) {
    PauseTaskRequest child;
    child.task_id = plan.child_run_id;
    child.mode = req.mode;
    child.reason = "parent run " + id + " was paused";
    child.cascaded_from = id;
    auto c = co_await Pause(ctx, std::move(child));
    if (!c && c.error().code != ErrorCode::kTaskNotPausable)
      core::LogWarn("pause of child run " + plan.child_run_id + " of " + id +
                    " failed: " + c.error().message);
  }
  co_return rec;
}

asio::awaitable<Result<RecordPtr>> PauseControl::Resume(const CallContext& ctx,
                                                        ResumeTaskRequest req) {
  auto visible = co_await reader_.Visible(ctx, req.task_id);
  if (!visible) co_return std::move(visible).error();
  auto slot = writer_.Acquire(req.task_id);
  const std::string id = req.task_id;
  json::object closed;  // the pause this resume ends
  auto decide = [&](const storage::TaskRecord& head,
                    std::vector<EventDraft>& step) -> std::optional<Error> {
    const protocol::TaskState s = head.task.status.state;
    if (protocol::IsTerminal(s))
      return NotPausable(id, "is " + StateName(s) + "; nothing to resume");
    const json::object* open = OpenPause(head.run);
    if (!open) return NotPausable(id, "is not paused (it is " + StateName(s) + ")");
    const std::string token(Str(*open, "resumeToken"));
    if (!req.on_event.empty()) {
      if (Str(ObjOr(*open, "conditions"), "onEvent") != req.on_event)
        return NotPausable(id, "does not wait for event '" + req.on_event + "'");
    } else if (req.handle != token) {
      return Error(ErrorCode::kResumeHandleMismatch,
                   "handle '" + req.handle + "' is not the handle of task " + id +
                       "'s pause (a resume names the pause it ends)",
                   {{"taskId", id}, {"field", "params.handle"}});
    }
    const int64_t now = clock_.NowMs();
    std::string cause = req.cause;
    if (req.timer) {
      const int64_t trigger = IntOr(*open, "triggerAtMs", 0);
      const int64_t timeout = IntOr(*open, "timeoutAtMs", 0);
      if (trigger > 0 && now >= trigger) {
        cause = std::string(kConditionFired);
      } else if (timeout > 0 && now >= timeout) {
        cause = std::string(kTimeoutCause);
        const json::object& t = ObjOr(ObjOr(*open, "conditions"), "timeout");
        if (Str(t, "onTimeout") != "resume") {
          closed = *open;
          json::object error{{"code", "pause_timeout"},
                             {"message", "the pause's timeout elapsed before it was resumed"}};
          step = OneEvent(protocol::kEvRunFailed, json::object{{"error", std::move(error)}});
          return std::nullopt;
        }
      } else {
        return Error(ErrorCode::kConflict, "the pause's timer is not due yet",
                     {{"reason", "not_due"}});
      }
    }
    closed = *open;
    json::object payload{
        {"previousState", PausedStateName(*open)}, {"cause", cause},
        {"hadResumeInput", req.input.has_value()}, {"continueTranscript", req.continue_transcript},
        {"resumedAt", core::FormatTimestamp(now)}, {"resumeToken", token}};
    if (req.input) payload["input"] = *req.input;
    if (!req.metadata.empty()) payload["metadata"] = req.metadata;
    if (!ctx.caller().empty()) payload["resumedBy"] = ctx.caller();
    step = OneEvent(protocol::kEvRunResumed, std::move(payload));
    return std::nullopt;
  };
  auto r = co_await writer_.CommitRecord(slot, {}, false, decide);
  if (!r) co_return std::move(r).error();
  RecordPtr rec = std::move(r).value();
  if (protocol::IsTerminal(rec->task.status.state)) {
    slot->Supersede();  // failed by its timeout: the parked execution stops
  } else {
    redrive_(slot, rec);
  }
  // A child paused with this run is resumed with it.
  const std::string child_id(Str(closed, "childRunId"));
  if (!child_id.empty() && closed.contains("cascade") &&
      closed.at("cascade") == json::value(true)) {
    auto child = co_await reader_.GetRecord(ctx, child_id);
    if (child && child.value())
      if (const json::object* cp = OpenPause(child.value()->run);
          cp && Str(*cp, "cascadedFrom") == id) {
        ResumeTaskRequest again;
        again.task_id = child_id;
        again.handle = std::string(Str(*cp, "resumeToken"));
        again.cause = req.cause == kTimeoutCause ? std::string(kExplicitResume) : req.cause;
        auto c = co_await Resume(ctx, std::move(again));
        if (!c)
          core::LogWarn("resume of child run " + child_id + " of " + id +
                        " failed: " + c.error().message);
      }
  }
  co_return rec;
}

// (Not in the coroutine: GCC 12 mis-compiles some temporaries inside coroutines.)
Result<std::vector<std::string>> PauseControl::RunsWaitingFor(const std::string& tenant,
                                                              const std::string& name) {
  // The store's index holds what storage::EventAwaited reads, written with each commit;
  // ResumeTask checks each run again under its lock. A store without one: none.
  auto ids = store_.UnfinishedRunsWaitingFor(tenant, name);
  if (!ids) return std::move(ids).error();
  if (!ids.value()) return std::vector<std::string>{};
  return std::move(*ids.value());
}

asio::awaitable<Result<std::vector<std::string>>> PauseControl::PostEvent(const CallContext& ctx,
                                                                          std::string name,
                                                                          json::value payload) {
  if (name.empty() || name.size() > kMaxEventName)
    co_return Invalid("name", "expected an event name (1 to 256 characters)");
  // The runs waiting for it may be parked with no execution, or held by another replica:
  // the store finds them (RunsWaitingFor, off the I/O threads).
  const std::string& tenant = ctx.principal.tenant;
  auto found = co_await reads_.Run([this, &tenant, &name] { return RunsWaitingFor(tenant, name); });
  if (!found) co_return std::move(found).error();
  const std::vector<std::string>& candidates = found.value();
  std::vector<std::string> resumed;
  for (const auto& id : candidates) {
    ResumeTaskRequest r;
    r.task_id = id;
    r.on_event = name;
    r.input = payload;
    r.cause = std::string(kExternalEvent);
    auto done = co_await Resume(ctx, std::move(r));
    if (done) resumed.push_back(id);  // else not waiting (any more), or a store failure
  }
  co_return resumed;
}

}  // namespace a2ad::tasks
