#include "a2ad/transport/openwop/push_routes.hpp"

#include <map>
#include <set>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/error_body.hpp"

namespace a2ad::transport {
namespace json = boost::json;

namespace {
// The REST surface's closed envelope (DIGEST §2.3), like every other REST route.
HttpResponse Error(int status, std::string_view code, std::string message) {
  return RestErrorResponse(status, code, std::move(message));
}

const char* StateName(storage::OutboxState s) {
  switch (s) {
    case storage::OutboxState::kPending:
      return "pending";
    case storage::OutboxState::kDelivered:
      return "delivered";
    case storage::OutboxState::kDead:
      return "dead";
  }
  return "unknown";
}

json::object RowJson(const storage::OutboxRow& r) {
  json::object o{{"eventId", r.id},        {"kind", r.kind},
                 {"taskId", r.task_id},    {"configId", r.target_id},
                 {"url", r.url},           {"state", StateName(r.state)},
                 {"attempts", r.attempts}, {"createdAt", core::FormatTimestamp(r.created_at_ms)}};
  if (!r.last_error.empty()) o["lastError"] = r.last_error;
  if (r.state == storage::OutboxState::kPending)
    o["nextAttemptAt"] = core::FormatTimestamp(r.next_attempt_at_ms);
  else
    o["finishedAt"] = core::FormatTimestamp(r.finished_at_ms);
  return o;
}
// Outside coroutines (GCC 12 and braced initializers in coroutines).
core::Error UnknownTask(const std::string& id) {
  return core::Error(core::ErrorCode::kTaskNotFound, "task " + id + " not found", {{"taskId", id}});
}
HttpResponse SampleResponse(const std::string& task_id, const std::string& url,
                            const std::string& fingerprint) {
  json::object push_config{{"url", url}};
  if (!fingerprint.empty()) push_config["tokenFingerprint"] = fingerprint;
  return JsonResponse(200, protocol::SerializeJson(json::object{
                               {"taskId", task_id}, {"pushConfig", std::move(push_config)}}));
}
struct Registration {
  std::string url, tenant, secret, error;
  std::vector<std::string> events;
};

Registration ParseRegistration(const json::object& o) {
  Registration r;
  auto str = [&](const char* name, std::string& out) {
    const json::value* v = o.if_contains(name);
    if (!v || v->is_null()) return true;
    if (!v->is_string()) {
      r.error = std::string(name) + ": expected a string";
      return false;
    }
    out = std::string(v->get_string());
    return true;
  };
  if (!str("url", r.url) || !str("tenantId", r.tenant) || !str("secret", r.secret)) return r;
  if (r.url.empty()) {
    r.error = "url: required";
    return r;
  }
  const json::value* ev = o.if_contains("events");
  if (!ev || !ev->is_array() || ev->as_array().empty()) {
    r.error = "events: expected a non-empty array of RunEventTypes";
    return r;
  }
  for (const auto& e : ev->as_array()) {
    if (!e.is_string()) {
      r.error = "events: expected strings";
      return r;
    }
    r.events.emplace_back(e.get_string());
  }
  return r;
}

HttpResponse RegisteredResponse(const push::WebhookRegistration& w) {
  json::object o{{"webhookId", w.webhook_id},
                 {"secret", w.secret},
                 {"secretFingerprint", w.secret_fingerprint}};
  return JsonResponse(201, protocol::SerializeJson(o));
}
}  // namespace

PushRoutes::PushRoutes(push::PushService& service, storage::PushStore& store,
                       tasks::TaskService& tasks)
    : service_(service), store_(store), tasks_(tasks), reads_(std::make_unique<tasks::ReadExecutor>(1)) {}

PushRoutes::~PushRoutes() = default;

boost::asio::awaitable<std::optional<HttpResponse>> PushRoutes::Handle(const HttpRequest& request) {
  std::string_view path = request.Path();
  const bool webhooks = path == "/v1/webhooks" || path.rfind("/v1/webhooks/", 0) == 0;
  const bool sample = sample_seam_ && path == "/v1/host/sample/a2a/tasks/push-config";
  const bool deliveries = path == "/v1/push/deliveries";
  const bool dead = path == "/v1/push/dead-letters";
  const bool retry = path == "/v1/push/deliveries/retry";
  if (!webhooks && !sample && !deliveries && !dead && !retry) co_return std::nullopt;
  const auto ctx = CallerContext(request, protocol::Binding::kOpenwop, protocol::WireVersion::kV10);
  if (auto denied = RequireScope(ctx, dead ? kScopeAdmin : kScopePushManage))
    co_return WithScopeChallenge(RestErrorResponse(*denied), *denied);
  if (deliveries && (request.method == "GET" || request.method == "HEAD")) {
    // Another tenant's task is answered as an unknown one (the push service's 404).
    const std::string task_id = request.Query("taskId");
    if (!task_id.empty()) {
      auto rec = co_await tasks_.GetRecord(ctx, task_id);
      if (!rec) co_return RestErrorResponse(rec.error());
      if (!rec.value()) co_return RestErrorResponse(UnknownTask(task_id));
    }
  }
  if (retry) co_return co_await Retry(ctx, request);
  if (sample) {
    if (request.method != "POST") {
      co_return MethodNotAllowed("POST");
    }
    co_return co_await SamplePushConfig(request);
  }
  if (webhooks) co_return co_await Webhooks(request);
  if (request.method != "GET" && request.method != "HEAD")
    co_return MethodNotAllowed("GET, HEAD", "use GET");
  if (dead) co_return co_await DeadLetters(ctx, request);
  co_return co_await Deliveries(request);
}

boost::asio::awaitable<HttpResponse> PushRoutes::Deliveries(const HttpRequest& request) {
  const std::string task_id = request.Query("taskId");
  if (task_id.empty())
    co_return Error(400, "validation_error", "query parameter taskId is required");
  auto rows = co_await reads_->Run([this, &task_id] { return service_.Deliveries(task_id); });
  if (!rows) co_return RestErrorResponse(rows.error());  // ClientFacing (error_body.hpp)
  json::array out;
  for (const auto& row : rows.value()) out.push_back(RowJson(row));
  json::object body;
  body["deliveries"] = std::move(out);
  co_return JsonResponse(200, protocol::SerializeJson(body));
}

// POST /v1/push/deliveries/retry {taskId, eventId}: a dead letter of the caller's task
// sent again (PushService::Retry); another tenant's task is an unknown one.
boost::asio::awaitable<HttpResponse> PushRoutes::Retry(const protocol::CallContext& ctx,
                                                       const HttpRequest& request) {
  if (request.method != "POST") {
    co_return MethodNotAllowed("POST");
  }
  auto parsed = protocol::ParseJsonObject(request.body, "body");
  if (!parsed) co_return RestErrorResponse(parsed.error());
  std::string ids[2];
  const char* names[2] = {"taskId", "eventId"};
  for (int i = 0; i < 2; ++i) {
    const json::value* v = parsed->if_contains(names[i]);
    if (!v || !v->is_string() || v->get_string().empty())
      co_return Error(400, "validation_error", std::string(names[i]) + ": required, a string");
    ids[i] = std::string(v->get_string());
  }
  auto rec = co_await tasks_.GetRecord(ctx, ids[0]);
  if (!rec) co_return RestErrorResponse(rec.error());
  if (!rec.value()) co_return RestErrorResponse(UnknownTask(ids[0]));
  auto row = co_await reads_->Run([this, &ids] { return service_.Retry(ids[0], ids[1]); });
  if (!row) co_return RestErrorResponse(row.error());
  co_return JsonResponse(200, protocol::SerializeJson(RowJson(row.value())));
}

// The dead letters an admin sees are its own tenant's: rows of tasks it can see and of its
// tenant's webhooks (the store lists every tenant's).
boost::asio::awaitable<HttpResponse> PushRoutes::DeadLetters(const protocol::CallContext& ctx,
                                                             const HttpRequest& request) {
  size_t limit = 100;
  std::string text = request.Query("limit");
  if (!text.empty()) {
    if (text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(text) == 0 || std::stoul(text) > 500)
      co_return Error(400, "validation_error", "limit: expected an integer 1..500");
    limit = std::stoul(text);
  }
  auto rows = co_await reads_->Run([this, limit] { return store_.ListDead(limit); });
  if (!rows) co_return RestErrorResponse(rows.error());
  std::set<std::string> own_hooks;
  for (const auto& w : service_.ListWebhooks(ctx.tenant())) own_hooks.insert(w.id);
  std::map<std::string, bool> own_tasks;
  json::array out;
  for (const auto& row : rows.value()) {
    bool visible = false;
    if (row.kind == "webhook") {
      visible = own_hooks.contains(row.target_id);
    } else if (auto known = own_tasks.find(row.task_id); known != own_tasks.end()) {
      visible = known->second;
    } else {
      auto rec = co_await tasks_.GetRecord(ctx, row.task_id);
      visible = own_tasks[row.task_id] = rec && rec.value();
    }
    if (visible) out.push_back(RowJson(row));
  }
  co_return JsonResponse(200,
                         protocol::SerializeJson(json::object{{"deadLetters", std::move(out)}}));
}

boost::asio::awaitable<HttpResponse> PushRoutes::Webhooks(const HttpRequest& request) {
  std::string_view path = request.Path();
  if (path == "/v1/webhooks") {
    if (request.method != "POST") {
      co_return MethodNotAllowed("POST", "use POST to register a webhook");
    }
    auto parsed = protocol::ParseJsonObject(request.body, "body");
    if (!parsed) co_return RestErrorResponse(parsed.error());
    json::value body = std::move(parsed).value();
    auto reg = ParseRegistration(body.as_object());
    if (!reg.error.empty()) co_return Error(400, "validation_error", reg.error);
    // RFC 0152 §E: the tenant is the credential's, in every mode (the anonymous caller of a
    // server without keys is the default tenant's, and names no other).
    const std::string caller_tenant =
        CallerContext(request, protocol::Binding::kOpenwop, protocol::WireVersion::kV10).tenant();
    if (!reg.tenant.empty() && reg.tenant != caller_tenant)
      co_return Error(403, "forbidden", "tenantId: the tenant comes from the credential");
    reg.tenant = caller_tenant;
    auto made = co_await service_.RegisterWebhook(reg.url, reg.events, reg.tenant, reg.secret);
    if (!made) {
      const bool url = made.error().message.rfind("webhook URL", 0) == 0;
      co_return Error(400, url ? "webhook_url_rejected" : "validation_error", made.error().message);
    }
    co_return RegisteredResponse(made.value());
  }
  if (request.method != "DELETE") {
    co_return MethodNotAllowed("DELETE", "use DELETE /v1/webhooks/{id}");
  }
  std::string id(path.substr(std::string_view("/v1/webhooks/").size()));
  if (id.empty() || id.find('/') != std::string::npos)
    co_return Error(404, "not_found", "no route for DELETE " + std::string(path));
  const std::string caller_tenant =
      CallerContext(request, protocol::Binding::kOpenwop, protocol::WireVersion::kV10).tenant();
  if (const std::string named = request.Query("tenantId");
      !named.empty() && named != caller_tenant)
    co_return Error(403, "forbidden", "tenantId: the tenant comes from the credential");
  auto deleted =
      co_await reads_->Run([this, &id, &caller_tenant] { return service_.DeleteWebhook(id, caller_tenant); });
  if (!deleted) {
    // Another tenant's subscription: not found (no enumeration).
    if (deleted.error().code == core::ErrorCode::kUnsupportedOperation)
      co_return Error(404, "subscription_not_found", "no webhook subscription '" + id + "'");
    co_return Error(404, "subscription_not_found", deleted.error().message);
  }
  HttpResponse r;
  r.status = 204;
  r.content_type.clear();
  co_return r;
}

boost::asio::awaitable<HttpResponse> PushRoutes::SamplePushConfig(const HttpRequest& request) {
  auto parsed = protocol::ParseJsonObject(request.body, "body");
  if (!parsed) co_return RestErrorResponse(parsed.error());
  json::value body = std::move(parsed).value();
  const json::object& o = body.as_object();
  auto str = [&](const char* name) -> std::string {
    const json::value* v = o.if_contains(name);
    return v && v->is_string() ? std::string(v->get_string()) : std::string();
  };
  protocol::PushNotificationConfig config;
  config.task_id = str("taskId");
  config.url = str("url");
  config.token = str("token");
  config.id = "openwop-sample";
  if (config.task_id.empty() || config.url.empty())
    co_return Error(400, "validation_error", "taskId and url are required strings");
  // The URL is vetted first: the SSRF refusal does not depend on the task (the conformance
  // suite sends a placeholder taskId with a hostile URL).
  if (auto vetted = co_await service_.Vet(config, config.task_id); !vetted)
    co_return Error(400, "webhook_url_rejected", vetted.error().message);
  {
    const auto ctx =
        CallerContext(request, protocol::Binding::kOpenwop, protocol::WireVersion::kV10);
    auto rec = co_await tasks_.GetRecord(ctx, config.task_id);
    if (!rec) co_return RestErrorResponse(rec.error());
    if (!rec.value())
      co_return Error(404, "task_not_found", "task " + config.task_id + " not found");
  }
  auto stored = co_await service_.SetConfig(config);
  if (!stored) {
    if (stored.error().code == core::ErrorCode::kTaskNotFound)
      co_return Error(404, "task_not_found", stored.error().message);
    co_return Error(400, "webhook_url_rejected", stored.error().message);
  }
  std::string fingerprint = push::TokenFingerprint(config.token);
  if (fingerprint.empty()) fingerprint = str("tokenFingerprint").substr(0, 32);
  co_return SampleResponse(config.task_id, stored->url, fingerprint);
}

}  // namespace a2ad::transport
