#pragma once
// The OpenWOP side of the log's fold: every task is a run, and its RunSnapshot
// (run-snapshot.schema.json, DIGEST §3.1) is a pure fold of the same RunEventDocs that the
// A2A task is folded from (task_projection.hpp). Kept in TaskRecord::run; the engine derives
// its position from it after a restart (which node ran, which interrupt key was answered).
//
// The snapshot's members, typed and open: protocol/run_snapshot.hpp.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <string_view>

#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/run_snapshot.hpp"

namespace a2ad::tasks {

/// Folds one event into `run` (in place). Unknown event types change nothing.
void ApplyRunEvent(protocol::RunSnapshot& run, const protocol::RunEvent& event);

/// The run status a suspension of interrupt `kind` puts the run in (DIGEST §3.1):
/// approval -> waiting-approval, external-event -> waiting-external, else waiting-input.
std::string_view WaitingStatusFor(std::string_view kind);

/// True for completed, failed, cancelled.
bool IsTerminalRunStatus(std::string_view status);
/// `run`'s status ("" when it has none) and whether it is terminal.
std::string_view RunStatus(const protocol::RunSnapshot& run);
bool IsTerminalRun(const protocol::RunSnapshot& run);

}  // namespace a2ad::tasks
