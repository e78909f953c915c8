// What the card says of authentication, the authenticated extended card, the 403 challenge and
// rate limits, through the real binary over loopback on a real SQLite data directory (issue
// 14): the public card declares the credentials the server reads (both wire shapes) and lists
// public workflows only; GetExtendedAgentCard / agent/getAuthenticatedExtendedCard / REST
// /extendedAgentCard and /v1/card / gRPC (both services) answer the extended card, with the
// non-public workflow, to a caller with a key and 401 to one without; a 403 names the missing
// scope (RFC 6750 error="insufficient_scope"); with --rate-limit, a caller past its bucket is
// answered 429 + Retry-After in each surface's shape (gRPC RESOURCE_EXHAUSTED) while another
// caller is served.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "a2a/v1/a2a.grpc.pb.h"
#include "http_client.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using testing::ClientResponse;
using testing::HttpClient;
using testing::ServerProcess;
using Headers = std::vector<std::pair<std::string, std::string>>;

const std::string kBinary = testing::A2adBinary();

std::string RunA2ad(const std::string& args) {
  std::string out;
  FILE* p = popen((kBinary + " " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  EXPECT_EQ(pclose(p), 0) << args;
  return out;
}

// A workflow; `is_public` false marks it for the extended card only.
std::string Workflow(const std::string& id, bool is_public) {
  json::object metadata{{"tags", json::array{"test"}}};
  if (!is_public)
    metadata["customProperties"] = json::object{{"a2a", json::object{{"public", false}}}};
  return json::serialize(json::object{
      {"id", id},
      {"name", id},
      {"version", "1"},
      {"nodes", json::array{json::object{{"id", "n"}, {"typeId", "core.noop"}, {"config", {}}}}},
      {"edges", json::array{}},
      {"triggers", json::array{}},
      {"variables", json::array{}},
      {"metadata", metadata},
      {"settings", json::object{}}});
}

std::vector<std::string> SkillIds(const json::value& card) {
  std::vector<std::string> ids;
  for (const auto& s : card.at("skills").as_array()) ids.emplace_back(s.at("id").as_string());
  return ids;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class CardAndLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-card-limits");
    workflows_ = dir_.string() + "-workflows";
    fs::create_directories(workflows_);
    std::ofstream(workflows_ / "open-flow.json") << Workflow("open-flow", true);
    std::ofstream(workflows_ / "inner-flow.json") << Workflow("inner-flow", false);
  }
  void TearDown() override {
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
    fs::remove_all(workflows_);
  }
  std::string Key(const std::string& tenant, const std::string& scopes) {
    const std::string out = RunA2ad("keys create --data-dir " + dir_.string() + " --tenant " +
                                    tenant + " --scopes " + scopes);
    return out.substr(0, out.find('\n'));
  }
  void Start(std::vector<std::string> flags = {}) {
    flags.insert(flags.end(), {"--workflows-dir", workflows_.string()});
    server_ = ServerProcess::Start(kBinary, dir_.string(), std::move(flags));
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  ClientResponse As(const std::string& key, const std::string& method, const std::string& target,
                    const std::string& body = "", Headers h = {}) {
    if (!key.empty()) h.emplace_back("X-API-Key", key);
    if (!body.empty()) h.emplace_back("Content-Type", "application/json");
    return client_->Request(method, target, body, h);
  }
  ClientResponse Rpc(const std::string& key, const std::string& method, const std::string& version,
                     json::object params = {}) {
    Headers h;
    if (!version.empty()) h.emplace_back("A2A-Version", version);
    return As(key, "POST", "/v1/a2a",
              json::serialize(json::object{
                  {"jsonrpc", "2.0"}, {"id", 7}, {"method", method}, {"params", params}}),
              h);
  }
  std::string GrpcAddress() {
    const json::value card = client_->Request("GET", "/.well-known/agent-card.json").Json();
    for (const auto& i : card.at("additionalInterfaces").as_array())
      if (i.at("transport") == "GRPC") return std::string(i.at("url").as_string());
    return "";
  }

  fs::path dir_;
  fs::path workflows_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(CardAndLimits, ThePublicCardDeclaresTheCredentialsAndListsPublicSkillsOnly) {
  Key("acme", "tasks:read");  // authentication on at startup: the extended card is declared
  Start();
  const json::value v03 = client_->Request("GET", "/.well-known/agent-card.json").Json();
  const json::value v10 =
      client_->Request("GET", "/.well-known/agent-card.json", "", {{"A2A-Version", "1.0"}}).Json();
  for (const json::value* card : {&v03, &v10}) {
    const auto ids = SkillIds(*card);
    EXPECT_TRUE(Has(ids, "open-flow")) << *card;
    EXPECT_FALSE(Has(ids, "inner-flow")) << *card;
  }
  const auto& schemes = v10.at("securitySchemes").as_object();
  EXPECT_EQ(schemes.at("apiKey").at("apiKeySecurityScheme").at("name"), "X-API-Key") << v10;
  EXPECT_EQ(schemes.at("apiKey").at("apiKeySecurityScheme").at("location"), "header");
  EXPECT_EQ(schemes.at("bearer").at("httpAuthSecurityScheme").at("scheme"), "Bearer");
  EXPECT_FALSE(schemes.contains("oidc"));  // no issuer configured
  // Any of two schemes with any of the three scopes an A2A method needs.
  EXPECT_EQ(v10.at("securityRequirements").as_array().size(), 6u);
  EXPECT_EQ(v10.at("capabilities").at("extendedAgentCard"), true);
  EXPECT_FALSE(v10.as_object().contains("security"));
  // 0.3's spelling in the 0.3 card.
  EXPECT_EQ(v03.at("securitySchemes").at("apiKey").at("type"), "apiKey");
  EXPECT_EQ(v03.at("securitySchemes").at("apiKey").at("in"), "header");
  EXPECT_EQ(v03.at("securitySchemes").at("bearer").at("scheme"), "bearer");
  EXPECT_EQ(v03.at("security").as_array().size(), 6u);
  EXPECT_EQ(v03.at("supportsAuthenticatedExtendedCard"), true);
  EXPECT_FALSE(v03.as_object().contains("securityRequirements"));
}

TEST_F(CardAndLimits, InDevelopmentModeThereIsNoExtendedCard) {
  Start();  // no key: nobody can authenticate
  const json::value card =
      client_->Request("GET", "/.well-known/agent-card.json", "", {{"A2A-Version", "1.0"}}).Json();
  EXPECT_EQ(card.at("capabilities").at("extendedAgentCard"), false) << card;
  // It says what it does: it reads no credential, so it declares none.
  EXPECT_FALSE(card.as_object().contains("securitySchemes")) << card;
  EXPECT_FALSE(card.as_object().contains("securityRequirements")) << card;
  const json::value v03 = client_->Request("GET", "/.well-known/agent-card.json").Json();
  EXPECT_FALSE(v03.as_object().contains("supportsAuthenticatedExtendedCard")) << v03;
  EXPECT_FALSE(v03.as_object().contains("security")) << v03;
  ClientResponse r = Rpc("", "GetExtendedAgentCard", "1.0");
  EXPECT_EQ(r.Json().at("error").at("code"), -32004) << r.body;
  EXPECT_NE(r.body.find("development mode"), std::string::npos) << r.body;
  // A key made while the server runs turns authentication on: the extended card is served to
  // that key's caller, and the public card declares the credentials from then on.
  const std::string key = Key("acme", "tasks:read");
  r = As(key, "GET", "/a2a/rest/extendedAgentCard");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(Has(SkillIds(r.Json()), "inner-flow")) << r.body;
  const json::value secured =
      client_->Request("GET", "/.well-known/agent-card.json", "", {{"A2A-Version", "1.0"}}).Json();
  EXPECT_TRUE(secured.at("securitySchemes").as_object().contains("apiKey")) << secured;
  EXPECT_EQ(secured.at("capabilities").at("extendedAgentCard"), true) << secured;
}

TEST_F(CardAndLimits, TheExtendedCardListsEverySkillToAnAuthenticatedCallerOnEveryBinding) {
  const std::string key = Key("acme", "push:manage");  // any key: no scope is needed
  Start({"--grpc-listen", "127.0.0.1:0"});
  auto extended = [](const json::value& card) {
    const auto ids = SkillIds(card);
    return Has(ids, "open-flow") && Has(ids, "inner-flow");
  };
  // JSON-RPC 1.0 and 0.3.
  ClientResponse r = Rpc(key, "GetExtendedAgentCard", "1.0");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(extended(r.Json().at("result"))) << r.body;
  EXPECT_FALSE(r.Json().at("result").as_object().contains("preferredTransport")) << "1.0 form";
  r = Rpc(key, "agent/getAuthenticatedExtendedCard", "");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(extended(r.Json().at("result"))) << r.body;
  EXPECT_EQ(r.Json().at("result").at("protocolVersion"), "0.3.0") << "the 0.3 form";
  // REST 1.0 and 0.3.
  r = As(key, "GET", "/a2a/rest/extendedAgentCard");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(extended(r.Json())) << r.body;
  // The extended card is signed like the public one (its 1.0 form; the 0.3 proto form below
  // spells the schemes otherwise than the signed 0.3 card, so it carries none).
  EXPECT_EQ(r.Json().at("signatures").as_array().size(), 1u);
  r = As(key, "GET", "/a2a/rest03/v1/card");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(extended(r.Json())) << r.body;
  // Without a credential: 401 everywhere.
  EXPECT_EQ(Rpc("", "GetExtendedAgentCard", "1.0").status, 401);
  EXPECT_EQ(As("", "GET", "/a2a/rest/extendedAgentCard").status, 401);
  EXPECT_EQ(As("", "GET", "/a2a/rest03/v1/card").status, 401);
  // gRPC, both services.
  auto channel = grpc::CreateChannel(GrpcAddress(), grpc::InsecureChannelCredentials());
  {
    auto stub = ::lf::a2a::v1::A2AService::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-api-key", key);
    ::lf::a2a::v1::GetExtendedAgentCardRequest req;
    ::lf::a2a::v1::AgentCard card;
    ASSERT_TRUE(stub->GetExtendedAgentCard(&ctx, req, &card).ok());
    std::vector<std::string> ids;
    for (const auto& s : card.skills()) ids.push_back(s.id());
    EXPECT_TRUE(Has(ids, "inner-flow"));
    EXPECT_TRUE(card.security_schemes().at("apiKey").has_api_key_security_scheme());
    grpc::ClientContext anonymous;
    EXPECT_EQ(stub->GetExtendedAgentCard(&anonymous, req, &card).error_code(),
              grpc::UNAUTHENTICATED);
  }
  {
    auto stub = ::a2a::v1::A2AService::NewStub(channel);
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-api-key", key);
    ::a2a::v1::GetAgentCardRequest req;
    ::a2a::v1::AgentCard card;
    ASSERT_TRUE(stub->GetAgentCard(&ctx, req, &card).ok());
    std::vector<std::string> ids;
    for (const auto& s : card.skills()) ids.push_back(s.id());
    EXPECT_TRUE(Has(ids, "inner-flow"));
  }
}

TEST_F(CardAndLimits, AMissingScopeIsChallengedWithInsufficientScope) {
  const std::string reader = Key("acme", "tasks:read");
  Start();
  const json::object send{
      {"message", json::object{{"messageId", "m1"},
                               {"role", "ROLE_USER"},
                               {"parts", json::array{json::object{{"text", "hi"}}}}}}};
  for (const ClientResponse& r :
       {Rpc(reader, "SendMessage", "1.0", send),
        As(reader, "POST", "/a2a/rest/message:send", json::serialize(send)),
        As(reader, "POST", "/v1/runs", R"({"workflowId":"open-flow"})"),
        As(reader, "GET", "/v1/push/dead-letters")}) {
    EXPECT_EQ(r.status, 403) << r.body;
    const std::string challenge = r.Header("WWW-Authenticate");
    EXPECT_TRUE(challenge.starts_with("Bearer realm=\"a2ad\"")) << challenge;
    EXPECT_NE(challenge.find("error=\"insufficient_scope\""), std::string::npos) << challenge;
    EXPECT_NE(challenge.find("scope=\""), std::string::npos) << challenge;
  }
  EXPECT_NE(Rpc(reader, "SendMessage", "1.0", send)
                .Header("WWW-Authenticate")
                .find("scope=\"tasks:write\""),
            std::string::npos);
}

TEST_F(CardAndLimits, ACallerPastItsRateIsAnswered429InEachSurfacesShapeAndOthersAreServed) {
  const std::string greedy = Key("acme", "admin");
  const std::string patient = Key("acme", "admin");
  // One request per 1000 s after a burst of 3: the bucket does not refill during the test.
  Start({"--rate-limit", "0.001", "--rate-burst", "3", "--grpc-listen", "127.0.0.1:0"});
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(As(greedy, "GET", "/a2a/rest/tasks").status, 200) << "within the burst";
  // JSON-RPC 1.0: 429 with the JSON-RPC error object and its id.
  ClientResponse r = Rpc(greedy, "GetTask", "1.0", json::object{{"id", "x"}});
  ASSERT_EQ(r.status, 429) << r.body;
  const int64_t retry_after = std::stoll(r.Header("Retry-After"));
  EXPECT_GT(retry_after, 900);  // about 1000 s
  EXPECT_LE(retry_after, 1000);
  EXPECT_EQ(r.Json().at("error").at("code"), -32013) << r.body;
  // JSON-RPC 0.3.
  r = Rpc(greedy, "tasks/get", "", json::object{{"id", "x"}});
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(r.Json().at("error").at("code"), -32013) << r.body;
  // REST 1.0: google.rpc.Status RESOURCE_EXHAUSTED.
  r = As(greedy, "GET", "/a2a/rest/tasks");
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(r.Json().at("error").at("status"), "RESOURCE_EXHAUSTED") << r.body;
  EXPECT_FALSE(r.Header("Retry-After").empty());
  // REST 0.3 and OpenWOP.
  EXPECT_EQ(As(greedy, "GET", "/a2a/rest03/v1/tasks/x").status, 429);
  r = As(greedy, "GET", "/v1/runs");
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_EQ(r.Json().at("error"), "rate_limited") << r.body;
  EXPECT_EQ(r.Json().at("details").at("scope"), "key") << r.body;
  EXPECT_FALSE(r.Json().at("details").at("retryAfterMs").as_string().empty()) << r.body;
  // gRPC: RESOURCE_EXHAUSTED.
  auto channel = grpc::CreateChannel(GrpcAddress(), grpc::InsecureChannelCredentials());
  auto stub = ::lf::a2a::v1::A2AService::NewStub(channel);
  auto get = [&](const std::string& key) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-api-key", key);
    ::lf::a2a::v1::GetTaskRequest req;
    req.set_id("x");
    ::lf::a2a::v1::Task task;
    return stub->GetTask(&ctx, req, &task).error_code();
  };
  EXPECT_EQ(get(greedy), grpc::RESOURCE_EXHAUSTED);
  // Another caller has its own bucket; the public card is not limited.
  EXPECT_EQ(As(patient, "GET", "/a2a/rest/tasks").status, 200);
  EXPECT_EQ(get(patient), grpc::NOT_FOUND);
  EXPECT_EQ(client_->Request("GET", "/.well-known/agent-card.json").status, 200);
  EXPECT_EQ(client_->Request("GET", "/healthz").status, 200);
}

}  // namespace
}  // namespace a2ad
