#pragma once
// The events a run's steps are made of (DIGEST §3.3), written one way for every node kind:
// an event draft for a node or the run, a node's start, completion (with its artifact) and
// failure (which fails the run). The bottom of workflow/: the node kinds (nodes/) and the
// planner (plan.hpp) decide which events a step holds; these say how each one is written.
// Every draft is committed by the service, which stamps eventId, runId, time and sequence.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/protocol/model.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/workflow/definition.hpp"

namespace a2ad::workflow {

/// An event of `type` about node `node` ("" : about the run). A node event's payload also
/// carries the node id, as its last member ("nodeId").
tasks::EventDraft Ev(std::string type, std::string node, boost::json::object payload);

/// {code, message}: the error object of node.failed and run.failed.
boost::json::object ErrorObj(std::string_view code, std::string_view message);

/// The payload node.started begins with: {typeId, attempt: 0}. Kinds append their own
/// members (wakeAt, childRunId) after it.
boost::json::object StartedPayload(const Node& node);

/// node.failed + run.failed: the run fails with the node's error (DIGEST §3.3 failure
/// sequence).
void FailNode(std::vector<tasks::EventDraft>& out, const Node& node, boost::json::object error);
/// run.failed without a node (a run-level cap).
void FailRun(std::vector<tasks::EventDraft>& out, boost::json::object error);

/// artifact.created: the node's A2A artifact `run_id:node.id`, carrying `part` (the node's
/// outputs as a data part, or a kind's own: a2ad.format's text).
void NodeArtifact(std::vector<tasks::EventDraft>& out, const std::string& run_id, const Node& node,
                  protocol::Part part, std::string_view artifact_type);

/// node.completed with `outputs`, preceded by the node's artifact when it has an
/// artifactType.
void CompleteNode(std::vector<tasks::EventDraft>& out, const std::string& run_id, const Node& node,
                  boost::json::object outputs, int64_t duration_ms = 0);

/// a2ad.child.status: while node `node` waits for its child run, the child's status
/// (`status`: running or waiting-*) and, when it waits at a gate, that interrupt's identity.
std::vector<tasks::EventDraft> ChildStatusStep(const Node& node, const std::string& child_run_id,
                                               const std::string& status,
                                               const protocol::RunSnapshot& child_run);

/// A string as itself, any other value as its JSON text.
std::string AsText(const boost::json::value& value);

}  // namespace a2ad::workflow
