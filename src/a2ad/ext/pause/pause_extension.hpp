#pragma once
// The pause extension (seed 004, the PAUSED-state RFC, and its A2A 1.0 revision; docs/PAUSE.md):
// tasks/pause, tasks/resume and tasks/await_resumption (A2A 0.3 JSON-RPC names) and PauseTask,
// ResumeTask and AwaitTaskResumption (A2A 1.0 names; REST POST /tasks/{id}:pause, :resume,
// :awaitResumption, 0.3 REST /v1/tasks/{id}:pause ...), over TaskService::PauseTask and
// ResumeTask (tasks/pause.hpp), and the view that shows its callers the literal states.
//
// Callers that activate the extension (A2A-Extensions: kPauseExtensionUri) see a paused task
// as `paused-by-client` / `paused-by-agent` (0.3) or TASK_STATE_PAUSED with `status.pause`
// (1.0), in results and stream events of every JSON binding; everyone else sees `working`
// with `metadata.pause`. gRPC carries no such state in its proto: its callers always see the
// second form. The pause methods themselves answer in the extension's shapes.
//
// Thread safety: built before serving; its handlers are safe from any I/O thread.
#include <boost/json/value.hpp>

#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/extensions.hpp"

namespace a2ad::ext::pause {

inline constexpr const char* kPauseExtensionUri = "https://a2ad.dev/ext/pause/v1";

/// At most this many tasks are paused or resumed by one call naming a contextId.
inline constexpr size_t kMaxBulkTasks = 10000;

/// The extension: card entry (params supportsPause, supportsAwaitResumption, resumeCauses,
/// modes, maxBulkTasks), its three operations, and its view.
transport::Extension MakePauseExtension(tasks::TaskService& service);

/// The view (pure): in `v` (a result or stream event of `shape`), every task or status update
/// whose metadata has `pause` gets the literal paused state.
void ShowPausedStates(boost::json::value& v, protocol::Wire shape);

}  // namespace a2ad::ext::pause
