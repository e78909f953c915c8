// event_cursor_fuzz: the stream cursor (protocol/event_cursor.hpp), alone and where the
// transports read it. The input is the cursor text. Invariants:
//  - ParseEventCursor accepts exactly 1 to 18 ASCII digits, with their decimal value; it
//    refuses anything else with kInvalidParams naming the field; EventCursorFromJson agrees
//    on strings and takes exactly the non-negative int64 numbers;
//  - one verdict everywhere: the JSON-RPC Last-Event-ID header and params.metadata.lastEventId
//    of tasks/resubscribe, and the REST Last-Event-ID header, ?lastEventId and ?lastSequence
//    of GET /v1/runs/{id}/events[/poll] accept the cursor iff ParseEventCursor does, and
//    answer a refusal with the same message as today.
#include <boost/json.hpp>
#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "a2ad/protocol/event_cursor.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "fuzz_check.hpp"
#include "http_harness.hpp"

namespace a2ad::fuzz {
namespace {
namespace json = boost::json;
using protocol::ParseJson;
using protocol::SerializeJson;
using transport::HttpRequest;

// The reference: what a cursor is, said the simplest way.
std::optional<int64_t> Oracle(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  int64_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

void CheckVerdict(const core::Result<int64_t>& got, const std::optional<int64_t>& want,
                  std::string_view field, std::string_view what) {
  if (want) {
    FUZZ_CHECK(got.ok() && got.value() == *want,
               std::string(what) + " disagrees with the reference on an accepted cursor");
    return;
  }
  FUZZ_CHECK(!got.ok(), std::string(what) + " accepts " + std::to_string(got.value()));
  const core::Error& e = got.error();
  FUZZ_CHECK(e.code == core::ErrorCode::kInvalidParams, e.message);
  FUZZ_CHECK(e.details.size() == 1 && e.details[0].first == "field" && e.details[0].second == field,
             e.message);
  FUZZ_CHECK(e.message.starts_with(std::string(field) + ": expected an event id"), e.message);
}

// One server for the whole run: a finished echo task and a finished workflow run. Every
// request below only reads, so an input always gets the same answers.
struct Server {
  World world{{.openwop = true, .push = false}};
  std::string task_id = "id-0001";
  std::string run_id;

  Server() {
    HttpRequest send;
    send.method = "POST";
    send.target = "/v1/a2a";
    send.body =
        R"({"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":)"
        R"({"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}})";
    auto sent = world.Call(send);
    FUZZ_CHECK(sent.response.body.find("\"id\":\"" + task_id + "\"") != std::string::npos,
               sent.response.body);
    HttpRequest start;
    start.method = "POST";
    start.target = "/v1/runs";
    start.body = R"({"workflowId":"conformance-multi-node"})";
    auto started = world.Call(start);
    FUZZ_CHECK(started.response.status == 201, started.response.body);
    run_id = json::parse(started.response.body).at("runId").as_string().c_str();
  }

  std::string Rpc(const json::object& params, std::string_view last_event_id) {
    HttpRequest r;
    r.method = "POST";
    r.target = "/v1/a2a";
    if (!last_event_id.empty()) r.headers.emplace_back("Last-Event-ID", std::string(last_event_id));
    r.body = SerializeJson(json::object{
        {"jsonrpc", "2.0"}, {"id", 7}, {"method", "tasks/resubscribe"}, {"params", params}});
    Exchange ex = world.Call(std::move(r));
    FUZZ_CHECK(ex.answered && ex.response.status == 200, ex.response.body);
    if (ex.response.stream) return {};  // "" for a stream
    // tasks/resubscribe is a v0.3 streaming method: its error is one SSE `event: error`.
    constexpr std::string_view kHead = "event: error\ndata: ";
    const std::string& b = ex.response.body;
    FUZZ_CHECK(ex.response.content_type == "text/event-stream" && b.starts_with(kHead) &&
                   b.ends_with("\n\n"),
               b);
    return b.substr(kHead.size(), b.size() - kHead.size() - 2);
  }

  Exchange Rest(std::string target, std::string_view last_event_id) {
    HttpRequest r;
    r.method = "GET";
    r.target = std::move(target);
    if (!last_event_id.empty()) r.headers.emplace_back("Last-Event-ID", std::string(last_event_id));
    Exchange ex = world.Call(std::move(r));
    FUZZ_CHECK(ex.answered, "a REST cursor request was left unanswered");
    return ex;
  }
};

// A JSON-RPC answer: a stream or an error that is not about the cursor's syntax (accepted), or
// exactly the refusal ParseEventCursor words (refused).
void CheckRpc(const std::string& body, const std::optional<int64_t>& want,
              const core::Result<int64_t>& verdict) {
  if (want) {
    FUZZ_CHECK(body.empty() || body.find("expected an event id") == std::string::npos, body);
    return;
  }
  auto v = ParseJson(body);
  FUZZ_CHECK(v.ok() && v->is_object() && v->get_object().contains("error"), body);
  const json::object& err = v->at("error").get_object();
  FUZZ_CHECK(err.at("code") == -32602, body);
  // The message as the writer writes it (bytes that are not UTF-8 become U+FFFD).
  auto written = ParseJson(SerializeJson(json::value(verdict.error().message)));
  FUZZ_CHECK(written.ok() && err.at("message") == *written, body);
}

void CheckRest(const Exchange& ex, const std::optional<int64_t>& want, std::string_view message) {
  if (want) {
    FUZZ_CHECK(ex.response.status == 200, ex.response.body);
    return;
  }
  FUZZ_CHECK(ex.response.status == 400, ex.response.body);
  const json::value expected{{"error", "validation_error"}, {"message", message}};
  auto got = ParseJson(ex.response.body);
  FUZZ_CHECK(got.ok() && *got == expected, ex.response.body);
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace a2ad;
  using namespace a2ad::fuzz;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::optional<int64_t> want = Oracle(text);

  const auto verdict = protocol::ParseEventCursor(text, "Last-Event-ID");
  CheckVerdict(verdict, want, "Last-Event-ID", "ParseEventCursor");
  CheckVerdict(protocol::EventCursorFromJson(json::value(json::string(text)), "lastEventId"), want,
               "lastEventId", "EventCursorFromJson(string)");
  if (auto doc = ParseJson(text)) {
    std::optional<int64_t> json_want;
    if (doc->is_int64() && doc->get_int64() >= 0) json_want = doc->get_int64();
    if (doc->is_string()) json_want = Oracle(doc->get_string());
    const auto got = protocol::EventCursorFromJson(*doc, "lastEventId");
    FUZZ_CHECK(got.ok() == json_want.has_value() && (!got || got.value() == *json_want),
               "EventCursorFromJson disagrees on " + SerializeJson(*doc));
  }

  // OpenWOP's surfaces also take -1 for "from the start" (accepted since 1c072fb).
  const std::optional<int64_t> openwop_want = text == "-1" ? std::optional<int64_t>(-1) : want;
  static Server* server = new Server();  // lives for the whole run
  if (!text.empty()) {
    CheckRpc(server->Rpc(json::object{{"id", server->task_id}}, text), want, verdict);
    CheckRest(server->Rest("/v1/runs/" + server->run_id + "/events?streamMode=debug", text),
              openwop_want, "Last-Event-ID: expected a sequence number");
  }
  {
    // As a JSON string: what the server reads is the text as written (U+FFFD for bytes that
    // are not UTF-8).
    auto sent = ParseJson(SerializeJson(json::value(json::string(text))));
    FUZZ_CHECK(sent.ok() && sent->is_string(), "SerializeJson wrote an unreadable string");
    const std::string_view sent_text = sent->get_string();
    json::object params{{"id", server->task_id},
                        {"metadata", json::object{{"lastEventId", sent->get_string()}}}};
    const auto md_verdict = protocol::ParseEventCursor(sent_text, "params.metadata.lastEventId");
    CheckRpc(server->Rpc(params, ""), Oracle(sent_text), md_verdict);
  }
  if (!text.empty()) {
    const std::string q = PercentEncodeAll(text);
    CheckRest(server->Rest("/v1/runs/" + server->run_id + "/events?lastEventId=" + q, ""),
              openwop_want, "Last-Event-ID: expected a sequence number");
    CheckRest(
        server->Rest("/v1/runs/" + server->run_id + "/events/poll?timeout=0&lastSequence=" + q, ""),
        openwop_want, "lastSequence and timeout are integers");
  }
  return 0;
}
