#pragma once
// The engine's calls out (DIGEST §5.4, §6.1, §7): the port through which a node reaches
// anything outside the run (an HTTP API, another A2A agent). Node kinds stay pure: a kind
// that calls out decides a Decision::kEffect with a spec, the executor hands the spec to the
// EffectRunner, commits what it returns as one a2ad.node.effect event (folded into
// nodeStates[node].effect), and asks the kind again, which reads the result from the log.
// So a result is logged before the node acts on it, and a replay or re-drive after a crash
// reads it instead of calling again; a crash between the call and the log repeats only that
// one call, with the same idempotency key (http) or message id (a2a.send).
//
// Specs, by "kind" (each names what the runner needs; results are objects whose members the
// kind reads back):
//   http          {method, url, headers, secretHeaders, body?, expect, timeoutMs, retry,
//                  idempotencyKey} -> {response: {status, headers, body}, attempts} or
//                  {error: {code, message}, attempts}
//   a2a.send      {peer | agentCardUrl, retry, deadlineMs, pollMs, message}
//                  -> {peer: {name, url, version, signedCard}, taskId, contextId, state,
//                      task (client/peer_card.hpp's shape)}, {directMessage, peer} or {error}
//   a2a.wait      {peer..., taskId, state, statusStamp?, pollMs} -> the peer's task once
//                  its state (or, with statusStamp, its status) differs (as a2a.send), or
//                  {error} past deadlineMs
//   a2a.reply     {peer..., taskId, message, replies} -> as a2a.send, plus {replies};
//                  awaitingPeer true when the answer still asks for input
//   a2a.cancel    {peer..., taskId, reason} (EffectRunner::Cancel only)
// The runner never throws: a failure is a result carrying `error` {code, message}.
//
// Thread safety: a runner is shared by every run and called concurrently.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <string>

#include "a2ad/protocol/call_context.hpp"
#include "a2ad/tasks/executor.hpp"

namespace a2ad::workflow {

class EffectRunner {
 public:
  virtual ~EffectRunner() = default;
  /// Carries out `spec` for node `node_id` of the run `ctx` executes. Waits (backoff, polls)
  /// use ctx.SleepUntil, and the runner gives up early when ctx.cancel_requested() (a cancel,
  /// or a pause superseding the execution): the result is then {"interrupted": true} and is
  /// not logged.
  virtual boost::asio::awaitable<boost::json::object> Run(tasks::ExecutionContext& ctx,
                                                          const std::string& node_id,
                                                          const boost::json::object& spec) = 0;
  /// After the run was cancelled while node work was out: best effort to stop it there (an
  /// A2A cancel of the peer's task, reason cross_protocol_cancel). `spec` is what the node's
  /// kind says must be stopped (NodeKind::CancelEffect).
  virtual boost::asio::awaitable<void> Cancel(const protocol::CallContext& ctx,
                                              const boost::json::object& spec) = 0;
};

}  // namespace a2ad::workflow
