// The router's authentication (transport/auth/auth.hpp) in process: the 401 of each surface
// (JSON-RPC with id null, google.rpc.Status, the 0.3 REST error, the OpenWOP envelope) with
// WWW-Authenticate, the JSON-RPC 403 with the request's id, the exempt routes, development
// mode until the first key exists, and a principal a request cannot bring itself.
#include "a2ad/transport/auth/auth.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/core/api_key.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "api_keys.hpp"
#include "in_process_router.hpp"

namespace a2ad::transport {
namespace {
namespace json = boost::json;

class AuthRouter : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.router = std::make_unique<Router>(app_.service, json::object{{"name", "t"}});
    app_.router->SetAuthenticator(&auth_);
  }
  std::string AddKey(const std::string& tenant, std::vector<std::string> scopes,
                     int64_t expires_ms = 0) {
    return testing::AddApiKey(keys_, tenant, std::move(scopes), expires_ms);
  }
  HttpResponse Get(const std::string& target,
                   std::vector<std::pair<std::string, std::string>> h = {}) {
    return app_.Get(target, std::move(h));
  }
  static std::string Header(const HttpResponse& r, std::string_view name) {
    for (const auto& [k, v] : r.headers)
      if (k == name) return v;
    return "";
  }

  testing::InProcessRouter app_;
  storage::MemoryApiKeyStore keys_;
  Authenticator auth_{keys_, app_.clock};
};

TEST_F(AuthRouter, WithoutKeysEveryoneIsTheAnonymousDevelopmentCaller) {
  EXPECT_EQ(Get("/a2a/rest/tasks").status, 200);
  // A principal set on the request by anyone but the router is dropped.
  HttpRequest r;
  r.method = "GET";
  r.target = "/a2a/rest/tasks";
  r.principal = protocol::Principal{"intruder", "other", {}, true, true};
  EXPECT_EQ(app_.Call(std::move(r)).status, 200);
  EXPECT_FALSE(auth_.Enabled());
  AddKey("acme", {"tasks:read"});
  EXPECT_EQ(Get("/a2a/rest/tasks").status, 401);  // on at the next request
  EXPECT_TRUE(auth_.Enabled());
}

TEST_F(AuthRouter, EachSurfaceRefusesInItsOwnShape) {
  const std::string key = AddKey("acme", {"tasks:read"});
  auto rpc = app_.Rpc(R"({"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}})",
                      {{"A2A-Version", "1.0"}, {"Content-Type", "application/json"}});
  EXPECT_EQ(rpc.status, 401);
  EXPECT_EQ(Header(rpc, "WWW-Authenticate"), "Bearer realm=\"a2ad\"");
  json::value body = json::parse(rpc.body);
  EXPECT_EQ(body.at("id"), 7) << body;  // the request's id, readable: echoed
  EXPECT_EQ(body.at("error").at("code"), -32014);
  auto rest = Get("/a2a/rest/tasks/x", {{"X-API-Key", key + "x"}});
  EXPECT_EQ(rest.status, 401);
  EXPECT_EQ(Header(rest, "WWW-Authenticate"), "Bearer realm=\"a2ad\", error=\"invalid_token\"");
  EXPECT_EQ(json::parse(rest.body).at("error").at("status"), "UNAUTHENTICATED");
  EXPECT_EQ(json::parse(Get("/a2a/rest03/v1/tasks/x").body).at("code"), -32014);
  auto ow = Get("/v1/runs");
  EXPECT_EQ(ow.status, 401);
  EXPECT_EQ(json::parse(ow.body).at("error"), "unauthenticated");
  // The refusal never repeats the credential.
  EXPECT_EQ(rest.body.find(key), std::string::npos);
  // A scope the key lacks: 403 with the request's id.
  auto denied = app_.Rpc(R"({"jsonrpc":"2.0","id":8,"method":"CancelTask","params":{"id":"x"}})",
                         {{"A2A-Version", "1.0"},
                          {"Content-Type", "application/json"},
                          {"Authorization", "Bearer " + key}});
  EXPECT_EQ(denied.status, 403);
  body = json::parse(denied.body);
  EXPECT_EQ(body.at("id"), 8);
  EXPECT_EQ(body.at("error").at("code"), -32015);
  // The key's own scope: served (the task is unknown).
  auto ok = Get("/a2a/rest/tasks/x", {{"authorization", "bearer " + key}});
  EXPECT_EQ(ok.status, 404) << ok.body;
}

TEST_F(AuthRouter, CardsHealthAndDiscoveryNeedNoCredential) {
  AddKey("acme", {"admin"});
  EXPECT_EQ(Get("/.well-known/agent-card.json").status, 200);
  EXPECT_EQ(Get("/.well-known/agent.json").status, 200);
  EXPECT_EQ(Get("/healthz").status, 200);
  EXPECT_EQ(Get("/nope").status, 401);
}

TEST_F(AuthRouter, ExpiredAndRevokedKeysAreRefused) {
  const std::string expired = AddKey("acme", {"admin"}, app_.clock.NowMs() + 1000);
  EXPECT_EQ(Get("/a2a/rest/tasks", {{"X-API-Key", expired}}).status, 200);
  app_.clock.Advance(1000);
  EXPECT_EQ(Get("/a2a/rest/tasks", {{"X-API-Key", expired}}).status, 401);
  const std::string revoked = AddKey("acme", {"admin"});
  EXPECT_EQ(Get("/a2a/rest/tasks", {{"X-API-Key", revoked}}).status, 200);
  ASSERT_TRUE(keys_.Revoke(core::ParseApiKey(revoked)->key_id, 1));
  EXPECT_EQ(Get("/a2a/rest/tasks", {{"X-API-Key", revoked}}).status, 401);
}

}  // namespace
}  // namespace a2ad::transport
