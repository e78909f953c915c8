#include "a2ad/ext/opt/opt_params.hpp"

#include "a2ad/protocol/event_cursor.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::ext::opt::params {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr int kMaxPageSize = 100;

Error Invalid(const std::string& field, const std::string& message) {
  return Error(ErrorCode::kInvalidParams, field + ": " + message, {{"field", field}});
}

// The first of `names` present and non-empty (aliases of one id); else "required".
Result<std::string> IdParam(const json::object& p, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    auto v = protocol::OptString(p, "params", n);
    if (!v) return std::move(v).error();
    if (!v->empty()) return std::move(v).value();
  }
  return Invalid(std::string("params.") + *names.begin(), "required (a non-empty string)");
}

Result<bool> FlagParam(const json::object& p, const char* name, bool fallback) {
  auto v = protocol::OptBool(p, "params", name);
  if (!v) return std::move(v).error();
  return v->value_or(fallback);
}

// name, description, metadata of an update (each optional).
struct TextUpdate {
  std::optional<std::string> name;
  std::optional<std::string> description;
  std::optional<json::object> metadata;
};

Result<TextUpdate> ReadTextUpdate(const json::object& p, const Limits& limits) {
  TextUpdate u;
  if (p.contains("name")) {
    auto v = protocol::ReqString(p, "params", "name");
    if (!v) return std::move(v).error();
    u.name = std::move(v).value();
  }
  if (p.contains("description")) {
    auto v = protocol::OptString(p, "params", "description");
    if (!v) return std::move(v).error();
    u.description = std::move(v).value();
  }
  if (p.contains("metadata")) {
    auto v = protocol::OptObject(p, "params", "metadata");
    if (!v) return std::move(v).error();
    u.metadata = std::move(v).value();
  }
  if (auto ok = CheckFields("params", u.name.value_or("-"), u.description.value_or(""),
                            u.metadata.value_or(json::object()), limits, false);
      !ok)
    return std::move(ok).error();
  return u;
}

template <class T>
void ApplyText(T& target, const TextUpdate& u, int64_t now_ms) {
  bool moved = false;
  if (u.name && *u.name != target.name) target.name = *u.name, moved = true;
  if (u.description && *u.description != target.description)
    target.description = *u.description, moved = true;
  if (u.metadata && *u.metadata != target.metadata) target.metadata = *u.metadata, moved = true;
  if (moved) target.updated_at_ms = now_ms;
}

// The id, the text fields and a status (named by `parse`) of an update.
template <class Status, class Parse>
Result<std::tuple<std::string, TextUpdate, std::optional<Status>>> ReadUpdate(
    const json::object& p, const Limits& limits, Parse parse, const char* statuses) {
  auto id = IdParam(p, {"id"});
  if (!id) return std::move(id).error();
  auto text = ReadTextUpdate(p, limits);
  if (!text) return std::move(text).error();
  auto status = protocol::OptString(p, "params", "status");
  if (!status) return std::move(status).error();
  std::optional<Status> s;
  if (!status->empty()) {
    s = parse(*status);
    if (!s)
      return Invalid("params.status", "'" + *status + "' is not one of " + statuses);
  }
  return std::make_tuple(std::move(id).value(), std::move(text).value(), s);
}

Result<TaskSpec> ReadTaskSpec(const json::value& v, const std::string& at, const SkillCheck& check) {
  auto obj = protocol::AsObject(v, at);
  if (!obj) return std::move(obj).error();
  const json::object& t = *obj.value();
  TaskSpec s;
  auto name = protocol::ReqString(t, at, "name");
  if (!name) return std::move(name).error();
  auto description = protocol::OptString(t, at, "description");
  if (!description) return std::move(description).error();
  auto deps = protocol::OptStringList(t, at, "dependencies");
  if (!deps) return std::move(deps).error();
  auto metadata = protocol::OptObject(t, at, "metadata");
  if (!metadata) return std::move(metadata).error();
  auto skill = protocol::OptString(t, at, "skill");
  if (!skill) return std::move(skill).error();
  auto inputs = protocol::OptObject(t, at, "inputs");
  if (!inputs) return std::move(inputs).error();
  if (skill->empty() && !inputs->empty())
    return Invalid(at + ".inputs", "inputs are for a task that names a skill (the workflow run)");
  if (!skill->empty() && check)
    if (auto refused = check(*skill, *inputs))
      return Invalid(at + ".skill", "'" + *skill + "' cannot run these inputs: " + refused->message);
  s.name = std::move(name).value();
  s.description = std::move(description).value();
  s.dependencies = std::move(deps).value();
  s.metadata = std::move(metadata).value();
  s.skill = std::move(skill).value();
  s.inputs = std::move(inputs).value();
  return s;
}

}  // namespace

Result<Objective> NewObjective(const json::object& p, const protocol::CallContext& ctx,
                               core::IdGenerator& ids, const Limits& limits, int64_t now_ms) {
  Objective o;
  auto name = protocol::ReqString(p, "params", "name");
  if (!name) return std::move(name).error();
  auto description = protocol::OptString(p, "params", "description");
  if (!description) return std::move(description).error();
  auto metadata = protocol::OptObject(p, "params", "metadata");
  if (!metadata) return std::move(metadata).error();
  o.name = std::move(name).value();
  o.description = std::move(description).value();
  o.metadata = std::move(metadata).value();
  if (auto ok = CheckFields("params", o.name, o.description, o.metadata, limits, true); !ok)
    return std::move(ok).error();
  o.id = "obj-" + ids.Next();
  o.tenant = ctx.tenant();
  o.owner = ctx.caller();
  o.created_at_ms = o.updated_at_ms = now_ms;
  return o;
}

Result<GetObjective> ReadGetObjective(const json::object& p) {
  GetObjective g;
  auto id = IdParam(p, {"id", "objectiveId"});
  if (!id) return std::move(id).error();
  g.id = std::move(id).value();
  auto plans = FlagParam(p, "includePlans", true);
  if (!plans) return std::move(plans).error();
  auto tasks = FlagParam(p, "includeTasks", true);
  if (!tasks) return std::move(tasks).error();
  g.plans = plans.value();
  g.tasks = tasks.value();
  return g;
}

Result<List> ReadList(const json::value& v) {
  List l;
  if (v.is_null()) return l;
  const json::object& p = v.get_object();
  auto status = protocol::OptString(p, "params", "status");
  if (!status) return std::move(status).error();
  if (!status->empty()) {
    l.status = ObjectiveStatusNamed(*status);
    if (!l.status)
      return Invalid("params.status", "'" + *status +
                                          "' is not an objective status (submitted, planning, "
                                          "working, blocked, completed, failed, canceled)");
  }
  auto size = protocol::OptInt(p, "params", "pageSize");
  if (!size) return std::move(size).error();
  if (size.value()) {
    if (**size < 1 || **size > kMaxPageSize)
      return Invalid("params.pageSize", "between 1 and " + std::to_string(kMaxPageSize));
    l.page_size = static_cast<int>(**size);
  }
  auto token = protocol::OptString(p, "params", "pageToken");
  if (!token) return std::move(token).error();
  l.page_token = std::move(token).value();
  return l;
}

Result<Update> ReadObjectiveUpdate(const json::object& p, const Limits& limits, int64_t now_ms) {
  auto u = ReadUpdate<ObjectiveStatus>(p, limits, ObjectiveStatusNamed,
                                       "submitted, planning, working, blocked, completed, "
                                       "failed, canceled");
  if (!u) return std::move(u).error();
  std::string id = std::get<0>(u.value());
  const TextUpdate text = std::get<1>(u.value());
  const std::optional<ObjectiveStatus> status = std::get<2>(u.value());
  OptStore::Change change = [text, status, now_ms](Objective& o) -> Result<void> {
    ApplyText(o, text, now_ms);
    if (status) return SetObjectiveStatus(o, *status, now_ms);
    return {};
  };
  return Update{std::move(id), std::move(change)};
}

Result<Update> ReadPlanUpdate(const json::object& p, const Limits& limits, int64_t now_ms) {
  auto u = ReadUpdate<PlanStatus>(p, limits, PlanStatusNamed,
                                  "pending, working, blocked, completed, failed, skipped");
  if (!u) return std::move(u).error();
  std::string id = std::get<0>(u.value());
  const TextUpdate text = std::get<1>(u.value());
  const std::optional<PlanStatus> status = std::get<2>(u.value());
  OptStore::Change change = [id, text, status, now_ms](Objective& o) -> Result<void> {
    Plan* plan = FindPlan(o, id);
    if (!plan) return Error(ErrorCode::kOptNotFound, "plan '" + id + "' not found", {{"id", id}});
    ApplyText(*plan, text, now_ms);
    if (status) return SetPlanStatus(o, id, *status, now_ms);
    return {};
  };
  return Update{std::move(id), std::move(change)};
}

Result<NewPlan> ReadNewPlan(const json::object& p, core::IdGenerator& ids, const Limits& limits,
                            const SkillCheck& check, int64_t now_ms) {
  auto oid = IdParam(p, {"objectiveId"});
  if (!oid) return std::move(oid).error();
  auto name = protocol::ReqString(p, "params", "name");
  if (!name) return std::move(name).error();
  auto description = protocol::OptString(p, "params", "description");
  if (!description) return std::move(description).error();
  auto deps = protocol::OptStringList(p, "params", "dependencies");
  if (!deps) return std::move(deps).error();
  auto metadata = protocol::OptObject(p, "params", "metadata");
  if (!metadata) return std::move(metadata).error();
  auto execute = FlagParam(p, "execute", false);
  if (!execute) return std::move(execute).error();
  PlanSpec spec;
  spec.name = std::move(name).value();
  spec.description = std::move(description).value();
  spec.dependencies = std::move(deps).value();
  spec.metadata = std::move(metadata).value();
  spec.execute = execute.value();
  std::vector<std::string> task_ids;
  if (const json::value* tasks = p.if_contains("tasks"); tasks && !tasks->is_null()) {
    if (!tasks->is_array()) return Invalid("params.tasks", "expected an array");
    const json::array& a = tasks->get_array();
    if (a.size() > static_cast<size_t>(limits.max_tasks_per_plan))
      return Invalid("params.tasks", "at most maxTasksPerPlan (" +
                                         std::to_string(limits.max_tasks_per_plan) +
                                         ") tasks, got " + std::to_string(a.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      auto t = ReadTaskSpec(a[i], "params.tasks[" + std::to_string(i) + "]", check);
      if (!t) return std::move(t).error();
      spec.tasks.push_back(std::move(t).value());
      task_ids.push_back("task-" + ids.Next());
    }
  }
  NewPlan n;
  n.objective_id = std::move(oid).value();
  n.plan_id = "plan-" + ids.Next();
  n.change = [spec = std::move(spec), plan_id = n.plan_id, task_ids = std::move(task_ids), limits,
              now_ms](Objective& o) -> Result<void> {
    return AddPlan(o, spec, plan_id, task_ids, limits, now_ms);
  };
  return n;
}

Result<std::pair<std::string, bool>> ReadGetPlan(const json::object& p) {
  auto id = IdParam(p, {"id", "planId"});
  if (!id) return std::move(id).error();
  auto tasks = FlagParam(p, "includeTasks", true);
  if (!tasks) return std::move(tasks).error();
  return std::make_pair(std::move(id).value(), tasks.value());
}

Result<std::pair<std::string, std::string>> ReadLink(const json::object& p) {
  auto id = IdParam(p, {"planTaskId", "id"});
  if (!id) return std::move(id).error();
  auto a2a = IdParam(p, {"a2aTaskId"});
  if (!a2a) return std::move(a2a).error();
  return std::make_pair(std::move(id).value(), std::move(a2a).value());
}

Result<Update> ReadTaskStatus(const json::object& p, int64_t now_ms) {
  auto id = IdParam(p, {"planTaskId", "id"});
  if (!id) return std::move(id).error();
  auto status = protocol::ReqString(p, "params", "status");
  if (!status) return std::move(status).error();
  auto s = TaskStatusNamed(*status);
  if (!s)
    return Invalid("params.status", "'" + *status +
                                        "' is not an A2A task state (submitted, working, "
                                        "input-required, auth-required, completed, failed, "
                                        "canceled, rejected; or TASK_STATE_*)");
  std::string task_id = std::move(id).value();
  OptStore::Change change = [task_id, to = *s, now_ms](Objective& o) -> Result<void> {
    return SetTaskStatus(o, task_id, to, now_ms);
  };
  return Update{std::move(task_id), std::move(change)};
}

Result<std::pair<std::string, std::optional<int64_t>>> ReadSubscribe(const json::object& p,
                                                                     std::string_view last_event_id) {
  auto id = IdParam(p, {"id", "objectiveId"});
  if (!id) return std::move(id).error();
  std::optional<int64_t> after;
  if (const json::value* v = p.if_contains("afterSequence"); v && !v->is_null()) {
    // -1: from the first event (a number, or its text as ProtoJSON writes an int64).
    if ((v->is_int64() && v->get_int64() == -1) || (v->is_string() && v->get_string() == "-1"))
      return std::make_pair(std::move(id).value(), std::optional<int64_t>(-1));
    auto c = protocol::EventCursorFromJson(*v, "params.afterSequence");
    if (!c) return std::move(c).error();
    after = c.value();
  } else if (!last_event_id.empty()) {
    auto c = protocol::ParseEventCursor(last_event_id, "Last-Event-ID");
    if (!c) return std::move(c).error();
    after = c.value();
  }
  return std::make_pair(std::move(id).value(), after);
}

Result<std::optional<Join>> ReadJoin(const json::object& message_metadata,
                                     const json::object& request_metadata, const Limits& limits) {
  const json::object* md = &message_metadata;
  const json::value* v = md->if_contains(kObjectiveKey);
  if (!v) {
    md = &request_metadata;
    v = md->if_contains(kObjectiveKey);
  }
  if (!v) return std::optional<Join>();
  const std::string field = std::string("message.metadata.") + kObjectiveKey;
  auto obj = protocol::AsObject(*v, field);
  if (!obj) return std::move(obj).error();
  const json::object& o = *obj.value();
  Join j;
  for (auto [key, out] : {std::pair<const char*, std::string*>{"id", &j.id},
                          {"name", &j.name},
                          {"description", &j.description}}) {
    auto s = protocol::OptString(o, field, key);
    if (!s) return std::move(s).error();
    *out = std::move(s).value();
  }
  auto plan = protocol::OptString(*md, "message.metadata", kPlanIdKey);
  if (!plan) return std::move(plan).error();
  j.plan_id = std::move(plan).value();
  if (j.id.empty()) {
    if (j.name.empty())
      return Invalid(field, "names an objective to join (\"id\") or one to create (\"name\")");
    if (auto ok = CheckFields(field, j.name, j.description, {}, limits, true); !ok)
      return std::move(ok).error();
  }
  return std::optional<Join>(std::move(j));
}

}  // namespace a2ad::ext::opt::params
