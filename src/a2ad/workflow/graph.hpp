#pragma once
// The workflow graph at one point of a run (DIGEST §5.1): whether a node may run now, must
// be skipped or must wait (its incoming edges, their conditions and trigger rules, over the
// run's nodeStates), and what its input ports resolve to. Below the node kinds and the
// planner; knows nothing of node kinds.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>

#include "a2ad/protocol/run_snapshot.hpp"
#include "a2ad/workflow/definition.hpp"

namespace a2ad::workflow {

enum class Readiness {
  kReady,  // no incoming edge, or the trigger rule holds over finished sources
  kSkip,   // every source finished and the rule does not hold: node.skipped
  kWait,   // a source has not finished yet
};

/// `node`'s readiness given its sources' states in `run`. A node's rule
/// is the last non-default triggerRule among its incoming edges (default all_success); an
/// edge counts as satisfied when its source completed and its condition holds.
Readiness ReadinessOf(const Workflow& workflow, const Node& node, const protocol::RunSnapshot& run);

/// Whether edge condition `condition` ({} : always) holds over its source's outputs.
/// equals / notEquals (JSON equality), contains (array member or substring), regex (an
/// ECMAScript search in linear time; a pattern that does not compile never holds). `left` is
/// a path into the outputs: "output.a.b", "outputs.a.b" or "a.b".
bool ConditionHolds(const boost::json::object& condition,
                    const boost::json::object& source_outputs);

/// `node`'s input ports resolved against `run` (a RunSnapshot): static values, run
/// variables, upstream nodes' outputs. A port whose source is absent stays absent.
boost::json::object ResolveInputs(const Node& node, const protocol::RunSnapshot& run);

}  // namespace a2ad::workflow
