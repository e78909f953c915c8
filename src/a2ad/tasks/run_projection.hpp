#pragma once
// The OpenWOP side of the log's fold: every task is a run, and its RunSnapshot
// (run-snapshot.schema.json, DIGEST §3.1) is a pure fold of the same RunEventDocs that the
// A2A task is folded from (task_projection.hpp). Kept in TaskRecord::run; the engine derives
// its position from it after a restart (which node ran, which interrupt key was answered).
//
// Beyond the schema's fields the snapshot keeps (the schema is open):
//   nodeStates{id: {status, typeId, attempt, startedAt, wakeAt?, childRunId?, outputs?,
//              error?}}      status: running | completed | failed | skipped
//   resumeValues{key: value}  answers of resolved interrupts by their deterministic key
//   interruptCounts{nodeId: n} interrupts each node has raised (the key's ordinal)
//   nodeExecutions            node starts so far (limits.maxNodeExecutions)
//   interrupt{nodeId, interruptId, kind, key, data, interruptToken?, expiresAt?, quorum?}
//                             while waiting; quorum (approvals with requiredApprovals > 1,
//                             workflow/approval_policy.hpp): {required, rejectionPolicy,
//                             accepts, rejects, votes: [{principal, action, votedAt,
//                             feedback?}]}, one vote per a2ad.approval.vote entry, the counts
//                             recomputed from the votes
//   acceptedMessages{messageId: digest}  the user messages the task accepted (its first
//                              message, each accepted reply): replies are idempotent by
//                              messageId (accepted_messages.hpp)
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <string_view>

#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_event.hpp"

namespace a2ad::tasks {

/// Folds one event into `run` (in place). Unknown event types change nothing.
void ApplyRunEvent(boost::json::object& run, const protocol::RunEvent& event);

/// The run status a suspension of interrupt `kind` puts the run in (DIGEST §3.1):
/// approval -> waiting-approval, external-event -> waiting-external, else waiting-input.
std::string_view WaitingStatusFor(std::string_view kind);

/// True for completed, failed, cancelled.
bool IsTerminalRunStatus(std::string_view status);
/// `run`'s status ("" when it has none) and whether it is terminal.
std::string_view RunStatus(const boost::json::object& run);
bool IsTerminalRun(const boost::json::object& run);

/// The RFC 0100 A2ATaskState of a task whose run is `run` (a2a-task-state.schema.json):
/// content-free, taskId == runId, lowercase-hyphen state, interruptKind iff input-required.
boost::json::object A2ATaskStateOf(const protocol::Task& task, const boost::json::object& run);

}  // namespace a2ad::tasks
