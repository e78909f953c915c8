#include "a2ad/ext/pause/pause_extension.hpp"

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/this_coro.hpp>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v03/proto_json.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/pause.hpp"
#include "a2ad/tasks/signal.hpp"

namespace a2ad::ext::pause {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::ObjOr;
using protocol::Str;
using transport::OperationCall;
using transport::OperationResult;

using Awaitable = asio::awaitable<Result<OperationResult>>;
using tasks::RecordPtr;

void ShowPausedStates(json::value& v, protocol::Wire shape) {
  if (v.is_array()) {
    for (auto& x : v.get_array()) ShowPausedStates(x, shape);
    return;
  }
  if (!v.is_object()) return;
  json::object& o = v.get_object();
  json::value* st = o.if_contains("status");
  json::value* md = o.if_contains("metadata");
  if (st && st->is_object() && md && md->is_object())
    if (json::value* p = md->get_object().if_contains("pause"); p && p->is_object()) {
      json::object& status = st->get_object();
      if (shape == protocol::Wire::kV03) {
        status["state"] = Str(p->get_object(), "state");
      } else {
        status["state"] = "TASK_STATE_PAUSED";
        json::object view = p->get_object();
        view.erase("state");
        status["pause"] = std::move(view);
      }
    }
  for (auto& kv : o)
    if (kv.key() != "metadata" && (kv.value().is_object() || kv.value().is_array()))
      ShowPausedStates(kv.value(), shape);
}

namespace {

constexpr size_t kMaxReason = 1024;

struct Target {
  std::string task_id;
  std::string context_id;
};

// The task a call names (taskId as the seed has it, id as A2A 1.0 and its REST path, name
// "tasks/<id>" as the 0.3 REST path), or the context of a bulk call; exactly one.
Result<Target> TargetOf(const json::object& p) {
  Target t;
  for (const char* k : {"taskId", "id"}) {
    auto v = protocol::OptString(p, "params", k);
    if (!v) return std::move(v).error();
    if (t.task_id.empty()) t.task_id = std::move(v).value();
  }
  if (t.task_id.empty()) {
    auto name = protocol::OptString(p, "params", "name");
    if (!name) return std::move(name).error();
    if (name->starts_with("tasks/")) t.task_id = name->substr(6);
  }
  auto ctx = protocol::OptString(p, "params", "contextId");
  if (!ctx) return std::move(ctx).error();
  t.context_id = std::move(ctx).value();
  if (t.task_id.empty() == t.context_id.empty())
    return Error(ErrorCode::kInvalidParams,
                 t.task_id.empty() ? "params.taskId: required (or params.contextId for every "
                                     "task of a context)"
                                   : "params: name a taskId or a contextId, not both",
                 {{"field", "params.taskId"}});
  return t;
}

Result<std::string> ReasonOf(const json::object& p) {
  auto r = protocol::OptString(p, "params", "reason");
  if (!r) return r;
  if (r->size() > kMaxReason)
    return Error(ErrorCode::kInvalidParams, "params.reason: at most 1024 characters",
                 {{"field", "params.reason"}});
  return r;
}

std::string TaskJson(const protocol::Task& task, protocol::Wire shape, bool literal) {
  json::value v = protocol::TaskToJson(task, shape);
  if (literal) ShowPausedStates(v, shape);
  return protocol::SerializeJson(v);
}

// The seed's result of tasks/pause and tasks/await_resumption: {taskId, state, handle,
// pausedAt, reason?}.
json::object PauseSummary(const storage::TaskRecord& rec) {
  const json::object& p = ObjOr(rec.task.metadata, "pause");
  json::object out{{"taskId", rec.task.id},
                   {"state", Str(p, "state")},
                   {"handle", Str(p, "resumeToken")},
                   {"pausedAt", Str(p, "pausedAt")}};
  if (!Str(p, "reason").empty()) out["reason"] = Str(p, "reason");
  if (!Str(p, "pausedUntil").empty()) out["pausedUntil"] = Str(p, "pausedUntil");
  return out;
}

// tasks/resume's result (the seed names none): {taskId, state, previousState, cause,
// resumedAt}, from the run.resumed entry the resume wrote.
json::object ResumeSummary(const storage::TaskRecord& rec) {
  const json::object& last = protocol::OrEmpty(rec.run.last_resume);
  json::object out{{"taskId", rec.task.id},
                   {"state", protocol::TaskStateLabel(rec.task.status.state)},
                   {"cause", Str(last, "cause")},
                   {"resumedAt", Str(last, "resumedAt")}};
  return out;
}

OperationResult Answer(const storage::TaskRecord& rec, const OperationCall& call, bool paused) {
  OperationResult r;
  const protocol::Wire shape = transport::WireOf(call.ctx);
  if (shape == protocol::Wire::kV03)
    r.result_json = protocol::SerializeJson(paused ? PauseSummary(rec) : ResumeSummary(rec));
  else
    // gRPC's Task has no paused state: its callers read metadata.pause (docs/PAUSE.md).
    r.result_json = TaskJson(rec.task, shape, call.ctx.binding != protocol::Binding::kGrpc);
  return r;
}

json::object ErrorEntry(const std::string& id, const Error& e) {
  return json::object{{"taskId", id},
                      {"error", json::object{{"code", protocol::MapError(e.code).jsonrpc_code},
                                             {"message", e.message}}}};
}

// Built outside coroutines (GCC 12 mis-compiles braced json initializers inside them).
OperationResult BulkAnswer(const std::string& context_id, json::array tasks, bool truncated) {
  OperationResult r;
  r.result_json = protocol::SerializeJson(json::object{
      {"contextId", context_id}, {"tasks", std::move(tasks)}, {"truncated", truncated}});
  return r;
}

// One call over every working task of a context: each paused (or resumed) by its own commit,
// a page of them at a time concurrently. {contextId, tasks: [summary | {taskId, error}],
// truncated}.
template <class Each>
Awaitable Bulk(tasks::TaskService* svc, const OperationCall& call, std::string context_id,
               bool resume, Each each) {
  storage::TaskQuery q;
  q.context_id = context_id;
  q.state = protocol::TaskState::kWorking;
  q.page_size = 100;
  json::array out;
  size_t seen = 0;
  bool truncated = false;
  auto io = co_await asio::this_coro::executor;
  for (;;) {
    auto page = co_await svc->ListRecords(call.ctx, q);
    if (!page) co_return std::move(page).error();
    std::vector<const storage::TaskRecord*> todo;
    for (const auto& rec : page->records) {
      if (resume && !tasks::OpenPause(rec.run)) continue;
      if (seen == kMaxBulkTasks) {
        truncated = true;
        break;
      }
      ++seen;
      todo.push_back(&rec);
    }
    std::vector<std::optional<Result<RecordPtr>>> results(todo.size());
    auto done = std::make_shared<tasks::Signal>();
    auto left = std::make_shared<std::atomic<size_t>>(todo.size());
    if (todo.empty()) done->Fire();
    for (size_t i = 0; i < todo.size(); ++i)
      asio::co_spawn(io, each(*todo[i]),
                     [&results, i, done, left](const std::exception_ptr& ep, Result<RecordPtr> r) {
                       results[i] = ep ? Result<RecordPtr>(Error(ErrorCode::kInternal, "failed"))
                                       : std::move(r);
                       if (--*left == 0) done->Fire();
                     });
    co_await done->Wait();
    for (size_t i = 0; i < todo.size(); ++i) {
      const Result<RecordPtr>& r = *results[i];
      if (!r)
        out.push_back(ErrorEntry(todo[i]->task.id, r.error()));
      else
        out.push_back(resume ? ResumeSummary(*r.value()) : PauseSummary(*r.value()));
    }
    if (truncated || page->next_page_token.empty()) break;
    q.page_token = page->next_page_token;
  }
  co_return BulkAnswer(context_id, std::move(out), truncated);
}

Awaitable Pause(tasks::TaskService* svc, const OperationCall& call, bool by_agent) {
  const json::object& p = call.params.get_object();
  auto target = TargetOf(p);
  if (!target) co_return std::move(target).error();
  auto reason = ReasonOf(p);
  if (!reason) co_return std::move(reason).error();
  auto metadata = protocol::OptObject(p, "params", "metadata");
  if (!metadata) co_return std::move(metadata).error();
  tasks::PauseTaskRequest req;
  req.reason = std::move(reason).value();
  req.metadata = std::move(metadata).value();
  if (by_agent) {
    // The agent parks at once (its step in flight starts again on resume).
    req.initiated_by = "agent";
    req.mode = std::string(tasks::kInterruptImmediate);
    auto summary = protocol::OptString(p, "params", "summary");
    if (!summary) co_return std::move(summary).error();
    req.summary = std::move(summary).value();
    const json::value* c = p.if_contains("conditions");
    auto conditions = tasks::NormalizeConditions(c ? *c : json::value(),
                                                 core::SystemClock().NowMs(), "params.conditions");
    if (!conditions) co_return std::move(conditions).error();
    req.conditions = std::move(conditions->normalized);
    req.trigger_at_ms = conditions->trigger_at_ms;
    req.timeout_at_ms = conditions->timeout_at_ms;
  } else {
    auto mode = protocol::OptString(p, "params", "mode");
    if (!mode) co_return std::move(mode).error();
    if (!mode->empty()) req.mode = std::move(mode).value();
    if (!tasks::IsPauseMode(req.mode))
      co_return Error(ErrorCode::kInvalidParams,
                      "params.mode: unknown mode '" + req.mode +
                          "' (finish_step, interrupt_immediate, wait_for_completion)",
                      {{"field", "params.mode"}});
  }
  if (!target->context_id.empty()) {
    auto each = [svc, &call, req](const storage::TaskRecord& rec) {
      tasks::PauseTaskRequest one = req;
      one.task_id = rec.task.id;
      return svc->PauseTask(call.ctx, std::move(one));
    };
    co_return co_await Bulk(svc, call, target->context_id, false, each);
  }
  req.task_id = target->task_id;
  auto rec = co_await svc->PauseTask(call.ctx, std::move(req));
  if (!rec) co_return std::move(rec).error();
  co_return Answer(*rec.value(), call, true);
}

Awaitable Resume(tasks::TaskService* svc, const OperationCall& call) {
  const json::object& p = call.params.get_object();
  auto target = TargetOf(p);
  if (!target) co_return std::move(target).error();
  tasks::ResumeTaskRequest req;
  for (const char* k : {"handle", "resumeToken"}) {
    auto h = protocol::OptString(p, "params", k);
    if (!h) co_return std::move(h).error();
    if (req.handle.empty()) req.handle = std::move(h).value();
  }
  if (const json::value* in = p.if_contains("input"); in && !in->is_null()) req.input = *in;
  auto cont = protocol::OptBool(p, "params", "continueTranscript");
  if (!cont) co_return std::move(cont).error();
  req.continue_transcript = cont->value_or(true);
  auto metadata = protocol::OptObject(p, "params", "metadata");
  if (!metadata) co_return std::move(metadata).error();
  req.metadata = std::move(metadata).value();
  if (!target->context_id.empty()) {
    // Every paused task of the context, each with its own handle (the caller names the
    // context, so it means all of them).
    auto each = [svc, &call, req](const storage::TaskRecord& rec) {
      tasks::ResumeTaskRequest one = req;
      one.task_id = rec.task.id;
      one.handle = std::string(Str(*tasks::OpenPause(rec.run), "resumeToken"));
      return svc->ResumeTask(call.ctx, std::move(one));
    };
    co_return co_await Bulk(svc, call, target->context_id, true, each);
  }
  if (req.handle.empty())
    co_return Error(ErrorCode::kInvalidParams,
                    "params.handle: required (the handle tasks/pause answered, "
                    "metadata.pause.resumeToken of the task)",
                    {{"field", "params.handle"}});
  req.task_id = target->task_id;
  auto rec = co_await svc->ResumeTask(call.ctx, std::move(req));
  if (!rec) co_return std::move(rec).error();
  co_return Answer(*rec.value(), call, false);
}

}  // namespace

transport::Extension MakePauseExtension(tasks::TaskService& service) {
  tasks::TaskService* svc = &service;
  transport::Extension ext;
  ext.uri = kPauseExtensionUri;
  ext.description =
      "Pause and resume tasks (tasks/pause, tasks/resume, tasks/await_resumption; PauseTask, "
      "ResumeTask, AwaitTaskResumption). Activated, paused tasks show as paused-by-client / "
      "paused-by-agent (0.3) or TASK_STATE_PAUSED with status.pause (1.0); otherwise as working "
      "with metadata.pause.";
  ext.params = json::object{
      {"supportsPause", true},
      {"supportsAwaitResumption", true},
      {"resumeCauses",
       json::array{"explicit_resume", "condition_fired", "timeout", "external_event"}},
      {"modes", json::array{"finish_step", "interrupt_immediate", "wait_for_completion"}},
      {"maxBulkTasks", kMaxBulkTasks}};
  using transport::Operation;
  using transport::ParamsRule;
  ext.operations.push_back(
      Operation{"PauseTask", "tasks/pause", "POST", "/tasks/{id}:pause", "/v1/{name=tasks/*}:pause",
                false, transport::kScopeTasksWrite, "", ParamsRule::kObject,
                [svc](const OperationCall& c) { return Pause(svc, c, false); }});
  ext.operations.push_back(Operation{"ResumeTask", "tasks/resume", "POST", "/tasks/{id}:resume",
                                     "/v1/{name=tasks/*}:resume", false,
                                     transport::kScopeTasksWrite, "", ParamsRule::kObject,
                                     [svc](const OperationCall& c) { return Resume(svc, c); }});
  ext.operations.push_back(Operation{
      "AwaitTaskResumption", "tasks/await_resumption", "POST", "/tasks/{id}:awaitResumption",
      "/v1/{name=tasks/*}:awaitResumption", false, transport::kScopeTasksWrite, "",
      ParamsRule::kObject, [svc](const OperationCall& c) { return Pause(svc, c, true); }});
  ext.view = [](json::value& v, protocol::Wire shape) { ShowPausedStates(v, shape); };
  return ext;
}

}  // namespace a2ad::ext::pause
