#include "a2ad/ext/opt/opt_extension.hpp"

#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"

namespace a2ad::ext::opt {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using transport::OperationCall;
using transport::OperationResult;

// Each handler is a coroutine function whose parameters live in its frame; what it hands to
// the store is built by params:: (plain functions) and passed as named values.
using Awaitable = asio::awaitable<Result<OperationResult>>;

namespace {

std::optional<Error> NotActivated(const OperationCall& call, std::string_view method) {
  if (call.ctx.Activated(kOptExtensionUri)) return std::nullopt;
  return Error(ErrorCode::kExtensionSupportRequired,
               std::string(method) +
                   " is a method of the Objective-Plan-Task extension: activate it by sending "
                   "the header A2A-Extensions: " +
                   kOptExtensionUri + " (X-A2A-Extensions is read too)",
               {{"extension", kOptExtensionUri}});
}

const json::object& Params(const OperationCall& call) { return call.params.get_object(); }

OperationResult Answer(const char* key, json::value v) {
  json::object o;
  o[key] = std::move(v);
  OperationResult r;
  r.result_json = protocol::SerializeJson(o);
  return r;
}

OperationResult PlanAnswer(Objective& o, const std::string& plan_id, bool tasks) {
  const Plan* p = FindPlan(o, plan_id);
  return Answer("plan", p ? json::value(ToJson(*p, tasks)) : json::value(nullptr));
}

OperationResult TaskAnswer(Objective& o, const std::string& task_id) {
  const PlanTask* t = FindTask(o, task_id);
  return Answer("task", t ? json::value(ToJson(*t)) : json::value(nullptr));
}

OperationResult ListAnswer(const OptStore::Page& page) {
  json::array items;
  for (const auto& o : page.objectives) items.emplace_back(ToJson(o, false, false));
  json::object out;
  out["objectives"] = std::move(items);
  if (!page.next_page_token.empty()) out["nextPageToken"] = page.next_page_token;
  out["totalSize"] = page.total_size;
  OperationResult r;
  r.result_json = protocol::SerializeJson(out);
  return r;
}

std::string_view HeaderOf(const OperationCall& call, std::string_view name) {
  return call.http ? call.http->Header(name) : std::string_view();
}

// ---- objectives ----------------------------------------------------------------------------

Awaitable CreateObjective(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "objectives/create")) co_return *e;
  auto o = params::NewObjective(Params(call), call.ctx, *d.ids, d.store->limits(),
                                d.clock->NowMs());
  if (!o) co_return std::move(o).error();
  auto written = co_await d.store->Create(std::move(o).value());
  if (!written) co_return std::move(written).error();
  co_return Answer("objective", ToJson(written->objective, true, true));
}

Awaitable GetObjective(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "objectives/get")) co_return *e;
  auto g = params::ReadGetObjective(Params(call));
  if (!g) co_return std::move(g).error();
  auto o = co_await d.store->Get(call.ctx.tenant(), OptStore::By::kObjective, g->id);
  if (!o) co_return std::move(o).error();
  co_return Answer("objective", ToJson(o.value(), g->plans, g->tasks));
}

Awaitable ListObjectives(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "objectives/list")) co_return *e;
  auto l = params::ReadList(call.params);
  if (!l) co_return std::move(l).error();
  auto page = co_await d.store->List(call.ctx.tenant(), l->status, l->page_size, l->page_token);
  if (!page) co_return std::move(page).error();
  co_return ListAnswer(page.value());
}

Awaitable UpdateObjective(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "objectives/update")) co_return *e;
  const int64_t now = d.clock->NowMs();
  auto u = params::ReadObjectiveUpdate(Params(call), d.store->limits(), now);
  if (!u) co_return std::move(u).error();
  params::Update update = std::move(u).value();
  auto written = co_await d.store->Update(call.ctx.tenant(), OptStore::By::kObjective, update.id,
                                          std::move(update.change), now);
  if (!written) co_return std::move(written).error();
  co_return Answer("objective", ToJson(written->objective, true, true));
}

Awaitable SubscribeObjective(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "objectives/subscribe")) co_return *e;
  auto s = params::ReadSubscribe(Params(call), HeaderOf(call, "Last-Event-ID"));
  if (!s) co_return std::move(s).error();
  const std::string id = s->first;
  const std::optional<int64_t> after = s->second;
  const std::string field =
      Params(call).contains("afterSequence") ? "params.afterSequence" : "Last-Event-ID";
  auto start =
      co_await d.feed->Subscribe(call.ctx.tenant(), id, after, d.stream_queue_limit, field);
  if (!start) co_return std::move(start).error();
  OperationResult r;
  r.stream = std::move(start).value();
  co_return r;
}

// ---- plans ---------------------------------------------------------------------------------

Awaitable CreatePlan(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "plans/create")) co_return *e;
  const int64_t now = d.clock->NowMs();
  auto n = params::ReadNewPlan(Params(call), *d.ids, d.store->limits(), d.check_skill, now);
  if (!n) co_return std::move(n).error();
  params::NewPlan plan = std::move(n).value();
  auto written = co_await d.store->Update(call.ctx.tenant(), OptStore::By::kObjective,
                                          plan.objective_id, std::move(plan.change), now);
  if (!written) co_return std::move(written).error();
  co_return PlanAnswer(written->objective, plan.plan_id, true);
}

Awaitable GetPlan(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "plans/get")) co_return *e;
  auto g = params::ReadGetPlan(Params(call));
  if (!g) co_return std::move(g).error();
  auto o = co_await d.store->Get(call.ctx.tenant(), OptStore::By::kPlan, g->first);
  if (!o) co_return std::move(o).error();
  co_return PlanAnswer(o.value(), g->first, g->second);
}

Awaitable UpdatePlan(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "plans/update")) co_return *e;
  const int64_t now = d.clock->NowMs();
  auto u = params::ReadPlanUpdate(Params(call), d.store->limits(), now);
  if (!u) co_return std::move(u).error();
  params::Update update = std::move(u).value();
  auto written = co_await d.store->Update(call.ctx.tenant(), OptStore::By::kPlan, update.id,
                                          std::move(update.change), now);
  if (!written) co_return std::move(written).error();
  co_return PlanAnswer(written->objective, update.id, true);
}

// ---- plan tasks ----------------------------------------------------------------------------

Awaitable LinkTask(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "tasks/link")) co_return *e;
  auto l = params::ReadLink(Params(call));
  if (!l) co_return std::move(l).error();
  const std::string task_id = l->first;
  const std::string a2a_id = l->second;
  // A task of this host (the caller's tenant's) lends its state and is followed; another
  // agent's is reported by tasks/updateStatus.
  auto written = co_await d.store->Link(call.ctx.tenant(), task_id, a2a_id, d.clock->NowMs());
  if (!written) co_return std::move(written).error();
  co_return TaskAnswer(written->objective, task_id);
}

Awaitable UpdateTaskStatus(OptExtensionDeps d, const OperationCall& call) {
  if (auto e = NotActivated(call, "tasks/updateStatus")) co_return *e;
  const int64_t now = d.clock->NowMs();
  auto u = params::ReadTaskStatus(Params(call), now);
  if (!u) co_return std::move(u).error();
  params::Update update = std::move(u).value();
  auto written = co_await d.store->Update(call.ctx.tenant(), OptStore::By::kTask, update.id,
                                          std::move(update.change), now);
  if (!written) co_return std::move(written).error();
  co_return TaskAnswer(written->objective, update.id);
}

// ---- joining by message --------------------------------------------------------------------

// The objective a message creates (one per message of one caller: a retry finds it).
Objective MessageObjective(const params::Join& j, const protocol::CallContext& ctx,
                           const protocol::Message& msg, int64_t now_ms) {
  Objective o;
  o.id = "obj-" + tasks::NameBasedId("opt/v1 objective of a message\n" + ctx.tenant() + "\n" +
                                     ctx.caller() + "\n" + msg.context_id + "\n" + msg.message_id);
  o.tenant = ctx.tenant();
  o.owner = ctx.caller();
  o.name = j.name;
  o.description = j.description;
  o.created_at_ms = o.updated_at_ms = now_ms;
  return o;
}

asio::awaitable<Result<void>> PrepareJoin(OptStore* store, const core::Clock* clock,
                                          const protocol::CallContext& ctx,
                                          protocol::SendMessageRequest& req,
                                          json::object& task_metadata) {
  auto join = params::ReadJoin(req.message.metadata, req.metadata, store->limits());
  if (!join) co_return std::move(join).error();
  if (!join.value()) co_return Result<void>();
  const params::Join j = std::move(*join.value());
  std::string objective_id = j.id;
  if (objective_id.empty()) {
    Objective fresh = MessageObjective(j, ctx, req.message, clock->NowMs());
    objective_id = fresh.id;
    if (!req.message.context_id.empty() && req.message.context_id != objective_id)
      co_return Error(ErrorCode::kInvalidParams,
                      "message.contextId: a message that creates an objective starts its "
                      "conversation (leave contextId out)",
                      {{"field", "message.contextId"}});
    auto made = co_await store->Create(std::move(fresh), true);
    if (!made) co_return std::move(made).error();
  } else {
    auto found = co_await store->Get(ctx.tenant(), OptStore::By::kObjective, objective_id);
    if (!found) co_return std::move(found).error();
    if (auto ok = CanJoin(found.value(), j.plan_id, store->limits()); !ok)
      co_return std::move(ok).error();
    if (!req.message.context_id.empty() && req.message.context_id != objective_id)
      co_return Error(ErrorCode::kInvalidParams,
                      "message.contextId: a task of objective '" + objective_id +
                          "' has contextId '" + objective_id + "' (send it, or none)",
                      {{"field", "message.contextId"}});
  }
  req.message.context_id = objective_id;
  task_metadata[kObjectiveIdKey] = objective_id;
  if (!j.plan_id.empty()) task_metadata[kPlanIdKey] = j.plan_id;
  co_return Result<void>();
}

}  // namespace

std::function<asio::awaitable<Result<void>>(const protocol::CallContext&,
                                            protocol::SendMessageRequest&, json::object&)>
MakeOptMessageHook(OptStore& store, const core::Clock& clock) {
  OptStore* s = &store;
  const core::Clock* c = &clock;
  return [s, c](const protocol::CallContext& ctx, protocol::SendMessageRequest& req,
                json::object& md) { return PrepareJoin(s, c, ctx, req, md); };
}

transport::Extension MakeOptExtension(OptExtensionDeps d) {
  const Limits& limits = d.store->limits();
  transport::Extension ext;
  ext.uri = kOptExtensionUri;
  ext.description =
      "Objective-Plan-Task: objectives made of plans made of tasks, stored durably, their "
      "statuses rolled up from the tasks, plans executed as runs of this host's workflows "
      "(objectives/*, plans/*, tasks/link, tasks/updateStatus).";
  json::object card_params;
  card_params["maxPlansPerObjective"] = limits.max_plans_per_objective;
  card_params["maxTasksPerPlan"] = limits.max_tasks_per_plan;
  card_params["persistenceEnabled"] = true;
  card_params["executesPlans"] = true;
  card_params["streaming"] = true;
  ext.params = std::move(card_params);
  using transport::Operation;
  using transport::ParamsRule;
  // name, scope, params, REST 1.0 method and route, handler; the A2A 0.3 REST route is the
  // 1.0 one under /v1.
  auto add = [&](const char* name, const char* scope, ParamsRule rule, const char* method,
                 const char* route, bool streaming, Awaitable (*fn)(OptExtensionDeps, const OperationCall&)) {
    Operation op;
    op.name = name;
    op.any_version = true;
    op.scope = scope;
    op.params = rule;
    op.http_method = method;
    op.rest_path = route;
    op.v03_rest_path = std::string("/v1") + route;
    op.streaming = streaming;
    op.handler = [d, fn](const OperationCall& c) { return fn(d, c); };
    ext.operations.push_back(std::move(op));
  };
  const char* read = transport::kScopeTasksRead;
  const char* write = transport::kScopeTasksWrite;
  add("objectives/create", write, ParamsRule::kObject, "POST", "/objectives", false,
      CreateObjective);
  add("objectives/get", read, ParamsRule::kObject, "GET", "/objectives/{id}", false, GetObjective);
  add("objectives/list", read, ParamsRule::kObjectOrAbsent, "GET", "/objectives", false,
      ListObjectives);
  add("objectives/update", write, ParamsRule::kObject, "PATCH", "/objectives/{id}", false,
      UpdateObjective);
  add("objectives/subscribe", read, ParamsRule::kObject, "GET", "/objectives/{id}:subscribe", true,
      SubscribeObjective);
  add("plans/create", write, ParamsRule::kObject, "POST", "/objectives/{objectiveId}/plans", false,
      CreatePlan);
  add("plans/get", read, ParamsRule::kObject, "GET", "/plans/{id}", false, GetPlan);
  add("plans/update", write, ParamsRule::kObject, "PATCH", "/plans/{id}", false, UpdatePlan);
  add("tasks/link", write, ParamsRule::kObject, "POST", "/planTasks/{planTaskId}:link", false,
      LinkTask);
  add("tasks/updateStatus", write, ParamsRule::kObject, "POST",
      "/planTasks/{planTaskId}:updateStatus", false, UpdateTaskStatus);
  return ext;
}

}  // namespace a2ad::ext::opt
