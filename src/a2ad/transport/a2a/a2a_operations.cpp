#include "a2ad/transport/a2a/a2a_operations.hpp"

#include <cctype>
#include <stdexcept>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/event_cursor.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v03/proto_json.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::WireVersion;

/// "1.0" -> 1, "0.3" -> 0 (major); -1 when malformed. Only Major.Minor is meaningful.
int A2aVersionMajor(std::string_view v, int& minor) {
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

bool IsJsonContentType(std::string_view ct) {
  if (ct.empty()) return true;  // lenient: curl without -H
  std::string lower(ct.substr(0, ct.find(';')));
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  while (!lower.empty() && lower.back() == ' ') lower.pop_back();
  return lower == "application/json" || lower == "application/a2a+json";
}

std::optional<Error> RequireV10(std::string_view version) {
  int minor = 0;
  if (version.empty() || A2aVersionMajor(version, minor) == 1) return std::nullopt;
  return Error(
      ErrorCode::kVersionNotSupported,
      "A2A-Version '" + std::string(version) + "' is not supported on this binding; it serves 1.0",
      {{"supportedVersions", "1.0"}, {"requestedVersion", std::string(version)}});
}

std::optional<Error> RequireV03(std::string_view version) {
  int minor = 0;
  if (version.empty() || (A2aVersionMajor(version, minor) == 0 && minor == 3)) return std::nullopt;
  return Error(ErrorCode::kVersionNotSupported,
               "A2A-Version '" + std::string(version) +
                   "' is not supported on this binding; it serves 0.3 (send no A2A-Version, or "
                   "0.3)",
               {{"supportedVersions", "0.3"}, {"requestedVersion", std::string(version)}});
}

namespace {

// A request naming a tenant (A2A 1.0's `tenant` field) is served only in the caller's own:
// the tenant comes from the credential (RFC 0152 §E), in every mode, the anonymous caller's
// being "default". Another tenant's name is refused as a permission error, never looked up.
std::optional<Error> ForeignTenant(const OperationCall& call) {
  if (!call.params.is_object()) return std::nullopt;
  const json::value* named = call.params.get_object().if_contains("tenant");
  if (!named || !named->is_string() || named->get_string().empty() ||
      named->get_string() == call.ctx.tenant())
    return std::nullopt;
  return Error(ErrorCode::kPermissionDenied,
               "tenant: the tenant comes from the credential; this caller may act only in "
               "its own tenant",
               {{"field", "tenant"}});
}

OperationHandler CheckingTenant(OperationHandler handler) {
  return [handler = std::move(handler)](
             const OperationCall& call) -> asio::awaitable<Result<OperationResult>> {
    if (auto refused = ForeignTenant(call)) co_return std::move(*refused);
    co_return co_await handler(call);
  };
}

}  // namespace

void OperationTable::Add(Operation op) {
  op.handler = CheckingTenant(std::move(op.handler));
  const size_t index = ops_.size();
  auto claim = [&](const std::string& name, WireVersion v) {
    if (name.empty()) return;
    if (!by_rpc_name_.emplace(name, std::make_pair(index, v)).second)
      throw std::logic_error("A2A operation name '" + name + "' registered twice");
  };
  claim(op.name, WireVersion::kV10);
  claim(op.v03_name, WireVersion::kV03);
  ops_.push_back(std::move(op));
}

void OperationTable::Replace(std::string_view name, ParamsRule params, OperationHandler handler) {
  for (auto& op : ops_)
    if (op.name == name) {
      op.params = params;
      op.handler = CheckingTenant(std::move(handler));
      return;
    }
  throw std::logic_error("no A2A operation '" + std::string(name) + "' to replace");
}

void OperationTable::SetCheck(std::string_view name,
                              std::function<std::optional<Error>(const OperationCall&)> check) {
  for (auto& op : ops_)
    if (op.name == name) {
      op.check = std::move(check);
      return;
    }
  throw std::logic_error("no A2A operation '" + std::string(name) + "' to check");
}

std::optional<OperationTable::Match> OperationTable::FindJsonRpc(std::string_view method) const {
  auto it = by_rpc_name_.find(method);
  if (it == by_rpc_name_.end()) return std::nullopt;
  return Match{&ops_[it->second.first], it->second.second};
}

const Operation* OperationTable::Find(std::string_view name) const {
  auto it = by_rpc_name_.find(name);
  if (it == by_rpc_name_.end() || it->second.second != WireVersion::kV10) return nullptr;
  return &ops_[it->second.first];
}

namespace {

/// A task result written straight as text (protocol/encode.hpp). SendMessage wraps it in
/// {"task": ...} (SendMessageResponse) in 1.0 and in the 0.3 proto; 0.3 JSON-RPC does not.
OperationResult TaskResult(const protocol::CallContext& ctx, protocol::Task task, bool is_send) {
  OperationResult r;
  r.task_id = task.id;
  if (WritesModel(ctx)) {
    r.task = std::make_shared<const protocol::Task>(std::move(task));
    return r;
  }
  const protocol::Wire wire = WireOf(ctx);
  std::string& out = r.result_json;
  const bool wrap = is_send && wire != protocol::Wire::kV03;
  out.reserve(protocol::EstimateTaskJsonSize(task) + 16);
  if (wrap) out += "{\"task\":";
  protocol::AppendTask(out, task, wire);
  if (wrap) out += "}";
  return r;
}

/// The params decoded by the decoder of the call's shape.
template <class T>
Result<T> DecodeAs(const OperationCall& call, Result<T> (*v03_rpc)(const json::value&),
                   Result<T> (*v03_proto)(const json::value&),
                   Result<T> (*v10)(const json::value&)) {
  switch (WireOf(call.ctx)) {
    case protocol::Wire::kV03:
      return v03_rpc(call.params);
    case protocol::Wire::kV03Proto:
      return v03_proto(call.params);
    case protocol::Wire::kV10:
      break;
  }
  return v10(call.params);
}

Result<protocol::SendMessageRequest> DecodeSend(const OperationCall& call) {
  return DecodeAs(call, protocol::v03::SendMessageRequestFromJson,
                  protocol::v03::proto_json::SendMessageRequestFromJson,
                  protocol::v10::SendMessageRequestFromJson);
}

/// The request's header `name`; "" when absent.
std::string_view HeaderOf(const OperationCall& call, std::string_view name) {
  return call.http ? call.http->Header(name) : std::string_view();
}

/// A2A 1.1 generation values (task_projection.hpp) where every client can put them: the
/// member `params.<path>` (the 1.1 field; 0.3 clients' params.metadata), else the header
/// (what the 1.x SDKs send as service parameters, gRPC metadata in lower case). A
/// non-negative integer, or its decimal text; else kInvalidParams naming where.
Result<std::optional<int64_t>> GenerationValue(const OperationCall& call,
                                               std::initializer_list<const char*> paths,
                                               std::string_view header) {
  auto found = [](Result<int64_t> c) -> Result<std::optional<int64_t>> {
    if (!c) return std::move(c).error();
    return std::optional<int64_t>(c.value());
  };
  if (call.params.is_object())
    for (const char* path : paths) {
      const json::value* v = &call.params;
      std::string field = "params";
      for (std::string_view rest = path; v && !rest.empty();) {
        const size_t dot = rest.find('.');
        const std::string_view key = rest.substr(0, dot);
        v = v->is_object() ? v->get_object().if_contains(key) : nullptr;
        field += "." + std::string(key);
        rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
      }
      if (v && !v->is_null()) return found(protocol::EventCursorFromJson(*v, field));
    }
  if (auto text = HeaderOf(call, header); !text.empty())
    return found(protocol::ParseEventCursor(text, header));
  return std::optional<int64_t>();
}

/// The client's cursor: the Last-Event-ID header, else params.metadata.lastEventId (log
/// sequences); else a generation: params.lastGeneration, params.metadata.lastGeneration or
/// the A2A-Last-Generation header.
Result<std::optional<tasks::StreamCursor>> Cursor(const OperationCall& call) {
  using Out = std::optional<tasks::StreamCursor>;
  auto cursor = [](Result<int64_t> c) -> Result<Out> {
    if (!c) return std::move(c).error();
    return Out(tasks::StreamCursor(c.value()));
  };
  if (auto last = HeaderOf(call, "Last-Event-ID"); !last.empty())
    return cursor(protocol::ParseEventCursor(last, "Last-Event-ID"));
  if (call.params.is_object())
    if (auto* md = call.params.get_object().if_contains("metadata"); md && md->is_object())
      if (auto* c = md->get_object().if_contains("lastEventId"))
        return cursor(protocol::EventCursorFromJson(*c, "params.metadata.lastEventId"));
  auto g =
      GenerationValue(call, {"lastGeneration", "metadata.lastGeneration"}, "A2A-Last-Generation");
  if (!g) return std::move(g).error();
  if (!g.value()) return Out();
  return Out(tasks::StreamCursor::Generation(*g.value()));
}

// Each handler is a coroutine function whose parameters live in its frame (a lambda that is
// itself a coroutine would read its captures through the std::function holding it).
using Awaitable = asio::awaitable<Result<OperationResult>>;

Awaitable Refuse(Error e) { co_return e; }

/// A Message as SendMessage's result: {"message": ...} in 1.0 and the 0.3 proto, the bare
/// message in 0.3 JSON-RPC.
OperationResult MessageResult(const protocol::CallContext& ctx, protocol::Message m) {
  OperationResult r;
  if (WritesModel(ctx)) {
    r.message = std::make_shared<const protocol::Message>(std::move(m));
    return r;
  }
  const protocol::Wire wire = WireOf(ctx);
  const bool wrap = wire != protocol::Wire::kV03;
  if (wrap) r.result_json = "{\"message\":";
  protocol::AppendMessage(r.result_json, m, wire);
  if (wrap) r.result_json += "}";
  return r;
}

/// A stream of one Message, which ends it (the direct reply of a streaming send).
tasks::StreamStart MessageStream(protocol::Message m) {
  auto item = std::make_shared<tasks::StreamItem>();
  item->sequence = 0;
  item->event.kind = protocol::StreamEvent::Kind::kMessage;
  item->event.message = std::move(m);
  item->terminal = true;
  tasks::StreamStart start;
  start.backlog.push_back(std::move(item));
  start.last_sequence = 0;
  start.task_terminal = true;
  return start;
}

/// SendMessage's request with A2A 1.1's ifGenerationMatch wherever the client put it.
Result<protocol::SendMessageRequest> DecodeSendRequest(const OperationCall& call) {
  auto req = DecodeSend(call);
  if (!req) return req;
  auto match =
      GenerationValue(call, {"configuration.ifGenerationMatch", "metadata.ifGenerationMatch"},
                      "A2A-If-Generation-Match");
  if (!match) return std::move(match).error();
  req->configuration.if_generation_match = match.value();
  return req;
}

Awaitable Send(tasks::TaskService* svc, const OperationCall& call) {
  auto req = DecodeSendRequest(call);
  if (!req) co_return std::move(req).error();
  if (auto reply = svc->DirectReply(*req)) co_return MessageResult(call.ctx, std::move(*reply));
  auto task = co_await svc->SendMessage(call.ctx, std::move(req).value());
  if (!task) co_return std::move(task).error();
  co_return TaskResult(call.ctx, std::move(task).value(), true);
}

Awaitable SendStreaming(tasks::TaskService* svc, size_t queue_limit, const OperationCall& call) {
  auto req = DecodeSendRequest(call);
  if (!req) co_return std::move(req).error();
  if (auto reply = svc->DirectReply(*req)) {
    OperationResult r;
    r.stream = MessageStream(std::move(*reply));
    co_return r;
  }
  auto start = co_await svc->SendStreamingMessage(call.ctx, std::move(req).value(), queue_limit);
  if (!start) co_return std::move(start).error();
  OperationResult r;
  r.stream = std::move(start).value();
  r.stream_closes_on_interrupt = true;
  co_return r;
}

Result<protocol::GetTaskRequest> DecodeGet(const OperationCall& call) {
  return DecodeAs(call, protocol::v03::GetTaskRequestFromJson,
                  protocol::v03::proto_json::GetTaskRequestFromJson,
                  protocol::v10::GetTaskRequestFromJson);
}

Result<protocol::CancelTaskRequest> DecodeCancel(const OperationCall& call) {
  return DecodeAs(call, protocol::v03::CancelTaskRequestFromJson,
                  protocol::v03::proto_json::CancelTaskRequestFromJson,
                  protocol::v10::CancelTaskRequestFromJson);
}

Awaitable Get(tasks::TaskService* svc, const OperationCall& call) {
  auto req = DecodeGet(call);
  if (!req) co_return std::move(req).error();
  auto seen = GenerationValue(call, {"currentGeneration", "metadata.currentGeneration"},
                              "A2A-Current-Generation");
  if (!seen) co_return std::move(seen).error();
  req->current_generation = seen.value();
  auto task = co_await svc->GetTask(call.ctx, std::move(req).value());
  if (!task) co_return std::move(task).error();
  co_return TaskResult(call.ctx, std::move(task).value(), false);
}

Awaitable List(tasks::TaskService* svc, const OperationCall& call) {
  auto req = protocol::v10::ListTasksRequestFromJson(call.params);
  if (!req) co_return std::move(req).error();
  auto page = co_await svc->ListTasks(call.ctx, std::move(req).value());
  if (!page) co_return std::move(page).error();
  OperationResult r;
  r.result_json = protocol::SerializeJson(protocol::v10::ListTasksResponseToJson(*page));
  if (!page->unreadable.empty())
    r.headers.emplace_back(kSkippedUnreadableHeader, std::to_string(page->unreadable.size()));
  co_return r;
}

Awaitable Cancel(tasks::TaskService* svc, const OperationCall& call) {
  auto req = DecodeCancel(call);
  if (!req) co_return std::move(req).error();
  auto task = co_await svc->CancelTask(call.ctx, std::move(req).value());
  if (!task) co_return std::move(task).error();
  co_return TaskResult(call.ctx, std::move(task).value(), false);
}

Awaitable Subscribe(tasks::TaskService* svc, size_t queue_limit, const OperationCall& call) {
  auto task_id = WireOf(call.ctx) == protocol::Wire::kV03Proto
                     ? protocol::v03::proto_json::TaskSubscriptionFromJson(call.params)
                     : protocol::ReqString(call.params.get_object(), "params", "id");
  if (!task_id) co_return std::move(task_id).error();
  auto cursor = Cursor(call);
  if (!cursor) co_return std::move(cursor).error();
  auto start = co_await svc->Subscribe(call.ctx, task_id.value(), cursor.value(), queue_limit);
  if (!start) co_return std::move(start).error();
  if (call.ctx.version == WireVersion::kV10 && start->task_terminal && !cursor.value())
    co_return Error(ErrorCode::kUnsupportedOperation,
                    "task " + task_id.value() +
                        " is in a terminal state; SubscribeToTask follows live tasks (use "
                        "GetTask, or send Last-Event-ID to replay what you missed)",
                    {{"taskId", task_id.value()}});
  OperationResult r;
  r.stream = std::move(start).value();
  co_return r;
}

/// The method's name as the caller's wire version spells it.
std::string NameFor(const OperationCall& call, const char* v10, const char* v03) {
  return call.ctx.version == WireVersion::kV03 ? v03 : v10;
}

// Why the extended card is not served: to the anonymous development caller, there is none
// (A2A serves it to authenticated callers only); to anyone else, not yet.
Error NotConfigured(const OperationCall& c) {
  if (!c.ctx.principal.authenticated)
    return Error(ErrorCode::kUnsupportedOperation,
                 NameFor(c, "GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard") +
                     ": the extended agent card is served to authenticated callers only, and "
                     "this server has no credential configured (development mode)");
  return Error(ErrorCode::kExtendedCardNotConfigured,
               NameFor(c, "GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard") +
                   ": the extended agent card is not configured yet (the server is starting)");
}

}  // namespace

/// The `check` of an operation whose params one decoder reads.
template <class Decode>
std::function<std::optional<Error>(const OperationCall&)> CheckWith(Decode decode) {
  return [decode](const OperationCall& call) -> std::optional<Error> {
    auto r = decode(call);
    if (!r) return std::move(r).error();
    return std::nullopt;
  };
}

OperationTable CoreA2aOperations(tasks::TaskService& service, size_t queue_limit) {
  tasks::TaskService* svc = &service;
  OperationTable t;
  t.Add({"SendMessage", "message/send", "POST", "/message:send", "/v1/message:send", false,
         kScopeTasksWrite, "", ParamsRule::kObject,
         [svc](const OperationCall& c) { return Send(svc, c); }});
  t.Add(
      {"SendStreamingMessage", "message/stream", "POST", "/message:stream", "/v1/message:stream",
       true, kScopeTasksWrite, "", ParamsRule::kObject,
       [svc, queue_limit](const OperationCall& c) { return SendStreaming(svc, queue_limit, c); }});
  t.Add({"GetTask", "tasks/get", "GET", "/tasks/{id}", "/v1/{name=tasks/*}", false, kScopeTasksRead,
         "", ParamsRule::kObject, [svc](const OperationCall& c) { return Get(svc, c); }});
  t.Add({"ListTasks", "", "GET", "/tasks", "", false, kScopeTasksRead, "",
         ParamsRule::kObjectOrAbsent, [svc](const OperationCall& c) { return List(svc, c); }});
  t.Add({"CancelTask", "tasks/cancel", "POST", "/tasks/{id}:cancel", "/v1/{name=tasks/*}:cancel",
         false, kScopeTasksWrite, "", ParamsRule::kObject,
         [svc](const OperationCall& c) { return Cancel(svc, c); }});
  t.Add({"SubscribeToTask", "tasks/resubscribe", "POST", "/tasks/{id}:subscribe",
         "/v1/{name=tasks/*}:subscribe", true, kScopeTasksRead, "", ParamsRule::kObject,
         [svc, queue_limit](const OperationCall& c) { return Subscribe(svc, queue_limit, c); }});

  // Push configs: refused until AddPushOperations (push_operations.cpp) serves them.
  struct PushOp {
    const char* name;
    const char* v03_name;
    const char* method;
    const char* path;
    const char* v03_path;
  };
  for (const PushOp& p : {
           PushOp{"CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/set", "POST",
                  "/tasks/{id}/pushNotificationConfigs",
                  "/v1/{parent=tasks/*}/pushNotificationConfigs"},
           PushOp{"GetTaskPushNotificationConfig", "tasks/pushNotificationConfig/get", "GET",
                  "/tasks/{id}/pushNotificationConfigs/{configId}",
                  "/v1/{name=tasks/*/pushNotificationConfigs/*}"},
           PushOp{"ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/list", "GET",
                  "/tasks/{id}/pushNotificationConfigs",
                  "/v1/{parent=tasks/*}/pushNotificationConfigs"},
           PushOp{"DeleteTaskPushNotificationConfig", "tasks/pushNotificationConfig/delete",
                  "DELETE", "/tasks/{id}/pushNotificationConfigs/{configId}",
                  "/v1/{name=tasks/*/pushNotificationConfigs/*}"},
       })
    t.Add({p.name, p.v03_name, p.method, p.path, p.v03_path, false, kScopePushManage, "",
           ParamsRule::kUnchecked, [p](const OperationCall& c) {
             return Refuse(Error(ErrorCode::kPushNotificationNotSupported,
                                 NameFor(c, p.name, p.v03_name) +
                                     ": push notifications are not enabled on this server"));
           }});

  // 0.3's GET /v1/card and gRPC GetAgentCard are its extended card too (the public card is at
  // the well-known path), as its SDK servers serve them.
  t.Add({"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard", "GET", "/extendedAgentCard",
         "/v1/card", false, "", "", ParamsRule::kUnchecked,
         [](const OperationCall& c) { return Refuse(NotConfigured(c)); }});
  // What a notification of each is checked for (the decoders the handlers use).
  auto send_check = CheckWith(DecodeSend);
  for (auto [name, check] :
       {std::pair{"SendMessage", send_check}, std::pair{"SendStreamingMessage", send_check},
        std::pair{"GetTask", CheckWith(DecodeGet)},
        std::pair{"CancelTask", CheckWith(DecodeCancel)},
        std::pair{"ListTasks", CheckWith([](const OperationCall& c) {
                    return protocol::v10::ListTasksRequestFromJson(c.params);
                  })}})
    t.SetCheck(name, std::move(check));
  return t;
}

void DisableStreaming(OperationTable& table) {
  for (const char* name : {"SendStreamingMessage", "SubscribeToTask"})
    table.Replace(name, ParamsRule::kUnchecked, [name](const OperationCall& c) {
      return Refuse(Error(ErrorCode::kUnsupportedOperation,
                          NameFor(c, name,
                                  std::string_view(name) == "SendStreamingMessage"
                                      ? "message/stream"
                                      : "tasks/resubscribe") +
                              ": this agent does not stream (capabilities.streaming is false); "
                              "send without streaming and follow the task with GetTask"));
    });
}

void ExtendedCard::Set(const boost::json::object& v03, const boost::json::object& v10) {
  // The 0.3 proto reads the schemes in their oneof wrappers (the same as 1.0's) and each
  // requirement as {"schemes": {name: {"list": scopes}}}.
  boost::json::object proto03 = v03;
  if (const auto* schemes = v10.if_contains("securitySchemes")) proto03["securitySchemes"] = *schemes;
  if (const auto* security = v03.if_contains("security"); security && security->is_array()) {
    boost::json::array requirements;
    for (const auto& any_of : security->get_array()) {
      boost::json::object schemes;
      if (any_of.is_object())
        for (const auto& [name, scopes] : any_of.get_object())
          schemes[name] = boost::json::object{{"list", scopes}};
      requirements.push_back(boost::json::object{{"schemes", std::move(schemes)}});
    }
    proto03["security"] = std::move(requirements);
  }
  proto03.erase("signatures");  // signed as the 0.3 JSON card, which this is not
  std::lock_guard lock(mu_);
  v03_ = protocol::SerializeJson(v03);
  proto03_ = protocol::SerializeJson(proto03);
  v10_ = protocol::SerializeJson(v10);
}

std::string ExtendedCard::Body(protocol::Wire shape) const {
  std::lock_guard lock(mu_);
  switch (shape) {
    case protocol::Wire::kV10:
      return v10_;
    case protocol::Wire::kV03:
      return v03_;
    case protocol::Wire::kV03Proto:
      return proto03_;
  }
  return v10_;
}

void ServeExtendedCard(OperationTable& table, std::shared_ptr<const ExtendedCard> card) {
  table.Replace("GetExtendedAgentCard", ParamsRule::kUnchecked,
                [card = std::move(card)](
                    const OperationCall& c) -> boost::asio::awaitable<Result<OperationResult>> {
                  if (!c.ctx.principal.authenticated) co_return NotConfigured(c);
                  std::string body = card->Body(WireOf(c.ctx));
                  if (body.empty()) co_return NotConfigured(c);
                  OperationResult r;
                  r.result_json = std::move(body);
                  co_return r;
                });
}

}  // namespace a2ad::transport
