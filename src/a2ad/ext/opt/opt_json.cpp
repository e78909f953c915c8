#include "a2ad/ext/opt/opt_json.hpp"

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::ext::opt {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::IntOr;
using protocol::ObjOr;
using protocol::Str;

namespace {

json::array Strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

std::vector<std::string> StringsOf(const json::object& o, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* v = o.if_contains(key); v && v->is_array())
    for (const auto& s : v->get_array())
      if (s.is_string()) out.emplace_back(s.get_string());
  return out;
}

bool BoolOr(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_bool() && v->get_bool();
}

void PutText(json::object& o, std::string_view key, const std::string& v) {
  if (!v.empty()) o[key] = v;
}

Result<json::object> Doc(std::string_view text, std::string_view what) {
  auto v = protocol::ParseJson(text);
  if (!v || !v->is_object())
    return Error(ErrorCode::kDataCorrupt, "stored " + std::string(what) + " is not a JSON object");
  return std::move(v->get_object());
}

}  // namespace

json::object ToJson(const PlanTask& t) {
  json::object o;
  o["id"] = t.id;
  o["planId"] = t.plan_id;
  o["objectiveId"] = t.objective_id;
  o["name"] = t.name;
  PutText(o, "description", t.description);
  o["taskIndex"] = t.task_index;
  o["dependencies"] = Strings(t.dependencies);
  PutText(o, "a2aTaskId", t.a2a_task_id);
  o["status"] = NameOf(t.status);
  PutText(o, "stoppedBy", t.stopped_by);
  if (!t.skill.empty()) {
    o["skill"] = t.skill;
    o["inputs"] = t.inputs;
  }
  PutText(o, "error", t.error);
  o["metadata"] = t.metadata;
  o["createdAt"] = core::FormatTimestamp(t.created_at_ms);
  o["updatedAt"] = core::FormatTimestamp(t.updated_at_ms);
  return o;
}

json::object ToJson(const Plan& p, bool tasks) {
  json::object o;
  o["id"] = p.id;
  o["objectiveId"] = p.objective_id;
  o["name"] = p.name;
  PutText(o, "description", p.description);
  o["status"] = NameOf(p.status);
  PutText(o, "blockedOn", p.blocked_on);
  if (p.execute) o["execute"] = true;
  if (tasks) {
    json::array a;
    for (const auto& t : p.tasks) a.emplace_back(ToJson(t));
    o["tasks"] = std::move(a);
  }
  o["dependencies"] = Strings(p.dependencies);
  o["metadata"] = p.metadata;
  o["createdAt"] = core::FormatTimestamp(p.created_at_ms);
  o["updatedAt"] = core::FormatTimestamp(p.updated_at_ms);
  return o;
}

json::object ToJson(const Objective& ob, bool plans, bool tasks) {
  json::object o;
  o["id"] = ob.id;
  o["name"] = ob.name;
  PutText(o, "description", ob.description);
  o["status"] = NameOf(ob.status);
  if (plans) {
    json::array a;
    for (const auto& p : ob.plans) a.emplace_back(ToJson(p, tasks));
    o["plans"] = std::move(a);
  }
  o["metadata"] = ob.metadata;
  o["createdAt"] = core::FormatTimestamp(ob.created_at_ms);
  o["updatedAt"] = core::FormatTimestamp(ob.updated_at_ms);
  return o;
}

json::object StoredDoc(const Objective& ob) {
  json::object o;
  o["id"] = ob.id;
  o["tenant"] = ob.tenant;
  o["owner"] = ob.owner;
  o["name"] = ob.name;
  PutText(o, "description", ob.description);
  o["status"] = NameOf(ob.status);
  if (ob.decided) o["decided"] = true;
  o["metadata"] = ob.metadata;
  o["createdAtMs"] = ob.created_at_ms;
  o["updatedAtMs"] = ob.updated_at_ms;
  return o;
}

json::object StoredDoc(const Plan& p) {
  json::object o;
  o["id"] = p.id;
  o["objectiveId"] = p.objective_id;
  o["name"] = p.name;
  PutText(o, "description", p.description);
  o["status"] = NameOf(p.status);
  if (p.decided) o["decided"] = true;
  PutText(o, "blockedOn", p.blocked_on);
  if (p.execute) o["execute"] = true;
  if (p.inbox) o["inbox"] = true;
  o["position"] = p.position;
  o["dependencies"] = Strings(p.dependencies);
  o["metadata"] = p.metadata;
  o["createdAtMs"] = p.created_at_ms;
  o["updatedAtMs"] = p.updated_at_ms;
  return o;
}

json::object StoredDoc(const PlanTask& t) {
  json::object o = ToJson(t);
  o.erase("createdAt");
  o.erase("updatedAt");
  if (t.mirrors) o["mirrors"] = true;
  if (t.started) o["started"] = true;
  o["createdAtMs"] = t.created_at_ms;
  o["updatedAtMs"] = t.updated_at_ms;
  return o;
}

Result<Objective> ObjectiveFromDoc(std::string_view text) {
  auto doc = Doc(text, "objective");
  if (!doc) return std::move(doc).error();
  const json::object& o = doc.value();
  Objective ob;
  ob.id = Str(o, "id");
  ob.tenant = Str(o, "tenant");
  ob.owner = Str(o, "owner");
  ob.name = Str(o, "name");
  ob.description = Str(o, "description");
  auto status = ObjectiveStatusNamed(Str(o, "status"));
  if (ob.id.empty() || !status)
    return Error(ErrorCode::kDataCorrupt, "stored objective '" + ob.id + "' lacks an id or status");
  ob.status = *status;
  ob.decided = BoolOr(o, "decided");
  ob.metadata = ObjOr(o, "metadata");
  ob.created_at_ms = IntOr(o, "createdAtMs", 0);
  ob.updated_at_ms = IntOr(o, "updatedAtMs", 0);
  return ob;
}

Result<Plan> PlanFromDoc(std::string_view text) {
  auto doc = Doc(text, "plan");
  if (!doc) return std::move(doc).error();
  const json::object& o = doc.value();
  Plan p;
  p.id = Str(o, "id");
  p.objective_id = Str(o, "objectiveId");
  p.name = Str(o, "name");
  p.description = Str(o, "description");
  auto status = PlanStatusNamed(Str(o, "status"));
  if (p.id.empty() || !status)
    return Error(ErrorCode::kDataCorrupt, "stored plan '" + p.id + "' lacks an id or status");
  p.status = *status;
  p.decided = BoolOr(o, "decided");
  p.blocked_on = Str(o, "blockedOn");
  p.execute = BoolOr(o, "execute");
  p.inbox = BoolOr(o, "inbox");
  p.position = static_cast<int>(IntOr(o, "position", 0));
  p.dependencies = StringsOf(o, "dependencies");
  p.metadata = ObjOr(o, "metadata");
  p.created_at_ms = IntOr(o, "createdAtMs", 0);
  p.updated_at_ms = IntOr(o, "updatedAtMs", 0);
  return p;
}

Result<PlanTask> TaskFromDoc(std::string_view text) {
  auto doc = Doc(text, "plan task");
  if (!doc) return std::move(doc).error();
  const json::object& o = doc.value();
  PlanTask t;
  t.id = Str(o, "id");
  t.plan_id = Str(o, "planId");
  t.objective_id = Str(o, "objectiveId");
  t.name = Str(o, "name");
  t.description = Str(o, "description");
  t.task_index = static_cast<int>(IntOr(o, "taskIndex", 0));
  t.dependencies = StringsOf(o, "dependencies");
  t.a2a_task_id = Str(o, "a2aTaskId");
  t.mirrors = BoolOr(o, "mirrors");
  auto status = TaskStatusNamed(Str(o, "status"));
  if (t.id.empty() || !status)
    return Error(ErrorCode::kDataCorrupt, "stored plan task '" + t.id + "' lacks an id or status");
  t.status = *status;
  t.stopped_by = Str(o, "stoppedBy");
  t.skill = Str(o, "skill");
  t.inputs = ObjOr(o, "inputs");
  t.started = BoolOr(o, "started");
  t.error = Str(o, "error");
  t.metadata = ObjOr(o, "metadata");
  t.created_at_ms = IntOr(o, "createdAtMs", 0);
  t.updated_at_ms = IntOr(o, "updatedAtMs", 0);
  return t;
}

}  // namespace a2ad::ext::opt
