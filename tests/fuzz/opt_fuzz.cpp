// opt_fuzz: the params of the OPT methods (ext/opt/opt_params.hpp), untrusted JSON, applied to
// an objective the way the store applies them (ext/opt/opt_model.hpp). The input is parsed as
// JSON; an object goes through every params reader (plans/create, objectives/update,
// plans/update, tasks/updateStatus, objectives/subscribe, objectives/list, a message's
// opt/v1/objective), which never crash, and every change they accept is applied to an
// objective with one plan of three tasks (t0 <- t1 <- t2, t2 naming a skill, executing) and:
//  - the objective then rolls up to a fixed point (a second RollUp moves nothing);
//  - the dependencies of every task name tasks of the objective and form no cycle;
//  - every task Startable names a skill, is pending and never started, its dependencies
//    completed;
//  - every row reads back from its stored document as it was written.
#include <boost/json.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/ext/opt/opt_model.hpp"
#include "a2ad/ext/opt/opt_params.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "fuzz_check.hpp"

namespace json = boost::json;
using namespace a2ad;
using namespace a2ad::ext::opt;

namespace {

class CountingIds final : public core::IdGenerator {
 public:
  std::string Next() override { return "id" + std::to_string(n_++); }

 private:
  int n_ = 0;
};

Objective Base() {
  Objective o;
  o.id = "o";
  o.tenant = "t";
  o.owner = "me";
  o.name = "base";
  PlanSpec spec;
  spec.name = "p";
  spec.execute = true;
  for (int i = 0; i < 3; ++i) {
    TaskSpec t;
    t.name = "t" + std::to_string(i);
    if (i > 0) t.dependencies = {"task-" + std::to_string(i - 1)};
    if (i == 2) t.skill = "work";
    spec.tasks.push_back(t);
  }
  if (!AddPlan(o, spec, "p", {"t0", "t1", "t2"}, Limits{}, 1)) std::abort();
  (void)RollUp(o, 1);
  return o;
}

std::string Text(const json::object& o) { return protocol::SerializeJson(o); }

void CheckInvariants(Objective& o) {
  const auto again = RollUp(o, 9);
  FUZZ_CHECK(again.empty(), "a second rollup moved " + again.front().id);
  std::map<std::string, const PlanTask*> tasks;
  for (const auto& p : o.plans)
    for (const auto& t : p.tasks) tasks[t.id] = &t;
  // Dependencies: known, acyclic (a depth-first walk with colours).
  std::map<std::string, int> colour;
  std::function<void(const std::string&)> visit = [&](const std::string& id) {
    colour[id] = 1;
    for (const auto& d : tasks.at(id)->dependencies) {
      FUZZ_CHECK(tasks.count(d) == 1, "unknown dependency " + d + " of " + id);
      FUZZ_CHECK(colour[d] != 1, "a dependency cycle through " + d);
      if (colour[d] == 0) visit(d);
    }
    colour[id] = 2;
  };
  for (const auto& [id, t] : tasks)
    if (colour[id] == 0) visit(id);
  for (PlanTask* t : Startable(o)) {
    FUZZ_CHECK(!t->skill.empty() && t->status == TaskStatus::kPending && !t->started, t->id);
    for (const auto& d : t->dependencies)
      FUZZ_CHECK(tasks.at(d)->status == TaskStatus::kCompleted, t->id + " before " + d);
  }
  auto back = ObjectiveFromDoc(Text(StoredDoc(o)));
  FUZZ_CHECK(back && RowOf(back.value()) == RowOf(o), Text(StoredDoc(o)));
  for (const auto& p : o.plans) {
    auto plan = PlanFromDoc(Text(StoredDoc(p)));
    FUZZ_CHECK(plan && RowOf(plan.value()) == RowOf(p), Text(StoredDoc(p)));
    for (const auto& t : p.tasks) {
      auto task = TaskFromDoc(Text(StoredDoc(t)));
      FUZZ_CHECK(task && task.value() == t, Text(StoredDoc(t)));
    }
  }
}

void Apply(const OptStore::Change& change) {
  Objective o = Base();
  if (!change(o)) return;
  (void)RollUp(o, 5);
  CheckInvariants(o);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = protocol::ParseJson(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed) return 0;
  const json::value& v = parsed.value();
  (void)params::ReadList(v.is_object() ? v : json::value(nullptr));
  if (!v.is_object()) return 0;
  const json::object& p = v.get_object();
  CountingIds ids;
  const params::SkillCheck check = [](const std::string& skill, const json::object&) {
    return skill == "work" ? std::nullopt
                           : std::optional<core::Error>(core::Error(core::ErrorCode::kInvalidParams, "no"));
  };
  auto plan = params::ReadNewPlan(p, ids, Limits{}, check, 3);
  if (plan) Apply(plan->change);
  auto objective = params::ReadObjectiveUpdate(p, Limits{}, 3);
  if (objective) Apply(objective->change);
  auto plan_update = params::ReadPlanUpdate(p, Limits{}, 3);
  if (plan_update) Apply(plan_update->change);
  auto task = params::ReadTaskStatus(p, 3);
  if (task) Apply(task->change);
  (void)params::ReadGetObjective(p);
  (void)params::ReadGetPlan(p);
  (void)params::ReadLink(p);
  (void)params::ReadSubscribe(p, "");
  (void)params::ReadJoin(p, json::object{}, Limits{});
  return 0;
}
