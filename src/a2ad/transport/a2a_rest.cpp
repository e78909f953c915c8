#include "a2ad/transport/a2a_rest.hpp"

#include <boost/json.hpp>
#include <charconv>
#include <memory>
#include <utility>
#include <vector>

#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/sse_pump.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using protocol::WireVersion;

namespace {

/// google.rpc.Status text of `e` (already ClientFacing) with `http` and `grpc` as its codes.
std::string StatusText(const Error& e, int http, std::string_view grpc) {
  const protocol::ErrorMapping& m = protocol::MapError(e.code);
  const std::string message = e.message.empty() ? std::string(m.default_message) : e.message;
  json::object status{{"code", http},
                      {"status", grpc},
                      {"message", message},
                      {"details", protocol::ErrorDetailsJson(e, message)}};
  return protocol::SerializeJson(json::object{{"error", std::move(status)}});
}

}  // namespace

std::string A2aRestErrorText(const Error& error) {
  const Error e = ClientFacing(error);
  const protocol::ErrorMapping& m = protocol::MapError(e.code);
  return StatusText(e, m.http_status, m.grpc_status);
}

HttpResponse A2aRestErrorResponse(const Error& e) {
  return JsonResponse(protocol::MapError(ClientFacing(e).code).http_status, A2aRestErrorText(e));
}

namespace {

using Captures = std::vector<std::pair<std::string, std::string>>;

/// Matches `path` (relative to the base, "/tasks/abc:cancel") against a route pattern
/// ("/tasks/{id}:cancel"). A path parameter is one or more characters up to the pattern's
/// next literal character, never a '/' or ':'; it is percent-decoded.
bool MatchRoute(std::string_view pattern, std::string_view path, Captures& captures) {
  captures.clear();
  size_t i = 0, j = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '{') {
      const size_t close = pattern.find('}', i);
      const std::string name(pattern.substr(i + 1, close - i - 1));
      size_t end = j;
      while (end < path.size() && path[end] != '/' && path[end] != ':') ++end;
      if (end == j) return false;
      captures.emplace_back(name, PercentDecode(path.substr(j, end - j)));
      i = close + 1;
      j = end;
      continue;
    }
    if (j >= path.size() || path[j] != pattern[i]) return false;
    ++i;
    ++j;
  }
  return j == path.size();
}

bool Allows(const Operation& op, std::string_view method) {
  // SubscribeToTask: GET per the proto, POST per the specification's text; both are served.
  return method == op.http_method || (op.name == "SubscribeToTask" && method == "GET");
}

/// Query parameters the ListTasks and GetTask requests type as integers or booleans; every
/// other parameter is passed as a string (its decoder says when that is wrong).
json::value QueryValue(std::string_view name, const std::string& text) {
  if (name == "pageSize" || name == "historyLength") {
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size()) return n;
  }
  if (name == "includeArtifacts") {
    if (text == "true") return true;
    if (text == "false") return false;
  }
  return json::value(json::string(text));
}

/// The SSE frames of a REST stream: bare StreamResponse events; an error as google.rpc.Status.
SsePumpSpec RestStreamSpec(bool close_on_interrupt, std::chrono::milliseconds heartbeat) {
  auto closes = [close_on_interrupt](const tasks::StreamItem& item) {
    return EndsA2aStream(item, close_on_interrupt);
  };
  SsePumpSpec spec;
  spec.heartbeat = heartbeat;
  spec.closes = closes;
  spec.frame = [](const tasks::StreamItem& item) {
    std::string out;
    if (!item.a2a) return out;
    const std::string& result = item.Json(0);
    out.reserve(result.size() + 32);
    out.append("id: ").append(std::to_string(item.sequence));
    out.append("\ndata: ").append(result).append("\n\n");
    return out;
  };
  spec.cut_short = [](const Error& why) {
    return "event: error\ndata: " + A2aRestErrorText(why) + "\n\n";
  };
  return spec;
}

}  // namespace

A2aRestBinding::A2aRestBinding(const OperationTable& operations, std::string base_path,
                               StreamOptions stream_options, const ExtensionRegistry* extensions)
    : operations_(operations),
      base_(std::move(base_path)),
      stream_options_(stream_options),
      extensions_(extensions) {}

bool A2aRestBinding::Owns(std::string_view path) const {
  return path == base_ || (path.starts_with(base_) && path[base_.size()] == '/');
}

asio::awaitable<HttpResponse> A2aRestBinding::Handle(const HttpRequest& request) const {
  const std::string_view rel = request.Path().substr(base_.size());
  // The route, and the methods every route of that path allows (for 405).
  const Operation* op = nullptr;
  Captures captures;
  std::string allowed;
  for (const auto& candidate : operations_.operations()) {
    if (candidate.rest_path.empty() || !MatchRoute(candidate.rest_path, rel, captures)) continue;
    if (Allows(candidate, request.method)) {
      op = &candidate;
      break;
    }
    if (!allowed.empty()) allowed += ", ";
    allowed += candidate.http_method;
  }
  if (!op) {
    if (!allowed.empty()) {
      // 405 has no A2A error of its own: METHOD_NOT_FOUND's details, the HTTP status 405.
      HttpResponse r = JsonResponse(
          405, StatusText(Error(ErrorCode::kMethodNotFound, request.method + " is not served on " +
                                                                std::string(request.Path())),
                          405, "UNIMPLEMENTED"));
      r.headers.emplace_back("Allow", allowed);
      co_return r;
    }
    co_return A2aRestErrorResponse(
        Error(ErrorCode::kMethodNotFound,
              "no A2A route for " + request.method + " " + std::string(request.Path())));
  }
  if (auto e = RequireV10(request.Header("A2A-Version"))) co_return A2aRestErrorResponse(*e);

  auto ctx = protocol::CallContext::Anonymous(protocol::Binding::kRest, WireVersion::kV10);
  if (extensions_) extensions_->Activate(request, ctx);
  auto fail = [&](const Error& e) {
    HttpResponse r = A2aRestErrorResponse(e);
    if (auto echo = ExtensionRegistry::EchoHeader(ctx)) r.headers.push_back(std::move(*echo));
    return r;
  };
  if (extensions_)
    if (auto e = extensions_->CheckRequired(ctx)) co_return fail(*e);

  // The params: the body, then the path parameters, then (GET) the query.
  json::object params;
  const bool has_body = !request.body.empty();
  if (has_body) {
    if (!IsJsonContentType(request.Header("Content-Type")))
      co_return fail(Error(ErrorCode::kContentTypeNotSupported,
                           "Content-Type '" + std::string(request.Header("Content-Type")) +
                               "' is not supported; send application/json"));
    auto body = protocol::ParseJsonObject(request.body, "body");
    if (!body) co_return fail(body.error());
    params = std::move(body).value();
  }
  const bool push_route = op->rest_path.find("/pushNotificationConfigs") != std::string::npos;
  for (const auto& [name, value] : captures) {
    const std::string key = push_route ? (name == "id" ? "taskId" : "id") : name;
    params[key] = value;
  }
  if (request.method == "GET" || request.method == "DELETE")
    for (const auto& [name, value] : QueryParams(request.target))
      if (!params.contains(name)) params[name] = QueryValue(name, value);

  const json::value params_value(std::move(params));
  const OperationCall call{ctx, params_value, request.Header("Last-Event-ID")};
  auto result = co_await op->handler(call);
  if (!result) co_return fail(result.error());
  OperationResult& out = result.value();
  HttpResponse r;
  if (out.stream) {
    r = SseResponse(std::move(*out.stream),
                    RestStreamSpec(out.stream_closes_on_interrupt, stream_options_.heartbeat));
  } else {
    // google.protobuf.Empty (a deleted push config) is {} on this binding.
    r = JsonResponse(200, out.result_json == "null" ? "{}" : std::move(out.result_json));
  }
  for (auto& h : out.headers) r.headers.push_back(std::move(h));
  if (auto echo = ExtensionRegistry::EchoHeader(ctx)) r.headers.push_back(std::move(*echo));
  co_return r;
}

}  // namespace a2ad::transport
