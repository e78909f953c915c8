#include "a2ad/transport/a2a/rest/a2a_rest.hpp"

#include <boost/json.hpp>
#include <charconv>
#include <memory>
#include <utility>
#include <vector>

#include "a2ad/protocol/error_table.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http/sse_pump.hpp"

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
  // ClientFacing keeps the code; calling it here too would log an internal error twice.
  return JsonResponse(protocol::MapError(e.code).http_status, A2aRestErrorText(e));
}

HttpResponse A2aRestTransportError(int status, std::string message, WireVersion version) {
  ErrorCode code = ErrorCode::kInvalidRequest;
  if (status == 413) code = ErrorCode::kPayloadTooLarge;
  if (status == 500) code = ErrorCode::kInternal;
  if (status == 503) code = ErrorCode::kUnavailable;
  std::string_view grpc = protocol::MapError(code).grpc_status;
  if (status == 408) grpc = "DEADLINE_EXCEEDED";
  if (status == 431) grpc = "RESOURCE_EXHAUSTED";
  // Not ClientFacing: the message is the server's own and names nothing internal.
  const Error e(code, std::move(message));
  if (version == WireVersion::kV03)
    return JsonResponse(status, protocol::SerializeJson(protocol::MakeJsonRpcError(
                                    nullptr, e, WireVersion::kV03)["error"]));
  return JsonResponse(status, StatusText(e, status, grpc));
}

namespace {

using Captures = std::vector<std::pair<std::string, std::string>>;

/// Matches `pattern` (literal characters and '*', one path segment) against `path` from `j`,
/// appending what it matched to `out` (segments percent-decoded). A segment is one or more
/// characters, never a '/' or ':'.
bool MatchSegments(std::string_view pattern, std::string_view path, size_t& j, std::string& out) {
  for (char c : pattern) {
    if (c == '*') {
      size_t end = j;
      while (end < path.size() && path[end] != '/' && path[end] != ':') ++end;
      if (end == j) return false;
      out += PercentDecode(path.substr(j, end - j));
      j = end;
    } else {
      if (j >= path.size() || path[j] != c) return false;
      out += c;
      ++j;
    }
  }
  return true;
}

/// Matches `path` (relative to the base, "/tasks/abc:cancel") against a route pattern. A path
/// parameter is `{field}` (one segment: "/tasks/{id}:cancel" binds "id" to "abc") or, as the
/// google.api.http annotations write it, `{field=pattern}` ("/v1/{name=tasks/*}:cancel" binds
/// "name" to "tasks/abc").
bool MatchRoute(std::string_view pattern, std::string_view path, Captures& captures) {
  captures.clear();
  size_t i = 0, j = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '{') {
      const size_t close = pattern.find('}', i);
      const std::string_view inner = pattern.substr(i + 1, close - i - 1);
      const size_t eq = inner.find('=');
      std::string value;
      if (!MatchSegments(eq == std::string_view::npos ? "*" : inner.substr(eq + 1), path, j, value))
        return false;
      captures.emplace_back(std::string(inner.substr(0, eq)), std::move(value));
      i = close + 1;
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
  if (name == "pageSize" || name == "historyLength" || name == "history_length" ||
      name == "afterSequence") {
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size()) return n;
  }
  if (name == "includeArtifacts" || name == "includePlans" || name == "includeTasks") {
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
    const std::string& result = item.Json(protocol::Wire::kV10);
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
                               StreamOptions stream_options, const ExtensionRegistry* extensions,
                               WireVersion version)
    : operations_(operations),
      base_(std::move(base_path)),
      stream_options_(stream_options),
      extensions_(extensions),
      version_(version) {}

HttpResponse A2aRestBinding::ErrorResponse(const Error& e) const {
  return version_ == WireVersion::kV03 ? A2aRest03ErrorResponse(e) : A2aRestErrorResponse(e);
}

bool A2aRestBinding::Owns(std::string_view path) const {
  return path == base_ || (path.starts_with(base_) && path[base_.size()] == '/');
}

asio::awaitable<HttpResponse> A2aRestBinding::Handle(const HttpRequest& request) const {
  const bool v03 = version_ == WireVersion::kV03;
  const std::string_view rel = request.Path().substr(base_.size());
  // The route, and the methods every route of that path allows (for 405).
  const Operation* op = nullptr;
  Captures captures;
  std::string allowed;
  for (const auto& candidate : operations_.operations()) {
    const std::string& route = v03 ? candidate.v03_rest_path : candidate.rest_path;
    if (route.empty() || !MatchRoute(route, rel, captures)) continue;
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
      const Error e(ErrorCode::kMethodNotFound,
                    request.method + " is not served on " + std::string(request.Path()));
      HttpResponse r = ErrorResponse(e);
      r.status = 405;
      if (!v03) r.body = StatusText(e, 405, "UNIMPLEMENTED");
      r.headers.emplace_back("Allow", allowed);
      co_return r;
    }
    co_return ErrorResponse(
        Error(ErrorCode::kMethodNotFound,
              "no A2A route for " + request.method + " " + std::string(request.Path())));
  }
  if (auto denied =
          RequireScope(CallerContext(request, protocol::Binding::kRest, version_), op->scope))
    co_return WithScopeChallenge(ErrorResponse(*denied), *denied);
  const std::string_view version = request.Header("A2A-Version");
  if (auto e = v03 ? RequireV03(version) : RequireV10(version)) co_return ErrorResponse(*e);
  if (v03 && !stream_options_.serve_v03)
    co_return ErrorResponse(Error(ErrorCode::kVersionNotSupported,
                                  "this server serves A2A 1.0 only; use its 1.0 interfaces",
                                  {{"supportedVersions", "1.0"}, {"requestedVersion", "0.3"}}));

  auto ctx = CallerContext(request, protocol::Binding::kRest, version_);
  if (extensions_) extensions_->Activate(request, ctx);
  auto fail = [&](const Error& e) {
    HttpResponse r = ErrorResponse(e);
    if (auto echo = ExtensionRegistry::EchoHeader(ctx)) r.headers.push_back(std::move(*echo));
    return r;
  };
  if (extensions_)
    if (auto e = extensions_->CheckRequired(ctx)) co_return fail(*e);

  // The params: the body, then the path parameters, then (GET) the query.
  json::object params;
  // 0.3 clients send cancel and subscribe with no body or a literal null (WIRE.md §8.1).
  const bool has_body = !request.body.empty() && !(v03 && request.body == "null");
  if (has_body) {
    if (!IsJsonContentType(request.Header("Content-Type")))
      co_return fail(Error(ErrorCode::kContentTypeNotSupported,
                           "Content-Type '" + std::string(request.Header("Content-Type")) +
                               "' is not supported; send application/json"));
    auto body = protocol::ParseJsonObject(request.body, "body");
    if (!body) co_return fail(body.error());
    params = std::move(body).value();
  }
  const bool push_route =
      !v03 && op->rest_path.find("/pushNotificationConfigs") != std::string::npos;
  for (const auto& [name, value] : captures) {
    const std::string key = push_route ? (name == "id" ? "taskId" : "id") : name;
    params[key] = value;
  }
  if (request.method == "GET" || request.method == "DELETE")
    for (const auto& [name, value] : QueryParams(request.target))
      if (!params.contains(name)) params[name] = QueryValue(name, value);

  const json::value params_value(std::move(params));
  const OperationCall call{ctx, params_value, &request};
  auto result = co_await op->handler(call);
  if (!result) co_return fail(result.error());
  OperationResult& out = result.value();
  HttpResponse r;
  auto view = extensions_ ? extensions_->ViewFor(ctx) : nullptr;
  if (out.stream) {
    SsePumpSpec spec =
        v03 ? A2aRest03StreamSpec(out.stream_closes_on_interrupt, stream_options_.heartbeat)
            : RestStreamSpec(out.stream_closes_on_interrupt, stream_options_.heartbeat);
    if (view)  // an activated extension's view of each event's data line
      spec.frame = [frame = std::move(spec.frame), view](const tasks::StreamItem& item) {
        std::string text = frame(item);
        const size_t at = text.find("data: ");
        const size_t end = text.rfind("\n\n");
        if (at == std::string::npos || end == std::string::npos || end < at) return text;
        std::string data = text.substr(at + 6, end - at - 6);
        view(data);
        return text.substr(0, at + 6) + data + "\n\n";
      };
    r = SseResponse(std::move(*out.stream), std::move(spec));
  } else {
    if (view) view(out.result_json);
    // google.protobuf.Empty (a deleted push config) is {} on this binding.
    r = JsonResponse(200, out.result_json == "null" ? "{}" : std::move(out.result_json));
  }
  for (auto& h : out.headers) r.headers.push_back(std::move(h));
  if (auto echo = ExtensionRegistry::EchoHeader(ctx)) r.headers.push_back(std::move(*echo));
  co_return r;
}

}  // namespace a2ad::transport
