#include "a2ad/client/a2a_client.hpp"

#include <atomic>

#include "a2ad/core/encoding.hpp"
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
using protocol::Str;

namespace {

std::string_view Method03(std::string_view m10) {
  if (m10 == "SendMessage") return "message/send";
  if (m10 == "GetTask") return "tasks/get";
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
  return r;
}

std::atomic<int64_t> next_id{1};

// SendMessage's params: the message in the peer's version.
json::object SendParams(const PeerCard& peer, const json::object& message) {
  const protocol::Message m = ToMessage(message);
  json::object p;
  json::object config;
  // Non-blocking: the node follows the task itself (and is logged as soon as it exists).
  if (peer.version == "1.0") {
    p["message"] = protocol::v10::MessageToJson(m);
    config["returnImmediately"] = true;
  } else {
    p["message"] = protocol::v03::MessageToJson(m);
    config["blocking"] = false;
  }
  p["configuration"] = std::move(config);
  return p;
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

}  // namespace

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
  const bool v10 = peer.version == "1.0";
  json::object envelope;
  envelope["jsonrpc"] = "2.0";
  envelope["id"] = next_id.fetch_add(1);
  envelope["method"] = v10 ? method10 : Method03(method10);
  envelope["params"] = std::move(params);
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
  if (const json::value* e = answer.if_contains("error"); e && e->is_object()) {
    const json::value* code = e->get_object().if_contains("code");
    std::string message(Str(e->get_object(), "message"));
    if (message.size() > 200) message.resize(200);
    co_return WithAttempts(
        Error(ErrorCode::kInvalidAgentResponse,
              "the peer refused " + std::string(method10) + " (JSON-RPC error " +
                  (code ? protocol::SerializeJson(*code) : std::string("?")) + ")",
              {{"peerCode", code ? protocol::SerializeJson(*code) : ""}, {"peerMessage", message}}),
        got.attempts);
  }
  if (!answer.contains("result"))
    co_return WithAttempts(
        Error(ErrorCode::kInvalidAgentResponse,
              "the peer's answer to " + std::string(method10) + " has neither result nor error"),
        got.attempts);
  co_return answer.at("result");
}

asio::awaitable<core::Result<SendResult>> A2aClient::Send(const PeerCard& peer,
                                                          const json::object& message,
                                                          const CallOptions& options) const {
  auto r = co_await Call(peer, "SendMessage", SendParams(peer, message), options);
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

}  // namespace a2ad::client
