// Traces through the real binary (issue 18), collected by a local OTLP/HTTP receiver: a
// request's traceparent is the parent of the request's span; the run it starts keeps that
// span's context (metadata.openwop.traceparent), so after a SIGKILL and a restart, when the
// run's gate is answered by a request of another trace, the run's node steps, commits, its
// HTTP call and its push deliveries are still spans of the first trace, and the call and the
// pushes carry it in their traceparent header.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "http_client.hpp"
#include "pause_fixture.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"
#include "webhook_receiver.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using pause_test::Node;
using pause_test::Workflow;

constexpr const char* kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr const char* kCallerSpan = "00f067aa0ba902b7";

struct SpanSeen {
  std::string trace_id, span_id, parent, name;
  int kind = 0;
  json::object attributes;  // key -> the OTLP AnyValue
  bool error = false;
};

// Every span the receiver got, checking the OTLP/JSON shape of each export on the way.
std::vector<SpanSeen> SpansOf(testing::WebhookReceiver& otlp) {
  std::vector<SpanSeen> out;
  for (const auto& r : otlp.requests()) {
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/v1/traces");
    EXPECT_EQ(r.Header("Content-Type"), "application/json");
    EXPECT_EQ(r.Header("X-Collector-Key"), "k1");
    const json::value doc = json::parse(r.body);
    for (const auto& rs : doc.at("resourceSpans").as_array()) {
      std::map<std::string, std::string> resource;
      for (const auto& a : rs.at("resource").at("attributes").as_array())
        resource[std::string(a.at("key").as_string())] =
            std::string(a.at("value").at("stringValue").as_string());
      EXPECT_EQ(resource["service.name"], "a2ad-under-test");
      EXPECT_FALSE(resource["service.version"].empty());
      for (const auto& ss : rs.at("scopeSpans").as_array()) {
        EXPECT_EQ(ss.at("scope").at("name"), "a2ad");
        for (const auto& sv : ss.at("spans").as_array()) {
          const json::object& s = sv.as_object();
          SpanSeen seen;
          seen.trace_id = std::string(s.at("traceId").as_string());
          seen.span_id = std::string(s.at("spanId").as_string());
          if (auto* p = s.if_contains("parentSpanId")) seen.parent = std::string(p->as_string());
          seen.name = std::string(s.at("name").as_string());
          seen.kind = static_cast<int>(s.at("kind").as_int64());
          EXPECT_EQ(seen.trace_id.size(), 32u);
          EXPECT_EQ(seen.span_id.size(), 16u);
          // Times: decimal strings of Unix nanoseconds, the end not before the start.
          const std::string start(s.at("startTimeUnixNano").as_string()),
              end(s.at("endTimeUnixNano").as_string());
          EXPECT_GT(std::stoll(start), 1'700'000'000'000'000'000LL) << seen.name;
          EXPECT_GE(std::stoll(end), std::stoll(start)) << seen.name;
          if (auto* attrs = s.if_contains("attributes"))
            for (const auto& a : attrs->as_array())
              seen.attributes[a.at("key").as_string()] = a.at("value");
          if (auto* st = s.if_contains("status")) seen.error = st->at("code") == 2;
          out.push_back(std::move(seen));
        }
      }
    }
  }
  return out;
}

class Traces : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-traces");
    fs::create_directories(dir_ / "wf");
    const json::object traced = Workflow(
        "traced",
        json::array{Node("gate", "core.approvalGate",
                         json::object{{"title", "Go on?"},
                                      {"actions", json::array{"accept", "reject"}}}),
                    Node("call", "core.http",
                         json::object{{"url", api_.Url("/api")},
                                      {"method", "POST"},
                                      {"body", json::object{{"q", 1}}},
                                      {"retry", json::object{{"maxAttempts", 1}}}})});
    std::ofstream(dir_ / "wf" / "traced.json") << json::serialize(traced);
    otlp_.SetResponse("{}");
  }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start() {
    server_ = testing::ServerProcess::Start(
        testing::A2adBinary(), (dir_ / "data").string(),
        {"--workflows-dir", (dir_ / "wf").string(), "--otlp-endpoint",
         "http://127.0.0.1:" + std::to_string(otlp_.port()), "--otlp-header",
         "X-Collector-Key=k1", "--otlp-service-name", "a2ad-under-test", "--egress-allow-http",
         "--egress-allowlist", "127.0.0.1"});
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_.port);
  }
  testing::ClientResponse Send(const json::object& params, const std::string& traceparent = "") {
    json::object rpc{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "message/send"}, {"params", params}};
    std::vector<std::pair<std::string, std::string>> headers{{"Content-Type", "application/json"}};
    if (!traceparent.empty()) headers.emplace_back("traceparent", traceparent);
    return client_->Request("POST", "/v1/a2a", json::serialize(rpc), headers);
  }
  // Waits (bounded) until the receiver holds a span that `pred` accepts.
  std::vector<SpanSeen> WaitForSpan(const std::function<bool(const SpanSeen&)>& pred) {
    auto any = [&](const std::vector<SpanSeen>& spans) {
      return std::any_of(spans.begin(), spans.end(), pred);
    };
    std::vector<SpanSeen> spans =
        testing::PollUntil([&] { return SpansOf(otlp_); }, any, std::chrono::seconds(20));
    if (!any(spans)) ADD_FAILURE() << "no such span among " << spans.size();
    return spans;
  }
  fs::path dir_;
  testing::WebhookReceiver otlp_;  // the collector
  testing::WebhookReceiver api_;   // the workflow's HTTP API and the push receiver
  testing::ServerProcess server_;
  std::unique_ptr<testing::HttpClient> client_;
};

const SpanSeen* Find(const std::vector<SpanSeen>& spans,
                     const std::function<bool(const SpanSeen&)>& pred) {
  for (const auto& s : spans)
    if (pred(s)) return &s;
  return nullptr;
}

TEST_F(Traces, ARunStaysInItsCallersTraceAcrossARestart) {
  Start();
  const std::string caller = std::string("00-") + kTrace + "-" + kCallerSpan + "-01";
  auto sent = Send(
      json::object{
          {"message",
           json::object{{"kind", "message"},
                        {"role", "user"},
                        {"messageId", "m1"},
                        {"parts", json::array{json::object{{"kind", "text"}, {"text", "go"}}}},
                        {"metadata", json::object{{"skillId", "traced"}}}}},
          {"configuration",
           json::object{{"pushNotificationConfig", json::object{{"url", api_.Url("/push")}}}}}},
      caller);
  ASSERT_EQ(sent.status, 200) << sent.body;
  const json::object task = sent.Json().at("result").as_object();
  ASSERT_EQ(task.at("status").at("state"), "input-required") << sent.body;
  const std::string task_id(task.at("id").as_string());

  // The request's span: a server span of the caller's trace, the caller's span its parent.
  auto spans = WaitForSpan([](const SpanSeen& s) { return s.name == "message/send"; });
  const SpanSeen* request = Find(spans, [](const SpanSeen& s) { return s.name == "message/send"; });
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(request->trace_id, kTrace);
  EXPECT_EQ(request->parent, kCallerSpan);
  EXPECT_EQ(request->kind, 2);
  EXPECT_EQ(request->attributes.at("a2a.task.id").at("stringValue"), json::value(task_id));
  EXPECT_EQ(request->attributes.at("http.response.status_code").at("intValue"), "200");
  const std::string request_span = request->span_id;
  // The run keeps it.
  const json::value run = client_->Request("GET", "/v1/runs/" + task_id).Json();
  EXPECT_EQ(run.at("metadata").at("openwop").at("traceparent"),
            json::value(std::string("00-") + kTrace + "-" + request_span + "-01"))
      << run;

  // Killed while the run waits at its gate; the answer comes from another trace.
  client_.reset();
  server_.Kill(SIGKILL);
  Start();
  auto answered = Send(
      json::object{{"message",
                    json::object{{"kind", "message"},
                                 {"role", "user"},
                                 {"messageId", "m2"},
                                 {"taskId", task_id},
                                 {"parts", json::array{json::object{
                                               {"kind", "data"},
                                               {"data", json::object{{"action", "accept"}}}}}}}}},
      "00-11111111111111111111111111111111-2222222222222222-01");
  ASSERT_EQ(answered.status, 200) << answered.body;
  ASSERT_GE(api_.WaitFor(2), 2u);  // the HTTP call and at least one push

  // The call: a client span of the first trace under the step of node `call`, whose context
  // the request carried.
  spans = WaitForSpan([](const SpanSeen& s) { return s.name == "HTTP POST"; });
  const SpanSeen* call = Find(spans, [](const SpanSeen& s) { return s.name == "HTTP POST"; });
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(call->trace_id, kTrace);
  EXPECT_EQ(call->kind, 3);
  const SpanSeen* step = Find(spans, [&](const SpanSeen& s) { return s.span_id == call->parent; });
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->name, "node call");
  EXPECT_EQ(step->trace_id, kTrace);
  EXPECT_EQ(step->parent, request_span);
  EXPECT_EQ(step->attributes.at("openwop.node.type").at("stringValue"), "core.http");
  EXPECT_EQ(step->attributes.at("openwop.run.id").at("stringValue"), json::value(task_id));
  const SpanSeen* commit = Find(spans, [&](const SpanSeen& s) {
    return s.name == "commit" && s.parent == step->span_id;
  });
  ASSERT_NE(commit, nullptr);
  EXPECT_EQ(commit->trace_id, kTrace);
  // The answer's own request span is of its own trace.
  const SpanSeen* reply = Find(spans, [](const SpanSeen& s) {
    return s.name == "message/send" && s.trace_id == "11111111111111111111111111111111";
  });
  ASSERT_NE(reply, nullptr);
  EXPECT_EQ(reply->parent, "2222222222222222");
  bool called = false;
  for (const auto& r : api_.requests())
    if (r.target == "/api") {
      called = true;
      EXPECT_EQ(r.Header("traceparent"), std::string("00-") + kTrace + "-" + call->span_id + "-01");
    }
  EXPECT_TRUE(called);

  // The pushes (input-required before the kill, completed after): spans of the run's trace,
  // their context in the traceparent header.
  spans = WaitForSpan([](const SpanSeen& s) { return s.name == "push deliver"; });
  for (const auto& r : api_.requests()) {
    if (r.target != "/push") continue;
    const std::string tp = r.Header("traceparent");
    ASSERT_EQ(tp.size(), 55u);
    EXPECT_EQ(tp.substr(3, 32), kTrace);
  }
  const SpanSeen* push = Find(spans, [](const SpanSeen& s) { return s.name == "push deliver"; });
  ASSERT_NE(push, nullptr);
  EXPECT_EQ(push->trace_id, kTrace);
  EXPECT_EQ(push->parent, request_span);
  EXPECT_EQ(push->kind, 4);
}

TEST_F(Traces, ARequestWithoutAValidTraceparentStartsATraceOfItsOwn) {
  Start();
  for (const char* bad : {"", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "garbage"}) {
    auto r = client_->Request("GET", "/v1/workflows", "",
                              bad[0] ? std::vector<std::pair<std::string, std::string>>{
                                           {"traceparent", bad}}
                                     : std::vector<std::pair<std::string, std::string>>{});
    ASSERT_EQ(r.status, 200);
  }
  auto spans = WaitForSpan([](const SpanSeen& s) { return s.name == "GET /v1/workflows"; });
  // All four come: none with a parent, each its own trace.
  testing::WaitFor([&] { return SpansOf(otlp_).size() >= 4; }, std::chrono::seconds(5));
  spans = SpansOf(otlp_);
  std::set<std::string> traces;
  for (const auto& s : spans) {
    if (s.name != "GET /v1/workflows") continue;
    EXPECT_EQ(s.parent, "");
    EXPECT_NE(s.trace_id, "00000000000000000000000000000000");
    traces.insert(s.trace_id);
  }
  EXPECT_EQ(traces.size(), 4u);
}

TEST_F(Traces, AnUnsampledCallersTraceIsNotExported) {
  Start();
  auto r = client_->Request("GET", "/v1/workflows", "",
                            {{"traceparent", std::string("00-") + kTrace + "-" + kCallerSpan + "-00"}});
  ASSERT_EQ(r.status, 200);
  auto marker = client_->Request("GET", "/v1/runs");  // sampled: ours
  ASSERT_EQ(marker.status, 200);
  auto spans = WaitForSpan([](const SpanSeen& s) { return s.name == "GET /v1/runs"; });
  EXPECT_EQ(Find(spans, [](const SpanSeen& s) { return s.trace_id == kTrace; }), nullptr);
}

TEST_F(Traces, ACollectorThatRefusesCostsTheServerNothing) {
  otlp_.SetDefaultStatus(500);
  Start();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(client_->Request("GET", "/v1/workflows").status, 200);
  // The batch is refused (once: a 500 is not tried again), counted, and the server serves on.
  const std::string metrics = testing::PollUntil(
      [&] { return client_->Request("GET", "/metrics").body; },
      [](const std::string& m) {
        return m.find("a2ad_trace_spans_total{outcome=\"failed\"} 3") != std::string::npos;
      },
      std::chrono::seconds(15));
  EXPECT_NE(metrics.find("a2ad_trace_spans_total{outcome=\"failed\"} 3"), std::string::npos)
      << metrics;
  EXPECT_EQ(otlp_.count(), 1u);
  EXPECT_EQ(client_->Request("GET", "/v1/workflows").status, 200);
}

}  // namespace
}  // namespace a2ad
