// The A2A 0.3 HTTP+JSON binding (a2a_rest.hpp, /a2a/rest03) as declarative fixtures (STYLE.md
// #7): fixtures/rest_v03.json is a sequence of HTTP exchanges run against one fresh binding
// (in-memory store, manual clock, sequential ids: every byte of every answer is predictable)
// over the operation table with push configs served and one extension registered. A case is
//   {"name": "...", "method": "GET", "target": "/a2a/rest03/v1/...",
//    "headers": {...}, "body": <JSON> | "raw": "<text>",
//    "expect": {"status": 200, "contentType": "...", "headers": {...}, "body": <JSON> |
//               "text": "<not JSON>" | "sse": ["id: 0\ndata: {...}", ...]}}
// Every route and every error the binding answers is a case. Set A2AD_UPDATE_GOLDEN=1 to
// rewrite the "expect" members from the current output (then read the diff before committing).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/builtin/tck_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a_rest.hpp"
#include "conformance.hpp"

namespace a2ad::transport {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

constexpr const char* kGeo = "https://example.com/ext/geo/v1";

struct Fixture {
  core::ManualClock clock{1767261600000};  // 2026-01-01T10:00:00.000Z
  std::unique_ptr<core::IdGenerator> ids = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store;
  boost::asio::io_context io;
  // Push: only example.com resolves (to a public address); nothing is ever sent.
  net::StaticResolver resolver{{{"example.com", {"93.184.216.34"}}}};
  net::UrlGuard guard = net::UrlGuard::Create({}, resolver).value();
  push::PushService push{store, store, guard, clock, *ids};
  tasks::TaskService service{store, clock, *ids, io.get_executor(), ServiceOptions(push)};
  ExtensionRegistry extensions;
  OperationTable ops;
  std::unique_ptr<A2aRestBinding> rest;

  static tasks::TaskServiceOptions ServiceOptions(push::PushService& p) {
    tasks::TaskServiceOptions o;
    o.vet_push_config = [&p](protocol::PushNotificationConfig& c, const std::string& task_id) {
      return p.Vet(c, task_id);
    };
    o.on_commit = [&p](const storage::TaskRecord* previous, storage::TaskCommit& commit) {
      p.OnCommit(previous, commit);
    };
    return o;
  }

  explicit Fixture(bool serve_v03 = true, bool serve_push = true) {
    service.RegisterSkill({"echo", "Echo", "echoes", {"echo"}, {}},
                          std::make_shared<tasks::EchoExecutor>());
    service.RegisterSkill({"gate", "Gate", "asks one question", {"test"}, {}},
                          std::make_shared<testing::GateExecutor>());
    service.RegisterSkill({"tck", "TCK", "the conformance kit's agent", {"test"}, {}},
                          std::make_shared<tasks::TckExecutor>());
    Extension geo;
    geo.uri = kGeo;
    extensions.Register(std::move(geo));
    ops = CoreA2aOperations(service, 16);
    if (serve_push) AddPushOperations(ops, push);
    StreamOptions options;
    options.serve_v03 = serve_v03;
    rest = std::make_unique<A2aRestBinding>(ops, kA2aRest03Path, options, &extensions,
                                            protocol::WireVersion::kV03);
  }

  HttpResponse Call(HttpRequest req) {
    EXPECT_TRUE(rest->Owns(req.Path())) << req.target;
    HttpResponse out;
    boost::asio::co_spawn(io, rest->Handle(req), [&](std::exception_ptr ep, HttpResponse r) {
      if (ep) std::rethrow_exception(ep);
      out = std::move(r);
    });
    io.restart();
    io.run();
    clock.Advance(1000);  // each exchange one second later: timestamps tell them apart
    return out;
  }

  /// Runs a streaming response to its end; returns the SSE events (without the blank lines).
  json::array Drain(HttpResponse& res) {
    testing::CollectingSink sink;
    bool done = false;
    boost::asio::co_spawn(io, res.stream(sink), [&](std::exception_ptr ep) {
      if (ep) std::rethrow_exception(ep);
      done = true;
    });
    io.restart();
    io.run();
    EXPECT_TRUE(done) << "the stream did not end";
    json::array events;
    size_t pos = 0;
    while (pos < sink.text.size()) {
      size_t end = sink.text.find("\n\n", pos);
      if (end == std::string::npos) end = sink.text.size();
      events.emplace_back(sink.text.substr(pos, end - pos));
      pos = end + 2;
    }
    return events;
  }
};

HttpRequest RequestOf(const json::object& c) {
  HttpRequest req;
  req.method = std::string(c.at("method").as_string());
  req.target = std::string(c.at("target").as_string());
  if (auto* h = c.if_contains("headers"))
    for (const auto& kv : h->as_object())
      req.headers.emplace_back(std::string(kv.key()), std::string(kv.value().as_string()));
  if (auto* raw = c.if_contains("raw")) {
    req.body = std::string(raw->as_string());
  } else if (auto* body = c.if_contains("body")) {
    req.body = json::serialize(*body);
  }
  if (!req.body.empty() && req.Header("Content-Type").empty())
    req.headers.emplace_back("Content-Type", "application/json");
  return req;
}

json::value AnswerOf(Fixture& fx, HttpResponse& res) {
  json::object a{{"status", res.status}, {"contentType", res.content_type}};
  if (!res.headers.empty()) {
    json::object h;
    for (const auto& [k, v] : res.headers) h[k] = v;
    a["headers"] = std::move(h);
  }
  if (res.stream) {
    a["sse"] = fx.Drain(res);
  } else if (auto body = protocol::ParseJson(res.body)) {
    a["body"] = std::move(body).value();
  } else {
    a["text"] = res.body;
  }
  return a;
}

TEST(RestV03Conformance, MatchesGolden) {
  const fs::path path = fs::path(A2AD_SOURCE_DIR) / "tests/transport/fixtures/rest_v03.json";
  json::value doc = json::parse(testing::ReadFile(path));
  const bool update = std::getenv("A2AD_UPDATE_GOLDEN") != nullptr;
  Fixture fx;
  ASSERT_TRUE(fx.push.WarmCache());
  for (auto& c : doc.at("cases").as_array()) {
    auto& co = c.as_object();
    const std::string name(co.at("name").as_string());
    HttpResponse res = fx.Call(RequestOf(co));
    const json::value actual = AnswerOf(fx, res);
    if (update) {
      co["expect"] = actual;
    } else {
      ASSERT_TRUE(co.contains("expect"))
          << name << ": no expect member; run with A2AD_UPDATE_GOLDEN=1";
      EXPECT_EQ(actual, co.at("expect"))
          << "case: " << name << "\nactual: " << json::serialize(actual);
    }
  }
  if (update) {
    std::ofstream out(path);
    testing::Pretty(out, doc, 0);
    out << "\n";
  }
}

// `--a2a-versions 1.0`: the routes stay (a client learns why), every one refuses the version.
TEST(RestV03Conformance, AOneZeroOnlyServerRefusesEveryRoute) {
  Fixture fx(false);
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/a2a/rest03/v1/message:send"},
           {"GET", "/a2a/rest03/v1/tasks/t1"},
           {"GET", "/a2a/rest03/v1/tasks/t1/pushNotificationConfigs"}}) {
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.headers.emplace_back("Content-Type", "application/json");
    if (method == "POST")
      req.body = R"({"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]}})";
    const HttpResponse res = fx.Call(req);
    EXPECT_EQ(res.status, 400) << target;
    auto body = protocol::ParseJson(res.body);
    ASSERT_TRUE(body) << res.body;
    EXPECT_EQ(body->at("code"), -32009) << res.body;
  }
}

// Without push (AddPushOperations not called) the four push-config routes answer
// PushNotificationNotSupported.
TEST(RestV03Conformance, PushRoutesWithoutPushAnswerPushNotificationNotSupported) {
  Fixture fx(true, false);
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/a2a/rest03/v1/tasks/t1/pushNotificationConfigs"},
           {"GET", "/a2a/rest03/v1/tasks/t1/pushNotificationConfigs"},
           {"GET", "/a2a/rest03/v1/tasks/t1/pushNotificationConfigs/c1"},
           {"DELETE", "/a2a/rest03/v1/tasks/t1/pushNotificationConfigs/c1"}}) {
    HttpRequest req;
    req.method = method;
    req.target = target;
    if (method == "POST") {
      req.headers.emplace_back("Content-Type", "application/json");
      req.body = R"({"pushNotificationConfig":{"url":"https://example.com/h"}})";
    }
    const HttpResponse res = fx.Call(req);
    EXPECT_EQ(res.status, 400) << method << " " << target;
    auto body = protocol::ParseJson(res.body);
    ASSERT_TRUE(body) << res.body;
    EXPECT_EQ(body->at("code"), -32003) << res.body;
  }
}

}  // namespace
}  // namespace a2ad::transport
