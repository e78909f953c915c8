#include "a2ad/transport/jsonrpc_handler.hpp"

#include "a2ad/protocol/event_cursor.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/jsonrpc.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/push_rpc.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::WireVersion;

namespace {

HttpResponse Reply(const json::object& envelope) {
  return JsonResponse(200, protocol::SerializeJson(envelope));
}

/// "1.0" -> 1, "0.3" -> 0 (major); -1 when malformed. Only Major.Minor is meaningful.
int VersionMajor(std::string_view v, int& minor) {
  auto dot = v.find('.');
  std::string_view maj = v.substr(0, dot);
  std::string_view min = dot == std::string_view::npos ? "0" : v.substr(dot + 1);
  auto num = [](std::string_view s) {
    if (s.empty() || s.size() > 4) return -1;
    int n = 0;
    for (char ch : s) {
      if (ch < '0' || ch > '9') return -1;
      n = n * 10 + (ch - '0');
    }
    return n;
  };
  minor = num(min);
  return minor < 0 ? -1 : num(maj);
}

std::optional<Error> CheckVersion(std::string_view header, WireVersion method_version,
                                  std::string_view method) {
  std::string requested = header.empty() ? "0.3" : std::string(header);
  int minor = 0;
  int major = VersionMajor(requested, minor);
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

bool IsJsonContentType(std::string_view ct) {
  if (ct.empty()) return true;  // lenient: curl without -H
  std::string lower(ct.substr(0, ct.find(';')));
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  while (!lower.empty() && lower.back() == ' ') lower.pop_back();
  return lower == "application/json" || lower == "application/a2a+json";
}

/// The client's cursor: the Last-Event-ID header, else params.metadata.lastEventId.
Result<std::optional<int64_t>> Cursor(const HttpRequest& request, const json::value& params) {
  auto cursor = [](Result<int64_t> c) -> Result<std::optional<int64_t>> {
    if (!c) return std::move(c).error();
    return std::optional<int64_t>(c.value());
  };
  std::string_view header = request.Header("Last-Event-ID");
  if (!header.empty()) return cursor(protocol::ParseEventCursor(header, "Last-Event-ID"));
  if (params.is_object())
    if (auto* md = params.get_object().if_contains("metadata"); md && md->is_object())
      if (auto* c = md->get_object().if_contains("lastEventId"))
        return cursor(protocol::EventCursorFromJson(*c, "params.metadata.lastEventId"));
  return std::optional<int64_t>();
}

struct StreamPlan {
  tasks::StreamStart start;
  WireVersion version;
  json::value rpc_id;
  bool close_on_interrupt;  // message/stream: a cycle ends at input-required
};

constexpr size_t kMaxCoalescedBytes = 256 * 1024;

asio::awaitable<void> Pump(SseSink& sink, StreamPlan plan, StreamOptions opts) {
  auto sub = plan.start.subscription;
  auto stopping = std::make_shared<bool>(false);
  sink.OnClientGone([sub] { sub->Close(); });
  sink.OnServerStopping([sub, stopping] {
    *stopping = true;
    sub->Close();
  });
  const std::string id_json = protocol::SerializeJson(plan.rpc_id);
  auto closes = [&](const tasks::StreamItem& item) {
    return item.terminal || (item.interrupted && plan.close_on_interrupt);
  };
  auto frame = [&](const tasks::StreamItem& item) {
    int kind = 0;
    if (plan.version == WireVersion::kV03)
      kind =
          (item.event.kind == protocol::StreamEvent::Kind::kStatusUpdate && !closes(item)) ? 2 : 1;
    std::string out;
    const std::string& result = item.Json(kind);
    out.reserve(result.size() + id_json.size() + 64);
    out.append("id: ").append(std::to_string(item.sequence));
    out.append("\ndata: {\"jsonrpc\":\"2.0\",\"id\":").append(id_json);
    out.append(",\"result\":").append(result).append("}\n\n");
    return out;
  };
  int64_t last = -1;
  for (const auto& item : plan.start.backlog) {
    if (!co_await sink.Write(frame(*item))) co_return;
    last = std::max(last, item->sequence);
    if (closes(*item)) co_return;
  }
  if (plan.start.task_terminal) co_return;
  last = std::max(last, plan.start.last_sequence);
  for (;;) {
    tasks::StreamItemPtr item = co_await sub->Next(opts.heartbeat);
    if (!item) {
      if (sub->closed()) {
        if (*stopping) {
          Error e(
              ErrorCode::kUnavailable,
              "server is shutting down; resubscribe with Last-Event-ID: " + std::to_string(last),
              {{"lastEventId", std::to_string(last)}});
          co_await sink.Write(
              "event: error\ndata: " + JsonRpcErrorText(plan.rpc_id, e, plan.version) + "\n\n");
        } else if (sub->overflowed()) {
          Error e(ErrorCode::kUnavailable,
                  "stream closed: this client fell more than " + std::to_string(sub->capacity()) +
                      " events behind; resubscribe with Last-Event-ID: " + std::to_string(last),
                  {{"lastEventId", std::to_string(last)}});
          co_await sink.Write(
              "event: error\ndata: " + JsonRpcErrorText(plan.rpc_id, e, plan.version) + "\n\n");
        }
        co_return;
      }
      if (!co_await sink.Write(": keep-alive\n\n")) co_return;
      continue;
    }
    if (item->sequence <= last) continue;  // already sent from the backlog
    if (!item->a2a) {                      // a log entry with no A2A projection (node.started, ...)
      last = item->sequence;
      continue;
    }
    // Coalesce what is already queued into one write: a stream that fell behind catches up
    // with few syscalls.
    last = item->sequence;
    std::string batch = frame(*item);
    bool end = closes(*item);
    while (!end && batch.size() < kMaxCoalescedBytes) {
      tasks::StreamItemPtr more = sub->TryNext();
      if (!more) break;
      if (more->sequence <= last) continue;
      last = more->sequence;
      if (!more->a2a) continue;
      batch += frame(*more);
      end = closes(*more);
    }
    if (!co_await sink.Write(std::move(batch))) co_return;
    if (end) co_return;
  }
}

HttpResponse StreamResponse(StreamPlan plan, StreamOptions opts) {
  HttpResponse r;
  r.content_type = "text/event-stream";
  auto shared = std::make_shared<StreamPlan>(std::move(plan));
  r.stream = [shared, opts](SseSink& sink) { return Pump(sink, std::move(*shared), opts); };
  return r;
}

}  // namespace

asio::awaitable<HttpResponse> JsonRpcHandler::Handle(HttpRequest request) {
  const std::string_view version_header =
      request.Header("A2A-Version").empty() ? std::string_view() : request.Header("A2A-Version");
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
  const WireVersion v = protocol::MethodVersion(m);
  // Who calls: the anonymous caller until the auth layer fills it in.
  const auto ctx = protocol::CallContext::Anonymous(protocol::Binding::kJsonRpc, v);
  auto fail = [&](const Error& e) { return JsonRpcErrorResponse(rpc.id, e, v); };
  auto ok = [&](json::value result) {
    return Reply(protocol::MakeJsonRpcResult(rpc.id, std::move(result)));
  };
  // A task result written straight as text (protocol::v*::AppendTaskJson), the same bytes as
  // ok(TaskToJson(task)) without building the DOM. v1.0 SendMessage wraps it in {"task": ...}.
  auto ok_task = [&](const protocol::Task& task, bool wrap) {
    std::string body = "{\"jsonrpc\":\"2.0\",\"id\":";
    body.reserve(protocol::EstimateTaskJsonSize(task) + 64);
    protocol::JsonTextWriter(body).Value(rpc.id);
    body += wrap ? ",\"result\":{\"task\":" : ",\"result\":";
    if (v == WireVersion::kV03)
      protocol::v03::AppendTaskJson(body, task);
    else
      protocol::v10::AppendTaskJson(body, task);
    body += wrap ? "}}" : "}";
    return JsonResponse(200, std::move(body));
  };

  static const char* const kKnown[] = {"message/send",
                                       "message/stream",
                                       "tasks/get",
                                       "tasks/cancel",
                                       "tasks/resubscribe",
                                       "tasks/pushNotificationConfig/set",
                                       "tasks/pushNotificationConfig/get",
                                       "tasks/pushNotificationConfig/list",
                                       "tasks/pushNotificationConfig/delete",
                                       "agent/getAuthenticatedExtendedCard",
                                       "SendMessage",
                                       "SendStreamingMessage",
                                       "GetTask",
                                       "ListTasks",
                                       "CancelTask",
                                       "SubscribeToTask",
                                       "CreateTaskPushNotificationConfig",
                                       "GetTaskPushNotificationConfig",
                                       "ListTaskPushNotificationConfigs",
                                       "DeleteTaskPushNotificationConfig",
                                       "GetExtendedAgentCard"};
  if (std::find(std::begin(kKnown), std::end(kKnown), m) == std::end(kKnown))
    co_return fail(
        Error(ErrorCode::kMethodNotFound, "Method not found: '" + m + "'", {{"method", m}}));
  if (auto e = CheckVersion(version_header, v, m)) co_return fail(*e);

  const json::value& params = rpc.params;
  auto need_params = [&]() -> std::optional<Error> {
    if (params.is_object()) return std::nullopt;
    return Error(ErrorCode::kInvalidParams, "params: expected an object", {{"field", "params"}});
  };

  if (m == "message/send" || m == "SendMessage") {
    if (auto e = need_params()) co_return fail(*e);
    auto req = v == WireVersion::kV03 ? protocol::v03::SendMessageRequestFromJson(params)
                                      : protocol::v10::SendMessageRequestFromJson(params);
    if (!req) co_return fail(req.error());
    auto task = co_await service_.SendMessage(ctx, std::move(req).value());
    if (!task) co_return fail(task.error());
    co_return ok_task(task.value(), v == WireVersion::kV10);
  }
  if (m == "tasks/get" || m == "GetTask") {
    if (auto e = need_params()) co_return fail(*e);
    auto req = v == WireVersion::kV03 ? protocol::v03::GetTaskRequestFromJson(params)
                                      : protocol::v10::GetTaskRequestFromJson(params);
    if (!req) co_return fail(req.error());
    auto task = co_await service_.GetTask(ctx, std::move(req).value());
    if (!task) co_return fail(task.error());
    co_return ok_task(task.value(), false);
  }
  if (m == "tasks/cancel" || m == "CancelTask") {
    if (auto e = need_params()) co_return fail(*e);
    auto req = v == WireVersion::kV03 ? protocol::v03::CancelTaskRequestFromJson(params)
                                      : protocol::v10::CancelTaskRequestFromJson(params);
    if (!req) co_return fail(req.error());
    auto task = co_await service_.CancelTask(ctx, std::move(req).value());
    if (!task) co_return fail(task.error());
    co_return ok_task(task.value(), false);
  }
  if (m == "ListTasks") {
    if (!params.is_null() && !params.is_object())
      co_return fail(
          Error(ErrorCode::kInvalidParams, "params: expected an object", {{"field", "params"}}));
    auto req = protocol::v10::ListTasksRequestFromJson(params);
    if (!req) co_return fail(req.error());
    auto page = co_await service_.ListTasks(ctx, std::move(req).value());
    if (!page) co_return fail(page.error());
    auto answer = ok(protocol::v10::ListTasksResponseToJson(page.value()));
    if (!page->unreadable.empty())
      answer.headers.emplace_back(kSkippedUnreadableHeader,
                                  std::to_string(page->unreadable.size()));
    co_return answer;
  }
  if (m == "message/stream" || m == "SendStreamingMessage") {
    if (auto e = need_params()) co_return fail(*e);
    auto req = v == WireVersion::kV03 ? protocol::v03::SendMessageRequestFromJson(params)
                                      : protocol::v10::SendMessageRequestFromJson(params);
    if (!req) co_return fail(req.error());
    auto start = co_await service_.SendStreamingMessage(ctx, std::move(req).value(),
                                                        stream_options_.queue_limit);
    if (!start) co_return fail(start.error());
    co_return StreamResponse({std::move(start).value(), v, rpc.id, true}, stream_options_);
  }
  if (m == "tasks/resubscribe" || m == "SubscribeToTask") {
    if (auto e = need_params()) co_return fail(*e);
    auto task_id = protocol::ReqString(params.get_object(), "params", "id");
    if (!task_id) co_return fail(task_id.error());
    auto cursor = Cursor(request, params);
    if (!cursor) co_return fail(cursor.error());
    auto start = co_await service_.Subscribe(ctx, task_id.value(), cursor.value(),
                                             stream_options_.queue_limit);
    if (!start) co_return fail(start.error());
    if (v == WireVersion::kV10 && start->task_terminal && !cursor.value())
      co_return fail(Error(ErrorCode::kUnsupportedOperation,
                           "task " + task_id.value() +
                               " is in a terminal state; SubscribeToTask follows live tasks (use "
                               "GetTask, or send Last-Event-ID to replay what you missed)",
                           {{"taskId", task_id.value()}}));
    co_return StreamResponse({std::move(start).value(), v, rpc.id, false}, stream_options_);
  }
  if (m.find("ushNotificationConfig") != std::string::npos)
    co_return co_await HandlePushConfigRpc(push_, rpc, v);  // push_rpc.cpp
  // agent/getAuthenticatedExtendedCard, GetExtendedAgentCard
  co_return fail(Error(
      ErrorCode::kUnsupportedOperation,
      m + ": this agent has no extended agent card (capabilities.extendedAgentCard is false)"));
}

}  // namespace a2ad::transport
