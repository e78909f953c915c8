#pragma once
// The OpenWOP host test seams of `host-sample-test-seams` that act outside one run, served
// only when the server is started with --conformance-fixtures (app/server.cpp; without it
// these paths are unknown, 404):
//   POST /v1/host/sample/test/surface {tenantId, surface, op, args}
//       A host surface driven as tenant `tenantId` (the conformance suite proves isolation
//       between two tenants from one credential). a2ad's one such surface is "webhooks":
//         register {url, events[]}   200 {webhookId, secretFingerprint} (the URL vetted as
//                                    POST /v1/webhooks vets it: 400 webhook_url_rejected)
//         list {}                    200 {webhooks: [{webhookId, url, events, createdAt}]}
//                                    of that tenant only
//         unregister {webhookId}     200 {webhookId, deleted: true}; 404
//                                    subscription_not_found (unknown, or another tenant's)
//       Any other surface (kv, table, blob, ... which a2ad does not have): 404
//       surface_not_supported, which the suite reads as "not exposed".
//       Needs admin: it acts for whichever tenant the body names.
//   POST /v1/host/sample/test/idempotency/concurrent-claim {executors?: 2..32 (default 2)}
//       Races `executors` executors of one run to one effect through the host's claim
//       (effects/effect_claims.hpp) and answers {logicalInvocationId, mintedIds[], attempted,
//       delivered, shared}: delivered is 1 when the claim holds. Needs runs:write.
// Errors are OpenWOP's closed envelope (error_body.hpp). Bodies are JSON objects of at most
// the server's body limit (the HTTP server enforces it).
//
// Thread safety: Handle may be called concurrently; the hooks must allow it.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <functional>
#include <optional>

#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::push {
class PushService;
}

namespace a2ad::transport {

class SampleSeams {
 public:
  using ClaimProbe = std::function<boost::asio::awaitable<boost::json::object>(int executors)>;
  SampleSeams(push::PushService* push, ClaimProbe probe) : push_(push), probe_(std::move(probe)) {}
  /// The response, or nullopt when `request` is not one of these routes.
  boost::asio::awaitable<std::optional<HttpResponse>> Handle(const HttpRequest& request);

 private:
  boost::asio::awaitable<HttpResponse> Surface(const boost::json::object& body);
  boost::asio::awaitable<HttpResponse> ConcurrentClaim(const boost::json::object& body);
  push::PushService* push_;  // null: the webhooks surface is not served
  ClaimProbe probe_;
};

}  // namespace a2ad::transport
