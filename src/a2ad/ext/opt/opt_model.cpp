#include "a2ad/ext/opt/opt_model.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <set>

#include "a2ad/protocol/json_text.hpp"

namespace a2ad::ext::opt {
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr std::string_view kObjectiveNames[] = {"submitted", "planning",  "working", "blocked",
                                                "completed", "failed",    "canceled"};
constexpr std::string_view kPlanNames[] = {"pending",   "working", "blocked",
                                           "completed", "failed",  "skipped"};
constexpr std::string_view kTaskNames[] = {"pending",        "submitted", "working",
                                           "input-required", "auth-required", "completed",
                                           "failed",         "canceled",  "rejected"};
constexpr std::string_view kTaskNamesV10[] = {"",
                                              "TASK_STATE_SUBMITTED",
                                              "TASK_STATE_WORKING",
                                              "TASK_STATE_INPUT_REQUIRED",
                                              "TASK_STATE_AUTH_REQUIRED",
                                              "TASK_STATE_COMPLETED",
                                              "TASK_STATE_FAILED",
                                              "TASK_STATE_CANCELED",
                                              "TASK_STATE_REJECTED"};

template <class E, size_t N>
std::optional<E> Named(const std::string_view (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (!names[i].empty() && names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

bool Bad(TaskStatus s) {
  return s == TaskStatus::kFailed || s == TaskStatus::kCanceled || s == TaskStatus::kRejected;
}
bool Waiting(TaskStatus s) {
  return s == TaskStatus::kInputRequired || s == TaskStatus::kAuthRequired;
}
bool Satisfies(PlanStatus s) { return s == PlanStatus::kCompleted || s == PlanStatus::kSkipped; }

Error Transition(std::string message) {
  return Error(ErrorCode::kOptInvalidStatus, std::move(message), {{"field", "params.status"}});
}

Error NotFound(std::string_view what, std::string_view id) {
  return Error(ErrorCode::kOptNotFound, std::string(what) + " '" + std::string(id) + "' not found",
               {{"id", std::string(id)}});
}

// The plan's status from its tasks and its dependencies' statuses (docs/OPT.md, "Plans").
void DerivePlan(Plan& p, const std::unordered_map<std::string_view, const Plan*>& plans) {
  p.blocked_on.clear();
  if (p.decided) return;
  bool deps_failed = false;
  bool deps_open = false;
  for (const auto& d : p.dependencies) {
    auto it = plans.find(d);
    if (it == plans.end()) continue;
    if (it->second->status == PlanStatus::kFailed) deps_failed = true;
    if (!Satisfies(it->second->status)) deps_open = true;
  }
  size_t bad = 0, done = 0, waiting = 0, active = 0;
  for (const auto& t : p.tasks) {
    if (Bad(t.status)) ++bad;
    if (t.status == TaskStatus::kCompleted) ++done;
    if (Waiting(t.status)) ++waiting;
    if (t.status == TaskStatus::kSubmitted || t.status == TaskStatus::kWorking) ++active;
  }
  if (bad > 0 || deps_failed) {
    p.status = PlanStatus::kFailed;
  } else if (!p.tasks.empty() && done == p.tasks.size()) {
    p.status = PlanStatus::kCompleted;
  } else if (waiting > 0) {
    p.status = PlanStatus::kBlocked;
    p.blocked_on = "input";
  } else if (active > 0 || done > 0) {
    p.status = PlanStatus::kWorking;
  } else if (deps_open) {
    p.status = PlanStatus::kBlocked;
    p.blocked_on = "dependencies";
  } else {
    p.status = PlanStatus::kPending;
  }
}

// The objective's status from its plans (docs/OPT.md, "Objectives").
void DeriveObjective(Objective& o) {
  if (o.decided || o.plans.empty()) return;
  bool failed = false, all_done = true, waiting = false, moving = false;
  for (const auto& p : o.plans) {
    if (p.status == PlanStatus::kFailed) failed = true;
    if (!Satisfies(p.status)) all_done = false;
    if (p.status == PlanStatus::kBlocked && p.blocked_on == "input") waiting = true;
    if (p.status == PlanStatus::kWorking || p.status == PlanStatus::kCompleted) moving = true;
  }
  if (failed)
    o.status = ObjectiveStatus::kFailed;
  else if (all_done)
    o.status = ObjectiveStatus::kCompleted;
  else if (waiting)
    o.status = ObjectiveStatus::kBlocked;
  else if (moving)
    o.status = ObjectiveStatus::kWorking;
  else
    o.status = ObjectiveStatus::kPlanning;
}

// Every task of `o` that is not finished is canceled (stopped by `by`); unfinished plans are
// skipped (decided).
void EndEverything(Objective& o, const std::string& by, int64_t now_ms) {
  for (auto& p : o.plans) {
    for (auto& t : p.tasks)
      if (!IsTerminal(t.status)) {
        t.status = TaskStatus::kCanceled;
        t.stopped_by = by;
        t.updated_at_ms = now_ms;
      }
    if (!IsTerminal(p.status)) {
      p.status = PlanStatus::kSkipped;
      p.decided = true;
    }
  }
}

Error Invalid(std::string field, const std::string& message) {
  return Error(ErrorCode::kInvalidParams, field + ": " + message, {{"field", field}});
}

Result<void> CheckText(const std::string& field, const std::string& v, size_t max, bool required) {
  if (required && v.empty()) return Invalid(field, "required (a non-empty string)");
  if (v.size() > max) return Invalid(field, "at most " + std::to_string(max) + " bytes");
  return {};
}

Result<void> CheckMetadata(const std::string& field, const boost::json::object& m, size_t max) {
  if (protocol::SerializeJson(m).size() > max)
    return Invalid(field, "at most " + std::to_string(max) + " bytes of JSON");
  return {};
}

// A cycle among the tasks of one request (edges i -> its dependencies), as "task-0 ->
// task-2 -> task-0"; "" when there is none.
std::string FindCycle(const std::vector<std::vector<size_t>>& edges) {
  std::vector<int> mark(edges.size(), 0);  // 0 new, 1 on the path, 2 done
  std::vector<size_t> path;
  std::string found;
  auto visit = [&](auto&& self, size_t i) -> bool {
    mark[i] = 1;
    path.push_back(i);
    for (size_t j : edges[i]) {
      if (mark[j] == 1) {
        auto from = std::find(path.begin(), path.end(), j);
        for (auto it = from; it != path.end(); ++it) found += "task-" + std::to_string(*it) + " -> ";
        found += "task-" + std::to_string(j);
        return true;
      }
      if (mark[j] == 0 && self(self, j)) return true;
    }
    path.pop_back();
    mark[i] = 2;
    return false;
  };
  for (size_t i = 0; i < edges.size(); ++i)
    if (mark[i] == 0 && visit(visit, i)) return found;
  return "";
}

}  // namespace

std::string_view NameOf(ObjectiveStatus s) { return kObjectiveNames[static_cast<size_t>(s)]; }
std::string_view NameOf(PlanStatus s) { return kPlanNames[static_cast<size_t>(s)]; }
std::string_view NameOf(TaskStatus s) { return kTaskNames[static_cast<size_t>(s)]; }

std::optional<ObjectiveStatus> ObjectiveStatusNamed(std::string_view name) {
  return Named<ObjectiveStatus>(kObjectiveNames, name);
}
std::optional<PlanStatus> PlanStatusNamed(std::string_view name) {
  return Named<PlanStatus>(kPlanNames, name);
}
std::optional<TaskStatus> TaskStatusNamed(std::string_view name) {
  if (auto s = Named<TaskStatus>(kTaskNames, name)) return s;
  return Named<TaskStatus>(kTaskNamesV10, name);
}

TaskStatus FromTaskState(protocol::TaskState s) {
  using protocol::TaskState;
  switch (s) {
    case TaskState::kSubmitted:
      return TaskStatus::kSubmitted;
    case TaskState::kWorking:
      return TaskStatus::kWorking;
    case TaskState::kInputRequired:
      return TaskStatus::kInputRequired;
    case TaskState::kAuthRequired:
      return TaskStatus::kAuthRequired;
    case TaskState::kCompleted:
      return TaskStatus::kCompleted;
    case TaskState::kFailed:
      return TaskStatus::kFailed;
    case TaskState::kCanceled:
      return TaskStatus::kCanceled;
    case TaskState::kRejected:
      return TaskStatus::kRejected;
    case TaskState::kUnspecified:
      break;
  }
  return TaskStatus::kPending;
}

bool IsTerminal(ObjectiveStatus s) {
  return s == ObjectiveStatus::kCompleted || s == ObjectiveStatus::kFailed ||
         s == ObjectiveStatus::kCanceled;
}
bool IsTerminal(PlanStatus s) {
  return s == PlanStatus::kCompleted || s == PlanStatus::kFailed || s == PlanStatus::kSkipped;
}
bool IsTerminal(TaskStatus s) { return s == TaskStatus::kCompleted || Bad(s); }

Result<void> CheckFields(const std::string& path, const std::string& name,
                         const std::string& description, const boost::json::object& metadata,
                         const Limits& limits, bool name_required) {
  if (auto ok = CheckText(path + ".name", name, limits.max_name_bytes, name_required); !ok)
    return ok;
  if (auto ok = CheckText(path + ".description", description, limits.max_description_bytes, false);
      !ok)
    return ok;
  return CheckMetadata(path + ".metadata", metadata, limits.max_metadata_bytes);
}

Plan* FindPlan(Objective& o, std::string_view plan_id) {
  for (auto& p : o.plans)
    if (p.id == plan_id) return &p;
  return nullptr;
}

PlanTask* FindTask(Objective& o, std::string_view task_id) {
  for (auto& p : o.plans)
    for (auto& t : p.tasks)
      if (t.id == task_id) return &t;
  return nullptr;
}

std::vector<StatusChange> RollUp(Objective& o, int64_t now_ms) {
  std::vector<StatusChange> changes;
  // By id (views of the ids in `o`, which no step here adds to or removes from).
  std::unordered_map<std::string_view, const PlanTask*> tasks;
  std::unordered_map<std::string_view, const Plan*> plans;
  tasks.reserve(o.plans.size() * 8);
  plans.reserve(o.plans.size());
  for (const auto& p : o.plans) {
    plans.emplace(p.id, &p);
    for (const auto& t : p.tasks) tasks.emplace(t.id, &t);
  }
  // Plans only depend on plans made before them, and tasks on tasks of their own plan or of
  // earlier ones: one pass in plan order, with a fixpoint inside each plan.
  for (auto& p : o.plans) {
    const PlanStatus plan_was = p.status;
    std::string failed_dep;
    for (const auto& d : p.dependencies)
      if (auto it = plans.find(d); it != plans.end() && it->second->status == PlanStatus::kFailed)
        failed_dep = d;
    for (bool moved = true; moved;) {
      moved = false;
      for (auto& t : p.tasks) {
        if (t.status != TaskStatus::kPending) continue;
        std::string by = failed_dep;
        for (const auto& d : t.dependencies)
          if (auto it = tasks.find(d); it != tasks.end() && Bad(it->second->status)) by = d;
        if (by.empty()) continue;
        t.status = TaskStatus::kCanceled;
        t.stopped_by = by;
        t.updated_at_ms = now_ms;
        changes.push_back({StatusChange::Kind::kTask, t.id, std::string(NameOf(TaskStatus::kPending)),
                           std::string(NameOf(t.status))});
        moved = true;
      }
    }
    DerivePlan(p, plans);
    if (p.status != plan_was) {
      p.updated_at_ms = now_ms;
      changes.push_back({StatusChange::Kind::kPlan, p.id, std::string(NameOf(plan_was)),
                         std::string(NameOf(p.status))});
    }
  }
  // Task changes first, then plans (already in that order within a plan; sort stably).
  std::stable_sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
    return a.kind == StatusChange::Kind::kTask && b.kind != StatusChange::Kind::kTask;
  });
  const ObjectiveStatus was = o.status;
  DeriveObjective(o);
  if (o.status != was) {
    o.updated_at_ms = now_ms;
    changes.push_back({StatusChange::Kind::kObjective, o.id, std::string(NameOf(was)),
                       std::string(NameOf(o.status))});
  }
  return changes;
}

Result<void> AddPlan(Objective& o, PlanSpec spec, const std::string& plan_id,
                     const std::vector<std::string>& task_ids, const Limits& limits,
                     int64_t now_ms) {
  if (IsTerminal(o.status))
    return Transition("objective '" + o.id + "' is " + std::string(NameOf(o.status)) +
                      ": no plan can be added to it");
  if (auto ok = CheckFields("params", spec.name, spec.description, spec.metadata, limits, true);
      !ok)
    return ok;
  if (static_cast<int>(o.plans.size()) >= limits.max_plans_per_objective)
    return Error(ErrorCode::kInvalidParams,
                 "objective '" + o.id + "' has " + std::to_string(o.plans.size()) +
                     " plans: at most maxPlansPerObjective (" +
                     std::to_string(limits.max_plans_per_objective) + ")",
                 {{"field", "params.objectiveId"}});
  if (static_cast<int>(spec.tasks.size()) > limits.max_tasks_per_plan)
    return Invalid("params.tasks", "at most maxTasksPerPlan (" +
                                       std::to_string(limits.max_tasks_per_plan) + ") tasks, got " +
                                       std::to_string(spec.tasks.size()));
  std::vector<std::string> unknown;
  for (const auto& d : spec.dependencies)
    if (!FindPlan(o, d)) unknown.push_back(d);
  if (!unknown.empty()) {
    std::string names;
    for (const auto& u : unknown) names += (names.empty() ? "'" : ", '") + u + "'";
    return Invalid("params.dependencies", "unknown plan ids of objective '" + o.id + "': " + names);
  }
  Plan plan;
  plan.id = plan_id;
  plan.objective_id = o.id;
  plan.name = std::move(spec.name);
  plan.description = std::move(spec.description);
  plan.position = o.plans.empty() ? 0 : o.plans.back().position + 1;
  for (auto& d : spec.dependencies)
    if (std::find(plan.dependencies.begin(), plan.dependencies.end(), d) == plan.dependencies.end())
      plan.dependencies.push_back(std::move(d));
  plan.metadata = std::move(spec.metadata);
  plan.execute = spec.execute;
  plan.created_at_ms = plan.updated_at_ms = now_ms;
  std::vector<std::vector<size_t>> edges(spec.tasks.size());
  for (size_t i = 0; i < spec.tasks.size(); ++i) {
    TaskSpec& ts = spec.tasks[i];
    const std::string at = "params.tasks[" + std::to_string(i) + "]";
    if (auto ok = CheckFields(at, ts.name, ts.description, ts.metadata, limits, true); !ok)
      return ok;
    PlanTask t;
    t.id = task_ids.at(i);
    t.plan_id = plan.id;
    t.objective_id = o.id;
    t.name = std::move(ts.name);
    t.description = std::move(ts.description);
    t.task_index = static_cast<int>(i);
    t.metadata = std::move(ts.metadata);
    t.skill = std::move(ts.skill);
    t.inputs = std::move(ts.inputs);
    t.created_at_ms = t.updated_at_ms = now_ms;
    unknown.clear();
    for (const auto& d : ts.dependencies) {
      std::string id;
      if (d.starts_with("task-") && d.size() > 5 &&
          std::all_of(d.begin() + 5, d.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
          d.size() < 12) {
        const size_t j = std::stoul(d.substr(5));
        if (j < spec.tasks.size()) {
          edges[i].push_back(j);
          id = task_ids.at(j);
        }
      } else if (FindTask(o, d)) {
        id = d;
      }
      if (id.empty()) {
        unknown.push_back(d);
        continue;
      }
      if (std::find(t.dependencies.begin(), t.dependencies.end(), id) == t.dependencies.end())
        t.dependencies.push_back(std::move(id));
    }
    if (!unknown.empty()) {
      std::string names;
      for (const auto& u : unknown) names += (names.empty() ? "'" : ", '") + u + "'";
      return Invalid(at + ".dependencies",
                     "unknown tasks: " + names +
                         " (name a task of this request as task-<index>, or a task of another "
                         "plan of the objective by its id)");
    }
    plan.tasks.push_back(std::move(t));
  }
  if (std::string cycle = FindCycle(edges); !cycle.empty())
    return Invalid("params.tasks", "the task dependencies form a cycle: " + cycle);
  o.plans.push_back(std::move(plan));
  if (!IsTerminal(o.status)) o.decided = false;  // the plans decide from now on
  o.updated_at_ms = now_ms;
  return {};
}

Result<void> SetObjectiveStatus(Objective& o, ObjectiveStatus to, int64_t now_ms) {
  if (to == o.status) return {};
  if (IsTerminal(o.status))
    return Transition("objective '" + o.id + "' is " + std::string(NameOf(o.status)) +
                      ": its status does not change any more");
  if (to == ObjectiveStatus::kCanceled || to == ObjectiveStatus::kFailed) {
    EndEverything(o, o.id, now_ms);
    o.status = to;
    o.decided = true;
    o.updated_at_ms = now_ms;
    return {};
  }
  if (o.plans.empty()) {  // tracked by hand
    o.status = to;
    o.decided = true;
    o.updated_at_ms = now_ms;
    return {};
  }
  if (to == ObjectiveStatus::kWorking) {  // execute every plan
    for (auto& p : o.plans)
      if (!p.execute && !(p.decided && IsTerminal(p.status))) {
        p.execute = true;
        p.updated_at_ms = now_ms;
      }
    return {};
  }
  Objective derived = o;
  (void)RollUp(derived, now_ms);
  if (derived.status == to) return {};
  return Transition("objective '" + o.id + "': status '" + std::string(NameOf(to)) +
                    "' is derived from its plans (it is '" + std::string(NameOf(derived.status)) +
                    "'); a caller may set only 'canceled' or 'failed' on an objective with plans");
}

Result<void> SetPlanStatus(Objective& o, const std::string& plan_id, PlanStatus to,
                           int64_t now_ms) {
  Plan* p = FindPlan(o, plan_id);
  if (!p) return NotFound("plan", plan_id);
  if (to == p->status) return {};
  if (IsTerminal(o.status))
    return Transition("objective '" + o.id + "' is " + std::string(NameOf(o.status)) +
                      ": its plans do not change any more");
  if (IsTerminal(p->status))
    return Transition("plan '" + p->id + "' is " + std::string(NameOf(p->status)) +
                      ": its status does not change any more");
  if (to == PlanStatus::kSkipped || to == PlanStatus::kFailed || p->tasks.empty()) {
    for (auto& t : p->tasks)
      if (!IsTerminal(t.status)) {
        t.status = TaskStatus::kCanceled;
        t.stopped_by = p->id;
        t.updated_at_ms = now_ms;
      }
    p->status = to;
    p->decided = true;
    p->updated_at_ms = now_ms;
    return {};
  }
  if (to == PlanStatus::kWorking) {  // execute it
    if (!p->execute) {
      p->execute = true;
      p->updated_at_ms = now_ms;
    }
    return {};
  }
  Objective derived = o;
  (void)RollUp(derived, now_ms);
  const PlanStatus now = FindPlan(derived, plan_id)->status;
  if (now == to) return {};
  return Transition("plan '" + p->id + "': status '" + std::string(NameOf(to)) +
                    "' is derived from its tasks (it is '" + std::string(NameOf(now)) +
                    "'); a caller may set only 'skipped' or 'failed' on a plan with tasks");
}

namespace {
Result<PlanTask*> OpenTask(Objective& o, const std::string& task_id) {
  PlanTask* t = FindTask(o, task_id);
  if (!t) return NotFound("plan task", task_id);
  // A failed objective whose failure the rollup derived still follows its running tasks.
  if (o.decided && IsTerminal(o.status))
    return Transition("objective '" + o.id + "' is " + std::string(NameOf(o.status)) +
                      ": its tasks do not change any more");
  const Plan* p = FindPlan(o, t->plan_id);
  if (p && p->decided && IsTerminal(p->status))
    return Transition("plan '" + p->id + "' is " + std::string(NameOf(p->status)) +
                      ": its tasks do not change any more");
  return t;
}
}  // namespace

Result<void> SetTaskStatus(Objective& o, const std::string& task_id, TaskStatus to,
                           int64_t now_ms, bool mirrored) {
  auto found = OpenTask(o, task_id);
  if (!found) return std::move(found).error();
  PlanTask* t = found.value();
  if (t->mirrors && !mirrored)
    return Transition("plan task '" + t->id + "' follows A2A task '" + t->a2a_task_id +
                      "' of this host: its status changes with that task's");
  if (to == t->status) return {};
  if (IsTerminal(t->status))
    return Transition("plan task '" + t->id + "' is " + std::string(NameOf(t->status)) +
                      ": its status does not change any more");
  if (to == TaskStatus::kPending)
    return Transition("plan task '" + t->id + "' has started ('" + std::string(NameOf(t->status)) +
                      "'); it cannot become 'pending' again");
  t->status = to;
  t->updated_at_ms = now_ms;
  return {};
}

Result<void> LinkTask(Objective& o, const std::string& task_id, const std::string& a2a_task_id,
                      bool local, TaskStatus status, int64_t now_ms) {
  if (a2a_task_id.empty()) return Invalid("params.a2aTaskId", "required (a non-empty string)");
  auto found = OpenTask(o, task_id);
  if (!found) return std::move(found).error();
  PlanTask* t = found.value();
  if (t->a2a_task_id == a2a_task_id) return {};
  if (!t->a2a_task_id.empty())
    return Transition("plan task '" + t->id + "' is linked to A2A task '" + t->a2a_task_id +
                      "' already");
  if (IsTerminal(t->status))
    return Transition("plan task '" + t->id + "' is " + std::string(NameOf(t->status)) +
                      ": it cannot be linked any more");
  t->a2a_task_id = a2a_task_id;
  t->mirrors = local;
  if (local) t->status = status;
  t->updated_at_ms = now_ms;
  return {};
}

std::vector<PlanTask*> Startable(Objective& o) {
  std::vector<PlanTask*> out;
  if (o.decided && IsTerminal(o.status)) return out;
  std::unordered_map<std::string_view, TaskStatus> task_status;
  std::unordered_map<std::string_view, PlanStatus> plan_status;
  for (const auto& p : o.plans) {
    plan_status.emplace(p.id, p.status);
    for (const auto& t : p.tasks) task_status.emplace(t.id, t.status);
  }
  for (auto& p : o.plans) {
    if (!p.execute || (p.decided && IsTerminal(p.status))) continue;
    const bool plan_ready = std::all_of(p.dependencies.begin(), p.dependencies.end(),
                                        [&](const std::string& d) {
                                          auto it = plan_status.find(d);
                                          return it == plan_status.end() || Satisfies(it->second);
                                        });
    if (!plan_ready) continue;
    for (auto& t : p.tasks) {
      if (t.skill.empty() || t.started || t.status != TaskStatus::kPending ||
          !t.a2a_task_id.empty())
        continue;
      const bool ready = std::all_of(t.dependencies.begin(), t.dependencies.end(),
                                     [&](const std::string& d) {
                                       auto it = task_status.find(d);
                                       return it != task_status.end() &&
                                              it->second == TaskStatus::kCompleted;
                                     });
      if (ready) out.push_back(&t);
    }
  }
  return out;
}

void MarkStarted(PlanTask& t, const std::string& run_id, int64_t now_ms) {
  t.a2a_task_id = run_id;
  t.mirrors = true;
  t.started = true;
  t.updated_at_ms = now_ms;
}

Result<void> FailStart(Objective& o, const std::string& task_id, const std::string& why,
                       int64_t now_ms) {
  PlanTask* t = FindTask(o, task_id);
  if (!t) return NotFound("plan task", task_id);
  if (IsTerminal(t->status) || t->status != TaskStatus::kPending) return {};
  t->status = TaskStatus::kFailed;
  t->error = why;
  t->updated_at_ms = now_ms;
  return {};
}

bool Settled(const Objective& o) {
  if (!IsTerminal(o.status)) return false;
  for (const auto& p : o.plans)
    for (const auto& t : p.tasks)
      if (!IsTerminal(t.status)) return false;
  return true;
}

namespace {
template <class O>
auto InboxOf(O& o) -> decltype(&o.plans.front()) {
  for (auto& p : o.plans)
    if (p.inbox) return &p;
  return nullptr;
}
}  // namespace

Result<void> CanJoin(const Objective& o, const std::string& plan_id, const Limits& limits) {
  if (IsTerminal(o.status))
    return Transition("objective '" + o.id + "' is " + std::string(NameOf(o.status)) +
                      ": no task can join it");
  const Plan* p = nullptr;
  if (!plan_id.empty()) {
    for (const auto& q : o.plans)
      if (q.id == plan_id) p = &q;
    if (!p) return NotFound("plan", plan_id);
  } else {
    p = InboxOf(o);
  }
  if (!p) {
    if (static_cast<int>(o.plans.size()) >= limits.max_plans_per_objective)
      return Error(ErrorCode::kInvalidParams,
                   "objective '" + o.id + "' has " + std::to_string(o.plans.size()) +
                       " plans: at most maxPlansPerObjective (" +
                       std::to_string(limits.max_plans_per_objective) +
                       "); name a plan of it (opt/v1/planId)",
                   {{"field", "message.metadata.opt/v1/objective"}});
    return {};
  }
  if (p->decided && IsTerminal(p->status))
    return Transition("plan '" + p->id + "' is " + std::string(NameOf(p->status)) +
                      ": no task can join it");
  if (static_cast<int>(p->tasks.size()) >= limits.max_tasks_per_plan)
    return Error(ErrorCode::kInvalidParams,
                 "plan '" + p->id + "' has " + std::to_string(p->tasks.size()) +
                     " tasks: at most maxTasksPerPlan (" +
                     std::to_string(limits.max_tasks_per_plan) + ")",
                 {{"field", "message.metadata.opt/v1/planId"}});
  return {};
}

Result<void> JoinTask(Objective& o, const std::string& plan_id, const std::string& inbox_plan_id,
                      const std::string& task_id, const std::string& a2a_task_id,
                      TaskStatus status, const std::string& name, const Limits& limits,
                      int64_t now_ms) {
  if (auto ok = CanJoin(o, plan_id, limits); !ok) return ok;
  Plan* p = plan_id.empty() ? InboxOf(o) : FindPlan(o, plan_id);
  if (!p) {
    Plan inbox;
    inbox.id = inbox_plan_id;
    inbox.objective_id = o.id;
    inbox.name = "Tasks sent to this objective";
    inbox.inbox = true;
    inbox.position = o.plans.empty() ? 0 : o.plans.back().position + 1;
    inbox.created_at_ms = inbox.updated_at_ms = now_ms;
    o.plans.push_back(std::move(inbox));
    if (!IsTerminal(o.status)) o.decided = false;  // the plans decide from now on
    p = &o.plans.back();
  }
  PlanTask t;
  t.id = task_id;
  t.plan_id = p->id;
  t.objective_id = o.id;
  t.name = name.empty() ? a2a_task_id : name;
  t.task_index = static_cast<int>(p->tasks.size());
  t.a2a_task_id = a2a_task_id;
  t.mirrors = true;
  t.status = status;
  t.created_at_ms = t.updated_at_ms = now_ms;
  p->tasks.push_back(std::move(t));
  o.updated_at_ms = now_ms;
  return {};
}

}  // namespace a2ad::ext::opt
