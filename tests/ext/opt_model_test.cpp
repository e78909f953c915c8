// The OPT model (ext/opt/opt_model.hpp): every row of the rollup table of docs/OPT.md, the
// checks of a new plan (unknown ids named, cycles named as a path, limits), what a caller
// may set, which tasks start when (execution), and tasks joining by message.
#include "a2ad/ext/opt/opt_model.hpp"

#include <gtest/gtest.h>

#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::ext::opt {
namespace {
using S = TaskStatus;
using K = StatusChange::Kind;

constexpr int64_t kT0 = 1000;

// An objective "o" with plans p0, p1, ... of the given task statuses; p<i> depends on the
// plans listed in deps[i].
Objective Tree(const std::vector<std::vector<S>>& plans,
               const std::vector<std::vector<std::string>>& deps = {}) {
  Objective o;
  o.id = "o";
  for (size_t i = 0; i < plans.size(); ++i) {
    Plan p;
    p.id = "p" + std::to_string(i);
    p.objective_id = "o";
    p.position = static_cast<int>(i);
    if (i < deps.size()) p.dependencies = deps[i];
    for (size_t j = 0; j < plans[i].size(); ++j) {
      PlanTask t;
      t.id = p.id + "t" + std::to_string(j);
      t.plan_id = p.id;
      t.objective_id = "o";
      t.task_index = static_cast<int>(j);
      t.status = plans[i][j];
      p.tasks.push_back(t);
    }
    o.plans.push_back(p);
  }
  (void)RollUp(o, kT0);
  return o;
}

PlanStatus PlanOf(std::vector<S> tasks, std::vector<std::vector<S>> before = {}) {
  before.push_back(std::move(tasks));
  std::vector<std::vector<std::string>> deps(before.size());
  for (size_t i = 0; i + 1 < before.size(); ++i) deps.back().push_back("p" + std::to_string(i));
  Objective o = Tree(before, deps);
  return o.plans.back().status;
}

ObjectiveStatus ObjectiveOf(const std::vector<std::vector<S>>& plans) {
  return Tree(plans).status;
}

// ---- plans -----------------------------------------------------------------------------------

TEST(OptRollUp, PlanRow1AnyFailedCanceledOrRejectedTaskFailsThePlan) {
  for (S bad : {S::kFailed, S::kCanceled, S::kRejected})
    EXPECT_EQ(PlanOf({S::kCompleted, bad, S::kWorking}), PlanStatus::kFailed) << NameOf(bad);
}

TEST(OptRollUp, PlanRow2AllTasksCompletedCompletesThePlan) {
  EXPECT_EQ(PlanOf({S::kCompleted, S::kCompleted}), PlanStatus::kCompleted);
}

TEST(OptRollUp, PlanRow3ATaskWaitingForInputOrAuthBlocksThePlanOnInput) {
  for (S waiting : {S::kInputRequired, S::kAuthRequired}) {
    Objective o = Tree({{S::kWorking, waiting, S::kCompleted}});
    EXPECT_EQ(o.plans[0].status, PlanStatus::kBlocked);
    EXPECT_EQ(o.plans[0].blocked_on, "input");
  }
}

TEST(OptRollUp, PlanRow4AWorkingTaskOrSomeCompletedMakesItWorking) {
  EXPECT_EQ(PlanOf({S::kSubmitted, S::kPending}), PlanStatus::kWorking);
  EXPECT_EQ(PlanOf({S::kWorking}), PlanStatus::kWorking);
  EXPECT_EQ(PlanOf({S::kCompleted, S::kPending}), PlanStatus::kWorking);
}

TEST(OptRollUp, PlanRow5AnOpenDependencyBlocksAnUnstartedPlanOnDependencies) {
  Objective o = Tree({{S::kWorking}, {S::kPending}}, {{}, {"p0"}});
  EXPECT_EQ(o.plans[1].status, PlanStatus::kBlocked);
  EXPECT_EQ(o.plans[1].blocked_on, "dependencies");
  // Completed or skipped dependencies free it.
  EXPECT_EQ(PlanOf({S::kPending}, {{S::kCompleted}}), PlanStatus::kPending);
  Objective skipped = Tree({{S::kWorking}, {S::kPending}}, {{}, {"p0"}});
  ASSERT_TRUE(SetPlanStatus(skipped, "p0", PlanStatus::kSkipped, kT0));
  (void)RollUp(skipped, kT0);
  EXPECT_EQ(skipped.plans[1].status, PlanStatus::kPending);
}

TEST(OptRollUp, PlanRow6NothingStartedIsPending) {
  EXPECT_EQ(PlanOf({S::kPending, S::kPending}), PlanStatus::kPending);
  EXPECT_EQ(PlanOf({}), PlanStatus::kPending);
}

TEST(OptRollUp, PlanRow7ADecidedStatusIsKept) {
  Objective o = Tree({{S::kWorking, S::kPending}});
  ASSERT_TRUE(SetPlanStatus(o, "p0", PlanStatus::kSkipped, kT0));
  (void)RollUp(o, kT0);
  EXPECT_EQ(o.plans[0].status, PlanStatus::kSkipped);
  EXPECT_EQ(o.plans[0].tasks[0].status, S::kCanceled);
  EXPECT_EQ(o.plans[0].tasks[0].stopped_by, "p0");
  // A plan without tasks is tracked by hand: any status is kept.
  Objective hand = Tree({{}});
  ASSERT_TRUE(SetPlanStatus(hand, "p0", PlanStatus::kWorking, kT0));
  (void)RollUp(hand, kT0);
  EXPECT_EQ(hand.plans[0].status, PlanStatus::kWorking);
  EXPECT_EQ(hand.status, ObjectiveStatus::kWorking);
}

// ---- tasks that can no longer start ----------------------------------------------------------

TEST(OptRollUp, TaskRow1ADependentOfAFailedTaskIsCanceledNamingIt) {
  Objective o = Tree({{S::kPending, S::kPending, S::kPending}});
  o.plans[0].tasks[1].dependencies = {"p0t0"};
  o.plans[0].tasks[2].dependencies = {"p0t1"};  // transitively
  o.plans[0].tasks[0].status = S::kFailed;
  const auto changes = RollUp(o, kT0 + 1);
  EXPECT_EQ(o.plans[0].tasks[1].status, S::kCanceled);
  EXPECT_EQ(o.plans[0].tasks[1].stopped_by, "p0t0");
  EXPECT_EQ(o.plans[0].tasks[2].status, S::kCanceled);
  EXPECT_EQ(o.plans[0].tasks[2].stopped_by, "p0t1");
  EXPECT_EQ(o.plans[0].status, PlanStatus::kFailed);
  EXPECT_EQ(o.status, ObjectiveStatus::kFailed);
  // Tasks first, then the plan, then the objective.
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0], (StatusChange{K::kTask, "p0t1", "pending", "canceled"}));
  EXPECT_EQ(changes[1], (StatusChange{K::kTask, "p0t2", "pending", "canceled"}));
  EXPECT_EQ(changes[2], (StatusChange{K::kPlan, "p0", "pending", "failed"}));
  EXPECT_EQ(changes[3], (StatusChange{K::kObjective, "o", "planning", "failed"}));
  EXPECT_EQ(o.plans[0].tasks[1].updated_at_ms, kT0 + 1);
}

TEST(OptRollUp, TaskRow2TheTasksOfAPlanWhoseDependencyFailedAreCanceled) {
  Objective o = Tree({{S::kFailed}, {S::kPending}}, {{}, {"p0"}});
  EXPECT_EQ(o.plans[1].tasks[0].status, S::kCanceled);
  EXPECT_EQ(o.plans[1].tasks[0].stopped_by, "p0");
  EXPECT_EQ(o.plans[1].status, PlanStatus::kFailed);
}

// ---- the objective ---------------------------------------------------------------------------

TEST(OptRollUp, ObjectiveRow1ADecidedStatusIsKept) {
  Objective o = Tree({{S::kWorking}});
  ASSERT_TRUE(SetObjectiveStatus(o, ObjectiveStatus::kCanceled, kT0));
  (void)RollUp(o, kT0);
  EXPECT_EQ(o.status, ObjectiveStatus::kCanceled);
  EXPECT_EQ(o.plans[0].status, PlanStatus::kSkipped);
  EXPECT_EQ(o.plans[0].tasks[0].status, S::kCanceled);
  EXPECT_EQ(o.plans[0].tasks[0].stopped_by, "o");
}

TEST(OptRollUp, ObjectiveRow2WithoutPlansItKeepsItsStatus) {
  Objective o;
  o.id = "o";
  EXPECT_TRUE(RollUp(o, kT0).empty());
  EXPECT_EQ(o.status, ObjectiveStatus::kSubmitted);
  ASSERT_TRUE(SetObjectiveStatus(o, ObjectiveStatus::kBlocked, kT0));
  (void)RollUp(o, kT0);
  EXPECT_EQ(o.status, ObjectiveStatus::kBlocked);
}

TEST(OptRollUp, ObjectiveRow3AFailedPlanFailsIt) {
  EXPECT_EQ(ObjectiveOf({{S::kWorking}, {S::kFailed}, {S::kInputRequired}}),
            ObjectiveStatus::kFailed);
}

TEST(OptRollUp, ObjectiveRow4AllPlansCompletedOrSkippedCompletesIt) {
  EXPECT_EQ(ObjectiveOf({{S::kCompleted}, {S::kCompleted}}), ObjectiveStatus::kCompleted);
  Objective o = Tree({{S::kCompleted}, {S::kPending}});
  ASSERT_TRUE(SetPlanStatus(o, "p1", PlanStatus::kSkipped, kT0));
  (void)RollUp(o, kT0);
  EXPECT_EQ(o.status, ObjectiveStatus::kCompleted);
}

TEST(OptRollUp, ObjectiveRow5APlanBlockedOnInputBlocksIt) {
  EXPECT_EQ(ObjectiveOf({{S::kWorking}, {S::kInputRequired}}), ObjectiveStatus::kBlocked);
  // Blocked on dependencies is not waiting for anyone: still working.
  Objective o = Tree({{S::kWorking}, {S::kPending}}, {{}, {"p0"}});
  EXPECT_EQ(o.status, ObjectiveStatus::kWorking);
}

TEST(OptRollUp, ObjectiveRow6APlanWorkingOrCompletedMakesItWorking) {
  EXPECT_EQ(ObjectiveOf({{S::kWorking}, {S::kPending}}), ObjectiveStatus::kWorking);
  EXPECT_EQ(ObjectiveOf({{S::kCompleted}, {S::kPending}}), ObjectiveStatus::kWorking);
}

TEST(OptRollUp, ObjectiveRow7NothingStartedIsPlanning) {
  EXPECT_EQ(ObjectiveOf({{S::kPending}, {}}), ObjectiveStatus::kPlanning);
  Objective o = Tree({{S::kPending}, {S::kPending}}, {{}, {"p0"}});
  EXPECT_EQ(o.status, ObjectiveStatus::kPlanning);
}

// ---- a new plan --------------------------------------------------------------------------------

PlanSpec Spec(std::vector<std::vector<std::string>> task_deps) {
  PlanSpec s;
  s.name = "plan";
  for (size_t i = 0; i < task_deps.size(); ++i)
    s.tasks.push_back(TaskSpec{"t" + std::to_string(i), "", task_deps[i], {}});
  return s;
}

std::vector<std::string> Ids(size_t n, const std::string& prefix = "x") {
  std::vector<std::string> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(prefix + std::to_string(i));
  return ids;
}

TEST(OptAddPlan, TaskIndexesResolveToIdsAndPlansOrderByCreation) {
  Objective o = Tree({});
  ASSERT_TRUE(AddPlan(o, Spec({{}, {"task-0"}, {"task-0", "task-1", "task-0"}}), "pa", Ids(3),
                      Limits{}, kT0));
  ASSERT_EQ(o.plans.size(), 1u);
  EXPECT_EQ(o.plans[0].tasks[1].dependencies, std::vector<std::string>{"x0"});
  EXPECT_EQ(o.plans[0].tasks[2].dependencies, (std::vector<std::string>{"x0", "x1"}));
  // A task of another plan is named by its id.
  PlanSpec second = Spec({{"x2"}});
  second.dependencies = {"pa"};
  ASSERT_TRUE(AddPlan(o, second, "pb", Ids(1, "y"), Limits{}, kT0));
  EXPECT_EQ(o.plans[1].position, 1);
  EXPECT_EQ(o.plans[1].tasks[0].dependencies, std::vector<std::string>{"x2"});
}

TEST(OptAddPlan, UnknownDependenciesAreRefusedNamingEach) {
  Objective o = Tree({{S::kPending}});
  auto r = AddPlan(o, Spec({{}, {"task-7", "nope", "task-0"}}), "pa", Ids(2), Limits{}, kT0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
  EXPECT_NE(r.error().message.find("params.tasks[1].dependencies"), std::string::npos);
  EXPECT_NE(r.error().message.find("'task-7', 'nope'"), std::string::npos) << r.error().message;
  PlanSpec s = Spec({});
  s.dependencies = {"p0", "ghost"};
  auto plans = AddPlan(o, s, "pb", {}, Limits{}, kT0);
  ASSERT_FALSE(plans);
  EXPECT_NE(plans.error().message.find("'ghost'"), std::string::npos) << plans.error().message;
  EXPECT_EQ(plans.error().message.find("'p0'"), std::string::npos);
  EXPECT_EQ(o.plans.size(), 1u);  // nothing added
}

TEST(OptAddPlan, CyclesAreRefusedNamedAsAPath) {
  Objective o = Tree({});
  auto r = AddPlan(o, Spec({{"task-2"}, {"task-0"}, {"task-1"}}), "pa", Ids(3), Limits{}, kT0);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("cycle: task-0 -> task-2 -> task-1 -> task-0"),
            std::string::npos)
      << r.error().message;
  auto self = AddPlan(o, Spec({{}, {"task-1"}}), "pb", Ids(2), Limits{}, kT0);
  ASSERT_FALSE(self);
  EXPECT_NE(self.error().message.find("cycle: task-1 -> task-1"), std::string::npos);
  EXPECT_TRUE(o.plans.empty());
}

TEST(OptAddPlan, LimitsAndRequiredNamesAreEnforced) {
  Limits limits;
  limits.max_plans_per_objective = 1;
  limits.max_tasks_per_plan = 2;
  Objective o = Tree({});
  auto many = AddPlan(o, Spec({{}, {}, {}}), "pa", Ids(3), limits, kT0);
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("maxTasksPerPlan (2)"), std::string::npos);
  ASSERT_TRUE(AddPlan(o, Spec({{}}), "pa", Ids(1), limits, kT0));
  auto second = AddPlan(o, Spec({}), "pb", {}, limits, kT0);
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("maxPlansPerObjective (1)"), std::string::npos);
  PlanSpec unnamed = Spec({{}});
  unnamed.tasks[0].name.clear();
  limits.max_plans_per_objective = 5;
  auto noname = AddPlan(o, unnamed, "pc", Ids(1), limits, kT0);
  ASSERT_FALSE(noname);
  EXPECT_NE(noname.error().message.find("params.tasks[0].name: required"), std::string::npos);
}

TEST(OptAddPlan, AFinishedObjectiveTakesNoPlan) {
  Objective o = Tree({});
  ASSERT_TRUE(SetObjectiveStatus(o, ObjectiveStatus::kCanceled, kT0));
  auto r = AddPlan(o, Spec({}), "pa", {}, Limits{}, kT0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, core::ErrorCode::kOptInvalidStatus);
}

// ---- what a caller may set -------------------------------------------------------------------

TEST(OptSet, DerivedStatusesAreRefusedSayingWhatTheyAre) {
  Objective o = Tree({{S::kWorking, S::kPending}});
  auto r = SetObjectiveStatus(o, ObjectiveStatus::kCompleted, kT0);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, core::ErrorCode::kOptInvalidStatus);
  EXPECT_NE(r.error().message.find("derived from its plans (it is 'working')"), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(SetObjectiveStatus(o, ObjectiveStatus::kWorking, kT0));  // what it is already
  auto plan = SetPlanStatus(o, "p0", PlanStatus::kCompleted, kT0);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("derived from its tasks"), std::string::npos);
}

TEST(OptSet, FinishedThingsDoNotChange) {
  Objective o = Tree({{S::kCompleted, S::kWorking}});
  auto done = SetTaskStatus(o, "p0t0", S::kWorking, kT0);
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message.find("is completed"), std::string::npos);
  auto back = SetTaskStatus(o, "p0t1", S::kPending, kT0);
  ASSERT_FALSE(back);
  ASSERT_TRUE(SetTaskStatus(o, "p0t1", S::kCompleted, kT0));
  (void)RollUp(o, kT0);
  EXPECT_EQ(o.status, ObjectiveStatus::kCompleted);
  auto again = SetObjectiveStatus(o, ObjectiveStatus::kCanceled, kT0);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("does not change any more"), std::string::npos);
  auto missing = SetTaskStatus(o, "nope", S::kWorking, kT0);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, core::ErrorCode::kOptNotFound);
}

TEST(OptSet, ATaskLinksOnceAndTakesTheLinkedTasksState) {
  Objective o = Tree({{S::kPending}});
  ASSERT_TRUE(LinkTask(o, "p0t0", "a2a-1", true, S::kInputRequired, kT0));
  EXPECT_EQ(o.plans[0].tasks[0].a2a_task_id, "a2a-1");
  EXPECT_EQ(o.plans[0].tasks[0].status, S::kInputRequired);
  EXPECT_TRUE(LinkTask(o, "p0t0", "a2a-1", true, S::kInputRequired, kT0));  // the same again
  auto other = LinkTask(o, "p0t0", "a2a-2", false, S::kPending, kT0);
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("linked to A2A task 'a2a-1' already"), std::string::npos);
  // It follows that task: a caller's report is refused, the mirror's taken.
  auto reported = SetTaskStatus(o, "p0t0", S::kCompleted, kT0);
  ASSERT_FALSE(reported);
  EXPECT_NE(reported.error().message.find("follows A2A task 'a2a-1' of this host"),
            std::string::npos);
  EXPECT_TRUE(SetTaskStatus(o, "p0t0", S::kCompleted, kT0, true));
  // Another agent's task keeps its status until reported.
  Objective remote = Tree({{S::kPending}});
  ASSERT_TRUE(LinkTask(remote, "p0t0", "elsewhere", false, S::kPending, kT0));
  EXPECT_FALSE(remote.plans[0].tasks[0].mirrors);
  EXPECT_TRUE(SetTaskStatus(remote, "p0t0", S::kWorking, kT0));
}

TEST(OptNames, StatusesReadEitherVersionsTaskStateNames) {
  EXPECT_EQ(TaskStatusNamed("input-required"), S::kInputRequired);
  EXPECT_EQ(TaskStatusNamed("TASK_STATE_INPUT_REQUIRED"), S::kInputRequired);
  EXPECT_EQ(TaskStatusNamed("pending"), S::kPending);
  EXPECT_FALSE(TaskStatusNamed("TASK_STATE_UNSPECIFIED"));
  EXPECT_FALSE(TaskStatusNamed("paused"));
  EXPECT_EQ(ObjectiveStatusNamed("planning"), ObjectiveStatus::kPlanning);
  EXPECT_FALSE(PlanStatusNamed("canceled"));
}

TEST(OptJson, StoredDocumentsReadBackWhole) {
  Objective o = Tree({{S::kInputRequired, S::kPending}});
  o.decided = false;
  o.plans[0].tasks[1].dependencies = {"p0t0"};
  o.plans[0].tasks[0].a2a_task_id = "a2a";
  const auto text = [](const boost::json::object& v) { return protocol::SerializeJson(v); };
  auto back = ObjectiveFromDoc(text(StoredDoc(o)));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, o.status);
  auto plan = PlanFromDoc(text(StoredDoc(o.plans[0])));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->blocked_on, "input");
  auto task = TaskFromDoc(text(StoredDoc(o.plans[0].tasks[1])));
  ASSERT_TRUE(task);
  EXPECT_EQ(task->dependencies, std::vector<std::string>{"p0t0"});
  EXPECT_FALSE(TaskFromDoc("{\"id\":\"x\"}"));
  EXPECT_FALSE(ObjectiveFromDoc("not json"));
}

// ---- execution ---------------------------------------------------------------------------

// Plan p<i>'s tasks name a skill; `execute` says which plans execute.
Objective Runnable(const std::vector<std::vector<S>>& plans,
                   const std::vector<std::vector<std::string>>& deps, std::vector<bool> execute) {
  Objective o = Tree(plans, deps);
  for (size_t i = 0; i < o.plans.size(); ++i) {
    o.plans[i].execute = i < execute.size() && execute[i];
    for (auto& t : o.plans[i].tasks) t.skill = "work";
  }
  return o;
}

std::vector<std::string> Ids(const std::vector<PlanTask*>& ts) {
  std::vector<std::string> out;
  for (const auto* t : ts) out.push_back(t->id);
  return out;
}

TEST(OptExecution, ATaskStartsWhenItsPlanExecutesAndItsDependenciesAreDone) {
  Objective o = Runnable({{S::kPending, S::kPending, S::kPending}}, {}, {true});
  o.plans[0].tasks[1].dependencies = {"p0t0"};
  o.plans[0].tasks[2].skill.clear();  // done elsewhere: never started here
  EXPECT_EQ(Ids(Startable(o)), (std::vector<std::string>{"p0t0"}));
  MarkStarted(o.plans[0].tasks[0], "run-0", kT0);
  EXPECT_EQ(o.plans[0].tasks[0].a2a_task_id, "run-0");
  EXPECT_TRUE(o.plans[0].tasks[0].mirrors);
  EXPECT_EQ(o.plans[0].tasks[0].status, S::kPending);  // until its run's first commit
  EXPECT_TRUE(Startable(o).empty());                   // started once
  ASSERT_TRUE(SetTaskStatus(o, "p0t0", S::kWorking, kT0, true));
  EXPECT_TRUE(Startable(o).empty());  // its dependency is not completed yet
  ASSERT_TRUE(SetTaskStatus(o, "p0t0", S::kCompleted, kT0, true));
  EXPECT_EQ(Ids(Startable(o)), (std::vector<std::string>{"p0t1"}));
}

TEST(OptExecution, IndependentTasksStartTogetherAndAPlanWaitsForItsDependencies) {
  Objective o = Runnable({{S::kPending, S::kPending}, {S::kPending}}, {{}, {"p0"}}, {true, true});
  EXPECT_EQ(Ids(Startable(o)), (std::vector<std::string>{"p0t0", "p0t1"}));
  o.plans[0].tasks[0].status = S::kCompleted;
  o.plans[0].tasks[0].started = o.plans[0].tasks[1].started = true;
  EXPECT_TRUE(Startable(o).empty());  // p1 waits for p0
  o.plans[0].tasks[1].status = S::kCompleted;
  (void)RollUp(o, kT0);
  EXPECT_EQ(Ids(Startable(o)), (std::vector<std::string>{"p1t0"}));
  // A skipped dependency satisfies too.
  Objective skipped = Runnable({{S::kPending}, {S::kPending}}, {{}, {"p0"}}, {false, true});
  ASSERT_TRUE(SetPlanStatus(skipped, "p0", PlanStatus::kSkipped, kT0));
  (void)RollUp(skipped, kT0);
  EXPECT_EQ(Ids(Startable(skipped)), (std::vector<std::string>{"p1t0"}));
}

TEST(OptExecution, MovingAPlanOrTheObjectiveToWorkingExecutesIt) {
  Objective o = Runnable({{S::kPending}, {S::kPending}}, {}, {false, false});
  EXPECT_TRUE(Startable(o).empty());
  ASSERT_TRUE(SetPlanStatus(o, "p0", PlanStatus::kWorking, kT0));
  EXPECT_TRUE(o.plans[0].execute);
  EXPECT_EQ(Ids(Startable(o)), (std::vector<std::string>{"p0t0"}));
  ASSERT_TRUE(SetObjectiveStatus(o, ObjectiveStatus::kWorking, kT0));
  EXPECT_EQ(Ids(Startable(o)), (std::vector<std::string>{"p0t0", "p1t0"}));
}

TEST(OptExecution, NothingStartsInAnEndedPlanOrObjectiveAndAFailedStartFailsTheTask) {
  Objective o = Runnable({{S::kPending}, {S::kPending}}, {}, {true, true});
  ASSERT_TRUE(SetPlanStatus(o, "p0", PlanStatus::kSkipped, kT0));
  EXPECT_EQ(Ids(Startable(o)), (std::vector<std::string>{"p1t0"}));
  ASSERT_TRUE(FailStart(o, "p1t0", "no such workflow", kT0));
  EXPECT_EQ(o.plans[1].tasks[0].status, S::kFailed);
  EXPECT_EQ(o.plans[1].tasks[0].error, "no such workflow");
  Objective ended = Runnable({{S::kPending}}, {}, {true});
  ASSERT_TRUE(SetObjectiveStatus(ended, ObjectiveStatus::kCanceled, kT0));
  EXPECT_TRUE(Startable(ended).empty());
  EXPECT_EQ(ended.plans[0].tasks[0].stopped_by, "o");
}

TEST(OptExecution, AFailedObjectiveStillFollowsItsRunningTasksUntilSettled) {
  Objective o = Runnable({{S::kFailed}, {S::kWorking}}, {}, {true, true});
  EXPECT_EQ(o.status, ObjectiveStatus::kFailed);
  EXPECT_FALSE(Settled(o));
  ASSERT_TRUE(SetTaskStatus(o, "p1t0", S::kCompleted, kT0, true));
  (void)RollUp(o, kT0);
  EXPECT_TRUE(Settled(o));
  EXPECT_FALSE(Settled(Tree({{S::kCompleted}, {S::kPending}})));
  EXPECT_TRUE(Settled(Tree({{S::kCompleted}, {S::kCompleted}})));
}

// ---- joining by message ------------------------------------------------------------------

TEST(OptJoin, TasksJoinTheInboxPlanMadeOnceOrTheNamedPlan) {
  Objective o = Tree({{S::kPending}});
  ASSERT_TRUE(JoinTask(o, "", "inbox", "j1", "a2a-1", S::kSubmitted, "first", Limits{}, kT0));
  ASSERT_TRUE(JoinTask(o, "", "inbox", "j2", "a2a-2", S::kWorking, "", Limits{}, kT0));
  ASSERT_EQ(o.plans.size(), 2u);
  EXPECT_TRUE(o.plans[1].inbox);
  ASSERT_EQ(o.plans[1].tasks.size(), 2u);
  EXPECT_EQ(o.plans[1].tasks[0].name, "first");
  EXPECT_EQ(o.plans[1].tasks[1].name, "a2a-2");  // no text: named by its task id
  EXPECT_EQ(o.plans[1].tasks[1].task_index, 1);
  EXPECT_TRUE(o.plans[1].tasks[1].mirrors);
  ASSERT_TRUE(JoinTask(o, "p0", "inbox", "j3", "a2a-3", S::kInputRequired, "x", Limits{}, kT0));
  EXPECT_EQ(o.plans[0].tasks.size(), 2u);
  (void)RollUp(o, kT0);
  EXPECT_EQ(o.status, ObjectiveStatus::kBlocked);  // a joined task waits for input
}

TEST(OptJoin, AFinishedOrFullObjectiveTakesNoTask) {
  Limits one;
  one.max_tasks_per_plan = 1;
  one.max_plans_per_objective = 1;
  Objective o = Tree({{S::kPending}});
  auto full = CanJoin(o, "p0", one);
  ASSERT_FALSE(full);
  EXPECT_NE(full.error().message.find("maxTasksPerPlan (1)"), std::string::npos);
  auto no_inbox = CanJoin(o, "", one);
  ASSERT_FALSE(no_inbox);
  EXPECT_NE(no_inbox.error().message.find("maxPlansPerObjective (1)"), std::string::npos);
  auto unknown = CanJoin(o, "nope", Limits{});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, core::ErrorCode::kOptNotFound);
  ASSERT_TRUE(SetObjectiveStatus(o, ObjectiveStatus::kCanceled, kT0));
  auto ended = CanJoin(o, "", Limits{});
  ASSERT_FALSE(ended);
  EXPECT_EQ(ended.error().code, core::ErrorCode::kOptInvalidStatus);
}

TEST(OptJson, ExecutionFieldsReadBackWhole) {
  Objective o = Runnable({{S::kPending}}, {}, {true});
  o.plans[0].inbox = true;
  PlanTask& t = o.plans[0].tasks[0];
  t.inputs = boost::json::object{{"delayMs", 5}};
  MarkStarted(t, "run", kT0);
  t.error = "why";
  const auto text = [](const boost::json::object& v) { return protocol::SerializeJson(v); };
  auto plan = PlanFromDoc(text(StoredDoc(o.plans[0])));
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->execute);
  EXPECT_TRUE(plan->inbox);
  auto task = TaskFromDoc(text(StoredDoc(t)));
  ASSERT_TRUE(task);
  EXPECT_EQ(task->skill, "work");
  EXPECT_EQ(task->inputs, t.inputs);
  EXPECT_TRUE(task->started);
  EXPECT_EQ(task->error, "why");
  EXPECT_EQ(ToJson(t).at("skill"), "work");
}

}  // namespace
}  // namespace a2ad::ext::opt
