#include "a2ad/transport/a2a/jsonrpc/jsonrpc_handler.hpp"

#include "a2ad/protocol/error_table.hpp"

#include <memory>

#include "a2ad/protocol/call_context.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/jsonrpc.hpp"
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

std::optional<Error> CheckVersion(std::string_view header, WireVersion method_version,
                                  std::string_view method) {
  std::string requested = header.empty() ? "0.3" : std::string(header);
  int minor = 0;
  int major = A2aVersionMajor(requested, minor);
  bool supported = (major == 1) || (major == 0 && minor == 3);
  if (!supported)
    return Error(ErrorCode::kVersionNotSupported,
                 "A2A-Version '" + requested + "' is not supported; supported versions: 0.3, 1.0",
                 {{"supportedVersions", "0.3,1.0"}, {"requestedVersion", requested}});
  bool wants_v1 = major == 1;
  if (wants_v1 != (method_version == WireVersion::kV10)) {
    if (method_version == WireVersion::kV10)
      return Error(ErrorCode::kVersionNotSupported,
                   std::string(method) + " is an A2A 1.0 method; send the header A2A-Version: 1.0" +
                       (header.empty() ? " (a request without it is A2A 0.3)" : ""),
                   {{"supportedVersions", "0.3,1.0"}, {"requestedVersion", requested}});
    return Error(ErrorCode::kVersionNotSupported,
                 std::string(method) +
                     " is an A2A 0.3 method; send it without A2A-Version or with A2A-Version: 0.3",
                 {{"supportedVersions", "0.3,1.0"}, {"requestedVersion", requested}});
  }
  return std::nullopt;
}

/// The SSE frames of one JSON-RPC stream: every event is a JSON-RPC response with the
/// request's id; a v0.3 status update that does not end the stream is final=false.
// The task a request names (params id, taskId or message.taskId), for the access log.
std::string TaskIdOf(const json::value& params) {
  if (!params.is_object()) return {};
  const json::object& p = params.get_object();
  for (const char* k : {"id", "taskId"})
    if (const json::value* v = p.if_contains(k); v && v->is_string()) return std::string(v->get_string());
  if (const json::value* m = p.if_contains("message"); m && m->is_object())
    if (const json::value* t = m->get_object().if_contains("taskId"); t && t->is_string())
      return std::string(t->get_string());
  return {};
}

SsePumpSpec RpcStreamSpec(WireVersion version, json::value rpc_id, bool close_on_interrupt,
                          std::chrono::milliseconds heartbeat,
                          std::function<void(std::string&)> view) {
  auto closes = [close_on_interrupt](const tasks::StreamItem& item) {
    return EndsA2aStream(item, close_on_interrupt);
  };
  auto id_json = std::make_shared<const std::string>(protocol::SerializeJson(rpc_id));
  SsePumpSpec spec;
  spec.heartbeat = heartbeat;
  spec.closes = closes;
  spec.frame = [version, id_json, closes, view = std::move(view)](const tasks::StreamItem& item) {
    std::string out;
    if (!item.a2a) return out;  // a log entry with no A2A projection (node.started, ...)
    const auto wire = version == WireVersion::kV03 ? protocol::Wire::kV03 : protocol::Wire::kV10;
    const auto final = StreamFinal(item, closes(item));
    std::string viewed;  // an activated extension's view of the shared item (extensions.hpp)
    if (view) view(viewed = item.Json(wire, final));
    const std::string& result = view ? viewed : item.Json(wire, final);
    out.reserve(result.size() + id_json->size() + 64);
    out.append("id: ").append(std::to_string(item.sequence));
    out.append("\ndata: {\"jsonrpc\":\"2.0\",\"id\":").append(*id_json);
    out.append(",\"result\":").append(result).append("}\n\n");
    return out;
  };
  spec.cut_short = [version, rpc_id = std::move(rpc_id)](const Error& why) {
    return "event: error\ndata: " + JsonRpcErrorText(rpc_id, why, version) + "\n\n";
  };
  return spec;
}

}  // namespace

JsonRpcHandler::JsonRpcHandler(tasks::TaskService& service, StreamOptions stream_options,
                               const ExtensionRegistry* extensions)
    : service_(service),
      stream_options_(stream_options),
      extensions_(extensions),
      operations_(CoreA2aOperations(service, stream_options.queue_limit)) {
  if (extensions_) extensions_->AddOperations(operations_);
}

asio::awaitable<HttpResponse> JsonRpcHandler::Handle(HttpRequest request) {
  const std::string_view version_header = request.Header("A2A-Version");
  // Before the method is known, format errors for the version the header asks for.
  WireVersion hinted = version_header.rfind("1", 0) == 0 ? WireVersion::kV10 : WireVersion::kV03;
  json::value id;
  if (!IsJsonContentType(request.Header("Content-Type"))) {
    co_return JsonRpcErrorResponse(
        nullptr,
        Error(ErrorCode::kContentTypeNotSupported, "Content-Type '" +
                                                       std::string(request.Header("Content-Type")) +
                                                       "' is not supported; send application/json"),
        hinted);
  }
  auto parsed = protocol::ParseJsonRpcRequest(request.body, id);
  if (!parsed) co_return JsonRpcErrorResponse(id, parsed.error(), hinted);
  const protocol::JsonRpcRequest& rpc = parsed.value();
  const std::string& m = rpc.method;
  const auto match = operations_.FindJsonRpc(m);
  if (!match)
    co_return JsonRpcErrorResponse(
        rpc.id, Error(ErrorCode::kMethodNotFound, "Method not found: '" + m + "'", {{"method", m}}),
        protocol::MethodVersion(m));
  const Operation& op = *match->op;
  const WireVersion v = op.any_version ? hinted : match->version;
  // Who calls: the principal the router authenticated (auth.hpp).
  auto ctx = CallerContext(request, protocol::Binding::kJsonRpc, v);
  if (extensions_) extensions_->Activate(request, ctx);
  // A v0.3 streaming method's error is the one event of an SSE stream (WIRE.md §7: what
  // a2a-python's v0.3 server does and every v0.3 client reads; a 0.3 JS client reading a
  // JSON body loses the error's details). A 1.0 client reads a JSON error body.
  const bool error_as_event = op.streaming && v == WireVersion::kV03;
  auto fail = [&](const Error& e) {
    HttpResponse r;
    if (error_as_event) {
      r.content_type = "text/event-stream";
      r.headers.emplace_back("Cache-Control", "no-cache");
      r.body = "event: error\ndata: " + JsonRpcErrorText(rpc.id, e, v) + "\n\n";
    } else {
      r = JsonRpcErrorResponse(rpc.id, e, v);
    }
    if (auto echo = ExtensionRegistry::EchoHeader(ctx)) r.headers.push_back(std::move(*echo));
    r.log_operation = m;
    r.log_task = TaskIdOf(rpc.params);
    r.log_error = std::to_string(protocol::MapError(e.code).jsonrpc_code);
    return r;
  };
  // A scope the credential lacks: 403 with the error object (never an SSE event).
  if (auto denied = RequireScope(ctx, op.scope)) {
    HttpResponse r = JsonRpcErrorResponse(rpc.id, *denied, v);
    r.status = 403;
    co_return WithScopeChallenge(std::move(r), *denied);
  }
  if (v == WireVersion::kV03 && !stream_options_.serve_v03)
    co_return fail(Error(ErrorCode::kVersionNotSupported,
                         m + " is an A2A 0.3 method; this server serves A2A 1.0 only",
                         {{"supportedVersions", "1.0"}, {"requestedVersion", "0.3"}}));
  if (auto e = CheckVersion(version_header, v, m)) co_return fail(*e);
  if (extensions_)
    if (auto e = extensions_->CheckRequired(ctx)) co_return fail(*e);

  const json::value& params = rpc.params;
  const bool params_ok = op.params == ParamsRule::kUnchecked || params.is_object() ||
                         (op.params == ParamsRule::kObjectOrAbsent && params.is_null());
  if (!params_ok)
    co_return fail(
        Error(ErrorCode::kInvalidParams, "params: expected an object", {{"field", "params"}}));

  const OperationCall call{ctx, params, &request};
  if (rpc.notification) {  // checked like any request, then refused: A2A has no notifications
    if (op.check)
      if (auto e = op.check(call)) co_return fail(*e);
    co_return fail(Error(ErrorCode::kInvalidRequest,
                         "notifications (requests without \"id\") are not supported by A2A"));
  }
  auto result = co_await op.handler(call);
  if (!result) co_return fail(result.error());
  OperationResult& out = result.value();
  HttpResponse r;
  if (out.stream) {
    r = SseResponse(
        std::move(*out.stream),
        RpcStreamSpec(v, rpc.id, out.stream_closes_on_interrupt, stream_options_.heartbeat,
                      extensions_ ? extensions_->ViewFor(ctx) : nullptr));
  } else {
    if (extensions_)
      if (auto view = extensions_->ViewFor(ctx)) view(out.result_json);
    std::string body = "{\"jsonrpc\":\"2.0\",\"id\":";
    body.reserve(out.result_json.size() + 64);
    protocol::JsonTextWriter(body).Value(rpc.id);
    body.append(",\"result\":").append(out.result_json).append("}");
    r = JsonResponse(200, std::move(body));
  }
  for (auto& h : out.headers) r.headers.push_back(std::move(h));
  if (auto echo = ExtensionRegistry::EchoHeader(ctx)) r.headers.push_back(std::move(*echo));
  r.log_operation = m;
  r.log_task = out.task_id.empty() ? TaskIdOf(rpc.params) : out.task_id;
  co_return r;
}

}  // namespace a2ad::transport
