#pragma once
// The Objective-Plan-Task model (seed 002, the A2A OPT extension; docs/OPT.md): an objective
// holds ordered plans, a plan holds ordered tasks, each task may be linked to an A2A task.
// Statuses roll up from tasks to plans to the objective by the table in docs/OPT.md
// (RollUp); every change to a tree goes through the functions below, which check it and
// roll the tree up again, so a stored tree is always consistent with its tasks.
//
// Pure values and functions: no I/O, no clocks (the time is given), no id source (ids are
// given). Thread safety: none needed.
#include <boost/json/object.hpp>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::ext::opt {

inline constexpr const char* kOptExtensionUri = "https://github.com/zeroasterisk/a2a-opt/v1";

// The metadata keys of seed 002 (on linked A2A tasks and in messages).
inline constexpr const char* kObjectiveIdKey = "opt/v1/objectiveId";
inline constexpr const char* kPlanIdKey = "opt/v1/planId";
inline constexpr const char* kTaskIndexKey = "opt/v1/taskIndex";
inline constexpr const char* kDependenciesKey = "opt/v1/dependencies";
inline constexpr const char* kObjectiveKey = "opt/v1/objective";
// a2ad's: the plan task a run executes (on the A2A task of a run its plan started).
inline constexpr const char* kPlanTaskIdKey = "opt/v1/planTaskId";

enum class ObjectiveStatus { kSubmitted, kPlanning, kWorking, kBlocked, kCompleted, kFailed, kCanceled };
enum class PlanStatus { kPending, kWorking, kBlocked, kCompleted, kFailed, kSkipped };
/// A plan task's status: kPending until it has one (no A2A task linked or reported yet), then
/// the state of its A2A task.
enum class TaskStatus {
  kPending,
  kSubmitted,
  kWorking,
  kInputRequired,
  kAuthRequired,
  kCompleted,
  kFailed,
  kCanceled,
  kRejected,
};

std::string_view NameOf(ObjectiveStatus s);  // "submitted"
std::string_view NameOf(PlanStatus s);       // "pending"
std::string_view NameOf(TaskStatus s);       // "input-required" (A2A 0.3 names), "pending"
std::optional<ObjectiveStatus> ObjectiveStatusNamed(std::string_view name);
std::optional<PlanStatus> PlanStatusNamed(std::string_view name);
/// Either version's name of a task state ("input-required", "TASK_STATE_INPUT_REQUIRED"), or
/// "pending"; nullopt for anything else (and for unknown / TASK_STATE_UNSPECIFIED).
std::optional<TaskStatus> TaskStatusNamed(std::string_view name);
/// kPending for kUnspecified.
TaskStatus FromTaskState(protocol::TaskState s);

bool IsTerminal(ObjectiveStatus s);  // completed, failed, canceled
bool IsTerminal(PlanStatus s);       // completed, failed, skipped
bool IsTerminal(TaskStatus s);       // completed, failed, canceled, rejected

struct PlanTask {
  std::string id;
  std::string plan_id;
  std::string objective_id;
  std::string name;
  std::string description;
  int task_index = 0;
  std::vector<std::string> dependencies;  // plan task ids of the same objective
  std::string a2a_task_id;                // "" when none is linked
  /// The linked task is one of this host's: the status follows it (OptStore::Mirror), and
  /// tasks/updateStatus is refused.
  bool mirrors = false;
  TaskStatus status = TaskStatus::kPending;
  /// Why a task that never ran was canceled: the id of the failed task or plan it waited on
  /// (or the plan or objective a caller ended).
  std::string stopped_by;
  /// Execution (docs/OPT.md "Execution"): the workflow of this host that does the task ("":
  /// done elsewhere, linked or reported), and its inputs.
  std::string skill;
  boost::json::object inputs;
  /// The plan started a run for it: a2a_task_id is that run (started when ready, canceled
  /// when the plan or objective is).
  bool started = false;
  /// Why its run could not be started (status failed).
  std::string error;
  boost::json::object metadata;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  friend bool operator==(const PlanTask&, const PlanTask&) = default;
};

struct Plan {
  std::string id;
  std::string objective_id;
  std::string name;
  std::string description;
  PlanStatus status = PlanStatus::kPending;
  /// Set when a caller decided the status (plans/update: skipped or failed, or any status of a
  /// plan without tasks, which is tracked by hand): RollUp keeps it.
  bool decided = false;
  /// Why a kBlocked plan waits: "dependencies" (a plan it depends on is not done) or "input"
  /// (one of its tasks waits for input or authorization); "" otherwise.
  std::string blocked_on;
  /// Start the runs of its tasks that name a skill as soon as they are ready (plans/create
  /// `execute`, or the plan moved to `working`).
  bool execute = false;
  /// The plan that the tasks joining by message go to (no planId named).
  bool inbox = false;
  int position = 0;                       // order within the objective
  std::vector<std::string> dependencies;  // plan ids of the same objective
  boost::json::object metadata;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  std::vector<PlanTask> tasks;  // by task_index
};
/// Every field of a plan's stored row (all but its tasks), as references: what a save compares
/// and copies. A new field of Plan belongs here.
template <class P>
  requires std::same_as<std::remove_const_t<P>, Plan>
auto RowOf(P& p) {
  return std::tie(p.id, p.objective_id, p.name, p.description, p.status, p.decided, p.blocked_on,
                  p.execute, p.inbox, p.position, p.dependencies, p.metadata, p.created_at_ms,
                  p.updated_at_ms);
}

struct Objective {
  std::string id;
  std::string tenant;
  std::string owner;
  std::string name;
  std::string description;
  ObjectiveStatus status = ObjectiveStatus::kSubmitted;
  /// Set when a caller decided the status (canceled, failed, completed, or any status of an
  /// objective without plans): RollUp keeps it.
  bool decided = false;
  boost::json::object metadata;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  std::vector<Plan> plans;  // by position
};
/// Every field of an objective's stored row (all but its plans). A new field belongs here.
template <class O>
  requires std::same_as<std::remove_const_t<O>, Objective>
auto RowOf(O& o) {
  return std::tie(o.id, o.tenant, o.owner, o.name, o.description, o.status, o.decided, o.metadata,
                  o.created_at_ms, o.updated_at_ms);
}

/// The limits of one server (the card entry's params).
struct Limits {
  int max_plans_per_objective = 20;
  int max_tasks_per_plan = 100;
  size_t max_name_bytes = 512;
  size_t max_description_bytes = 8192;
  size_t max_metadata_bytes = 16384;  // serialized
};

/// One status that moved in a change (what objectives/subscribe streams).
struct StatusChange {
  enum class Kind { kObjective, kPlan, kTask };
  Kind kind;
  std::string id;
  std::string from;
  std::string to;
  friend bool operator==(const StatusChange&, const StatusChange&) = default;
};

/// Recomputes every task that can no longer start (canceled, stopped_by the failed task or
/// plan), every plan's status and the objective's, by the table of docs/OPT.md. Returns what
/// moved: tasks, then plans, then the objective. Stamps updated_at_ms of what moved with
/// `now_ms`.
std::vector<StatusChange> RollUp(Objective& o, int64_t now_ms);

// ---- changes (each checks its input, applies it, and leaves the tree to RollUp) ----------

struct TaskSpec {
  std::string name;
  std::string description;
  /// "task-<i>" names the i-th task of the same request; any other string must be the id of
  /// a task of another plan of the objective.
  std::vector<std::string> dependencies;
  boost::json::object metadata;
  std::string skill;  // "" : done elsewhere
  boost::json::object inputs;
};

struct PlanSpec {
  std::string name;
  std::string description;
  std::vector<std::string> dependencies;  // plan ids of the objective
  boost::json::object metadata;
  std::vector<TaskSpec> tasks;
  bool execute = false;
};

/// Adds a plan to `o` (ids: `plan_id`, and task_ids[i] for tasks[i]). kInvalidParams naming
/// the field for a missing name, an unknown dependency (each named), a cycle (named as a
/// path), a limit passed; the objective must not be finished (kUnsupportedOperation).
core::Result<void> AddPlan(Objective& o, PlanSpec spec, const std::string& plan_id,
                           const std::vector<std::string>& task_ids, const Limits& limits,
                           int64_t now_ms);

/// A caller's status for the objective (objectives/update): canceled and failed end it (every
/// unfinished task is canceled, every unfinished plan skipped); on an objective without plans
/// any status is kept as given; with plans, `working` executes every plan (docs/OPT.md
/// "Execution") and the others are derived and refused unless they are what RollUp gives
/// already. kOptInvalidStatus for a change of a finished objective.
core::Result<void> SetObjectiveStatus(Objective& o, ObjectiveStatus to, int64_t now_ms);

/// A caller's status for plan `plan_id` (plans/update): skipped and failed end it (its
/// unfinished tasks are canceled); on a plan without tasks any status is kept as given; with
/// tasks, `working` executes it and the others are derived and refused unless they are what
/// RollUp gives already.
core::Result<void> SetPlanStatus(Objective& o, const std::string& plan_id, PlanStatus to,
                                 int64_t now_ms);

/// A status reported for plan task `task_id` (tasks/updateStatus; refused for a task that
/// mirrors one of this host's) or mirrored from its A2A task (`mirrored`). A finished task
/// does not change (kOptInvalidStatus), nor one whose plan or objective is finished.
core::Result<void> SetTaskStatus(Objective& o, const std::string& task_id, TaskStatus to,
                                 int64_t now_ms, bool mirrored = false);

/// Links A2A task `a2a_task_id` to plan task `task_id` (tasks/link). `local`: it is a task of
/// this host, whose state `status` the plan task takes and follows from now on; else another
/// agent's, reported by tasks/updateStatus. A task linked to another A2A task is refused
/// (kOptInvalidStatus), as is an empty id.
core::Result<void> LinkTask(Objective& o, const std::string& task_id, const std::string& a2a_task_id,
                            bool local, TaskStatus status, int64_t now_ms);

/// The name, description and metadata of an objective or plan (at `path`, "params"): the
/// name non-empty when `name_required`, each within `limits`. kInvalidParams naming the field.
core::Result<void> CheckFields(const std::string& path, const std::string& name,
                               const std::string& description, const boost::json::object& metadata,
                               const Limits& limits, bool name_required);

// ---- execution (docs/OPT.md "Execution") --------------------------------------------------

/// The tasks whose runs start now: of a plan that executes, naming a skill, pending and never
/// started, their task dependencies completed and their plan's dependencies completed or
/// skipped, in an objective and a plan no caller ended. In plan order, then task order.
std::vector<PlanTask*> Startable(Objective& o);
/// Plan task `t` is started as run `run_id` (its a2a_task_id, followed from now on); it stays
/// pending until that run's first commit moves it.
void MarkStarted(PlanTask& t, const std::string& run_id, int64_t now_ms);
/// The run of started plan task `task_id` could not be started (`why`): the task fails.
core::Result<void> FailStart(Objective& o, const std::string& task_id, const std::string& why,
                             int64_t now_ms);

/// True when nothing under `o` can change any more: the objective is finished and so is
/// every task (what ends an objectives/subscribe stream).
bool Settled(const Objective& o);

/// Whether a task joining by message may join plan `plan_id` ("": the objective's inbox plan,
/// made when first needed): kOptInvalidStatus for a finished objective or plan, kOptNotFound
/// for an unknown plan, kInvalidParams when the plan is full (maxTasksPerPlan) or the
/// objective is (maxPlansPerObjective, for a new inbox).
core::Result<void> CanJoin(const Objective& o, const std::string& plan_id, const Limits& limits);
/// A2A task `a2a_task_id` of this host (in state `status`, named `name`) joins plan `plan_id`
/// ("": the inbox plan, `inbox_plan_id` when it is made now) as plan task `task_id`, which
/// follows it. Checked as CanJoin.
core::Result<void> JoinTask(Objective& o, const std::string& plan_id,
                            const std::string& inbox_plan_id, const std::string& task_id,
                            const std::string& a2a_task_id, TaskStatus status,
                            const std::string& name, const Limits& limits, int64_t now_ms);

Plan* FindPlan(Objective& o, std::string_view plan_id);
PlanTask* FindTask(Objective& o, std::string_view task_id);

}  // namespace a2ad::ext::opt
