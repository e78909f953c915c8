// The OpenWOP side of TaskService: runs started without an A2A message (POST /v1/runs, child
// runs), answers to a run's interrupt (REST, interrupt tokens, timeouts), cancel with its
// cascade to child runs. (Its reads, records, events, waits and event streams, are
// TaskReader's: task_reader.cpp.)

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <limits>

#include "a2ad/core/log.hpp"
#include "a2ad/core/sha256.hpp"
#include "a2ad/core/trace.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/tasks/executions.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/tasks/task_reader.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/tasks/task_writer.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::Task;
using protocol::TaskState;

void KeepTraceparent(json::object& metadata, const std::string& traceparent) {
  if (traceparent.empty()) return;
  json::value& ow = metadata["openwop"];
  if (!ow.is_object()) ow = json::object();
  json::object& o = ow.as_object();
  if (const auto* given = o.if_contains("traceparent");
      given && given->is_string() && core::TraceParent::Parse(given->as_string()))
    return;
  o["traceparent"] = traceparent;
}

std::string NameBasedId(std::string_view name) {
  const core::Sha256Digest digest = core::Sha256Of(name);
  unsigned char d[16];
  std::copy(digest.begin(), digest.begin() + 16, d);
  d[6] = static_cast<unsigned char>((d[6] & 0x0f) | 0x80);  // version 8
  d[8] = static_cast<unsigned char>((d[8] & 0x3f) | 0x80);  // RFC 9562 variant
  return core::FormatUuid(d);
}

asio::awaitable<Result<Task>> TaskService::CancelRun(const CallContext& ctx, std::string run_id,
                                                     std::string reason,
                                                     std::string parent_run_id) {
  auto visible = co_await reader_->Visible(ctx, run_id);
  if (!visible) co_return std::move(visible).error();
  auto slot = writer_->Acquire(run_id);
  json::object payload{{"reason", reason}, {"cancelledBy", "client"}, {"caller", ctx.caller()}};
  if (!parent_run_id.empty()) {
    payload.erase("caller");
    payload["parentRunId"] = parent_run_id;
    payload["cancelledBy"] = "parent";
  }
  auto r = co_await writer_->CommitRecord(
      slot, OneEvent(protocol::kEvRunCancelled, std::move(payload)), false, {});
  if (!r) {
    if (r.error().code != ErrorCode::kUnsupportedOperation) co_return std::move(r).error();
    auto now = co_await reader_->Load(run_id);
    // Cancel is idempotent in A2A 1.0 (§3.1.5); A2A 0.3 clients (and its TCK) expect a task
    // that is already canceled to be not cancelable, as the 0.3 SDKs answer.
    if (now && now.value() && now.value()->task.status.state == TaskState::kCanceled &&
        ctx.version != protocol::WireVersion::kV03)
      co_return std::move(now.value()->task);
    TaskState s = now && now.value() ? now.value()->task.status.state : TaskState::kUnspecified;
    co_return Error(ErrorCode::kTaskNotCancelable,
                    "task " + run_id + " is " + std::string(protocol::TaskStateLabel(s)) +
                        " and can no longer be canceled",
                    {{"taskId", run_id}});
  }
  slot->cancel_requested = true;
  slot->WakeSleepers();
  if (Executor* ex = ExecutorFor(r.value()->skill_id)) {
    runs_->Spawn(ex->AfterCancel(r.value()));  // drained at shutdown like an execution
  }
  // Cascade: the run's unfinished children are cancelled too (DIGEST §4.6 cascade-cancel).
  // Children are of the parent's tenant, so the same context sees them.
  const RecordPtr& rec = r.value();
  for (const protocol::ChildRun& c : rec->run.child_runs) {
    auto child = co_await CancelRun(ctx, c.run_id, "parent-cancelled", run_id);
    if (!child && child.error().code != ErrorCode::kTaskNotCancelable &&
        child.error().code != ErrorCode::kTaskNotFound)
      core::LogWarn("cancel of child run " + c.run_id + " of " + run_id +
                    " failed: " + child.error().message);
  }
  co_return rec->task;
}

std::optional<Error> TaskService::CheckRunInputs(const std::string& skill_id,
                                                 const json::object& inputs) const {
  Executor* executor = ExecutorFor(skill_id);
  if (!executor)
    return Error(ErrorCode::kInvalidParams,
                 "workflowId: unknown workflow '" + skill_id + "'; available: " + AvailableSkills(),
                 {{"field", "workflowId"}});
  return executor->CheckInputs(inputs);
}

asio::awaitable<Result<StartedRun>> TaskService::StartRun(const CallContext& ctx,
                                                          StartRunRequest req) {
  if (!runs_->accepting()) co_return Error(ErrorCode::kUnavailable, "server is shutting down");
  if (auto refused = CheckRunInputs(req.skill_id, req.inputs)) co_return std::move(*refused);
  const std::string run_id = req.run_id.empty() ? ids_.Next() : req.run_id;
  protocol::Message msg;
  msg.message_id = run_id;
  msg.task_id = run_id;
  msg.context_id = req.context_id.empty() ? run_id : req.context_id;
  msg.role = protocol::Role::kUser;
  msg.parts.push_back(protocol::Part::Data(req.inputs));
  json::object payload{{"contextId", msg.context_id},
                       {"skillId", req.skill_id},
                       {"message", protocol::MessageToJson(msg)},
                       {"transport", req.transport},
                       {"tags", req.tags},
                       {"inputs", req.inputs}};
  KeepTraceparent(req.metadata, ctx.traceparent);  // the run is a child of the caller's span
  if (!req.metadata.empty()) payload["runMetadata"] = req.metadata;
  if (!req.task_metadata.empty()) payload["taskMetadata"] = std::move(req.task_metadata);
  if (!req.request_digest.empty()) payload["requestDigest"] = req.request_digest;
  if (!req.parent_run_id.empty()) {
    payload["parentRunId"] = req.parent_run_id;
    payload["parentNodeId"] = req.parent_node_id;
  }
  auto slot = writer_->Acquire(run_id);
  StartedRun out;
  TaskWriter::Extension first_steps;
  if (req.first_steps_inline)
    first_steps = [executor = ExecutorFor(req.skill_id)](const storage::TaskRecord& fresh) {
      return executor->FirstSteps(fresh);
    };
  auto r = co_await writer_->Create(slot, ctx, req.dedup_key,
                                    OneEvent(protocol::kEvTaskSubmitted, std::move(payload)),
                                    out.replayed, std::move(first_steps));
  if (!r) co_return std::move(r).error();
  out.record = std::move(r).value();
  // A run its creating commit already finished (inline first steps) has nothing to execute.
  if (!out.replayed && !protocol::IsTerminal(out.record->task.status.state))
    runs_->Start(writer_->Acquire(out.record->task.id), out.record, msg, req.skill_id, std::nullopt,
                 options_.cluster ? 1 : 0);  // its creating commit took the lease
  co_return out;
}

asio::awaitable<Result<RecordPtr>> TaskService::ResolveInterrupt(const CallContext& ctx,
                                                                 std::string run_id,
                                                                 ResolveRequest req) {
  auto stored = co_await reader_->Visible(ctx, run_id, "run");
  if (!stored) co_return std::move(stored).error();
  const std::string skill_id = stored->skill_id;
  Executor* executor = ExecutorFor(skill_id);
  if (!executor)
    co_return Error(ErrorCode::kUnsupportedOperation, "run " + run_id + " has no executor");
  req.caller = ctx.caller();  // decidedBy / resolvedBy: who the context says is answering
  req.principal = ctx.principal;
  auto slot = writer_->Acquire(run_id);
  auto resumes = std::make_shared<bool>(true);
  auto resolve = [&req, executor, resumes](const storage::TaskRecord& current,
                                           std::vector<EventDraft>& step) -> std::optional<Error> {
    auto resolution = executor->Resolve(current, req);
    if (!resolution) return std::move(resolution).error();
    *resumes = resolution->resumes && !resolution->changes_nothing;
    step = std::move(resolution->events);
    // An answer given already (a repeated vote) writes nothing: the caller gets the record
    // as it is.
    if (resolution->changes_nothing) {
      step.clear();
      return std::nullopt;
    }
    if (step.empty()) return Error(ErrorCode::kInternal, "the resolution commits nothing");
    return std::nullopt;
  };
  auto r = co_await writer_->CommitRecord(slot, {}, false, resolve);
  if (!r) co_return std::move(r).error();
  RecordPtr rec = std::move(r).value();
  if (*resumes) {
    const protocol::Message* trigger = LastUserMessage(rec->task);
    protocol::Message none;
    runs_->Start(slot, rec, trigger ? *trigger : none, skill_id);
  }
  co_return rec;
}

}  // namespace a2ad::tasks
