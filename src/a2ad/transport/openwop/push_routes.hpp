#pragma once
// HTTP routes of push notifications (issue 5). The public keys that verify push JWTs are in
// the router's JWKS (GET /.well-known/jwks.json, router.hpp).
//   GET /v1/push/deliveries?taskId=ID       the task's outbox rows: state (pending,
//                                           delivered, dead), attempts, last error, times
//   GET /v1/push/dead-letters?limit=N       dead-lettered deliveries, newest first (N <= 500)
//   POST /v1/push/deliveries/retry {taskId, eventId}
//                                           a dead letter sent again: due now, attempts
//                                           afresh; 400 (field eventId) unknown, 409 not
//                                           dead-lettered
//   POST /v1/host/sample/a2a/tasks/push-config {taskId, url, token?, tokenFingerprint?}
//                                           (only with EnableSampleSeam)
//                                           the OpenWOP conformance seam (DIGEST §2.5): the
//                                           same vetting as an A2A config; 400
//                                           webhook_url_rejected on refusal, 404 unknown
//                                           task; 200 {taskId, pushConfig{url,
//                                           tokenFingerprint}} (never the token)
//   POST /v1/webhooks {url, events[], tenantId?, secret?}
//                                           OpenWOP webhook subscription (DIGEST §6.2): 201
//                                           {webhookId, secret (shown once),
//                                           secretFingerprint}; 400 webhook_url_rejected /
//                                           validation_error
//   DELETE /v1/webhooks/{id}?tenantId=      204; 404 unknown; 403 another tenant's
// Authentication (auth.hpp; the router has authenticated the request): every route needs
// push:manage but the dead letters (every tenant's), which need admin. An authenticated
// caller's tenant is its credential's: a webhook is registered for it (a body naming another
// tenantId is 403), deleted only if it is its own (another tenant's is 404), a task of another
// tenant is unknown (the push-config seam: 404; deliveries: none).
// Bodies are never shown (they are what was sent; the task is the place for content).
// Every store call runs on the routes' own read thread, never on an I/O thread (a database
// round trip there would hold up the other requests of that thread).
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>

#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::push {
class PushService;
}  // namespace a2ad::push
namespace a2ad::storage {
class PushStore;
}
namespace a2ad::tasks {
class ReadExecutor;
class TaskService;
}

namespace a2ad::transport {

class PushRoutes {
 public:
  /// `tasks` says which tasks a caller may see.
  PushRoutes(push::PushService& service, storage::PushStore& store, tasks::TaskService& tasks);
  ~PushRoutes();
  /// The response, or nullopt when `request` is not one of these routes.
  boost::asio::awaitable<std::optional<HttpResponse>> Handle(const HttpRequest& request);
  /// Serves the push-config seam (off by default: --conformance-fixtures turns it on).
  void EnableSampleSeam() { sample_seam_ = true; }

 private:
  boost::asio::awaitable<HttpResponse> SamplePushConfig(const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> Webhooks(const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> Deliveries(const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> Retry(const protocol::CallContext& ctx,
                                             const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> DeadLetters(const protocol::CallContext& ctx,
                                                   const HttpRequest& request);
  push::PushService& service_;
  storage::PushStore& store_;
  tasks::TaskService& tasks_;
  bool sample_seam_ = false;
  std::unique_ptr<tasks::ReadExecutor> reads_;  // last: joined first
};

}  // namespace a2ad::transport
