#include "a2ad/workflow/plan.hpp"

#include "a2ad/storage/stored_records.hpp"

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/pause.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/workflow/graph.hpp"
#include "a2ad/workflow/nodes/registry.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using tasks::EventDraft;

namespace {

json::object RunOutputs(const protocol::RunSnapshot& run) {
  json::object outputs = run.variables;
  outputs.erase("_askExchanges");
  return outputs;
}

}  // namespace

Decision Plan(const Workflow& w, const std::string& run_id, const protocol::RunSnapshot& run,
              const PlanEnv& env) {
  Decision d;
  const std::string_view status = run.status;
  if (run.empty() || tasks::IsTerminalRunStatus(status)) return d;
  if (status == "pending") {
    json::object vars;
    for (const auto& v : w.variables)
      if (v.default_value) vars[v.name] = *v.default_value;
    const json::object inputs = run.inputs.value_or(json::object());
    for (const auto& kv : inputs) vars[kv.key()] = kv.value();
    d.kind = Decision::Kind::kCommit;
    d.events.push_back(Ev(protocol::kEvRunStarted, "",
                          json::object{{"workflowId", w.id},
                                       {"inputs", inputs},
                                       {"variables", std::move(vars)},
                                       {"transport", "a2a"},
                                       {"engineVersion", "1"}}));
    return d;
  }
  // Paused (until resumed, or its first timer: tasks/pause.hpp), or at a gate (until answered,
  // or its timeout): the store's reading, so the run is woken when its row says.
  if (std::optional<int64_t> until = storage::ParkedUntil(run)) {
    d.kind = Decision::Kind::kParked;
    d.wake_at = *until;
    return d;
  }
  // Run-duration cap (settings.timeout).
  int64_t deadline = 0;
  if (w.timeout_ms > 0) {
    int64_t started = env.now_ms;
    int64_t parsed = 0;
    if (core::ParseTimestamp(run.started_at, parsed)) started = parsed;
    deadline = started + w.timeout_ms;
    if (env.now_ms >= deadline) {
      d.kind = Decision::Kind::kCommit;
      d.events.push_back(Ev(protocol::kEvCapBreached, "",
                            json::object{{"kind", "run-duration"},
                                         {"limit", w.timeout_ms},
                                         {"observed", env.now_ms - started}}));
      FailRun(d.events, ErrorObj("run_timeout", "the run exceeded settings.timeout (" +
                                                    std::to_string(w.timeout_ms) + " ms)"));
      return d;
    }
  }
  const NodeKindRegistry& kinds = NodeKindRegistry::Get();
  // A node in flight continues where its log left it.
  for (const auto& n : w.nodes) {
    const protocol::NodeState* st = run.Node(n.id);
    if (!st || st->status != "running") continue;
    d = kinds.KindOf(n).Continue(NodeStep{w, n, run_id, run, *st, env, deadline});
    d.node = &n;
    return d;
  }
  // The next node, in declaration order among the ready ones (DIGEST §5.1).
  for (const auto& n : w.nodes) {
    if (run.Node(n.id)) continue;
    Readiness r = n.disabled ? Readiness::kSkip : ReadinessOf(w, n, run);
    if (r == Readiness::kWait) continue;
    d.kind = Decision::Kind::kCommit;
    d.node = &n;
    if (r == Readiness::kSkip) {
      d.events.push_back(Ev(protocol::kEvNodeSkipped, n.id,
                            json::object{{"reason", n.disabled ? "disabled" : "condition"}}));
      return d;
    }
    const int64_t executions = run.node_executions;
    if (executions >= env.max_node_executions) {
      d.events.push_back(Ev(protocol::kEvCapBreached, n.id,
                            json::object{{"kind", "node-executions"},
                                         {"limit", env.max_node_executions},
                                         {"observed", executions + 1}}));
      FailRun(d.events, ErrorObj("recursion_limit_exceeded",
                                 "more than " + std::to_string(env.max_node_executions) +
                                     " node executions"));
      return d;
    }
    const json::object inputs = ResolveInputs(n, run);
    d.events = kinds.KindOf(n).Start(
        NodeStep{w, n, run_id, run, protocol::NoNodeState(), env, deadline}, inputs);
    return d;
  }
  // Nothing left to run.
  d.kind = Decision::Kind::kCommit;
  json::object outputs = RunOutputs(run);
  protocol::Artifact a;
  a.artifact_id = run_id + ":outputs";
  a.name = "outputs";
  a.parts.push_back(protocol::Part::Data(outputs));
  d.events.push_back(Ev(protocol::kEvArtifactCreated, "",
                        json::object{{"artifactId", a.artifact_id},
                                     {"artifactType", "run.outputs"},
                                     {"artifact", protocol::ArtifactToJson(a)},
                                     {"lastChunk", true}}));
  d.events.push_back(
      Ev(protocol::kEvRunCompleted, "", json::object{{"outputs", std::move(outputs)}}));
  return d;
}

std::vector<EventDraft> FinishChild(const Workflow& w, const Node& node,
                                    const protocol::RunSnapshot& parent_run,
                                    const std::string& child_run_id,
                                    const protocol::RunSnapshot& child_run) {
  (void)w;
  return NodeKindRegistry::Get().KindOf(node).FinishChild(node, parent_run, child_run_id,
                                                              child_run);
}

}  // namespace a2ad::workflow
