// jsonrpc_fuzz: the A2A JSON-RPC endpoint end to end, in process (http_harness.hpp: Router ->
// JsonRpcHandler -> TaskService over a MemoryTaskStore with the echo skill and push configs).
// An input is up to 6 requests ("headers, empty line, body", separated by "----" lines; the
// A2A-Version header picks the wire version). Invariants:
//  - every answer is HTTP 200 and a strict-JSON JSON-RPC 2.0 object {jsonrpc, id, result |
//    error{code, message, data?}}; its id is the request's id (the first "id" member, when a
//    string, an integer or null) or null, and a result always carries the request's id;
//  - a stream (text/event-stream) is a sequence of events whose `id:` lines increase and whose
//    data are such objects for the same id; it ends when its client leaves;
//  - the decoders of both wire versions, called directly on the params: when one accepts,
//    its re-encoding is strict JSON that decodes to the same value, and the text writers
//    (AppendTaskJson) write exactly what SerializeJson writes of the DOM encoders.
#include <boost/json.hpp>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/push_config_codec.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v03/proto_json.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "fuzz_check.hpp"
#include "http_harness.hpp"

namespace a2ad::fuzz {
namespace {
namespace json = boost::json;
using protocol::ParseJson;
using protocol::SerializeJson;

constexpr size_t kMaxRequests = 6;

// Parses text the decoders' output must round-trip through.
json::value Reparse(const std::string& text, std::string_view what) {
  auto v = ParseJson(text);
  FUZZ_CHECK(v.ok(), std::string(what) + " wrote text ParseJson refuses: " + v.error().message +
                         "\n     " + text);
  return std::move(v).value();
}

// A message in one wire's shape (protocol/encode.hpp).
template <protocol::Wire W>
json::object EncodeOn(const protocol::Message& m) {
  return protocol::MessageToJson(m, W);
}

template <class Encode, class Decode>
void RoundTripMessage(const protocol::Message& m, Encode encode, Decode decode,
                      std::string_view what) {
  const std::string text = SerializeJson(encode(m));
  json::value back = Reparse(text, what);
  auto again = decode(back, "params.message");
  FUZZ_CHECK(again.ok(), std::string(what) + ": its own encoding does not decode: " +
                             again.error().message + "\n     " + text);
  FUZZ_CHECK(SerializeJson(encode(again.value())) == text,
             std::string(what) + ": decode(encode(m)) differs from m\n     " + text);
}

void CheckTask(const protocol::Task& t) {
  const std::string v10 = SerializeJson(protocol::TaskToJson(t));
  std::string v10_text;
  protocol::AppendTask(v10_text, t, protocol::Wire::kV10);
  FUZZ_CHECK(v10_text == v10,
             "v10::AppendTaskJson differs from TaskToJson\n     " + v10_text + "\n     " + v10);
  const std::string v03 = SerializeJson(protocol::TaskToJson(t, protocol::Wire::kV03));
  std::string v03_text;
  protocol::AppendTask(v03_text, t, protocol::Wire::kV03);
  FUZZ_CHECK(v03_text == v03,
             "v03::AppendTaskJson differs from TaskToJson\n     " + v03_text + "\n     " + v03);
  Reparse(v03, "v03::TaskToJson");
  auto back = protocol::v10::TaskFromJson(Reparse(v10, "v10::TaskToJson"), "task");
  FUZZ_CHECK(back.ok(), "v10::TaskFromJson refuses v10::TaskToJson: " + back.error().message +
                            "\n     " + v10);
  FUZZ_CHECK(SerializeJson(protocol::TaskToJson(back.value())) == v10,
             "v10 task decode(encode(t)) differs from t\n     " + v10);
}

void CheckPushConfig(const protocol::PushNotificationConfig& c) {
  Reparse(SerializeJson(protocol::v03::TaskPushConfigToJson(c)), "v03::TaskPushConfigToJson");
  Reparse(SerializeJson(protocol::v10::TaskPushConfigToJson(c)), "v10::TaskPushConfigToJson");
}

// The decoders of both versions straight on the params.
void CheckDecoders(const json::value& params) {
  namespace v03 = protocol::v03;
  namespace v10 = protocol::v10;
  if (auto r = v03::SendMessageRequestFromJson(params)) {
    RoundTripMessage(r->message, EncodeOn<protocol::Wire::kV03>, v03::MessageFromJson,
                     "v03 message");
    RoundTripMessage(r->message, EncodeOn<protocol::Wire::kV03Proto>,
                     protocol::v03::proto_json::MessageFromJson, "v03 proto message");
    if (r->configuration.push_notification_config)
      CheckPushConfig(*r->configuration.push_notification_config);
  }
  if (auto r = v10::SendMessageRequestFromJson(params)) {
    RoundTripMessage(r->message, EncodeOn<protocol::Wire::kV10>, v10::MessageFromJson,
                     "v10 message");
    if (r->configuration.push_notification_config)
      CheckPushConfig(*r->configuration.push_notification_config);
  }
  (void)v03::GetTaskRequestFromJson(params);
  (void)v03::CancelTaskRequestFromJson(params);
  (void)v10::GetTaskRequestFromJson(params);
  (void)v10::CancelTaskRequestFromJson(params);
  (void)v10::ListTasksRequestFromJson(params);
  if (auto t = v10::TaskFromJson(params, "params")) CheckTask(t.value());
  if (auto a = v10::ArtifactFromJson(params, "params")) {
    const std::string text = SerializeJson(ArtifactToJson(a.value()));
    Reparse(text, "v10::ArtifactToJson");
    Reparse(SerializeJson(ArtifactToJson(a.value(), protocol::Wire::kV03)), "v03::ArtifactToJson");
  }
  if (auto c = v03::SetPushConfigParamsFromJson(params)) CheckPushConfig(c.value());
  if (auto c = v10::PushConfigFromJson(params, "params", true)) CheckPushConfig(c.value());
  (void)v03::PushConfigRefFromJson(params, true);
  (void)v10::PushConfigRefFromJson(params, false);
}

// The id the answer must carry: the request's first "id" member when it is a valid JSON-RPC
// id; nullopt when the request has none that can be echoed.
std::optional<json::value> RequestId(const std::string& body) {
  std::optional<core::Error> fault;
  auto doc = protocol::ParseJsonReportingFaults(body, fault);
  if (!doc || !doc->is_object()) return std::nullopt;
  const json::value* id = doc->get_object().if_contains("id");
  if (!id || !(id->is_string() || id->is_int64() || id->is_uint64() || id->is_null()))
    return std::nullopt;
  return *id;
}

void CheckEnvelope(const std::string& text, const std::optional<json::value>& id) {
  auto parsed = ParseJson(text);
  FUZZ_CHECK(parsed.ok(),
             "answer is not strict JSON: " + parsed.error().message + "\n     " + text);
  FUZZ_CHECK(parsed->is_object(), "answer is not a JSON object: " + text);
  const json::object& o = parsed->get_object();
  for (const auto& kv : o)
    FUZZ_CHECK(
        kv.key() == "jsonrpc" || kv.key() == "id" || kv.key() == "result" || kv.key() == "error",
        "answer has a member '" + std::string(kv.key()) + "': " + text);
  const json::value* ver = o.if_contains("jsonrpc");
  FUZZ_CHECK(ver && ver->is_string() && ver->get_string() == "2.0", "no jsonrpc 2.0: " + text);
  const json::value* got = o.if_contains("id");
  FUZZ_CHECK(got != nullptr, "answer without id: " + text);
  const bool is_result = o.contains("result");
  FUZZ_CHECK(is_result != o.contains("error"), "not exactly one of result/error: " + text);
  if (is_result)
    FUZZ_CHECK(id && *got == *id, "a result with another id than the request's: " + text);
  else
    FUZZ_CHECK(got->is_null() || (id && *got == *id),
               "an error with an id that is neither the request's nor null: " + text);
  if (!is_result) {
    const json::value& e = o.at("error");
    FUZZ_CHECK(e.is_object(), "error is not an object: " + text);
    const json::object& eo = e.get_object();
    const json::value* code = eo.if_contains("code");
    FUZZ_CHECK(
        code && code->is_int64() && code->get_int64() <= -32000 && code->get_int64() >= -32768,
        "error.code is not a JSON-RPC error code: " + text);
    const json::value* msg = eo.if_contains("message");
    FUZZ_CHECK(msg && msg->is_string() && !msg->get_string().empty(),
               "error.message is not a non-empty string: " + text);
    for (const auto& kv : eo)
      FUZZ_CHECK(kv.key() == "code" || kv.key() == "message" || kv.key() == "data",
                 "error has a member '" + std::string(kv.key()) + "': " + text);
  }
}

void CheckStream(const Exchange& ex, const std::optional<json::value>& id) {
  int64_t last = -1;
  for (const std::string& event : ex.sse) {
    std::string_view rest = event;
    bool data_seen = false;
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      if (line.starts_with(":")) continue;  // a comment (keep-alive)
      if (line.starts_with("id: ")) {
        const std::string_view digits = line.substr(4);
        int64_t seq = -1;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
        FUZZ_CHECK(ec == std::errc() && end == digits.data() + digits.size(),
                   "an SSE id that is not a number: " + event);
        FUZZ_CHECK(seq > last, "SSE ids do not increase: " + event);
        last = seq;
      } else if (line.starts_with("data: ")) {
        FUZZ_CHECK(!data_seen, "an SSE event with two data lines: " + event);
        data_seen = true;
        CheckEnvelope(std::string(line.substr(6)), id);
      } else {
        FUZZ_CHECK(line == "event: error", "an unexpected SSE line: " + event);
      }
    }
  }
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace a2ad::fuzz;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto requests = SplitRequests(input, false, kMaxRequests);
  World world({.openwop = false, .push = true});
  for (auto& request : requests) {
    if (auto doc = ParseJson(request.body); doc && doc->is_object())
      if (const auto* params = doc->get_object().if_contains("params")) CheckDecoders(*params);
    const auto id = RequestId(request.body);
    Exchange ex = world.Call(std::move(request));
    FUZZ_CHECK(ex.answered, "a JSON-RPC request was left unanswered");
    FUZZ_CHECK(ex.response.status == 200,
               "HTTP " + std::to_string(ex.response.status) + ": " + ex.response.body);
    if (ex.response.stream) {
      FUZZ_CHECK(ex.response.content_type == "text/event-stream", ex.response.content_type);
      CheckStream(ex, id);
    } else if (ex.response.content_type == "text/event-stream") {
      // A v0.3 streaming method's error before the stream: exactly one `event: error`.
      constexpr std::string_view kHead = "event: error\ndata: ";
      const std::string& b = ex.response.body;
      FUZZ_CHECK(
          b.starts_with(kHead) && b.ends_with("\n\n") && b.find('\n', kHead.size()) == b.size() - 2,
          "not one SSE error event: " + b);
      const std::string frame = b.substr(kHead.size(), b.size() - kHead.size() - 2);
      auto doc = ParseJson(frame);
      FUZZ_CHECK(doc.ok() && doc->is_object() && doc->get_object().contains("error"), frame);
      CheckEnvelope(frame, id);
    } else {
      FUZZ_CHECK(ex.response.content_type == "application/json", ex.response.content_type);
      CheckEnvelope(ex.response.body, id);
    }
  }
  return 0;
}
