// The agent card: its 0.3 and 1.0 forms and which request gets which (header-less: 0.3;
// A2A-Version 1.x: 1.0), the security it declares only once authentication is on, caching
// validators (ETag, Last-Modified), and the JSON-RPC endpoint with a trailing '/'.
#include <gtest/gtest.h>

#include <atomic>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/transport/a2a/agent_card.hpp"
#include "a2ad/transport/router.hpp"
#include "in_process_router.hpp"

namespace a2ad::transport {
namespace {
namespace json = boost::json;

struct Server : testing::InProcessRouter {
  explicit Server(bool v10_only) {
    AgentCardConfig card;
    card.base_url = "http://127.0.0.1:1";
    card.serves_v03 = !v10_only;
    StreamOptions options;
    options.serve_v03 = !v10_only;
    router = std::make_unique<Router>(service, json::object{{"name", "replaced"}}, options);
    auto forms = [&](bool with_security) {
      AgentCardConfig c = card;
      c.declare_security = with_security;
      return Router::CardForms{BuildAgentCard(c, service.skills(), CardForm::kV03),
                               BuildAgentCard(c, service.skills(), CardForm::kV10)};
    };
    router->SetCards(forms(false), forms(true), v10_only, [this] { return secured.load(); });
  }
  std::atomic<bool> secured{false};

  HttpResponse Get(std::vector<std::pair<std::string, std::string>> headers,
                   std::string query = "") {
    HttpRequest r;
    r.method = "GET";
    r.target = "/.well-known/agent-card.json" + query;
    r.headers = std::move(headers);
    return Call(std::move(r));
  }
};

std::string HeaderOf(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

json::object Body(const HttpResponse& r) {
  auto v = protocol::ParseJsonObject(r.body, "card");
  EXPECT_TRUE(v) << r.body;
  return v ? *v : json::object();
}

// Issue 29, 4 (the OpenWOP scenario a2a-card-runtime-consistency, RFC 0152's receiver rule):
// header-less, the pure 0.3 card (no supportedInterfaces); with A2A-Version 1.x, the pure 1.0
// card (no url, protocolVersion, preferredTransport, additionalInterfaces).
TEST(Card, AHeaderlessRequestGetsThe03CardAndAVersionOneRequestThe10Card) {
  Server s(false);
  const json::object v03 = Body(s.Get({}));
  EXPECT_EQ(v03.at("url"), "http://127.0.0.1:1/v1/a2a");
  EXPECT_EQ(v03.at("protocolVersion"), "0.3.0");
  EXPECT_TRUE(v03.contains("additionalInterfaces"));
  EXPECT_FALSE(v03.contains("supportedInterfaces"));
  EXPECT_FALSE(v03.at("capabilities").as_object().contains("extendedAgentCard"));
  const HttpResponse r = s.Get({{"A2A-Version", "1.0"}});
  const json::object v10 = Body(r);
  for (const char* v03_only :
       {"url", "preferredTransport", "protocolVersion", "additionalInterfaces"})
    EXPECT_FALSE(v10.contains(v03_only)) << v03_only;
  // The 0.3 interfaces stay listed: a 1.x SDK in legacy mode picks one from here.
  EXPECT_EQ(v10.at("supportedInterfaces").as_array().size(), 4u);
  EXPECT_EQ(HeaderOf(r, "Vary"), "A2A-Version");
  EXPECT_NE(HeaderOf(r, "ETag"), HeaderOf(s.Get({}), "ETag")) << "two forms, two validators";
}

// ACTS / issue 29, 5: a server without a credential declares no security (it reads none); as
// soon as authentication is on, the card declares the schemes it reads, in each form's
// spelling.
TEST(Card, SecurityIsDeclaredOnlyOnceAuthenticationIsOn) {
  Server s(false);
  for (const json::object& card : {Body(s.Get({})), Body(s.Get({{"A2A-Version", "1.0"}}))})
    for (const char* member : {"securitySchemes", "securityRequirements", "security"})
      EXPECT_FALSE(card.contains(member)) << member;
  s.secured = true;
  const json::object v03 = Body(s.Get({}));
  EXPECT_EQ(v03.at("securitySchemes").at("bearer").at("type"), "http");
  EXPECT_EQ(v03.at("security").at(0).at("bearer"), json::array{"tasks:read"});
  EXPECT_FALSE(v03.contains("securityRequirements"));
  const json::object v10 = Body(s.Get({{"A2A-Version", "1.0"}}));
  EXPECT_EQ(v10.at("securitySchemes").at("bearer").at("httpAuthSecurityScheme").at("scheme"),
            "Bearer");
  // Each requirement one scheme and one scope an A2A method needs: never an empty list (the
  // SDK's canonicalization would drop it from the signed payload).
  EXPECT_EQ(v10.at("securityRequirements").at(0).at("schemes").at("bearer").at("list"),
            json::array{"tasks:read"});
  EXPECT_EQ(v10.at("securityRequirements").as_array().size(), 6u);  // 2 schemes x 3 scopes
  EXPECT_FALSE(v10.contains("security"));
}

// A2A 1.0 §3.6.1: the version may be a query parameter; the header, when present, wins.
TEST(Card, TheVersionAsAQueryParameterGetsThe10Card) {
  Server s(false);
  const json::object v10 = Body(s.Get({}, "?A2A-Version=1.0"));
  EXPECT_FALSE(v10.contains("url"));
  EXPECT_FALSE(v10.contains("protocolVersion"));
  EXPECT_EQ(v10.at("supportedInterfaces").as_array().size(), 4u);
  EXPECT_EQ(Body(s.Get({}, "?A2A-Version=1.0")), Body(s.Get({{"A2A-Version", "1.0"}})));
  EXPECT_TRUE(Body(s.Get({{"A2A-Version", "0.3"}}, "?A2A-Version=1.0")).contains("url"));
  EXPECT_TRUE(Body(s.Get({}, "?other=1")).contains("url"));
  EXPECT_TRUE(Body(s.Get({}, "?A2A-Version=%zz")).contains("url"));  // not decodable: ignored
}

TEST(Card, OneZeroOnlyServesTheStrictFormToEveryone) {
  Server s(true);
  const HttpResponse r = s.Get({});
  const json::object card = Body(r);
  EXPECT_FALSE(card.contains("url"));
  for (const auto& i : card.at("supportedInterfaces").as_array())
    EXPECT_EQ(i.at("protocolVersion"), "1.0") << i;
  EXPECT_EQ(HeaderOf(r, "Vary"), "");
  // ... and its JSON-RPC endpoint refuses 0.3 methods as an unsupported version.
  HttpRequest rpc;
  rpc.method = "POST";
  rpc.target = "/v1/a2a";
  rpc.body = R"({"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"id":"x"}})";
  auto v = protocol::ParseJson(s.Call(rpc).body);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->at("error").at("code"), -32009) << *v;
}

TEST(Card, EveryBindingOfEachVersionIsListed) {
  AgentCardConfig config;
  config.base_url = "http://h:1";
  config.grpc_address = "h:2";
  const json::object card = BuildAgentCard(config, {}, CardForm::kV10);
  const json::object v03 = BuildAgentCard(config, {}, CardForm::kV03);
  auto entry = [](const char* url, const char* binding, const char* version) {
    return json::value(
        json::object{{"url", url}, {"protocolBinding", binding}, {"protocolVersion", version}});
  };
  EXPECT_EQ(card.at("supportedInterfaces"),
            json::value(json::array{
                entry("http://h:1/v1/a2a", "JSONRPC", "1.0"),
                entry("http://h:1/a2a/rest", "HTTP+JSON", "1.0"), entry("h:2", "GRPC", "1.0"),
                entry("http://h:1/v1/a2a", "JSONRPC", "0.3"),
                entry("http://h:1/a2a/rest03", "HTTP+JSON", "0.3"), entry("h:2", "GRPC", "0.3")}));
  // v0.3 clients choose among url + preferredTransport and additionalInterfaces.
  EXPECT_EQ(v03.at("url"), "http://h:1/v1/a2a");
  EXPECT_EQ(v03.at("preferredTransport"), "JSONRPC");
  EXPECT_EQ(v03.at("additionalInterfaces"),
            json::value(json::array{
                json::object{{"url", "http://h:1/v1/a2a"}, {"transport", "JSONRPC"}},
                json::object{{"url", "http://h:1/a2a/rest03"}, {"transport", "HTTP+JSON"}},
                json::object{{"url", "h:2"}, {"transport", "GRPC"}}}));
  config.serves_v03 = false;
  const json::object v10_only = BuildAgentCard(config, {}, CardForm::kV10);
  EXPECT_EQ(v10_only.at("supportedInterfaces").as_array().size(), 3u);
  EXPECT_FALSE(v10_only.contains("additionalInterfaces"));
}

TEST(Card, LastModifiedAndETagRevalidate) {
  Server s(false);
  const HttpResponse first = s.Get({});
  const std::string lm = HeaderOf(first, "Last-Modified");
  ASSERT_EQ(lm.size(), 29u) << lm;  // "Tue, 24 Nov 2026 09:00:00 GMT"
  EXPECT_EQ(lm.substr(25), " GMT");
  EXPECT_EQ(s.Get({{"If-Modified-Since", lm}}).status, 304);
  EXPECT_EQ(s.Get({{"If-Modified-Since", "Mon, 01 Jan 2001 00:00:00 GMT"}}).status, 200);
  EXPECT_EQ(s.Get({{"If-None-Match", HeaderOf(first, "ETag")}}).status, 304);
  // If-None-Match wins over If-Modified-Since (RFC 9110 §13.1.3).
  EXPECT_EQ(s.Get({{"If-None-Match", "W/\"other\""}, {"If-Modified-Since", lm}}).status, 200);
}

TEST(Card, TheJsonRpcEndpointAnswersWithATrailingSlash) {
  Server s(false);
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/a2a/";
  r.headers = {{"A2A-Version", "1.0"}};
  r.body = R"({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}})";
  const HttpResponse resp = s.Call(r);
  EXPECT_EQ(resp.status, 200);
  auto v = protocol::ParseJson(resp.body);
  ASSERT_TRUE(v) << resp.body;
  EXPECT_EQ(v->at("error").at("code"), -32001) << resp.body;
  r.target = "/v1/a2a//";
  EXPECT_EQ(s.Call(r).status, 404);
}

}  // namespace
}  // namespace a2ad::transport
