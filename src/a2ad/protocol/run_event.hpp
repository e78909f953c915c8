#pragma once
// The OpenWOP RunEventDoc envelope (DIGEST §3.2, run-event.schema.json): one entry of a
// run's append-only event log. Task id == run id. A2A status and artifact updates are
// projections of these entries (tasks/task_projection.hpp).
//
// Thread safety: plain values and pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>

namespace a2ad::protocol {

struct RunEvent {
  std::string event_id;  // opaque, globally unique
  std::string run_id;    // == task id
  std::string type;      // RunEventType ("run.started", ...) or vendor "a2a.*"
  std::string node_id;   // empty unless node-scoped
  boost::json::object payload;
  int64_t timestamp_ms = 0;
  int64_t sequence = 0;  // per run, gap-free, first event = 0
  friend bool operator==(const RunEvent&, const RunEvent&) = default;
};

/// RunEventDoc JSON (the shape OpenWOP readers see).
boost::json::object RunEventToJson(const RunEvent& e);
/// Inverse of RunEventToJson; returns false if a required member is missing or mistyped.
bool RunEventFromJson(const boost::json::object& o, RunEvent& out);

// Event types this host writes. OpenWOP types where one exists; `a2a.*` vendor types for
// A2A facts OpenWOP has no type for (the vendor pattern of run-event.schema.json).
inline constexpr const char* kEvTaskSubmitted =
    "a2a.task.submitted";  // {contextId, message, skillId, dedupKey?, tenant?, owner?}
inline constexpr const char* kEvMessageReceived = "a2a.message.received";  // {message, caller?}
inline constexpr const char* kEvRunStarted = "run.started";  // {workflowId, transport, tags}
inline constexpr const char* kEvArtifactCreated =
    "artifact.created";  // {artifactId, artifactType, artifact, append, lastChunk}
inline constexpr const char* kEvInputRequired =
    "node.suspended";  // {nodeId, interruptId, kind, key, message?}
inline constexpr const char* kEvNodeResumed = "node.resumed";
inline constexpr const char* kEvRunCompleted = "run.completed";  // {outputs, durationMs, message?}
inline constexpr const char* kEvRunFailed = "run.failed";        // {error{code,message}}
inline constexpr const char* kEvRunCancelled = "run.cancelled";  // {reason, cancelledBy}
inline constexpr const char* kEvRunRejected = "a2a.task.rejected";  // {reason}
// Written by the workflow engine (DIGEST §3.3 payloads).
inline constexpr const char* kEvNodeStarted = "node.started";      // {nodeId, typeId, attempt, ...}
inline constexpr const char* kEvNodeCompleted = "node.completed";  // {nodeId, outputs, durationMs}
inline constexpr const char* kEvNodeFailed = "node.failed";        // {nodeId, error, attempts}
inline constexpr const char* kEvNodeSkipped = "node.skipped";      // {nodeId, reason}
inline constexpr const char* kEvVariableChanged = "variable.changed";  // {name, previous, next}
inline constexpr const char* kEvInterruptRequested = "interrupt.requested";
inline constexpr const char* kEvInterruptResolved =
    "interrupt.resolved";  // {nodeId, interruptId, key, kind, resumeValue, resolvedBy}
inline constexpr const char* kEvApprovalRequested = "approval.requested";
inline constexpr const char* kEvApprovalReceived = "approval.received";
inline constexpr const char* kEvClarificationRequested = "clarification.requested";
inline constexpr const char* kEvClarificationResolved = "clarification.resolved";
inline constexpr const char* kEvCapBreached = "cap.breached";
// Vendor: an approver's question on an open approval ("ask"; does not resolve it).
inline constexpr const char* kEvApprovalAsked =
    "a2ad.approval.asked";  // {nodeId, question, askedBy}
// Vendor: one approver's vote on an open quorum approval (requiredApprovals > 1) that does
// not close it (workflow/approval_policy.hpp); the vote that closes it is the gate's
// approval.received, which lists every vote. The task stays input-required: the entry
// projects to a status update whose message states the tally.
// {interruptId, principal, action, feedback?, accepts, rejects, required, message}
inline constexpr const char* kEvApprovalVote = "a2ad.approval.vote";
// Vendor: a sub-workflow node's child run started or stopped waiting; the parent's status
// mirrors the child's waiting status (DIGEST §5.2). {childRunId, status, interrupt?}
inline constexpr const char* kEvChildStatus = "a2ad.child.status";
// Vendor: what a node's call out (an HTTP request, an A2A exchange with a peer) returned,
// logged before the node acts on it, so a replay or re-drive reads it instead of calling
// again (DIGEST §7). {nodeId, effect, result}: `result`'s members are merged into
// nodeStates[nodeId].effect.
inline constexpr const char* kEvNodeEffect = "a2ad.node.effect";
// Vendor: a task started by a message that named no skill (tasks/builtin/skill_chooser.hpp)
// was told which skill to run: the task's skill and the run's workflowId become `skillId`,
// and the run starts from its first message's inputs. {skillId, message?}
inline constexpr const char* kEvSkillChosen = "a2ad.skill.chosen";
// A run parked at a step boundary by an outside request, and re-driven (RFC paused state).
inline constexpr const char* kEvRunPaused = "run.paused";    // {reason}
inline constexpr const char* kEvRunResumed = "run.resumed";  // {}

}  // namespace a2ad::protocol
