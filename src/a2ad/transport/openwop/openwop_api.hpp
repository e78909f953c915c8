#pragma once
// The OpenWOP REST surface (DIGEST §1, §2): discovery, workflows, runs, run events (SSE and
// long-poll), interrupt resolution (run-scoped and by signed token), the RFC 0100 task-state
// read seam, and /v1/openapi.json. Every non-2xx answer is the closed error envelope
// {error, message, details?} of §2.3.
//
// Thread safety: Handle may run concurrently on any I/O threads (the state it reads after
// construction is immutable; TaskService is thread-safe).
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

struct InterruptTokenInfo {
  std::string run_id;
  std::string node_id;
  std::string interrupt_id;
  std::string intent;  // resolve | inspect
  int64_t expires_at_ms = 0;
};
/// Checks a token's signature and decodes it (kInvalidParams when forged or malformed).
using TokenVerifier = std::function<core::Result<InterruptTokenInfo>(std::string_view)>;

struct OpenwopApiOptions {
  std::string base_url;  // absolute, no trailing slash
  std::string version;   // implementation version
  bool push_notifications = false;
  bool streaming = true;  // the agent streams (--no-streaming: a2a.streaming false)
  bool webhooks = false;  // POST /v1/webhooks is served (durable, HMAC v1 signatures)
  // The host/sample A2A task seams (GET /v1/host/sample/a2a/tasks/{id}, POST .../start):
  // --conformance-fixtures; off, they are unknown paths.
  bool sample_seams = false;
  /// The A2A versions served, preferred first ("1.0", "0.3"): discovery's
  /// a2a.protocolVersions, preferredVersion and profiles (RFC 0152).
  std::vector<std::string> a2a_versions{"1.0", "0.3"};
  /// The task's push config as A2ATaskState.pushConfig ({url, tokenFingerprint}), or nullopt.
  std::function<std::optional<boost::json::object>(const std::string& task_id)> push_config_of;
  size_t body_limit = size_t{1024} * 1024;
  std::chrono::milliseconds heartbeat{15000};
  size_t queue_limit = 1024;
};

class OpenwopApi {
 public:
  OpenwopApi(tasks::TaskService& service, const core::Clock& clock, TokenVerifier verifier,
             OpenwopApiOptions options);
  /// The response for an OpenWOP path, or nullopt when `request` is not one of them.
  boost::asio::awaitable<std::optional<HttpResponse>> Handle(const HttpRequest& request);

  const boost::json::object& discovery() const { return discovery_; }

 private:
  using CallContext = protocol::CallContext;
  /// Who calls: the anonymous caller of the default tenant until the auth layer fills it in.
  static CallContext Caller(const HttpRequest& request);

  boost::asio::awaitable<HttpResponse> CreateRun(const CallContext& ctx,
                                                 const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> GetRun(const CallContext& ctx, const std::string& id);
  boost::asio::awaitable<HttpResponse> ListRuns(const CallContext& ctx, const HttpRequest& request);
  /// POST /v1/host/sample/a2a/tasks/start (the conformance seam; --conformance-fixtures).
  boost::asio::awaitable<HttpResponse> StartScenario(const CallContext& ctx,
                                                     const HttpRequest& request);
  /// POST /v1/events {name, payload}: resumes the runs paused until event `name`
  /// (tasks/pause.hpp; core.awaitResumption, tasks/await_resumption conditions.onEvent).
  boost::asio::awaitable<HttpResponse> PostEvent(const CallContext& ctx, const HttpRequest& r);
  boost::asio::awaitable<HttpResponse> CancelRun(const CallContext& ctx, const std::string& id,
                                                 const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> Events(const CallContext& ctx, const std::string& id,
                                              const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> Poll(const CallContext& ctx, const std::string& id,
                                            const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> ResolveAtNode(const CallContext& ctx,
                                                     const std::string& run_id,
                                                     const std::string& node_id,
                                                     const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> Token(const CallContext& ctx, const std::string& token,
                                             const HttpRequest& request);
  boost::asio::awaitable<HttpResponse> TaskState(const CallContext& ctx, const std::string& id);
  HttpResponse Workflows(const std::string& id);
  /// GET /v1/inbox (openwop_inbox.cpp): the waiting tasks the caller may answer.
  boost::asio::awaitable<HttpResponse> Inbox(const CallContext& ctx, const HttpRequest& request);
  /// GET /v1/me: who the caller is.
  static HttpResponse Me(const CallContext& ctx);

  tasks::TaskService& service_;
  const core::Clock& clock_;
  TokenVerifier verifier_;
  OpenwopApiOptions options_;
  boost::json::object discovery_;
  std::string discovery_body_;
  std::string discovery_etag_;
  // The OpenAPI document, written on its first request (a parse and a write of a large
  // document: most servers are never asked for it).
  std::once_flag openapi_once_;
  std::string openapi_body_;
};

/// The closed OpenWOP error envelope for `e` (status, body); the `reason` detail, when
/// present, is the snake_case code.
HttpResponse ErrorResponse(const core::Error& e);
HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message);

/// The public RunSnapshot of a stored run (engine bookkeeping removed).
boost::json::object PublicRunSnapshot(const storage::TaskRecord& record);

}  // namespace a2ad::transport
