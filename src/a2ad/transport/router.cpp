#include "a2ad/transport/router.hpp"

#include <chrono>

#include "a2ad/core/log.hpp"
#include "a2ad/core/metrics.hpp"
#include "a2ad/core/trace.hpp"

#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/transport/console/console_routes.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http/http_server.hpp"

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
  Use(MakeVersionQuery());
  Use(MakeAccessLog());
  Use(MakeRequestMetrics());
  Use(MakeTracing());
  AddRoutes();
}

void Router::AddSelfAuthenticatingRoute(const std::string& path,
                                        std::function<HttpResponse(const HttpRequest&)> receive) {
  AddRoute({"self-authenticating " + path, Route::Access::kPublic,
            [path](const HttpRequest& r) { return r.Path() == path; },
            [receive = std::move(receive)](HttpRequest& r) -> boost::asio::awaitable<HttpResponse> {
              co_return receive(r);
            },
            nullptr});
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
  if (IsJsonRpcPath(path)) {
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
// The path with the credential it may carry replaced: /v1/interrupts/<signed token>[/...]
// becomes /v1/interrupts/{token}[/...] (the token answers the interrupt).
std::string RedactedRoute(std::string_view path) {
  constexpr std::string_view kInterrupts = "/v1/interrupts/";
  if (!path.starts_with(kInterrupts)) return std::string(path);
  const size_t end = path.find('/', kInterrupts.size());
  return std::string(kInterrupts) + "{token}" +
         std::string(end == std::string_view::npos ? std::string_view() : path.substr(end));
}
// Probes and scrapes are not logged, counted or traced: an orchestrator asks every few seconds.
bool QuietRoute(std::string_view route) {
  return route == "/healthz" || route == "/readyz" || route == "/metrics";
}
// Outside the coroutine (GCC 12 and braced initializers in coroutines).
HttpResponse ReadinessResponse(bool ready, json::object checks) {
  json::object body;
  body["ready"] = ready;
  body["checks"] = std::move(checks);
  return JsonResponse(ready ? 200 : 503, protocol::SerializeJson(body));
}
bool IsGet(const HttpRequest& r) { return r.method == "GET" || r.method == "HEAD"; }
template <class T>
asio::awaitable<T> Immediate(T value) {
  co_return value;
}
asio::awaitable<std::optional<HttpResponse>> NotMine() { co_return std::nullopt; }
Route::Matcher Path(std::string_view path) {
  return [path](const HttpRequest& r) { return r.Path() == path; };
}
Route::Matcher OneOf(std::vector<std::string_view> paths) {
  return [paths = std::move(paths)](const HttpRequest& r) {
    return std::find(paths.begin(), paths.end(), r.Path()) != paths.end();
  };
}
// The versioned families of the OpenWOP REST surface: an unversioned path gets 400 (DIGEST §2).
std::optional<HttpResponse> Unversioned(std::string_view path) {
  for (std::string_view family :
       {"/runs", "/workflows", "/interrupts", "/webhooks", "/openapi.json"})
    if (path == family || (path.starts_with(family) && path.substr(family.size()).starts_with("/")))
      return RestErrorResponse(400, "validation_error",
                               "unversioned path " + std::string(path) +
                                   "; the REST API is under /v1 (e.g. /v1" + std::string(path) +
                                   ")");
  return std::nullopt;
}
}  // namespace

void Router::SetMetrics(std::function<asio::awaitable<std::string>()> source) {
  metrics_ = std::move(source);
}

void Router::AddRoutes() {
  using A = Route::Access;
  auto get_only = [](auto answer) -> Route::Answer {
    return [answer](HttpRequest& r) -> asio::awaitable<HttpResponse> {
      if (!IsGet(r)) return Immediate(MethodNotAllowed("GET, HEAD", "use GET"));
      return answer(r);
    };
  };
  // Served before authentication: public, or checking their own credential.
  routes_.push_back({"agent card", A::kPublic,
                     OneOf({"/.well-known/agent-card.json", "/.well-known/agent.json",
                            "/v1/a2a/agent.json"}),
                     get_only([this](HttpRequest& r) { return Immediate(Card(r)); }), nullptr});
  routes_.push_back({"liveness", A::kPublic, Path("/healthz"), get_only([](HttpRequest&) {
                       return Immediate(JsonResponse(200, R"({"status":"ok"})"));
                     }),
                     nullptr});
  routes_.push_back({"readiness", A::kPublic, Path("/readyz"),
                     get_only([this](HttpRequest&) { return Ready(); }), nullptr});
  routes_.push_back({"metrics", A::kPublic,
                     [this](const HttpRequest& r) { return metrics_ && r.Path() == "/metrics"; },
                     get_only([this](HttpRequest& r) { return Scrape(r); }), nullptr});
  routes_.push_back({"console", A::kPublic, [this](const HttpRequest&) { return console_; },
                     nullptr, [](HttpRequest& r) { return Immediate(ServeConsole(r)); }});
  // Exempt from authentication: discovery (scoped to a caller that presents a credential,
  // RFC 0011, openwop_discovery.hpp) and the JWKS.
  routes_.push_back({"discovery", A::kOpen, OneOf({"/.well-known/openwop", "/v1/openapi.json"}),
                     nullptr,
                     [this](HttpRequest& r) { return openwop_ ? openwop_->Handle(r) : NotMine(); },
                     /*scoped=*/true});
  routes_.push_back({"jwks", A::kOpen,
                     [this](const HttpRequest& r) {
                       return r.Path() == "/.well-known/jwks.json" &&
                              (push_keys_ || !published_keys_.empty());
                     },
                     get_only([this](HttpRequest&) { return Immediate(Jwks()); }), nullptr});
  // Served once the caller is admitted. The JSON-RPC endpoint with a trailing '/' too:
  // clients (the A2A TCK's among them) join the interface URL and "/".
  routes_.push_back({"a2a jsonrpc", A::kAuthenticated,
                     [this](const HttpRequest& r) { return IsJsonRpcPath(r.Path()); },
                     [this](HttpRequest& r) -> asio::awaitable<HttpResponse> {
                       if (r.method != "POST")
                         return Immediate(
                             MethodNotAllowed("POST", "the A2A JSON-RPC endpoint takes POST"));
                       return jsonrpc_.Handle(std::move(r));
                     },
                     nullptr});
  routes_.push_back({"a2a rest 1.0", A::kAuthenticated,
                     [this](const HttpRequest& r) { return rest_.Owns(r.Path()); },
                     [this](HttpRequest& r) { return rest_.Handle(r); }, nullptr});
  routes_.push_back({"a2a rest 0.3", A::kAuthenticated,
                     [this](const HttpRequest& r) { return rest03_.Owns(r.Path()); },
                     [this](HttpRequest& r) { return rest03_.Handle(r); }, nullptr});
  // Families that know their paths only by trying them, in this order.
  auto any = [](const HttpRequest&) { return true; };
  routes_.push_back({"openwop test seams", A::kAuthenticated, any, nullptr,
                     [this](HttpRequest& r) {
                       return sample_seams_ ? sample_seams_->Handle(r) : NotMine();
                     }});
  routes_.push_back({"push routes", A::kAuthenticated, any, nullptr, [this](HttpRequest& r) {
                       return push_routes_ ? push_routes_->Handle(r) : NotMine();
                     }});
  routes_.push_back({"openwop", A::kAuthenticated, any, nullptr, [this](HttpRequest& r) {
                       return openwop_ ? openwop_->Handle(r) : NotMine();
                     }});
}

bool Router::IsJsonRpcPath(std::string_view path) const {
  return path == jsonrpc_path_ || (path.size() == jsonrpc_path_.size() + 1 &&
                                   path.starts_with(jsonrpc_path_) && path.back() == '/');
}

asio::awaitable<HttpResponse> Router::Ready() {
  if (!readiness_) co_return JsonResponse(200, R"({"ready":true,"checks":{}})");
  std::pair<bool, json::object> probed = co_await readiness_();
  co_return ReadinessResponse(probed.first, std::move(probed.second));
}

asio::awaitable<HttpResponse> Router::Scrape(HttpRequest& request) {
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

asio::awaitable<HttpResponse> Router::Handle(HttpRequest request) {
  Exchange x;
  x.method = request.method;
  x.client = request.client_address;
  x.route = RedactedRoute(request.Path());
  x.quiet = QuietRoute(x.route);
  // Before in order; the first answer stops the request there. After in reverse order, for
  // every stage whose Before ran.
  size_t ran = 0;
  std::optional<HttpResponse> early;
  while (ran < middleware_.size() && !early) early = middleware_[ran++]->Before(request, x);
  HttpResponse r;
  if (early)
    r = std::move(*early);
  else
    r = co_await Dispatch(std::move(request), x.principal);
  x.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - x.started)
             .count();
  x.operation = !r.log_operation.empty() ? r.log_operation
                : r.status == 404       ? std::string("unmatched")
                                        : RouteFamily(x.route);
  while (ran > 0) middleware_[--ran]->After(x, r);
  co_return r;
}

asio::awaitable<std::optional<HttpResponse>> Router::Serve(const Route& route,
                                                           HttpRequest& request) {
  if (route.answer) {
    HttpResponse answer = co_await route.answer(request);
    co_return answer;
  }
  std::optional<HttpResponse> offered = co_await route.offer(request);
  co_return offered;
}

asio::awaitable<HttpResponse> Router::Dispatch(HttpRequest request, std::string& principal) {
  using A = Route::Access;
  const Route* open = nullptr;
  for (const Route& route : routes_) {
    if (route.access == A::kAuthenticated || !route.matches(request)) continue;
    if (route.access == A::kOpen) {
      open = &route;
      break;
    }
    std::optional<HttpResponse> r = co_await Serve(route, request);
    if (r) co_return std::move(*r);
  }
  request.principal.reset();  // only the authenticator sets it
  // An exempt route is served without a credential; a scoped one (discovery) authenticates
  // the caller that presents one, and refuses one that does not authenticate, as anywhere.
  const bool admit = auth_ && (!open || (open->scoped && !PresentedCredential(request).empty() &&
                                         auth_->Enabled()));
  if (admit) {
    auto refused = co_await Admit(
        *auth_, request, [this, &request](const core::Error& e) { return Refused(request, e); });
    if (refused) co_return std::move(*refused);
    if (request.principal)
      principal = request.principal->tenant.empty()
                      ? request.principal->id
                      : request.principal->tenant + "/" + request.principal->id;
  }
  if (open) {
    std::optional<HttpResponse> r = co_await Serve(*open, request);
    if (r) co_return std::move(*r);
  } else {
    // Matched after admission: the authenticator may have taken a tenant prefix off the path.
    for (const Route& route : routes_) {
      if (route.access != A::kAuthenticated || !route.matches(request)) continue;
      std::optional<HttpResponse> r = co_await Serve(route, request);
      if (r) co_return std::move(*r);
    }
  }
  const std::string_view path = request.Path();
  if (auto r = Unversioned(path)) co_return std::move(*r);
  co_return RestErrorResponse(
      404, "not_found", "no route for " + std::string(request.method) + " " + std::string(path));
}

}  // namespace a2ad::transport
