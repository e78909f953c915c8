#pragma once
// Raising and answering a node's interrupt (DIGEST §4), shared by the gates (gates.cpp) and
// the kinds that raise one on another's behalf (a2a_invoke.cpp: a peer asking for input).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"

namespace a2ad::workflow::nodes {

/// The steps that raise an interrupt of `kind` (approval | clarification | external-event |
/// custom) with `data` at step.node: node.started (unless `started`), interrupt.requested,
/// approval/clarification.requested, node.suspended (with its token and A2A prompt). Its key
/// is runId:nodeId:n, n the node's count of interrupts so far (run.interruptCounts).
std::vector<tasks::EventDraft> RaiseInterrupt(const NodeStep& step, bool started,
                                              const std::string& kind, boost::json::object data);

/// An answer to the open interrupt, checked by the rules of its kind (answers.hpp): the
/// events interrupt.resolved + node.resumed carrying the normalized answer (and the kind's
/// own: approval.received, clarification.resolved, a quorum vote), or the refusal.
core::Result<tasks::Resolution> ResolveAnswer(const InterruptAnswer& answer);

}  // namespace a2ad::workflow::nodes
