#include "a2ad/client/a2a_client.hpp"

#include <atomic>

#include "a2ad/client/sse_reader.hpp"
#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::client {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using protocol::ObjOr;
using protocol::Str;

namespace {

std::string_view Method03(std::string_view m10) {
  if (m10 == "SendMessage") return "message/send";
  if (m10 == "GetTask") return "tasks/get";
  if (m10 == "SendStreamingMessage") return "message/stream";
  if (m10 == "SubscribeToTask") return "tasks/resubscribe";
  if (m10 == "CancelTask") return "tasks/cancel";
  if (m10 == "ListTasks") return "tasks/list";
  if (m10 == "CreateTaskPushNotificationConfig") return "tasks/pushNotificationConfig/set";
  if (m10 == "ListTaskPushNotificationConfigs") return "tasks/pushNotificationConfig/list";
  if (m10 == "DeleteTaskPushNotificationConfig") return "tasks/pushNotificationConfig/delete";
  if (m10 == "PauseTask") return "tasks/pause";  // the pause extension (a2ad's)
  if (m10 == "ResumeTask") return "tasks/resume";
  return m10;
}

Error WithAttempts(Error e, int attempts) {
  e.details.emplace_back("attempts", std::to_string(attempts));
  return e;
}

protocol::Message ToMessage(const json::object& m) {
  protocol::Message out;
  out.message_id = Str(m, "messageId");
  out.task_id = Str(m, "taskId");
  out.context_id = Str(m, "contextId");
  out.role = Str(m, "role") == "agent" ? protocol::Role::kAgent : protocol::Role::kUser;
  if (const json::value* parts = m.if_contains("parts"); parts && parts->is_array())
    for (const auto& p : parts->get_array()) {
      if (!p.is_object()) continue;
      if (const json::value* t = p.get_object().if_contains("text"); t && t->is_string())
        out.parts.push_back(protocol::Part::Text(std::string(t->get_string())));
      else if (const json::value* d = p.get_object().if_contains("data"))
        out.parts.push_back(protocol::Part::Data(*d));
    }
  if (const json::value* md = m.if_contains("metadata"); md && md->is_object())
    out.metadata = md->get_object();
  return out;
}

net::HttpRequest Request(std::string method, std::string url, const CallOptions& o) {
  net::HttpRequest r;
  r.method = std::move(method);
  r.url = std::move(url);
  r.headers = o.headers;
  r.total_timeout = o.timeout;
  // Every call may reach the peer twice: retry.hpp sends it again after a transport error
  // anyway (a message is one by its messageId; the rest read or cancel).
  r.replayable = true;
  return r;
}

std::atomic<int64_t> next_id{1};

// SendMessage's params: the message in the peer's version.
json::object SendParams(const PeerCard& peer, const json::object& message, bool streaming = false,
                        json::object push = {}) {
  const protocol::Message m = ToMessage(message);
  json::object p;
  json::object config;
  // Non-blocking: the node follows the task itself (and is logged as soon as it exists).
  if (peer.version == "1.0") {
    p["message"] = protocol::MessageToJson(m);
    if (!streaming) config["returnImmediately"] = true;
  } else {
    p["message"] = protocol::MessageToJson(m, protocol::Wire::kV03);
    if (!streaming) config["blocking"] = false;
  }
  if (!push.empty())
    config[peer.version == "1.0" ? "taskPushNotificationConfig" : "pushNotificationConfig"] =
        std::move(push);
  p["configuration"] = std::move(config);
  return p;
}

// The JSON-RPC error object of an answer as an Error (the peer's code and message kept).
Error PeerRefused(std::string_view method10, const json::object& e) {
  const json::value* code = e.if_contains("code");
  std::string message(Str(e, "message"));
  if (message.size() > 200) message.resize(200);
  return Error(
      ErrorCode::kInvalidAgentResponse,
      "the peer refused " + std::string(method10) + " (JSON-RPC error " +
          (code ? protocol::SerializeJson(*code) : std::string("?")) + ")",
      {{"peerCode", code ? protocol::SerializeJson(*code) : ""}, {"peerMessage", message}});
}

json::object JsonRpcEnvelope(const PeerCard& peer, std::string_view method10, json::object params);

bool IsRest(const PeerCard& peer) { return peer.binding == "HTTP+JSON"; }
bool IsGrpc(const PeerCard& peer) { return peer.binding == "GRPC"; }

Error NoGrpc(const PeerCard& peer) {
  return Error(ErrorCode::kUnsupportedOperation,
               "the peer '" + peer.name + "' is reached over gRPC, which this client does not speak");
}

// A task id as one path segment (RFC 3986 unreserved characters kept, the rest %XX).
std::string PathSegment(std::string_view id) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : id) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// The request of a call over a 1.0 REST interface (WIRE.md §5.3): the method's verb and path
// under the interface URL, and its body (the JSON-RPC params, which are the request
// message); kUnsupportedOperation for a method a2ad does not call over REST.
core::Result<net::HttpRequest> RestRequest(const PeerCard& peer, std::string_view method10,
                                           const json::object& params, const CallOptions& o) {
  std::string base = peer.url;
  while (base.ends_with("/")) base.pop_back();
  const std::string task = "/tasks/" + PathSegment(Str(params, "id"));
  net::HttpRequest r = Request("POST", "", o);
  if (method10 == "SendMessage") {
    r.url = base + "/message:send";
  } else if (method10 == "SendStreamingMessage") {
    r.url = base + "/message:stream";
  } else if (method10 == "GetTask") {
    r.method = "GET";
    r.url = base + task + "?historyLength=0";
  } else if (method10 == "CancelTask") {
    r.url = base + task + ":cancel";
  } else if (method10 == "SubscribeToTask") {
    r.url = base + task + ":subscribe";
  } else {
    return Error(ErrorCode::kUnsupportedOperation,
                 "a2ad does not call " + std::string(method10) + " over REST");
  }
  if (r.method == "POST") {
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = protocol::SerializeJson(params);
  }
  r.headers.emplace_back("A2A-Version", "1.0");
  return r;
}

// A REST error answer (google.rpc.Status: {error: {code, status, message}}) as the peer's
// refusal, like PeerRefused; nullopt when the body is not one.
std::optional<Error> RestRefused(std::string_view method10, const json::value& body) {
  if (!body.is_object()) return std::nullopt;
  const json::value* e = body.get_object().if_contains("error");
  if (!e || !e->is_object()) return std::nullopt;
  std::string message(Str(e->get_object(), "message"));
  if (message.size() > 200) message.resize(200);
  std::string status(Str(e->get_object(), "status"));
  if (status.empty()) status = "?";
  return Error(ErrorCode::kInvalidAgentResponse,
               "the peer refused " + std::string(method10) + " (" + status + ")",
               {{"peerCode", status}, {"peerMessage", message}});
}

// Built outside the coroutines (GCC 12 mis-compiles braced json initializers inside them).
json::object IdParams(const std::string& id) {
  json::object p;
  p["id"] = id;
  return p;
}

// The origin of a URL ("https://host:port"), "" when it does not parse.
std::string OriginOf(std::string_view url) {
  net::EgressPolicy any;
  any.allow_http = true;
  auto u = net::ParseUrl(url, any);
  if (!u) return {};
  return u.value().scheme + "://" + u.value().HostHeader() + ":" + std::to_string(u.value().port);
}

// Where a card's first signature says its key is: {jku, kid}; "" members when absent.
std::pair<std::string, std::string> KeyRefOf(const json::object& card) {
  const json::value* sigs = card.if_contains("signatures");
  if (!sigs || !sigs->is_array() || sigs->get_array().empty() || !sigs->get_array()[0].is_object())
    return {};
  auto header = core::Base64UrlDecode(Str(sigs->get_array()[0].get_object(), "protected"));
  if (!header) return {};
  auto parsed = protocol::ParseJson(*header);
  if (!parsed || !parsed.value().is_object()) return {};
  return {std::string(Str(parsed.value().get_object(), "jku")),
          std::string(Str(parsed.value().get_object(), "kid"))};
}

json::object JsonRpcEnvelope(const PeerCard& peer, std::string_view method10, json::object params) {
  json::object envelope;
  envelope["jsonrpc"] = "2.0";
  envelope["id"] = next_id.fetch_add(1);
  envelope["method"] = peer.version == "1.0" ? method10 : Method03(method10);
  envelope["params"] = std::move(params);
  return envelope;
}

}  // namespace

json::object NormalizeStreamEvent(const json::value& result) {
  json::object out;
  out["kind"] = "unknown";
  if (!result.is_object()) return out;
  const json::object& r = result.get_object();
  // 1.0: a StreamResponse {task | message | statusUpdate | artifactUpdate};
  // 0.3: the object itself, with kind task | message | status-update | artifact-update.
  const json::object* body = &r;
  std::string_view kind = Str(r, "kind");
  for (const char* k : {"task", "message", "statusUpdate", "artifactUpdate"})
    if (const json::value* v = r.if_contains(k); v && v->is_object()) {
      body = &v->get_object();
      kind = k;
      break;
    }
  if (kind == "task") {
    out["kind"] = "task";
    out["task"] = NormalizeTask(*body);
  } else if (kind == "message") {
    out["kind"] = "message";
    out["message"] = NormalizeMessage(*body);
  } else if (kind == "statusUpdate" || kind == "status-update") {
    json::object as_task;
    as_task["id"] = Str(*body, "taskId");
    as_task["status"] = ObjOr(*body, "status");
    json::object t = NormalizeTask(as_task);
    out["kind"] = "status";
    out["taskId"] = Str(*body, "taskId");
    out["state"] = Str(t, "state");
    out["status"] = t["status"];
    const json::value* fin = body->if_contains("final");
    out["final"] = (fin && fin->is_bool() && fin->get_bool()) || IsTerminalState(Str(t, "state"));
  } else if (kind == "artifactUpdate" || kind == "artifact-update") {
    out["kind"] = "artifact";
    out["taskId"] = Str(*body, "taskId");
    out["artifact"] = ObjOr(*body, "artifact");
  }
  return out;
}

asio::awaitable<core::Result<void>> A2aClient::VerifyCard(const std::string& card_url,
                                                          PeerCard& card,
                                                          const CallOptions& options) const {
  if (!card.is_signed) co_return core::Ok{};
  const std::pair<std::string, std::string> ref = KeyRefOf(card.card);
  const std::string& jku = ref.first;
  const std::string& kid = ref.second;
  if (jku.empty() || kid.empty()) {
    card.unverified_reason = "its signature names no key URL (jku) and id (kid)";
    co_return core::Ok{};
  }
  if (OriginOf(jku).empty() || OriginOf(jku) != OriginOf(card_url)) {
    card.unverified_reason = "its signature's key URL " + jku + " is not on the card's origin";
    co_return core::Ok{};
  }
  net::HttpRequest req = Request("GET", jku, options);
  req.headers.emplace_back("Accept", "application/json");
  Attempted got = co_await FetchWithRetry(http_, std::move(req), options.retry, options.sleep);
  if (!got.result) co_return WithAttempts(std::move(got.result).error(), got.attempts);
  if (got.result.value().status != 200)
    co_return Error(ErrorCode::kUnavailable, "the card's key set at " + jku + " answered HTTP " +
                                                 std::to_string(got.result.value().status));
  auto ok = VerifyCardWithJwks(card.card, got.result.value().body, kid);
  if (!ok)
    co_return Error(ErrorCode::kInvalidAgentResponse,
                    "the agent card at " + card_url +
                        " is signed, and its signature does not verify with its key '" + kid +
                        "': " + ok.error().message,
                    {{"card", "signature_invalid"}});
  card.verified = true;
  co_return core::Ok{};
}

asio::awaitable<core::Result<PeerCard>> A2aClient::FetchCard(const std::string& card_url,
                                                             const CallOptions& options) const {
  net::HttpRequest req = Request("GET", card_url, options);
  req.headers.emplace_back("Accept", "application/json");
  req.headers.emplace_back("A2A-Version", "1.0");
  Attempted got = co_await FetchWithRetry(http_, std::move(req), options.retry, options.sleep);
  if (!got.result) co_return WithAttempts(std::move(got.result).error(), got.attempts);
  const net::HttpResponse& r = got.result.value();
  if (r.status != 200)
    co_return WithAttempts(
        Error(r.status >= 500 || r.status == 429 ? ErrorCode::kUnavailable
                                                 : ErrorCode::kInvalidAgentResponse,
              "the agent card at " + card_url + " answered HTTP " + std::to_string(r.status),
              {{"status", std::to_string(r.status)}}),
        got.attempts);
  auto parsed = protocol::ParseJson(r.body);
  if (!parsed)
    co_return WithAttempts(
        Error(ErrorCode::kInvalidAgentResponse, "the agent card at " + card_url + " is not JSON"),
        got.attempts);
  auto card = ReadPeerCard(parsed.value());
  if (!card) co_return card;
  card.value().card_url = card_url;
  auto verified = co_await VerifyCard(card_url, card.value(), options);
  if (!verified) co_return std::move(verified).error();
  if (options.require_verified_card && !card.value().verified) {
    std::string why = "not signed";
    if (card.value().is_signed) why = "signed, but " + card.value().unverified_reason;
    co_return Error(
        ErrorCode::kInvalidAgentResponse,
        "the agent card at " + card_url + " is " + why + ", and a verified signature is required",
        {{"card", "unverified"}});
  }
  co_return card;
}

asio::awaitable<core::Result<json::value>> A2aClient::Call(const PeerCard& peer,
                                                           std::string_view method10,
                                                           json::object params,
                                                           const CallOptions& options) const {
  if (IsRest(peer)) co_return co_await CallRest(peer, method10, std::move(params), options);
  if (IsGrpc(peer)) {
    if (!grpc_) co_return NoGrpc(peer);
    co_return co_await grpc_->Call(peer, method10, std::move(params), options);
  }
  const bool v10 = peer.version == "1.0";
  json::object envelope = JsonRpcEnvelope(peer, method10, std::move(params));
  net::HttpRequest req = Request("POST", peer.url, options);
  req.headers.emplace_back("Content-Type", "application/json");
  req.headers.emplace_back("Accept", "application/json");
  if (v10) req.headers.emplace_back("A2A-Version", "1.0");
  req.body = protocol::SerializeJson(envelope);
  Attempted got = co_await FetchWithRetry(http_, std::move(req), options.retry, options.sleep);
  if (!got.result) co_return WithAttempts(std::move(got.result).error(), got.attempts);
  const net::HttpResponse& r = got.result.value();
  auto parsed = protocol::ParseJson(r.body);
  if (!parsed || !parsed.value().is_object()) {
    if (r.status < 200 || r.status > 299)
      co_return WithAttempts(Error(RetryableStatus(r.status) ? ErrorCode::kUnavailable
                                                             : ErrorCode::kInvalidAgentResponse,
                                   "the peer answered HTTP " + std::to_string(r.status),
                                   {{"status", std::to_string(r.status)}}),
                             got.attempts);
    co_return WithAttempts(
        Error(ErrorCode::kInvalidAgentResponse,
              "the peer's answer to " + std::string(method10) + " is not JSON-RPC"),
        got.attempts);
  }
  const json::object& answer = parsed.value().get_object();
  if (const json::value* e = answer.if_contains("error"); e && e->is_object())
    co_return WithAttempts(PeerRefused(method10, e->get_object()), got.attempts);
  if (!answer.contains("result"))
    co_return WithAttempts(
        Error(ErrorCode::kInvalidAgentResponse,
              "the peer's answer to " + std::string(method10) + " has neither result nor error"),
        got.attempts);
  co_return answer.at("result");
}

asio::awaitable<core::Result<json::value>> A2aClient::CallRest(const PeerCard& peer,
                                                               std::string_view method10,
                                                               json::object params,
                                                               const CallOptions& options) const {
  auto req = RestRequest(peer, method10, params, options);
  if (!req) co_return std::move(req).error();
  req.value().headers.emplace_back("Accept", "application/json");
  Attempted got =
      co_await FetchWithRetry(http_, std::move(req).value(), options.retry, options.sleep);
  if (!got.result) co_return WithAttempts(std::move(got.result).error(), got.attempts);
  const net::HttpResponse& r = got.result.value();
  auto parsed = protocol::ParseJson(r.body);
  if (r.status < 200 || r.status > 299) {
    if (parsed && !RetryableStatus(r.status))
      if (auto refused = RestRefused(method10, parsed.value()))
        co_return WithAttempts(std::move(*refused), got.attempts);
    co_return WithAttempts(
        Error(
            RetryableStatus(r.status) ? ErrorCode::kUnavailable : ErrorCode::kInvalidAgentResponse,
            "the peer answered " + std::string(method10) + " with HTTP " + std::to_string(r.status),
            {{"status", std::to_string(r.status)}}),
        got.attempts);
  }
  if (!parsed)
    co_return WithAttempts(Error(ErrorCode::kInvalidAgentResponse,
                                 "the peer's answer to " + std::string(method10) + " is not JSON"),
                           got.attempts);
  co_return std::move(parsed).value();
}

asio::awaitable<core::Result<SendResult>> A2aClient::Send(const PeerCard& peer,
                                                          const json::object& message,
                                                          const CallOptions& options,
                                                          json::object push) const {
  auto r = co_await Call(peer, "SendMessage", SendParams(peer, message, false, std::move(push)),
                         options);
  if (!r) co_return std::move(r).error();
  const json::value& v = r.value();
  if (!v.is_object())
    co_return Error(ErrorCode::kInvalidAgentResponse,
                    "the peer's SendMessage result is not an object");
  const json::object& o = v.get_object();
  SendResult out;
  // 1.0: {task} | {message}; 0.3: a Task (kind "task") or a Message (kind "message").
  const json::value* task = o.if_contains("task");
  const json::value* msg = o.if_contains("message");
  if (!task && !msg) {
    if (Str(o, "kind") == "message" || (o.contains("messageId") && !o.contains("status")))
      msg = &v;
    else
      task = &v;
  }
  if (task && task->is_object() && !Str(task->get_object(), "id").empty()) {
    out.task = NormalizeTask(task->get_object());
  } else if (msg && msg->is_object()) {
    out.is_task = false;
    out.message = NormalizeMessage(msg->get_object());
  } else {
    co_return Error(ErrorCode::kInvalidAgentResponse,
                    "the peer's SendMessage result is neither a task with an id nor a message");
  }
  co_return out;
}

asio::awaitable<core::Result<json::object>> A2aClient::GetTask(const PeerCard& peer,
                                                               const std::string& task_id,
                                                               const CallOptions& options) const {
  json::object params = IdParams(task_id);
  params["historyLength"] = 0;
  auto r = co_await Call(peer, "GetTask", std::move(params), options);
  if (!r) co_return std::move(r).error();
  if (!r.value().is_object() || Str(r.value().get_object(), "id") != task_id)
    co_return Error(ErrorCode::kInvalidAgentResponse,
                    "the peer's GetTask result is not the task " + task_id);
  co_return NormalizeTask(r.value().get_object());
}

asio::awaitable<core::Result<json::object>> A2aClient::CancelTask(
    const PeerCard& peer, const std::string& task_id, const CallOptions& options) const {
  auto r = co_await Call(peer, "CancelTask", IdParams(task_id), options);
  if (!r) co_return std::move(r).error();
  if (!r.value().is_object())
    co_return Error(ErrorCode::kInvalidAgentResponse, "the peer's CancelTask result is not a task");
  co_return NormalizeTask(r.value().get_object());
}

asio::awaitable<core::Result<net::StreamEnd>> A2aClient::Stream(
    const PeerCard& peer, std::string_view method10, json::object params,
    const CallOptions& options, std::chrono::milliseconds window, StreamHandler on_event,
    std::string last_event_id) const {
  if (IsGrpc(peer)) {
    if (!grpc_) co_return NoGrpc(peer);
    auto each = [&on_event](const json::value& response) {
      return on_event(NormalizeStreamEvent(response));
    };
    co_return co_await grpc_->Stream(peer, method10, std::move(params), options, window, each,
                                     std::move(last_event_id));
  }
  const bool rest = IsRest(peer);
  net::HttpRequest req;
  if (rest) {
    auto made = RestRequest(peer, method10, params, options);
    if (!made) co_return std::move(made).error();
    req = std::move(made).value();
  } else {
    req = Request("POST", peer.url, options);
    req.headers.emplace_back("Content-Type", "application/json");
    if (peer.version == "1.0") req.headers.emplace_back("A2A-Version", "1.0");
    req.body = protocol::SerializeJson(JsonRpcEnvelope(peer, method10, std::move(params)));
  }
  req.total_timeout = window;
  req.headers.emplace_back("Accept", "text/event-stream");
  if (!last_event_id.empty()) req.headers.emplace_back("Last-Event-ID", last_event_id);
  SseReader reader;
  std::vector<SseEvent> events;
  std::optional<Error> failed;
  const std::string method(method10);
  auto on_data = [&](std::string_view bytes) {
    events.clear();
    if (!reader.Feed(bytes, events)) {
      failed = Error(ErrorCode::kInvalidAgentResponse,
                     "the peer's " + method + " stream sent an event over 4 MiB");
      return false;
    }
    for (const SseEvent& e : events) {
      auto parsed = protocol::ParseJson(e.data);
      if (!parsed || !parsed.value().is_object()) {
        failed = Error(ErrorCode::kInvalidAgentResponse,
                       "the peer's " + method + " stream sent an event that is not JSON-RPC");
        return false;
      }
      const json::object& answer = parsed.value().get_object();
      if (rest) {  // a REST event is the StreamResponse itself, an error google.rpc.Status
        if (auto refused = RestRefused(method, parsed.value())) {
          failed = std::move(*refused);
          return false;
        }
      } else if (const json::value* err = answer.if_contains("error"); err && err->is_object()) {
        failed = PeerRefused(method, err->get_object());
        return false;
      }
      json::object ev = NormalizeStreamEvent(rest                        ? parsed.value()
                                             : answer.contains("result") ? answer.at("result")
                                                                         : json::value());
      if (!e.id.empty()) ev["eventId"] = e.id;
      if (!on_event(ev)) return false;
    }
    return true;
  };
  auto r = co_await http_.Stream(std::move(req), on_data);
  if (failed) co_return std::move(*failed);
  if (!r) co_return std::move(r).error();
  const net::HttpResponse& head = r.value().head;
  const bool is_sse = head.Header("Content-Type").starts_with("text/event-stream");
  if (head.status >= 200 && head.status <= 299 && is_sse) co_return r;
  // Not a stream: a JSON-RPC error (an agent that cannot stream says so), or a failure.
  auto parsed = protocol::ParseJson(head.body);
  if (parsed && rest && !RetryableStatus(head.status))
    if (auto refused = RestRefused(method, parsed.value())) co_return std::move(*refused);
  if (parsed && parsed.value().is_object())
    if (const json::value* err = parsed.value().get_object().if_contains("error");
        err && err->is_object())
      co_return PeerRefused(method, err->get_object());
  if (head.status < 200 || head.status > 299)
    co_return Error(
        RetryableStatus(head.status) ? ErrorCode::kUnavailable : ErrorCode::kInvalidAgentResponse,
        "the peer answered " + method + " with HTTP " + std::to_string(head.status),
        {{"status", std::to_string(head.status)}});
  co_return Error(ErrorCode::kInvalidAgentResponse,
                  "the peer answered " + method + " without an event stream");
}

asio::awaitable<core::Result<net::StreamEnd>> A2aClient::Subscribe(
    const PeerCard& peer, const std::string& task_id, const CallOptions& options,
    std::chrono::milliseconds window, StreamHandler on_event, std::string last_event_id) const {
  co_return co_await Stream(peer, "SubscribeToTask", IdParams(task_id), options, window,
                            std::move(on_event), std::move(last_event_id));
}

asio::awaitable<core::Result<net::StreamEnd>> A2aClient::SendStreaming(
    const PeerCard& peer, const json::object& message, const CallOptions& options,
    std::chrono::milliseconds window, StreamHandler on_event) const {
  co_return co_await Stream(peer, "SendStreamingMessage", SendParams(peer, message, true), options,
                            window, std::move(on_event));
}

}  // namespace a2ad::client
