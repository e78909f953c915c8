#pragma once
// The Objective-Plan-Task extension (seed 002; docs/OPT.md): its card entry (params
// maxPlansPerObjective, maxTasksPerPlan) and its methods objectives/create, get, list, update,
// subscribe; plans/create, get, update; tasks/link, tasks/updateStatus, over OptStore and
// OptFeed, on JSON-RPC (either A2A version: the request's A2A-Version decides the error
// format) and on the REST bindings (routes in docs/OPT.md). They answer only a caller that
// activated the extension (A2A-Extensions or X-A2A-Extensions naming kOptExtensionUri); anyone
// else gets ExtensionSupportRequired saying how to activate it.
//
// MakeOptMessageHook is the other way in: a message carrying opt/v1/objective in its metadata
// creates or joins that objective (TaskServiceOptions::prepare_new_task).
//
// Thread safety: built before serving; its handlers are safe from any I/O thread.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <functional>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/ext/opt/opt_feed.hpp"
#include "a2ad/ext/opt/opt_model.hpp"
#include "a2ad/ext/opt/opt_params.hpp"
#include "a2ad/ext/opt/opt_store.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/transport/a2a/extensions.hpp"

namespace a2ad::ext::opt {

struct OptExtensionDeps {
  OptStore* store = nullptr;
  OptFeed* feed = nullptr;
  core::IdGenerator* ids = nullptr;
  const core::Clock* clock = nullptr;
  /// Whether a plan task's skill and inputs can run here (TaskService::CheckRunInputs).
  params::SkillCheck check_skill;
  size_t stream_queue_limit = 1024;  // objectives/subscribe's per-stream queue
};

/// The extension; what `deps` points to outlives it. Its limits are the store's.
transport::Extension MakeOptExtension(OptExtensionDeps deps);

/// TaskServiceOptions::prepare_new_task for opt/v1/objective (docs/OPT.md "Joining by
/// message"): joins an objective of the caller's tenant (`id`) or creates one (`name`; one
/// per message: a retried message finds the objective it made), sets the message's contextId
/// to the objective's id and the task's opt/v1/objectiveId (and opt/v1/planId); refuses an
/// unknown objective, one that cannot take the task, or a contextId of another conversation.
std::function<boost::asio::awaitable<core::Result<void>>(
    const protocol::CallContext&, protocol::SendMessageRequest&, boost::json::object&)>
MakeOptMessageHook(OptStore& store, const core::Clock& clock);

}  // namespace a2ad::ext::opt
