#pragma once
// What a node kind does (DIGEST §5.2): one NodeKind per node type id, registered in
// nodes/registry.cpp, consulted by the loader (definition.cpp), the planner (plan.cpp) and
// the executor (workflow_executor.cpp). A kind decides; it does no I/O. Each hook answers one question
// the engine asks at one point of a node's life:
//
//   load      Validate        is this node's config acceptable? (refused before any run)
//             CalledWorkflow  which workflow does it run as a child? (checked to exist)
//   ready     Start           the events of its first step (node.started, and more)
//   in flight Continue        its status is running (a timer armed, an interrupt open or
//                             answered, a child started, or a one-step node cut short by a
//                             crash): what now
//             FinishChild     its child run is terminal (only the executor sees the child)
//   answered  Resolve         an answer to the interrupt it raised: checked, then the events
//                             that resolve it
//   cancelled CancelEffect    what to stop outside the host (a peer's task)
//
// A kind that calls out (an HTTP API, another agent) does so by deciding Decision::kEffect in
// Continue; the executor carries the call out and logs its result (effects.hpp).
//
// Determinism: every hook is a pure function of its arguments, and Start/Continue of the run
// snapshot alone, so that a restart re-drives a run from its last committed step and decides
// the same again (ids, keys and times derive from the run, the node and PlanEnv::now_ms).
//
// Thread safety: kinds are immutable and shared by every run; hooks may be called from any
// thread at once.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/workflow/decision.hpp"
#include "a2ad/workflow/definition.hpp"

namespace a2ad::workflow {

/// The node a step is about, in its run. Borrowed for the duration of one call.
struct NodeStep {
  const Workflow& workflow;
  const Node& node;
  const std::string& run_id;
  const protocol::RunSnapshot& run;  // TaskRecord::run
  const protocol::NodeState& state;  // run.Node(node.id); NoNodeState() before Start
  const PlanEnv& env;
  int64_t deadline_ms = 0;  // the run's settings.timeout as an instant; 0: none
};

/// An answer to the interrupt open at `node`. Borrowed for the duration of one call.
struct InterruptAnswer {
  const std::string& run_id;
  const Node& node;
  const boost::json::object& interrupt;  // run.interrupt: {nodeId, interruptId, kind, key, data}
  const boost::json::value& value;       // the resume value (REST, token) or the A2A reply's
  const tasks::ResolveRequest& request;  // who answers (caller) and how (via)
  int64_t now_ms = 0;
};

class NodeKind {
 public:
  virtual ~NodeKind() = default;

  /// Load time: the kind's own config rules, for the node at `path` ("nodes[2]"). Refusals
  /// are kInvalidParams naming the field ("nodes[2].config.actions: ..."), as ParseWorkflow's.
  /// Default: anything goes.
  virtual core::Result<void> Validate(const Node& node, const std::string& path) const;

  /// Load time: the id of the workflow this node starts as a child run, if any; a directory
  /// whose workflows call an unknown one is refused (LoadWorkflowDir). Default: none.
  virtual std::optional<std::string> CalledWorkflow(const Node& node) const;

  /// The node is ready (its trigger rule holds, the caps allow one more node): the events of
  /// its first step, committed at once. `inputs` are its resolved input ports. The first
  /// event is node.started; after it, the kind's own (node.completed at once, node.failed,
  /// an armed timer, an interrupt raised, a child named).
  virtual std::vector<tasks::EventDraft> Start(const NodeStep& step,
                                               const boost::json::object& inputs) const = 0;

  /// A pause with mode interrupt_immediate abandons this kind's step in flight, and the node
  /// starts again from its beginning on resume (a sleeping delay); else the step in flight
  /// finishes first. Default: false.
  virtual bool RestartsWhenInterrupted() const { return false; }

  /// The node's last logged status is running. Default: a one-step kind cut short by a
  /// crash after node.started: complete it with no outputs (not start it again).
  virtual Decision Continue(const NodeStep& step) const;

  /// The node's child run `child_run_id` (after Continue decided kWaitChild) is terminal with
  /// snapshot `child_run`: the events that finish the node. `parent_run` is the node's run.
  /// Default (a kind that starts no child): the node fails.
  virtual std::vector<tasks::EventDraft> FinishChild(const Node& node,
                                                     const protocol::RunSnapshot& parent_run,
                                                     const std::string& child_run_id,
                                                     const protocol::RunSnapshot& child_run) const;

  /// The run was cancelled while this node was in flight (`step.state` its last state): the
  /// spec of an EffectRunner::Cancel that stops its work outside the host (effects.hpp), or
  /// an empty object when there is none. Default: none.
  virtual boost::json::object CancelEffect(const NodeStep& step) const;

  /// An answer to the node's open interrupt (the run's other checks passed: the interrupt
  /// is open, at this node, and an answer was given). An error refuses the answer and
  /// nothing is written (answers.hpp: the rules per interrupt kind). Default (a kind that
  /// raises no interrupt): kInternal.
  virtual core::Result<tasks::Resolution> Resolve(const InterruptAnswer& answer) const;
};

}  // namespace a2ad::workflow
