#pragma once
// The engine's decisions, without I/O (DIGEST §5.1, §3.3). Plan reads a run snapshot (the
// fold of the run's log, TaskRecord::run) and returns the next step: run.started for a new
// run; the next move of a node in flight (its kind's Continue); else the next ready node in
// declaration order, started by its kind (or skipped, or refused by a cap); else the run's
// outputs and run.completed. A run that waits for an answer is parked; a terminal one is
// done. Because a decision depends on the snapshot and PlanEnv only, a restart re-drives a
// run from its last committed step and never repeats one: the pure-function test of
// recovery (tests/workflow/plan_test.cpp).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "a2ad/tasks/executor.hpp"
#include "a2ad/workflow/decision.hpp"
#include "a2ad/workflow/definition.hpp"

namespace a2ad::workflow {

/// The next step of run `run_id` of `workflow`, whose snapshot is `run` (a RunSnapshot).
/// Caps: settings.timeout (cap.breached run-duration, then run_timeout) and
/// env.max_node_executions (cap.breached node-executions, then recursion_limit_exceeded).
Decision Plan(const Workflow& workflow, const std::string& run_id, const protocol::RunSnapshot& run,
              const PlanEnv& env);

/// The events that finish node `node` (its kind's FinishChild) once its child run
/// `child_run_id` is terminal with snapshot `child_run`; `parent_run` is the node's run.
std::vector<tasks::EventDraft> FinishChild(const Workflow& workflow, const Node& node,
                                           const protocol::RunSnapshot& parent_run,
                                           const std::string& child_run_id,
                                           const protocol::RunSnapshot& child_run);

}  // namespace a2ad::workflow
