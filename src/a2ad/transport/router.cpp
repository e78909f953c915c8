#include "a2ad/transport/router.hpp"

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http_server.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;

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
    return DefaultTransportError(path, status, code, std::move(message));
  };
}

Router::Router(tasks::TaskService& service, const boost::json::object& agent_card,
               StreamOptions stream_options, std::string jsonrpc_path, OpenwopApi* openwop,
               const ExtensionRegistry* extensions)
    : jsonrpc_(service, stream_options, extensions),
      rest_(jsonrpc_.operations(), kA2aRestPath, stream_options, extensions),
      openwop_(openwop),
      jsonrpc_path_(std::move(jsonrpc_path)),
      card_{protocol::SerializeJson(agent_card), {}},
      last_modified_(HttpDate(std::chrono::system_clock::now())) {
  card_.etag = WeakEtag(card_.body);
}

void Router::SetCards(const boost::json::object& card, const boost::json::object& v10_card,
                      bool only) {
  card_ = CardBody{protocol::SerializeJson(card), {}};
  card_.etag = WeakEtag(card_.body);
  v10_card_ = CardBody{protocol::SerializeJson(v10_card), {}};
  v10_card_->etag = WeakEtag(v10_card_->body);
  v10_only_ = only;
}

void Router::EnablePush(push::PushService& service, push::KeyStore& keys,
                        storage::PushStore& store) {
  jsonrpc_.EnablePush(service);
  push_routes_ = std::make_unique<PushRoutes>(service, keys, store);
}

HttpResponse Router::Card(const HttpRequest& request) const {
  const bool v10 = v10_card_ && (v10_only_ || request.Header("A2A-Version").starts_with("1"));
  const CardBody& card = v10 ? *v10_card_ : card_;
  HttpResponse r;
  r.headers = {{"ETag", card.etag},
               {"Last-Modified", last_modified_},
               {"Cache-Control", "public, max-age=300"}};
  if (v10_card_ && !v10_only_) r.headers.emplace_back("Vary", "A2A-Version");
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

asio::awaitable<HttpResponse> Router::Handle(HttpRequest request) {
  std::string_view path = request.Path();
  if (path == "/.well-known/agent-card.json" || path == "/.well-known/agent.json" ||
      path == "/v1/a2a/agent.json") {
    if (request.method != "GET" && request.method != "HEAD") {
      auto r = RestErrorResponse(405, "method_not_allowed", "use GET");
      r.headers.emplace_back("Allow", "GET, HEAD");
      co_return r;
    }
    co_return Card(request);
  }
  // The endpoint with a trailing '/' too: clients (the A2A TCK's among them) join the
  // interface URL and "/".
  if (path == jsonrpc_path_ || (path.size() == jsonrpc_path_.size() + 1 &&
                                path.starts_with(jsonrpc_path_) && path.back() == '/')) {
    if (request.method != "POST") {
      auto r = RestErrorResponse(405, "method_not_allowed", "the A2A JSON-RPC endpoint takes POST");
      r.headers.emplace_back("Allow", "POST");
      co_return r;
    }
    co_return co_await jsonrpc_.Handle(std::move(request));
  }
  if (rest_.Owns(path)) co_return co_await rest_.Handle(request);
  if (path == "/healthz") co_return JsonResponse(200, R"({"status":"ok"})");
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
