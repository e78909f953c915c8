#pragma once
// The receiver of peers' pushes (issue 16, core.a2a.invoke mode "push"): POST
// /v1/a2a/peer-push. When a node follows a peer's task in push mode, a2ad sends the peer a
// push config with this URL (under the host's public URL) and a token that names the run and
// the node, MACed with a key of its own (server_secrets.hpp: the secret "peer-push" in the
// database replicas share, else peer-push.key in the data directory; 32 random bytes made once;
// another key than the interrupt tokens', so neither token opens the other's door) and valid
// until the node's deadline.
//
// A push is accepted (200 {"accepted": true}) when its X-A2A-Notification-Token verifies and
// has not expired; it then nudges that node (TaskService::Nudge), which asks the peer for its
// task: what a push says is never used, so a forged, replayed or reordered push costs one
// GetTask and decides nothing. Refusals: 405 (not POST), 401 unauthenticated (no token, or
// one that does not verify), 410 gone (expired). The route needs no other credential.
//
// Thread safety: immutable after Open; Receive may run on any thread.
#include <optional>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/effects/host_effects.hpp"
#include "a2ad/transport/http/http_types.hpp"
#include "a2ad/workflow/interrupt_token.hpp"

namespace a2ad::tasks {
class TaskService;
}

namespace a2ad::app {

inline constexpr std::string_view kPeerPushPath = "/v1/a2a/peer-push";

class PeerPushReceiver {
 public:
  /// `tokens`: MACed with the peer-push secret (server_secrets.hpp OpenTokenSecret);
  /// `base_url`: the host's public URL (the push URL is under it).
  static PeerPushReceiver Open(workflow::InterruptTokens tokens, std::string base_url);
  /// What a node in push mode sends its peer (effects::PushTargetFn).
  effects::PushTarget Target(const std::string& run_id, const std::string& node_id,
                             int64_t expires_ms) const;
  transport::HttpResponse Receive(tasks::TaskService& service,
                                  const transport::HttpRequest& request, int64_t now_ms) const;

 private:
  PeerPushReceiver(workflow::InterruptTokens tokens, std::string url)
      : tokens_(std::move(tokens)), url_(std::move(url)) {}
  workflow::InterruptTokens tokens_;
  std::string url_;
};

}  // namespace a2ad::app
