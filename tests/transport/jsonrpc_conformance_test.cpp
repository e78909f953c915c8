// Declarative conformance fixtures (STYLE.md #7): each file under fixtures/ is a sequence
// of JSON-RPC exchanges run against one fresh server (in-memory store, manual clock,
// sequential ids, so every byte of the answer is predictable). A case is
//   {"name": "...", "headers": {"A2A-Version": "1.0"}, "body": <JSON> | "raw": "<text>",
//    "expect": <the exact JSON answer>}
// A case with "server": "authenticated" goes through a Router that requires API keys
// (transport/auth/auth.hpp; the key is conformance.hpp kGoldenReaderKey, scope tasks:read), and its
// "expect" is {"status", "headers"? (WWW-Authenticate), "body"}: 401 and 403 are answered with
// those HTTP statuses.
// Set A2AD_UPDATE_GOLDEN=1 to rewrite the "expect" members from the current output (then
// read the diff before committing it).
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "a2ad/core/api_key.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/a2a/jsonrpc/jsonrpc_handler.hpp"
#include "a2ad/transport/router.hpp"
#include "conformance.hpp"

namespace a2ad::transport {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::CollectingSink;
using testing::GateExecutor;
using testing::Pretty;
using testing::ReadFile;

struct Fixture {
  core::ManualClock clock{1767261600000};  // 2026-01-01T10:00:00.000Z
  std::unique_ptr<core::IdGenerator> ids = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store;
  boost::asio::io_context io;
  tasks::TaskService service{store, clock, *ids, io.get_executor(), {}};
  JsonRpcHandler handler{service};

  Fixture() {
    service.RegisterSkill({"echo", "Echo", "echoes", {"echo"}, {}},
                          std::make_shared<tasks::EchoExecutor>());
    service.RegisterSkill({"gate", "Gate", "asks one question", {"test"}, {}},
                          std::make_shared<GateExecutor>());
  }

  storage::MemoryApiKeyStore keys;
  Authenticator auth{keys, clock};
  std::unique_ptr<Router> router;  // the "authenticated" server, made on first use

  HttpResponse Call(HttpRequest req, bool authenticated = false) {
    if (authenticated && !router) {
      storage::ApiKeyRecord key;
      key.key_id = testing::kGoldenReaderKeyId;
      key.secret_sha256 = core::HashApiKeySecret(testing::kGoldenReaderSecret);
      key.tenant = "default";
      key.scopes = {"tasks:read"};
      EXPECT_TRUE(keys.Insert(key));
      router = std::make_unique<Router>(service, json::object{{"name", "golden"}});
      router->SetAuthenticator(&auth);
    }
    HttpResponse out;
    boost::asio::co_spawn(
        io, authenticated ? router->Handle(std::move(req)) : handler.Handle(std::move(req)),
        [&](std::exception_ptr ep, HttpResponse r) {
          if (ep) std::rethrow_exception(ep);
          out = std::move(r);
        });
    io.restart();
    io.run();
    clock.Advance(1000);  // each exchange one second later: timestamps tell them apart
    return out;
  }

  /// Runs a streaming response to its end; returns the SSE events (without the blank lines).
  json::array Drain(HttpResponse& res, int* writes = nullptr) {
    CollectingSink sink;
    bool done = false;
    boost::asio::co_spawn(io, res.stream(sink), [&](std::exception_ptr ep) {
      if (ep) std::rethrow_exception(ep);
      done = true;
    });
    io.restart();
    io.run();
    EXPECT_TRUE(done) << "the stream did not end";
    if (writes) *writes = sink.writes;
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

class JsonRpcConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(JsonRpcConformance, MatchesGolden) {
  const fs::path path = fs::path(A2AD_SOURCE_DIR) / "tests/transport/fixtures" / GetParam();
  json::value doc = json::parse(ReadFile(path));
  auto& cases = doc.at("cases").as_array();
  const bool update = std::getenv("A2AD_UPDATE_GOLDEN") != nullptr;
  Fixture fx;
  for (auto& c : cases) {
    auto& co = c.as_object();
    const std::string name(co.at("name").as_string());
    HttpRequest req;
    req.method = "POST";
    req.target = "/v1/a2a";
    if (auto* h = co.if_contains("headers"))
      for (const auto& kv : h->as_object())
        req.headers.emplace_back(std::string(kv.key()), std::string(kv.value().as_string()));
    if (req.Header("Content-Type").empty())
      req.headers.emplace_back("Content-Type", "application/json");
    if (auto* raw = co.if_contains("raw"))
      req.body = std::string(raw->as_string());
    else
      req.body = json::serialize(co.at("body"));
    const bool authenticated = co.contains("server") && co.at("server") == "authenticated";
    HttpResponse res = fx.Call(std::move(req), authenticated);
    if (!authenticated) {
      EXPECT_EQ(res.status, 200) << name;
    }
    json::value actual;
    if (authenticated && !res.stream) {
      json::object a{{"status", res.status}};
      for (const auto& [k, v] : res.headers)
        if (k == "WWW-Authenticate") a["headers"] = json::object{{k, v}};
      a["body"] = json::parse(res.body);
      actual = std::move(a);
    } else if (res.stream) {
      EXPECT_EQ(res.content_type, "text/event-stream") << name;
      actual = json::object{{"sse", fx.Drain(res)}};
    } else if (res.content_type == "text/event-stream") {  // a v0.3 stream's error event
      constexpr std::string_view kHead = "event: error\ndata: ";
      ASSERT_TRUE(res.body.starts_with(kHead) && res.body.ends_with("\n\n")) << res.body;
      actual = json::object{
          {"errorEvent", json::parse(std::string_view(res.body).substr(kHead.size()))}};
    } else {
      EXPECT_EQ(res.content_type, "application/json") << name;
      actual = json::parse(res.body);
    }
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
    Pretty(out, doc, 0);
    out << "\n";
  }
}

// Events already at hand when the stream gets to them go out in one write: a streamed echo is
// one commit (its first steps ride with the task's creation), the stream's backlog, one write.
TEST(StreamWrites, QueuedEventsAreCoalescedIntoOneWrite) {
  Fixture fx;
  HttpRequest req;
  req.method = "POST";
  req.target = "/v1/a2a";
  req.headers.emplace_back("Content-Type", "application/json");
  req.body =
      R"({"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"x"}]}}})";
  HttpResponse res = fx.Call(std::move(req));  // runs the echo to completion: 3 events queued
  ASSERT_TRUE(res.stream);
  int writes = 0;
  json::array events = fx.Drain(res, &writes);
  EXPECT_EQ(events.size(), 4u);  // task, working, artifact, completed
  EXPECT_EQ(writes, 1);          // the task and its three events, together
}

INSTANTIATE_TEST_SUITE_P(Fixtures, JsonRpcConformance,
                         ::testing::Values("v03.json", "v10.json", "errors.json"),
                         [](const auto& param_info) {
                           std::string n = param_info.param.substr(0, param_info.param.find('.'));
                           return n;
                         });

}  // namespace
}  // namespace a2ad::transport
