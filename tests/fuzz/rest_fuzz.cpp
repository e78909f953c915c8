// rest_fuzz: the OpenWOP REST surface end to end, in process (http_harness.hpp: Router ->
// OpenwopApi, push routes, the JSON-RPC endpoint; the workflows of workflows/). An input is
// up to 8 requests "METHOD TARGET", header lines, an empty line, the body, separated by
// "----" lines; "@TOKEN@" stands for the latest interrupt token the server handed out.
// Invariants:
//  - no exception escapes a handler, and no request is answered 500;
//  - every JSON body (and every SSE data line) is strict JSON;
//  - every non-2xx answer is the closed error envelope {"error": "<string>", "message":
//    "<string>", "details"?: {...}} with no other member (a 304 has no body); under the A2A
//    HTTP+JSON binding (/a2a/rest) it is google.rpc.Status: {"error": {"code": <the HTTP
//    status>, "status": "<GRPC_CODE>", "message": "<string>", "details": [...]}}; under the
//    A2A 0.3 one (/a2a/rest03) {"code": <a JSON-RPC error code>, "message": "<string>",
//    "data"?: {...}}.
//
// Known exception, reported and being fixed elsewhere: the push routes (/v1/webhooks...,
// /v1/host/sample/a2a/tasks/push-config, /v1/push/..., /.well-known/jwks.json) answer errors
// as {"error": {"code", "message"}}. Their envelope is not checked unless the environment
// has A2AD_FUZZ_PUSH_ENVELOPE=1; delete the exemption once they use the closed envelope.
#include <boost/json.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "a2ad/protocol/json_parse.hpp"
#include "fuzz_check.hpp"
#include "http_harness.hpp"

namespace a2ad::fuzz {
namespace {
namespace json = boost::json;
using protocol::ParseJson;

constexpr size_t kMaxRequests = 8;

bool IsPushRoute(std::string_view path) {
  return path == "/v1/webhooks" || path.starts_with("/v1/webhooks/") ||
         path == "/v1/host/sample/a2a/tasks/push-config" || path.starts_with("/v1/push/") ||
         path == "/.well-known/jwks.json";
}

bool CheckPushEnvelope() {
  static const bool strict = [] {
    const char* v = std::getenv("A2AD_FUZZ_PUSH_ENVELOPE");
    return v && std::string_view(v) == "1";
  }();
  return strict;
}

void CheckEnvelope(const std::string& what, const json::value& v) {
  FUZZ_CHECK(v.is_object(), what + ": an error answer that is not an object");
  const json::object& o = v.get_object();
  const json::value* error = o.if_contains("error");
  const json::value* message = o.if_contains("message");
  FUZZ_CHECK(error && error->is_string() && !error->get_string().empty(),
             what + ": \"error\" is not a non-empty string");
  FUZZ_CHECK(message && message->is_string(), what + ": \"message\" is not a string");
  for (const auto& kv : o) {
    FUZZ_CHECK(kv.key() == "error" || kv.key() == "message" || kv.key() == "details",
               what + ": a member '" + std::string(kv.key()) + "' outside the envelope");
    if (kv.key() == "details") FUZZ_CHECK(kv.value().is_object(), what + ": details not an object");
  }
}

void CheckRpcStatus(const std::string& what, int http_status, const json::value& v) {
  FUZZ_CHECK(v.is_object() && v.get_object().size() == 1, what + ": not {\"error\": {...}}");
  const json::value* error = v.get_object().if_contains("error");
  FUZZ_CHECK(error && error->is_object(), what + ": \"error\" is not an object");
  const json::object& e = error->get_object();
  const json::value* code = e.if_contains("code");
  FUZZ_CHECK(code && code->is_int64() && code->get_int64() == http_status,
             what + ": error.code is not the HTTP status");
  const json::value* status = e.if_contains("status");
  FUZZ_CHECK(status && status->is_string() && !status->get_string().empty(),
             what + ": error.status is not a gRPC code name");
  const json::value* message = e.if_contains("message");
  FUZZ_CHECK(message && message->is_string(), what + ": error.message is not a string");
  const json::value* details = e.if_contains("details");
  FUZZ_CHECK(details && details->is_array() && !details->get_array().empty(),
             what + ": error.details has no ErrorInfo");
}

void CheckRest03Error(const std::string& what, const json::value& v) {
  FUZZ_CHECK(v.is_object(), what + ": an error answer that is not an object");
  const json::object& o = v.get_object();
  const json::value* code = o.if_contains("code");
  FUZZ_CHECK(code && code->is_int64() && code->get_int64() <= -32000 && code->get_int64() >= -32768,
             what + ": \"code\" is not a JSON-RPC error code");
  const json::value* message = o.if_contains("message");
  FUZZ_CHECK(message && message->is_string(), what + ": \"message\" is not a string");
  for (const auto& kv : o) {
    FUZZ_CHECK(kv.key() == "code" || kv.key() == "message" || kv.key() == "data",
               what + ": a member '" + std::string(kv.key()) + "' outside {code, message, data}");
    if (kv.key() == "data") FUZZ_CHECK(kv.value().is_object(), what + ": data not an object");
  }
}

void CheckAnswer(const std::string& method, const std::string& target, const Exchange& ex) {
  const transport::HttpResponse& r = ex.response;
  const std::string what =
      method + " " + target + " -> " + std::to_string(r.status) + " " + r.body.substr(0, 2000);
  FUZZ_CHECK(r.status >= 200 && r.status <= 599, what);
  FUZZ_CHECK(r.status != 500, what);
  if (r.stream) {
    FUZZ_CHECK(r.status == 200 && r.content_type == "text/event-stream", what);
    for (const std::string& event : ex.sse) {
      for (size_t at = event.find("data: "); at != std::string::npos;
           at = event.find("data: ", at + 1)) {
        if (at != 0 && event[at - 1] != '\n') continue;
        const size_t end = event.find('\n', at);
        const std::string data =
            event.substr(at + 6, end == std::string::npos ? end : end - at - 6);
        auto v = ParseJson(data);
        FUZZ_CHECK(v.ok(), what + ": SSE data is not strict JSON: " + data);
      }
    }
    return;
  }
  if (r.status == 304) {
    FUZZ_CHECK(r.body.empty(), what);
    return;
  }
  const bool json_body = r.content_type == "application/json";
  json::value v;
  if (json_body && !(r.body.empty() && r.status == 204)) {
    auto parsed = ParseJson(r.body);
    FUZZ_CHECK(parsed.ok(), what + ": the body is not strict JSON: " + parsed.error().message);
    v = std::move(parsed).value();
  }
  if (r.status >= 200 && r.status < 300) return;
  const std::string_view path = std::string_view(target).substr(0, target.find('?'));
  if (IsPushRoute(path) && !CheckPushEnvelope()) return;
  FUZZ_CHECK(json_body, what + ": an error answer that is not JSON (" + r.content_type + ")");
  if (path == "/a2a/rest" || path.starts_with("/a2a/rest/")) {
    CheckRpcStatus(what, r.status, v);
    return;
  }
  if (path == "/a2a/rest03" || path.starts_with("/a2a/rest03/")) {
    CheckRest03Error(what, v);
    return;
  }
  CheckEnvelope(what, v);
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace a2ad::fuzz;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto requests = SplitRequests(input, true, kMaxRequests);
  World world({.openwop = true, .push = true});
  for (auto& request : requests) {
    const std::string method = request.method;
    const std::string target = request.target;
    Exchange ex = world.Call(std::move(request));
    if (ex.answered) CheckAnswer(method, target, ex);  // else a long-poll, still waiting
  }
  return 0;
}
