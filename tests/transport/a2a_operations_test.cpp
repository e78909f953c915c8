// The A2A operation table and the extension registry: each core method is named once per
// wire version, an extension adds a method and a card entry through one Register (its tables
// come with its module: tests/ext/extension_module_test.cpp), and the A2A-Extensions header is
// read once per request and echoed.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <set>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/builtin/tck_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/agent_card.hpp"
#include "a2ad/transport/a2a/extensions.hpp"
#include "a2ad/transport/router.hpp"
#include "in_process_router.hpp"

namespace a2ad::transport {
namespace {
namespace json = boost::json;
namespace asio = boost::asio;
using protocol::WireVersion;

constexpr const char* kGeo = "https://example.com/ext/geo/v1";

asio::awaitable<core::Result<OperationResult>> Where(const OperationCall& call) {
  OperationResult r;
  json::object o{{"activated", call.ctx.Activated(kGeo)}};
  if (call.params.is_object())
    if (auto* p = call.params.get_object().if_contains("place")) o["place"] = *p;
  r.result_json = protocol::SerializeJson(o);
  co_return r;
}

Extension Geo(bool required) {
  Extension e;
  e.uri = kGeo;
  e.description = "where a task runs";
  e.required = required;
  e.params = json::object{{"precision", "city"}};
  e.operations.push_back({"GeoWhere", "geo/where", "POST", "/geo:where", "", false, kScopeTasksRead,
                          "", ParamsRule::kObjectOrAbsent, Where});
  return e;
}

struct Server : testing::InProcessRouter {
  ExtensionRegistry extensions;

  explicit Server(std::optional<Extension> ext) {
    if (ext) extensions.Register(std::move(*ext));
    AgentCardConfig card;
    card.base_url = "http://127.0.0.1:1";
    card.extensions = extensions.CardEntries();
    router = std::make_unique<Router>(service, BuildAgentCard(card, service.skills()),
                                      StreamOptions{}, "/v1/a2a", nullptr, &extensions);
  }
};

std::string HeaderOf(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "(absent)";
}

json::value Body(const HttpResponse& r) {
  auto v = protocol::ParseJson(r.body);
  EXPECT_TRUE(v) << r.body;
  return v ? *v : json::value();
}

TEST(OperationTable, EveryCoreMethodIsNamedOncePerVersion) {
  core::ManualClock clock;
  auto ids = core::MakeSequentialIdGenerator("id");
  storage::MemoryTaskStore store;
  boost::asio::io_context io;
  tasks::TaskService service{store, clock, *ids, io.get_executor(), {}};
  const OperationTable t = CoreA2aOperations(service, 16);
  // WIRE.md §5: the eleven v1.0 methods and their v0.3 names (ListTasks has none).
  const std::vector<std::pair<std::string, std::string>> want = {
      {"SendMessage", "message/send"},
      {"SendStreamingMessage", "message/stream"},
      {"GetTask", "tasks/get"},
      {"ListTasks", ""},
      {"CancelTask", "tasks/cancel"},
      {"SubscribeToTask", "tasks/resubscribe"},
      {"CreateTaskPushNotificationConfig", "tasks/pushNotificationConfig/set"},
      {"GetTaskPushNotificationConfig", "tasks/pushNotificationConfig/get"},
      {"ListTaskPushNotificationConfigs", "tasks/pushNotificationConfig/list"},
      {"DeleteTaskPushNotificationConfig", "tasks/pushNotificationConfig/delete"},
      {"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"}};
  ASSERT_EQ(t.operations().size(), want.size());
  std::set<std::string> routes;
  for (const auto& [v10, v03] : want) {
    auto m = t.FindJsonRpc(v10);
    ASSERT_TRUE(m) << v10;
    EXPECT_EQ(m->version, WireVersion::kV10);
    EXPECT_EQ(m->op->v03_name, v03);
    EXPECT_EQ(t.Find(v10), m->op);
    if (!v03.empty()) {
      auto old = t.FindJsonRpc(v03);
      ASSERT_TRUE(old) << v03;
      EXPECT_EQ(old->version, WireVersion::kV03);
      EXPECT_EQ(old->op, m->op);
      EXPECT_EQ(t.Find(v03), nullptr) << "Find takes 1.0 names only";
    }
    // Every operation needs a scope but the extended card (any authenticated caller).
    EXPECT_EQ(m->op->scope.empty(), v10 == "GetExtendedAgentCard") << v10;
    EXPECT_TRUE(m->op->extension.empty()) << v10;
    EXPECT_EQ(m->op->streaming, v10 == "SendStreamingMessage" || v10 == "SubscribeToTask");
    routes.insert(m->op->http_method + " " + m->op->rest_path);
  }
  EXPECT_EQ(routes.size(), want.size()) << "two operations share a REST route";
  EXPECT_FALSE(t.FindJsonRpc("tasks/list"));
  EXPECT_FALSE(t.FindJsonRpc("sendmessage")) << "names are case-sensitive";
}

TEST(OperationTable, ANameTakenTwiceIsRefusedAtStartup) {
  OperationTable t;
  t.Add({"A", "a/b", "POST", "/a", "", false, kScopeTasksRead, "", ParamsRule::kObject, Where});
  EXPECT_THROW(
      t.Add({"B", "a/b", "POST", "/b", "", false, kScopeTasksRead, "", ParamsRule::kObject, Where}),
      std::logic_error);
  EXPECT_THROW(
      t.Add({"A", "", "POST", "/c", "", false, kScopeTasksRead, "", ParamsRule::kObject, Where}),
      std::logic_error);
  ExtensionRegistry r;
  r.Register(Geo(false));
  EXPECT_THROW(r.Register(Geo(true)), std::logic_error);
}

TEST(Extensions, AMethodAndACardEntryComeWithOneRegister) {
  Server s(Geo(false));
  // The card.
  HttpRequest card;
  card.method = "GET";
  card.target = "/.well-known/agent-card.json";
  const json::value c = Body(s.Call(card));
  const json::array& exts = c.at("capabilities").at("extensions").as_array();
  ASSERT_EQ(exts.size(), 1u);
  EXPECT_EQ(exts[0].at("uri"), kGeo);
  EXPECT_EQ(exts[0].at("required"), false);
  EXPECT_EQ(exts[0].at("params").at("precision"), "city");
  // The method, under both version's names, with params as the operation's rule allows.
  json::value r =
      Body(s.Rpc(R"({"jsonrpc":"2.0","id":1,"method":"GeoWhere","params":{"place":"Oslo"}})",
                 {{"A2A-Version", "1.0"}}));
  EXPECT_EQ(r.at("result").at("place"), "Oslo");
  EXPECT_EQ(r.at("result").at("activated"), false);
  r = Body(s.Rpc(R"({"jsonrpc":"2.0","id":2,"method":"geo/where"})", {}));
  EXPECT_EQ(r.at("result").at("activated"), false);
}

TEST(Extensions, ActivationIsReadOnceAndEchoedUnderTheVersionsHeader) {
  Server s(Geo(false));
  const std::string v10 = R"({"jsonrpc":"2.0","id":1,"method":"GeoWhere","params":{}})";
  const std::string v03 = R"({"jsonrpc":"2.0","id":1,"method":"geo/where","params":{}})";
  // Requested with an unknown one, spaces and a repeat: only the supported one is active.
  HttpResponse r = s.Rpc(
      v10, {{"A2A-Version", "1.0"},
            {"A2A-Extensions", " https://other.example/x/v2 , " + std::string(kGeo) + "," + kGeo}});
  EXPECT_EQ(Body(r).at("result").at("activated"), true);
  EXPECT_EQ(HeaderOf(r, "A2A-Extensions"), kGeo);
  // v0.3 names the header X-A2A-Extensions, both ways.
  r = s.Rpc(v03, {{"x-a2a-extensions", kGeo}});
  EXPECT_EQ(Body(r).at("result").at("activated"), true);
  EXPECT_EQ(HeaderOf(r, "X-A2A-Extensions"), kGeo);
  // Nothing requested, nothing echoed.
  r = s.Rpc(v10, {{"A2A-Version", "1.0"}});
  EXPECT_EQ(Body(r).at("result").at("activated"), false);
  EXPECT_EQ(HeaderOf(r, "A2A-Extensions"), "(absent)");
  // Only unsupported ones requested: ignored, not an error.
  r = s.Rpc(v10, {{"A2A-Version", "1.0"}, {"A2A-Extensions", "https://other.example/x/v2"}});
  EXPECT_EQ(Body(r).at("result").at("activated"), false);
  EXPECT_EQ(HeaderOf(r, "A2A-Extensions"), "(absent)");
}

TEST(Extensions, ARequiredExtensionNotActivatedRefusesTheCall) {
  Server s(Geo(true));
  const std::string send =
      R"({"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1",)"
      R"("role":"ROLE_USER","parts":[{"text":"hi"}]}}})";
  json::value r = Body(s.Rpc(send, {{"A2A-Version", "1.0"}}));
  EXPECT_EQ(r.at("error").at("code"), -32008) << r;
  EXPECT_EQ(r.at("id"), 7);
  EXPECT_NE(json::value_to<std::string>(r.at("error").at("message")).find(kGeo), std::string::npos);
  r = Body(s.Rpc(send, {{"A2A-Version", "1.0"}, {"A2A-Extensions", kGeo}}));
  EXPECT_EQ(r.at("result").at("task").at("status").at("state"), "TASK_STATE_COMPLETED") << r;
}

TEST(Extensions, WithoutAnyTheCardHasNoExtensionsMember) {
  Server s(std::nullopt);
  HttpRequest card;
  card.method = "GET";
  card.target = "/.well-known/agent-card.json";
  const json::value c = Body(s.Call(card));
  EXPECT_FALSE(c.at("capabilities").as_object().contains("extensions"));
}

}  // namespace
}  // namespace a2ad::transport

namespace a2ad::transport {
namespace {

// An executor's DirectReply answers SendMessage with a Message on every binding form: the
// 1.0 result {"message": ...}, the bare 0.3 message, and a stream of that one event.
TEST(DirectReply, AMessageAnswersAMessageAndNothingIsStored) {
  Server s(std::nullopt);
  s.service.RegisterSkill({"tck", "TCK", "conformance", {}, {}},
                          std::make_shared<tasks::TckExecutor>());
  auto send = [](const std::string& method, const std::string& id) {
    if (method == "message/send" || method == "message/stream")
      return R"({"jsonrpc":"2.0","id":1,"method":")" + method +
             R"(","params":{"message":{"kind":"message","messageId":")" + id +
             R"(","role":"user","parts":[{"kind":"text","text":"hi"}],"metadata":{"skillId":"tck"}}}})";
    return R"({"jsonrpc":"2.0","id":1,"method":")" + method +
           R"(","params":{"message":{"messageId":")" + id +
           R"(","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"skillId":"tck"}}}})";
  };
  json::value r =
      Body(s.Rpc(send("SendMessage", "tck-message-response-a"), {{"A2A-Version", "1.0"}}));
  const json::value& m = r.at("result").at("message");
  EXPECT_EQ(m.at("role"), "ROLE_AGENT") << r;
  EXPECT_EQ(m.at("parts").at(0).at("text"), "Direct message response");
  r = Body(s.Rpc(send("message/send", "tck-message-response-b"), {}));
  EXPECT_EQ(r.at("result").at("kind"), "message") << r;
  EXPECT_EQ(r.at("result").at("role"), "agent");
  // A stream of exactly that message, then the end.
  HttpRequest stream;
  stream.method = "POST";
  stream.target = "/v1/a2a";
  stream.headers = {{"A2A-Version", "1.0"}};
  stream.body = send("SendStreamingMessage", "tck-message-response-c");
  HttpResponse sse = s.Call(stream);
  ASSERT_TRUE(sse.stream);
  struct Sink final : SseSink {
    asio::awaitable<bool> Write(std::string bytes) override {
      text += bytes;
      co_return true;
    }
    void OnClientGone(std::function<void()>) override {}
    void OnServerStopping(std::function<void()>) override {}
    std::string text;
  } sink;
  bool ended = false;
  boost::asio::co_spawn(s.io, sse.stream(sink), [&](std::exception_ptr) { ended = true; });
  s.io.restart();
  s.io.run();
  ASSERT_TRUE(ended) << "a one-message stream ends by itself";
  const size_t at = sink.text.find("data: ");
  ASSERT_NE(at, std::string::npos) << sink.text;
  EXPECT_EQ(sink.text.find("data: ", at + 1), std::string::npos) << "exactly one event";
  auto event = protocol::ParseJson(sink.text.substr(at + 6, sink.text.find('\n', at) - at - 6));
  ASSERT_TRUE(event) << sink.text;
  EXPECT_EQ(event->at("result").at("message").at("parts").at(0).at("text"),
            "Direct message response");
  // Nothing was stored: no task in any list.
  r = Body(s.Rpc(R"({"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}})",
                 {{"A2A-Version", "1.0"}}));
  EXPECT_EQ(r.at("result").at("tasks").as_array().size(), 0u) << r;
}

}  // namespace
}  // namespace a2ad::transport
