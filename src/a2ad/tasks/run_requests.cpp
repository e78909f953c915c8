// The OpenWOP side of TaskService: runs started without an A2A message (POST /v1/runs, child
// runs), answers to a run's interrupt (REST, interrupt tokens, timeouts), cancel with its
// cascade to child runs, the stored records and events, waits and event streams.
#include <openssl/sha.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <limits>

#include "a2ad/core/log.hpp"
#include "a2ad/core/trace.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/run_projection.hpp"
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
using RecordPtr = std::shared_ptr<const storage::TaskRecord>;

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
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(name.data()), name.size(), digest);
  unsigned char d[16];
  std::copy(digest, digest + 16, d);
  d[6] = static_cast<unsigned char>((d[6] & 0x0f) | 0x80);  // version 8
  d[8] = static_cast<unsigned char>((d[8] & 0x3f) | 0x80);  // RFC 9562 variant
  return core::FormatUuid(d);
}

asio::awaitable<Result<Task>> TaskService::CancelRun(const CallContext& ctx, std::string run_id,
                                                     std::string reason,
                                                     std::string parent_run_id) {
  auto visible = co_await Visible(ctx, run_id);
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
    auto now = co_await Load(run_id);
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
    ++running_;  // drained at shutdown like an execution
    asio::co_spawn(io_, ex->AfterCancel(r.value()),
                   [this](const std::exception_ptr&) { --running_; });
  }
  // Cascade: the run's unfinished children are cancelled too (DIGEST §4.6 cascade-cancel).
  // Children are of the parent's tenant, so the same context sees them.
  const RecordPtr& rec = r.value();
  if (auto* children = rec->run.if_contains("childRuns"); children && children->is_array())
    for (const auto& c : children->get_array()) {
      if (!c.is_object() || !c.get_object().contains("runId")) continue;
      const json::value& id = c.get_object().at("runId");
      if (!id.is_string()) continue;
      auto child =
          co_await CancelRun(ctx, std::string(id.get_string()), "parent-cancelled", run_id);
      if (!child && child.error().code != ErrorCode::kTaskNotCancelable &&
          child.error().code != ErrorCode::kTaskNotFound)
        core::LogWarn("cancel of child run " + std::string(id.get_string()) + " of " + run_id +
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
  if (!accepting_) co_return Error(ErrorCode::kUnavailable, "server is shutting down");
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
    StartExecution(writer_->Acquire(out.record->task.id), out.record, msg, req.skill_id,
                   std::nullopt,
                   options_.cluster ? 1 : 0);  // its creating commit took the lease
  co_return out;
}

asio::awaitable<Result<RecordPtr>> TaskService::ResolveInterrupt(const CallContext& ctx,
                                                                 std::string run_id,
                                                                 ResolveRequest req) {
  auto stored = co_await Visible(ctx, run_id, "run");
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
    StartExecution(slot, rec, trigger ? *trigger : none, skill_id);
  }
  co_return rec;
}

asio::awaitable<Result<std::optional<storage::TaskRecord>>> TaskService::GetRecord(
    const CallContext& ctx, std::string id) {
  auto stored = co_await Load(id);
  if (stored && stored.value() && stored.value()->tenant != ctx.tenant())
    co_return std::optional<storage::TaskRecord>();  // another tenant's: not there
  co_return stored;
}

asio::awaitable<Result<storage::TaskPage>> TaskService::ListRecords(const CallContext& ctx,
                                                                    storage::TaskQuery q) {
  q.tenant = ctx.tenant();
  q.all_tenants = false;
  co_return co_await reads_->Run([this, &q] { return store_.List(q); });
}

asio::awaitable<Result<std::vector<protocol::RunEvent>>> TaskService::ReadEvents(
    const CallContext& ctx, std::string id, int64_t after_sequence, size_t limit) {
  const std::string tenant = ctx.tenant();
  co_return co_await reads_->Run(
      id, [this, &tenant, &id, after_sequence, limit]() -> Result<std::vector<protocol::RunEvent>> {
        auto stored = store_.Get(id);
        if (!stored) return std::move(stored).error();
        if (!stored.value() || stored.value()->tenant != tenant)
          return std::vector<protocol::RunEvent>();  // as for an unknown run
        return store_.ReadEvents(id, after_sequence, limit);
      });
}

asio::awaitable<RecordPtr> TaskService::WaitForRecord(
    const CallContext& ctx, std::string id, std::function<bool(const storage::TaskRecord&)> pred,
    std::chrono::milliseconds timeout) {
  // Seed the slot's published record from the store, so a condition already true (or a
  // run nobody committed to since this process started) is seen without a new commit.
  auto stored = co_await Load(id);
  if (stored && stored.value() && stored.value()->tenant != ctx.tenant())
    co_return nullptr;  // another tenant's run: nothing to see
  auto slot = writer_->Acquire(id);
  if (stored && stored.value()) {
    auto rec = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
    std::lock_guard pub(slot->pub_mu);
    if (!slot->published || slot->published->last_sequence < rec->last_sequence)
      slot->published = rec;
  }
  co_return co_await writer_->WaitUntil(slot, std::move(pred), timeout);
}

asio::awaitable<Result<StreamStart>> TaskService::SubscribeRunEvents(const CallContext& ctx,
                                                                     std::string id,
                                                                     int64_t after_sequence,
                                                                     size_t queue_capacity) {
  auto exists = co_await Visible(ctx, id, "run");
  if (!exists) co_return std::move(exists).error();
  // Subscribe first, then read the log: every event is in one or the other (or both, and
  // the stream skips sequences it already sent).
  auto slot = writer_->Acquire(id);
  auto sub = std::make_shared<Subscription>(queue_capacity);
  StreamStart start;
  start.subscription = sub;
  start.detach = writer_->Attach(slot, sub);
  struct Read {
    std::vector<protocol::RunEvent> events;
    std::optional<storage::TaskRecord> record;
  };
  auto read = co_await reads_->Run(id, [this, &id, after_sequence]() -> Result<Read> {
    Read out;
    auto events = store_.ReadEvents(id, after_sequence, std::numeric_limits<size_t>::max());
    if (!events) return std::move(events).error();
    out.events = std::move(events).value();
    auto rec = store_.Get(id);
    if (!rec) return std::move(rec).error();
    out.record = std::move(rec).value();
    return out;
  });
  if (!read) co_return std::move(read).error();
  auto& events = read->events;
  if (!read->record) co_return NotFound("run", id);
  start.last_sequence = after_sequence;
  start.task_terminal =
      protocol::IsTerminal(read->record->task.status.state) || IsTerminalRun(read->record->run);
  for (size_t i = 0; i < events.size(); ++i) {
    auto item = std::make_shared<StreamItem>();
    item->sequence = events[i].sequence;
    item->a2a = false;
    item->run_terminal = start.task_terminal && i + 1 == events.size();
    item->run_event = std::make_shared<const protocol::RunEvent>(std::move(events[i]));
    start.last_sequence = item->sequence;
    start.backlog.push_back(std::move(item));
  }
  start.last_sequence = std::max(start.last_sequence, after_sequence);
  // What a commit seen later (on the change feed) is read from: only a record the backlog
  // reaches (a later one would hide the events between).
  if (read->record->last_sequence == start.last_sequence) writer_->Seed(slot, *read->record);
  start.record = std::make_shared<const storage::TaskRecord>(std::move(*read->record));
  co_return start;
}

}  // namespace a2ad::tasks
