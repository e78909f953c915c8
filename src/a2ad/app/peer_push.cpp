#include "a2ad/app/peer_push.hpp"

#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/error_body.hpp"

namespace a2ad::app {
namespace {
constexpr std::string_view kIntent = "peer-push";
}  // namespace

PeerPushReceiver PeerPushReceiver::Open(workflow::InterruptTokens tokens, std::string base_url) {
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  return PeerPushReceiver(std::move(tokens), base_url + std::string(kPeerPushPath));
}

effects::PushTarget PeerPushReceiver::Target(const std::string& run_id, const std::string& node_id,
                                             int64_t expires_ms) const {
  workflow::TokenClaims claims;
  claims.run_id = run_id;
  claims.node_id = node_id;
  claims.expires_at_ms = expires_ms;
  claims.intent = kIntent;
  return effects::PushTarget{url_, tokens_.Mint(claims)};
}

transport::HttpResponse PeerPushReceiver::Receive(tasks::TaskService& service,
                                                  const transport::HttpRequest& request,
                                                  int64_t now_ms) const {
  if (request.method != "POST") {
    auto r = transport::RestErrorResponse(405, "method_not_allowed", "peers push here with POST");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  const std::string_view token = request.Header("X-A2A-Notification-Token");
  if (token.empty())
    return transport::RestErrorResponse(
        401, "unauthenticated", "a push to a2ad carries the X-A2A-Notification-Token it was given");
  auto claims = tokens_.Verify(token);
  if (!claims || claims.value().intent != kIntent)
    return transport::RestErrorResponse(401, "unauthenticated",
                                        "the X-A2A-Notification-Token is not one this host gave");
  if (claims.value().expires_at_ms < now_ms)
    return transport::RestErrorResponse(
        410, "gone", "the node this push is for no longer follows the peer's task");
  service.Nudge(claims.value().run_id, effects::PeerPushNudgeKey(claims.value().node_id));
  return transport::JsonResponse(200, R"({"accepted":true})");
}

}  // namespace a2ad::app
