#include "a2ad/transport/router.hpp"

#include <chrono>

#include "a2ad/core/log.hpp"
#include "a2ad/core/metrics.hpp"
#include "a2ad/core/trace.hpp"

#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/transport/console_routes.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http_server.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {
// The validator of a card: its bytes, less the `signature` values of its signatures (see
// SetCards).
std::string CardEtag(const json::object& card) {
  const json::value* sigs = card.if_contains("signatures");
  if (!sigs || !sigs->is_array()) return WeakEtag(protocol::SerializeJson(card));
  json::object basis = card;
  for (auto& entry : basis["signatures"].as_array())
    if (entry.is_object()) entry.as_object().erase("signature");
  return WeakEtag(protocol::SerializeJson(basis));
}
}  // namespace

HttpResponse JsonRpcTransportError(int status, std::string_view message) {
  // The shape every A2A client of the JSON-RPC endpoint reads; id null (never parsed).
  core::Error e(core::ErrorCode::kInvalidRequest, std::string(message),
                {{"httpStatus", std::to_string(status)}});
  HttpResponse r = JsonRpcErrorResponse(nullptr, e, protocol::WireVersion::kV03);
  r.status = status;
  return r;
}

TransportErrorFn SurfaceTransportErrors(std::string jsonrpc_path) {
  return [jsonrpc_path = std::move(jsonrpc_path)](std::string_view path, int status,
                                                  std::string_view code, std::string message) {
    if (!path.empty() &&
        (path == jsonrpc_path || (path.size() == jsonrpc_path.size() + 1 &&
                                  path.starts_with(jsonrpc_path) && path.back() == '/')))
      return JsonRpcTransportError(status, message);
    // The A2A REST bindings answer in their own shape (a 1.0 client reads google.rpc.Status).
    auto under = [&path](std::string_view base) {
      return path == base || (path.starts_with(base) && path.substr(base.size()).starts_with("/"));
    };
    if (under(kA2aRestPath))
      return A2aRestTransportError(status, std::move(message), protocol::WireVersion::kV10);
    if (under(kA2aRest03Path))
      return A2aRestTransportError(status, std::move(message), protocol::WireVersion::kV03);
    return DefaultTransportError(path, status, code, std::move(message));
  };
}

Router::Router(tasks::TaskService& service, const boost::json::object& agent_card,
               StreamOptions stream_options, std::string jsonrpc_path, OpenwopApi* openwop,
               const ExtensionRegistry* extensions)
    : service_(service),
      jsonrpc_(service, stream_options, extensions),
      rest_(jsonrpc_.operations(), kA2aRestPath, stream_options, extensions),
      rest03_(jsonrpc_.operations(), kA2aRest03Path, stream_options, extensions,
              protocol::WireVersion::kV03),
      openwop_(openwop),
      jsonrpc_path_(std::move(jsonrpc_path)),
      card_{protocol::SerializeJson(agent_card), CardEtag(agent_card)},
      last_modified_(HttpDate(std::chrono::system_clock::now())) {
  jsonrpc_.ServeExtendedCard(extended_card_);
}

void Router::SetCards(const CardForms& open, const CardForms& secured, bool only,
                      std::function<bool()> secured_now) {
  auto bodies = [](const CardForms& f) {
    return CardBodies{CardBody{protocol::SerializeJson(f.v03), CardEtag(f.v03)},
                      CardBody{protocol::SerializeJson(f.v10), CardEtag(f.v10)}};
  };
  open_cards_ = bodies(open);
  secured_cards_ = bodies(secured);
  secured_now_ = std::move(secured_now);
  v10_only_ = only;
}

void Router::SetExtendedCards(const boost::json::object& card,
                              const boost::json::object& v10_card) {
  extended_card_->Set(card, v10_card);
}

void Router::PublishKey(json::object jwk) { published_keys_.emplace_back(std::move(jwk)); }

void Router::EnablePush(push::PushService& service, push::KeyStore& keys,
                        storage::PushStore& store, bool a2a_push) {
  if (a2a_push) jsonrpc_.EnablePush(service);
  push_routes_ = std::make_unique<PushRoutes>(service, store, service_);
  push_keys_ = &keys;
}

void Router::EnableSampleSeams(std::unique_ptr<SampleSeams> seams) {
  sample_seams_ = std::move(seams);
  if (push_routes_) push_routes_->EnableSampleSeam();
}

HttpResponse Router::Jwks() const {
  json::array keys = published_keys_;
  if (push_keys_)  // the push keys change with `a2ad keys rotate`: read at every request
    for (auto& k : push_keys_->PublicJwks()) keys.emplace_back(std::move(k));
  HttpResponse r =
      JsonResponse(200, protocol::SerializeJson(json::object{{"keys", std::move(keys)}}));
  r.content_type = "application/jwk-set+json";  // RFC 7517 §8.5.1
  // Short: a rotated push key must reach receivers before its first token does.
  r.headers.emplace_back("Cache-Control", "public, max-age=60");
  return r;
}

HttpResponse Router::Card(const HttpRequest& request) const {
  const bool forms = open_cards_.has_value();
  const bool v10 = v10_only_ || request.Header("A2A-Version").starts_with("1");
  const CardBodies* set = !forms ? nullptr
                          : (secured_now_ && secured_now_()) ? &*secured_cards_
                                                             : &*open_cards_;
  const CardBody& card = !set ? card_ : v10 ? set->v10 : set->v03;
  HttpResponse r;
  r.headers = {{"ETag", card.etag},
               {"Last-Modified", last_modified_},
               {"Cache-Control", "public, max-age=300"}};
  if (forms && !v10_only_) r.headers.emplace_back("Vary", "A2A-Version");
  const std::string_view inm = request.Header("If-None-Match");
  const std::string_view ims = request.Header("If-Modified-Since");
  const bool not_modified = !inm.empty() ? (inm == card.etag || inm == "*" ||
                                            inm.find(card.etag) != std::string_view::npos)
                                         : (!ims.empty() && ims == last_modified_);
  if (not_modified) {
    r.status = 304;
    r.content_type.clear();
    return r;
  }
  r.body = card.body;
  return r;
}

HttpResponse Router::Refused(const HttpRequest& request, const core::Error& e) const {
  const std::string_view path = request.Path();
  HttpResponse r;
  if (path == jsonrpc_path_ || (path.size() == jsonrpc_path_.size() + 1 &&
                                path.starts_with(jsonrpc_path_) && path.back() == '/')) {
    // Refused before the request is served: its id echoed when the body is a request whose
    // id can be read (JSON-RPC 2.0 §5), else null; in the version the header asks for.
    const auto v = request.Header("A2A-Version").starts_with("1") ? protocol::WireVersion::kV10
                                                                  : protocol::WireVersion::kV03;
    json::value id = nullptr;
    if (auto body = protocol::ParseJsonObject(request.body, "body"); body)
      if (const json::value* i = body->if_contains("id");
          i && (i->is_string() || i->is_int64() || i->is_uint64()))
        id = *i;
    r = JsonRpcErrorResponse(id, e, v);
    r.status = protocol::MapError(e.code).http_status;
  } else if (rest_.Owns(path)) {
    r = A2aRestErrorResponse(e);
  } else if (rest03_.Owns(path)) {
    r = A2aRest03ErrorResponse(e);
  } else {
    r = RestErrorResponse(e);
  }
  return r;
}

namespace {
// Sets header `name` of `request` to `value` (replacing every one of that name).
void SetHeader(HttpRequest& request, std::string_view name, std::string value) {
  std::erase_if(request.headers, [name](const auto& h) {
    return h.first.size() == name.size() &&
           std::equal(h.first.begin(), h.first.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           });
  });
  request.headers.emplace_back(std::string(name), std::move(value));
}
// The path with the credential it may carry replaced: /v1/interrupts/<signed token>[/...]
// becomes /v1/interrupts/{token}[/...] (the token answers the interrupt).
std::string RedactedRoute(std::string_view path) {
  constexpr std::string_view kInterrupts = "/v1/interrupts/";
  if (!path.starts_with(kInterrupts)) return std::string(path);
  const size_t end = path.find('/', kInterrupts.size());
  return std::string(kInterrupts) + "{token}" +
         std::string(end == std::string_view::npos ? std::string_view() : path.substr(end));
}
// Probes and scrapes are not logged or counted: an orchestrator asks every few seconds.
bool quiet_route(std::string_view route) {
  return route == "/healthz" || route == "/readyz" || route == "/metrics";
}
// A route's family for the metrics' `operation` label when no binding named an operation: its
// first two segments ("/v1/runs/<id>/events" -> "/v1/runs"), so that ids never become labels.
core::MetricFamily& RequestsTotal() {
  return core::Metrics().Family(
      "a2ad_http_requests_total", core::MetricsRegistry::Type::kCounter,
      "Requests answered, by operation (the method, or the route's family) and HTTP status.",
      {"operation", "status"});
}

core::MetricFamily& RequestSeconds() {
  return core::Metrics().Family(
      "a2ad_http_request_duration_seconds", core::MetricsRegistry::Type::kHistogram,
      "Time from a request read to its answer (a stream: to its head), by operation.",
      {"operation"}, core::LatencyBuckets());
}

std::string RouteFamily(std::string_view route) {
  if (route.starts_with("/.well-known/")) return std::string(route);
  size_t cut = 0;
  for (int segments = 0; segments < 2 && cut != std::string_view::npos;) {
    cut = route.find('/', cut + 1);
    ++segments;
  }
  return std::string(cut == std::string_view::npos ? route : route.substr(0, cut));
}
}  // namespace

namespace {
// Outside the coroutine (GCC 12 and braced initializers in coroutines).
HttpResponse ReadinessResponse(bool ready, json::object checks) {
  json::object body;
  body["ready"] = ready;
  body["checks"] = std::move(checks);
  return JsonResponse(ready ? 200 : 503, protocol::SerializeJson(body));
}
}  // namespace

void Router::SetMetrics(std::function<asio::awaitable<std::string>()> source) {
  metrics_ = std::move(source);
  RequestsTotal();
  RequestSeconds();
}

asio::awaitable<HttpResponse> Router::Handle(HttpRequest request) {
  // A2A 1.0 (§3.6.1): a client may name the version as the query parameter A2A-Version instead
  // of the header (a card URL can carry it); every binding reads it as the header.
  if (request.Header("A2A-Version").empty() && request.target.find('?') != std::string::npos)
    if (std::string v = request.Query("A2A-Version"); !v.empty())
      request.headers.emplace_back("A2A-Version", std::move(v));
  // The access log: one line per request, once it is answered (a stream: once it begins).
  const auto started = std::chrono::steady_clock::now();
  std::string method = request.method;
  const std::string client = request.client_address;
  // The route as logged and traced: a signed interrupt token in the path is a credential.
  std::string route = RedactedRoute(request.Path());
  // The request's span (not for the probes): the caller's traceparent is its parent, and
  // the request goes on with the span's own context in that header, so what it starts (a
  // run) is a child of it.
  std::optional<core::Span> span;
  if (!quiet_route(route)) {
    span.emplace("HTTP " + method, core::SpanKind::kServer, request.Header("traceparent"));
    SetHeader(request, "traceparent", span->Context());
  }
  const std::string trace = span ? span->trace_id() : std::string();
  std::string principal;
  std::string origin;
  if (cors_.enabled() && cors_.Allows(request.Header("Origin")))
    origin = request.Header("Origin");
  std::optional<HttpResponse> preflight = cors_.Preflight(request);
  HttpResponse r;
  if (preflight) {
    r = std::move(*preflight);
  } else {
    r = co_await Dispatch(std::move(request), principal);
    if (!origin.empty()) cors_.Decorate(origin, r);
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  // What the request was, for the metrics and the access log: the operation a binding named,
  // else the route's family (a path no route serves is one label, "unmatched").
  const std::string operation = !r.log_operation.empty() ? r.log_operation
                                : r.status == 404       ? std::string("unmatched")
                                                        : RouteFamily(route);
  if (!quiet_route(route)) {
    static auto& requests = RequestsTotal();
    static auto& latency = RequestSeconds();
    requests.Add({operation, std::to_string(r.status)});
    latency.Observe({operation}, ms / 1000);
  }
  // With no collector the span is only a traceparent for what the request started: its
  // name and attributes would be built for nothing.
  if (span && core::TracingEnabled()) {
    if (!r.log_operation.empty()) span->Rename(r.log_operation);
    else span->Rename(method + " " + (r.status == 404 ? std::string("unmatched") : RouteFamily(route)));
    span->Set("http.request.method", method);
    span->Set("url.path", route);
    span->Set("http.response.status_code", static_cast<int64_t>(r.status));
    if (!r.log_task.empty()) span->Set("a2a.task.id", r.log_task);
    if (!r.log_error.empty()) span->Set("rpc.jsonrpc.error_code", r.log_error);
    if (!principal.empty()) span->Set("a2ad.principal", principal);
    if (r.stream) span->Set("a2ad.stream", true);
    if (r.status >= 500) span->Fail("HTTP " + std::to_string(r.status));
  }
  if (span) span->End();
  if (core::LogEnabled(core::LogLevel::kInfo) && !quiet_route(route)) {
    core::Log(core::LogLevel::kInfo, "request",
              {{"method", std::string_view(method)},
               {"route", std::string_view(route)},
               {"status", r.status},
               {"ms", ms},
               {"operation", std::string_view(operation)},
               {"task", std::string_view(r.log_task)},
               {"error", std::string_view(r.log_error)},
               {"principal", std::string_view(principal)},
               {"client", std::string_view(client)},
               {"traceId", std::string_view(trace)},
               {"stream", static_cast<bool>(r.stream)}});
  }
  co_return r;
}

asio::awaitable<HttpResponse> Router::Dispatch(HttpRequest request, std::string& principal) {
  std::string_view path = request.Path();
  if (path == "/.well-known/agent-card.json" || path == "/.well-known/agent.json" ||
      path == "/v1/a2a/agent.json") {
    if (request.method != "GET" && request.method != "HEAD") {
      co_return MethodNotAllowed("GET, HEAD", "use GET");
    }
    co_return Card(request);
  }
  if ((path == "/healthz" || path == "/readyz" || (path == "/metrics" && metrics_)) &&
      request.method != "GET" && request.method != "HEAD") {
    co_return MethodNotAllowed("GET, HEAD", "use GET");
  }
  if (path == "/healthz") co_return JsonResponse(200, R"({"status":"ok"})");
  if (path == "/metrics" && metrics_) {
    if (auth_) {
      auto refused = co_await Admit(
          *auth_, request, [this, &request](const core::Error& e) { return Refused(request, e); });
      if (refused) co_return std::move(*refused);
    }
    HttpResponse m;
    m.content_type = "text/plain; version=0.0.4; charset=utf-8";
    m.body = co_await metrics_();
    co_return m;
  }
  if (path == "/readyz") {
    if (!readiness_) co_return JsonResponse(200, R"({"ready":true,"checks":{}})");
    std::pair<bool, json::object> probed = co_await readiness_();
    co_return ReadinessResponse(probed.first, std::move(probed.second));
  }
  if (console_)  // public files, like the card: the page calls the API with its credential
    if (auto r = ServeConsole(request)) co_return std::move(*r);
  for (const auto& [route, receive] : self_authenticating_)
    if (path == route) co_return receive(request);
  // Every route below but discovery and the JWKS needs a credential once keys exist.
  const bool exempt =
      path == "/.well-known/openwop" || path == "/v1/openapi.json" ||
      (path == "/.well-known/jwks.json" && (push_keys_ || !published_keys_.empty()));
  request.principal.reset();  // only the authenticator sets it
  // Discovery is public, and scoped to the caller when it presents a credential (RFC 0011,
  // openwop_discovery.hpp): one that does not authenticate is refused as anywhere else.
  const bool scoped_discovery = auth_ && path == "/.well-known/openwop" &&
                                !PresentedCredential(request).empty() && auth_->Enabled();
  if (auth_ && (!exempt || scoped_discovery)) {
    auto refused = co_await Admit(
        *auth_, request, [this, &request](const core::Error& e) { return Refused(request, e); });
    if (refused) co_return std::move(*refused);
    path = request.Path();
    if (request.principal)
      principal = request.principal->tenant.empty()
                      ? request.principal->id
                      : request.principal->tenant + "/" + request.principal->id;
  }
  // The endpoint with a trailing '/' too: clients (the A2A TCK's among them) join the
  // interface URL and "/".
  if (path == jsonrpc_path_ || (path.size() == jsonrpc_path_.size() + 1 &&
                                path.starts_with(jsonrpc_path_) && path.back() == '/')) {
    if (request.method != "POST") {
      co_return MethodNotAllowed("POST", "the A2A JSON-RPC endpoint takes POST");
    }
    co_return co_await jsonrpc_.Handle(std::move(request));
  }
  if (path == "/.well-known/jwks.json" && (push_keys_ || !published_keys_.empty())) {
    if (request.method != "GET" && request.method != "HEAD") {
      co_return MethodNotAllowed("GET, HEAD", "use GET");
    }
    co_return Jwks();
  }
  if (rest_.Owns(path)) co_return co_await rest_.Handle(request);
  if (rest03_.Owns(path)) co_return co_await rest03_.Handle(request);
  if (sample_seams_)
    if (auto r = co_await sample_seams_->Handle(request)) co_return std::move(*r);
  if (push_routes_)
    if (auto r = co_await push_routes_->Handle(request)) co_return std::move(*r);
  if (openwop_)
    if (auto r = co_await openwop_->Handle(request)) co_return std::move(*r);
  // The OpenWOP REST surface is versioned: an unversioned path gets 400 (DIGEST §2).
  for (std::string_view family :
       {"/runs", "/workflows", "/interrupts", "/webhooks", "/openapi.json"})
    if (path == family || (path.starts_with(family) && path.substr(family.size()).starts_with("/")))
      co_return RestErrorResponse(400, "validation_error",
                                  "unversioned path " + std::string(path) +
                                      "; the REST API is under /v1 (e.g. /v1" + std::string(path) +
                                      ")");
  co_return RestErrorResponse(
      404, "not_found", "no route for " + std::string(request.method) + " " + std::string(path));
}

}  // namespace a2ad::transport
