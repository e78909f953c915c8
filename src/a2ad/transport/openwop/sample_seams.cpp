#include "a2ad/transport/openwop/sample_seams.hpp"

#include <boost/json/array.hpp>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/error_body.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr std::string_view kSurface = "/v1/host/sample/test/surface";
constexpr std::string_view kClaim = "/v1/host/sample/test/idempotency/concurrent-claim";
constexpr int kMaxExecutors = 32;

HttpResponse Json(int status, const json::object& o) {
  return JsonResponse(status, protocol::SerializeJson(o));
}

HttpResponse Invalid(std::string message) {
  return RestErrorResponse(400, "validation_error", std::move(message));
}

// The string member `name` of `o`: nullopt when present and not a string.
std::optional<std::string> StrMember(const json::object& o, std::string_view name) {
  const json::value* v = o.if_contains(name);
  if (!v || v->is_null()) return std::string();
  if (!v->is_string()) return std::nullopt;
  return std::string(v->get_string());
}

}  // namespace

asio::awaitable<std::optional<HttpResponse>> SampleSeams::Handle(const HttpRequest& request) {
  const std::string_view path = request.Path();
  if (path != kSurface && path != kClaim) co_return std::nullopt;
  if (request.method != "POST") {
    co_return MethodNotAllowed("POST");
  }
  const auto ctx = CallerContext(request, protocol::Binding::kOpenwop, protocol::WireVersion::kV10);
  if (auto denied = RequireScope(ctx, path == kSurface ? kScopeAdmin : kScopeRunsWrite))
    co_return WithScopeChallenge(RestErrorResponse(*denied), *denied);
  auto body = protocol::ParseJsonObject(request.body, "body");
  if (!body) co_return RestErrorResponse(body.error());
  if (path == kSurface) co_return co_await Surface(body.value());
  co_return co_await ConcurrentClaim(body.value());
}

asio::awaitable<HttpResponse> SampleSeams::Surface(const json::object& body) {
  auto tenant = StrMember(body, "tenantId");
  auto surface = StrMember(body, "surface");
  auto op = StrMember(body, "op");
  if (!tenant || tenant->empty()) co_return Invalid("tenantId: required string");
  if (!surface || surface->empty()) co_return Invalid("surface: required string");
  if (!op || op->empty()) co_return Invalid("op: required string");
  const json::value* args_v = body.if_contains("args");
  if (args_v && !args_v->is_object() && !args_v->is_null())
    co_return Invalid("args: expected an object");
  static const json::object kNone;
  const json::object& args = args_v && args_v->is_object() ? args_v->get_object() : kNone;
  if (*surface != "webhooks" || !push_)
    co_return RestErrorResponse(
        404, "surface_not_supported",
        "surface '" + *surface + "' is not served by this host (its one surface: webhooks)");
  if (*op == "register") {
    auto url = StrMember(args, "url");
    if (!url || url->empty()) co_return Invalid("args.url: required string");
    const json::value* ev = args.if_contains("events");
    if (!ev || !ev->is_array() || ev->get_array().empty())
      co_return Invalid("args.events: expected a non-empty array of RunEventTypes");
    std::vector<std::string> events;
    for (const auto& e : ev->get_array()) {
      if (!e.is_string()) co_return Invalid("args.events: expected strings");
      events.emplace_back(e.get_string());
    }
    auto made = co_await push_->RegisterWebhook(*url, std::move(events), *tenant, "");
    if (!made) {
      const bool url_refused = made.error().message.rfind("webhook URL", 0) == 0;
      co_return RestErrorResponse(400, url_refused ? "webhook_url_rejected" : "validation_error",
                                  made.error().message);
    }
    co_return Json(200, json::object{{"webhookId", made.value().webhook_id},
                                     {"secretFingerprint", made.value().secret_fingerprint}});
  }
  if (*op == "list") {
    json::array list;
    for (const auto& w : push_->ListWebhooks(*tenant)) {
      json::array events;
      for (const auto& e : w.events) events.emplace_back(e);
      list.push_back(json::object{{"webhookId", w.id},
                                  {"url", w.url},
                                  {"events", std::move(events)},
                                  {"createdAt", core::FormatTimestamp(w.created_at_ms)}});
    }
    co_return Json(200, json::object{{"webhooks", std::move(list)}});
  }
  if (*op == "unregister") {
    auto id = StrMember(args, "webhookId");
    if (!id || id->empty()) co_return Invalid("args.webhookId: required string");
    auto deleted = push_->DeleteWebhook(*id, *tenant);
    if (!deleted) {
      // Another tenant's subscription is answered as an unknown one (no enumeration).
      if (deleted.error().code == core::ErrorCode::kUnsupportedOperation ||
          deleted.error().code == core::ErrorCode::kInvalidParams)
        co_return RestErrorResponse(
            404, "subscription_not_found",
            "no webhook subscription '" + *id + "' in tenant '" + *tenant + "'");
      co_return RestErrorResponse(deleted.error());
    }
    co_return Json(200, json::object{{"webhookId", *id}, {"deleted", true}});
  }
  co_return Invalid("op: the webhooks surface has register, list and unregister, not '" + *op +
                    "'");
}

asio::awaitable<HttpResponse> SampleSeams::ConcurrentClaim(const json::object& body) {
  int executors = 2;
  if (const json::value* v = body.if_contains("executors"); v && !v->is_null()) {
    if (!v->is_int64() || v->get_int64() < 2 || v->get_int64() > kMaxExecutors)
      co_return Invalid("executors: expected an integer 2.." + std::to_string(kMaxExecutors));
    executors = static_cast<int>(v->get_int64());
  }
  if (!probe_)
    co_return RestErrorResponse(404, "not_found", "this host has no effect claims to probe");
  co_return Json(200, co_await probe_(executors));
}

}  // namespace a2ad::transport
