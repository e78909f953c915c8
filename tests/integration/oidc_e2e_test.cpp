// Bearer JWTs of an OIDC issuer through the real binary over loopback (issue 14): a test
// issuer in this process (tests/support/test_issuer.hpp: discovery and JWKS on
// 127.0.0.1:<port>, reached through the egress allow-list) signs the tokens. Every binding takes
// them (JSON-RPC 1.0 and 0.3, REST 1.0 and 0.3, SSE streams, gRPC unary and streaming, the
// OpenWOP routes); no credential, an expired token, another audience, an unknown kid, alg
// none and an HS256 forgery are 401 with WWW-Authenticate error="invalid_token" (no error
// code without a credential, RFC 6750 §3.1) and UNAUTHENTICATED on gRPC; a missing scope is
// 403 / PERMISSION_DENIED; another tenant's task is not found; API keys work beside tokens;
// a rotated key is picked up without a restart; forged kids make at most one fetch; an issuer
// that is down answers 503 and is logged once; bad flags stop the server at start (exit 2);
// tokens never reach the log.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "a2a/v1/a2a.grpc.pb.h"
#include "http_client.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "test_issuer.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using testing::ClientResponse;
using testing::HttpClient;
using testing::ServerProcess;
using testing::SignJwt;
using testing::TestIssuer;
using testing::TestSigningKey;
using Headers = std::vector<std::pair<std::string, std::string>>;

const std::string kBinary = testing::A2adBinary();
constexpr const char* kAudience = "a2ad-e2e";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Command {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Command RunA2ad(const std::string& args) {
  const fs::path err =
      fs::temp_directory_path() / ("a2ad-oidc-err-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  Command c;
  FILE* p = popen((kBinary + " " + args + " 2>" + err.string()).c_str(), "r");
  if (!p) return c;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) c.out.append(buf, got);
  const int status = pclose(p);
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  c.err = Slurp(err);
  fs::remove(err);
  return c;
}

json::object Msg10(const std::string& id, const std::string& task = "") {
  json::object m{{"messageId", id},
                 {"role", "ROLE_USER"},
                 {"parts", json::array{json::object{{"text", "hi"}}}}};
  if (!task.empty()) m["taskId"] = task;
  return json::object{{"message", m}};
}

std::string Rpc(const std::string& method, const json::object& params) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}});
}

class OidcE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-oidc");
    log_ = dir_.string() + "-server.log";
  }
  void TearDown() override {
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
    fs::remove(log_);
  }
  std::vector<std::string> Flags() const {
    return {"--oidc-issuer",       issuer_.url(),        "--oidc-audience", kAudience,
            "--egress-allow-http", "--egress-allowlist", "127.0.0.1/32"};
  }
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> flags = Flags();
    flags.insert(flags.end(), extra.begin(), extra.end());
    server_ = ServerProcess::Start(kBinary, dir_.string(), std::move(flags), log_);
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  std::string Token(const std::string& tenant, const std::string& scope,
                    const TestSigningKey* key = nullptr, int64_t age_s = 0,
                    const std::string& aud = kAudience) {
    return SignJwt(key ? *key : issuer_.rsa(),
                   issuer_.Claims(aud, "alice", tenant, scope, testing::NowSeconds() - age_s));
  }
  ClientResponse As(const std::string& token, const std::string& method, const std::string& target,
                    const std::string& body = "", Headers h = {}) {
    if (!token.empty()) h.emplace_back("Authorization", "Bearer " + token);
    if (!body.empty()) h.emplace_back("Content-Type", "application/json");
    return client_->Request(method, target, body, h);
  }
  json::value RpcAs(const std::string& token, const std::string& method, const json::object& params,
                    const std::string& version = "1.0") {
    Headers h;
    if (!version.empty()) h.emplace_back("A2A-Version", version);
    return As(token, "POST", "/v1/a2a", Rpc(method, params), h).Json();
  }
  std::string GrpcAddress() {
    const json::value card = client_->Request("GET", "/.well-known/agent-card.json").Json();
    for (const auto& i : card.at("additionalInterfaces").as_array())
      if (i.at("transport") == "GRPC") return std::string(i.at("url").as_string());
    return "";
  }

  TestIssuer issuer_;
  fs::path dir_;
  std::string log_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(OidcE2e, EveryBindingTakesAJwt) {
  Start({"--grpc-listen", "127.0.0.1:0"});
  // The card names the issuer's discovery document, and the extended card (authentication is
  // on from the start).
  const json::value card =
      client_->Request("GET", "/.well-known/agent-card.json", "", {{"A2A-Version", "1.0"}}).Json();
  EXPECT_EQ(card.at("securitySchemes")
                .at("oidc")
                .at("openIdConnectSecurityScheme")
                .at("openIdConnectUrl"),
            json::value(issuer_.url() + "/.well-known/openid-configuration"))
      << card;
  EXPECT_EQ(client_->Request("GET", "/.well-known/agent-card.json")
                .Json()
                .at("securitySchemes")
                .at("oidc")
                .at("type"),
            "openIdConnect");
  EXPECT_EQ(card.at("capabilities").at("extendedAgentCard"), true);
  const std::string t = Token("acme", "tasks:read tasks:write runs:read");
  // JSON-RPC 1.0 and 0.3.
  json::value sent = RpcAs(t, "SendMessage", Msg10("j1"));
  ASSERT_TRUE(sent.as_object().contains("result")) << sent;
  const std::string task(sent.at("result").at("task").at("id").as_string());
  EXPECT_EQ(RpcAs(t, "GetTask", {{"id", task}}).at("result").at("id").as_string(), task);
  EXPECT_EQ(RpcAs(t, "tasks/get", {{"id", task}}, "").at("result").at("id").as_string(), task);
  // REST 1.0 and 0.3, and the OpenWOP routes.
  ClientResponse rest = As(t, "GET", "/a2a/rest/tasks/" + task);
  EXPECT_EQ(rest.status, 200) << rest.body;
  rest = As(t, "POST", "/a2a/rest/message:send", json::serialize(Msg10("j2")));
  EXPECT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(As(t, "GET", "/a2a/rest03/v1/tasks/" + task).status, 200);
  EXPECT_EQ(As(t, "GET", "/v1/runs/" + task).status, 200);
  // Streams: SSE on REST and JSON-RPC.
  ClientResponse sse = As(t, "POST", "/a2a/rest/message:stream", json::serialize(Msg10("j3")));
  EXPECT_EQ(sse.status, 200) << sse.body;
  EXPECT_NE(sse.body.find("TASK_STATE_COMPLETED"), std::string::npos) << sse.body;
  sse =
      As(t, "POST", "/v1/a2a", Rpc("SendStreamingMessage", Msg10("j4")), {{"A2A-Version", "1.0"}});
  EXPECT_EQ(sse.status, 200);
  EXPECT_NE(sse.body.find("data: "), std::string::npos) << sse.body;
  // gRPC, both services, unary and streaming.
  const std::string address = GrpcAddress();
  ASSERT_FALSE(address.empty());
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto v10 = ::lf::a2a::v1::A2AService::NewStub(channel);
  auto v03 = ::a2a::v1::A2AService::NewStub(channel);
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + t);
    ::lf::a2a::v1::GetTaskRequest req;
    req.set_id(task);
    ::lf::a2a::v1::Task got;
    const grpc::Status st = v10->GetTask(&ctx, req, &got);
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(got.id(), task);
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + t);
    ::a2a::v1::GetTaskRequest req;
    req.set_name("tasks/" + task);
    ::a2a::v1::Task got;
    const grpc::Status st = v03->GetTask(&ctx, req, &got);
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + t);
    ::lf::a2a::v1::SendMessageRequest req;
    req.mutable_message()->set_message_id("g1");
    req.mutable_message()->set_role(::lf::a2a::v1::ROLE_USER);
    req.mutable_message()->add_parts()->set_text("hi");
    auto stream = v10->SendStreamingMessage(&ctx, req);
    ::lf::a2a::v1::StreamResponse item;
    int items = 0;
    while (stream->Read(&item)) ++items;
    const grpc::Status st = stream->Finish();
    EXPECT_TRUE(st.ok()) << st.error_message();
    EXPECT_GT(items, 0);
  }
}

TEST_F(OidcE2e, RefusedTokensAre401InvalidTokenOnEverySurface) {
  Start({"--grpc-listen", "127.0.0.1:0"});
  const TestSigningKey stranger = TestSigningKey::Rsa("rsa-1");  // the issuer's kid, not its key
  const TestSigningKey unknown = TestSigningKey::Ec("never-published");
  const json::object claims =
      issuer_.Claims(kAudience, "alice", "acme", "admin", testing::NowSeconds());
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"expired", Token("acme", "admin", nullptr, 7200)},
      {"another audience", Token("acme", "admin", nullptr, 0, "someone-else")},
      {"unknown kid", Token("acme", "admin", &unknown)},
      {"wrong key", Token("acme", "admin", &stranger)},
      {"alg none", testing::UnsignedJwt(claims)},
      {"HS256 with the public key", testing::HmacJwt(issuer_.rsa().PublicPem(), claims, "rsa-1")},
      {"no tenant claim", Token("", "admin")},
  };
  struct Surface {
    std::string method, target, body;
    Headers headers;
    std::function<void(const json::value&, int)> check;
  };
  const std::vector<Surface> surfaces = {
      {"POST",
       "/v1/a2a",
       Rpc("GetTask", {{"id", "x"}}),
       {{"A2A-Version", "1.0"}},
       [](const json::value& b, int s) {
         EXPECT_EQ(b.at("error").at("code"), s == 401 ? -32014 : -32015);
       }},
      {"POST",
       "/v1/a2a",
       Rpc("message/stream", {{"message", json::object{{"kind", "message"},
                                                       {"messageId", "s"},
                                                       {"role", "user"},
                                                       {"parts", json::array{}}}}}),
       {},
       [](const json::value& b, int s) {
         EXPECT_EQ(b.at("error").at("code"), s == 401 ? -32014 : -32015);
       }},
      {"GET",
       "/a2a/rest/tasks",
       "",
       {},
       [](const json::value& b, int s) {
         EXPECT_EQ(b.at("error").at("status"), s == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED");
       }},
      {"GET",
       "/a2a/rest/tasks/x:subscribe",
       "",
       {},
       [](const json::value& b, int s) {
         EXPECT_EQ(b.at("error").at("status"), s == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED");
       }},
      {"GET",
       "/a2a/rest03/v1/tasks/x",
       "",
       {},
       [](const json::value& b, int s) { EXPECT_EQ(b.at("code"), s == 401 ? -32014 : -32015); }},
      {"GET",
       "/v1/runs",
       "",
       {},
       [](const json::value& b, int s) {
         EXPECT_EQ(b.at("error"), s == 401 ? "unauthenticated" : "forbidden");
       }},
  };
  for (const auto& s : surfaces) {
    const std::string what = s.method + " " + s.target;
    Headers h = s.headers;
    ClientResponse none = client_->Request(s.method, s.target, s.body, [&] {
      Headers x = h;
      if (!s.body.empty()) x.emplace_back("Content-Type", "application/json");
      return x;
    }());
    EXPECT_EQ(none.status, 401) << what;
    EXPECT_EQ(none.Header("WWW-Authenticate"), "Bearer realm=\"a2ad\"") << what;
    for (const auto& [why, token] : refused) {
      ClientResponse r = As(token, s.method, s.target, s.body, h);
      ASSERT_EQ(r.status, 401) << why << ": " << what << " " << r.body;
      EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer realm=\"a2ad\", error=\"invalid_token\"")
          << why;
      s.check(r.Json(), 401);
    }
    // Authenticated, without the scope (runs:write grants none of these).
    ClientResponse denied = As(Token("acme", "runs:write"), s.method, s.target, s.body, h);
    ASSERT_EQ(denied.status, 403) << what << " " << denied.body;
    s.check(denied.Json(), 403);
  }
  // gRPC.
  auto channel = grpc::CreateChannel(GrpcAddress(), grpc::InsecureChannelCredentials());
  auto v10 = ::lf::a2a::v1::A2AService::NewStub(channel);
  auto get = [&](const std::string& token) {
    grpc::ClientContext ctx;
    if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
    ::lf::a2a::v1::GetTaskRequest req;
    req.set_id("x");
    ::lf::a2a::v1::Task task;
    return v10->GetTask(&ctx, req, &task).error_code();
  };
  EXPECT_EQ(get(""), grpc::UNAUTHENTICATED);
  for (const auto& [why, token] : refused) EXPECT_EQ(get(token), grpc::UNAUTHENTICATED) << why;
  EXPECT_EQ(get(Token("acme", "runs:write")), grpc::PERMISSION_DENIED);
  EXPECT_EQ(get(Token("acme", "tasks:read")), grpc::NOT_FOUND);
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + Token("acme", "admin", nullptr, 7200));
    ::lf::a2a::v1::SubscribeToTaskRequest req;
    req.set_id("x");
    auto stream = v10->SubscribeToTask(&ctx, req);
    ::lf::a2a::v1::StreamResponse item;
    while (stream->Read(&item)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::UNAUTHENTICATED);
  }
  // Nothing of any token reached the log.
  server_.Kill(SIGTERM);
  server_.pid = -1;
  const std::string log = Slurp(log_);
  ASSERT_FALSE(log.empty());
  for (const auto& [why, token] : refused) {
    const std::string signature = token.substr(token.rfind('.') + 1);
    if (!signature.empty()) {
      EXPECT_EQ(log.find(signature.substr(0, 20)), std::string::npos) << why;
    }
    EXPECT_EQ(log.find(token.substr(0, token.rfind('.'))), std::string::npos) << why;
  }
}

TEST_F(OidcE2e, TenantsComeFromTheTokenAndApiKeysWorkBeside) {
  Command made =
      RunA2ad("keys create --data-dir " + dir_.string() + " --tenant acme --scopes tasks:read");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string key = made.out.substr(0, made.out.find('\n'));
  Start({"--grpc-listen", "127.0.0.1:0"});
  const std::string acme = Token("acme", "tasks:read tasks:write");
  const std::string globex = Token("globex", "admin");
  json::value sent = RpcAs(acme, "SendMessage", Msg10("t1"));
  const std::string task(sent.at("result").at("task").at("id").as_string());
  EXPECT_EQ(RpcAs(globex, "GetTask", {{"id", task}}).at("error").at("code"), -32001);
  EXPECT_EQ(RpcAs(globex, "CancelTask", {{"id", task}}).at("error").at("code"), -32001);
  EXPECT_EQ(As(globex, "GET", "/a2a/rest/tasks/" + task).status, 404);
  EXPECT_EQ(As(globex, "GET", "/a2a/rest03/v1/tasks/" + task).status, 404);
  EXPECT_EQ(RpcAs(globex, "ListTasks", {}).at("result").at("tasks").as_array().size(), 0u);
  // The API key of the same tenant sees the token's task.
  EXPECT_EQ(client_->Request("GET", "/a2a/rest/tasks/" + task, "", {{"X-API-Key", key}}).status,
            200);
  auto channel = grpc::CreateChannel(GrpcAddress(), grpc::InsecureChannelCredentials());
  auto v10 = ::lf::a2a::v1::A2AService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.AddMetadata("authorization", "Bearer " + globex);
  ::lf::a2a::v1::GetTaskRequest req;
  req.set_id(task);
  ::lf::a2a::v1::Task got;
  EXPECT_EQ(v10->GetTask(&ctx, req, &got).error_code(), grpc::NOT_FOUND);
}

TEST_F(OidcE2e, ARotatedKeyIsPickedUpAndForgedKidsMakeOneFetch) {
  Start();
  EXPECT_EQ(As(Token("acme", "tasks:read"), "GET", "/a2a/rest/tasks").status, 200);
  const size_t before = issuer_.jwks_fetches();
  EXPECT_EQ(before, 1u);  // at start
  const TestSigningKey next = TestSigningKey::Ec("ec-2");
  issuer_.SetKeys({issuer_.rsa(), next});
  EXPECT_EQ(As(Token("acme", "tasks:read", &next), "GET", "/a2a/rest/tasks").status, 200);
  EXPECT_EQ(issuer_.jwks_fetches(), 2u);
  // Twenty tokens with made-up kids right after: refused, and no further fetch.
  const TestSigningKey stranger = TestSigningKey::Ec("x");
  for (int i = 0; i < 20; ++i) {
    const std::string forged =
        SignJwt(stranger, issuer_.Claims(kAudience, "eve", "acme", "admin", testing::NowSeconds()),
                "", {{"kid", "forged-" + std::to_string(i)}});
    ClientResponse r = As(forged, "GET", "/a2a/rest/tasks");
    EXPECT_EQ(r.status, 401) << r.body;
  }
  EXPECT_EQ(issuer_.jwks_fetches(), 2u);
  EXPECT_EQ(issuer_.discovery_fetches(), 1u);
}

TEST_F(OidcE2e, AnIssuerThatIsDownIsUnavailableAndLoggedOnce) {
  issuer_.SetStatus(500);
  Start();  // not fatal
  const std::string t = Token("acme", "tasks:read");
  for (int i = 0; i < 5; ++i) {
    ClientResponse r = As(t, "GET", "/a2a/rest/tasks");
    EXPECT_EQ(r.status, 503) << r.body;
    EXPECT_NE(r.body.find("signing keys are unavailable"), std::string::npos) << r.body;
    EXPECT_EQ(r.Header("WWW-Authenticate"), "");
  }
  json::value rpc = RpcAs(t, "GetTask", {{"id", "x"}});
  EXPECT_EQ(rpc.at("error").at("data").at(0).at("reason"), "UNAVAILABLE") << rpc;
  server_.Kill(SIGTERM);
  server_.pid = -1;
  const std::string log = Slurp(log_);
  EXPECT_EQ(Count(log, "cannot fetch the signing keys"), 1u) << log;
}

TEST_F(OidcE2e, BadOidcFlagsStopTheServerAtStart) {
  const std::string base = "serve --listen 127.0.0.1:0 --data-dir " + dir_.string() + " ";
  Command c = RunA2ad(base + "--oidc-issuer https://issuer.example");
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("--oidc-audience is required"), std::string::npos) << c.err;
  c = RunA2ad(base + "--oidc-issuer http://issuer.example --oidc-audience a");
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("--egress-allow-http"), std::string::npos) << c.err;
  c = RunA2ad(base + "--oidc-issuer notaurl --oidc-audience a");
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("--oidc-issuer"), std::string::npos) << c.err;
  c = RunA2ad(base + "--oidc-audience a");
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("need --oidc-issuer"), std::string::npos) << c.err;
  c = RunA2ad("serve --listen 127.0.0.1:0 --data-dir " + dir_.string() +
              " --oidc-issuer https://issuer.example --oidc-audience a --oidc-tenant-claim ''");
  EXPECT_EQ(c.exit_code, 2) << c.err;
}

TEST_F(OidcE2e, TheEnvironmentConfiguresItToo) {
  ::setenv("A2AD_OIDC_ISSUER", issuer_.url().c_str(), 1);
  ::setenv("A2AD_OIDC_AUDIENCE", kAudience, 1);
  ::setenv("A2AD_OIDC_TENANT_CLAIM", "org", 1);
  server_ = ServerProcess::Start(kBinary, dir_.string(),
                                 {"--egress-allow-http", "--egress-allowlist", "127.0.0.1/32"});
  ::unsetenv("A2AD_OIDC_ISSUER");
  ::unsetenv("A2AD_OIDC_AUDIENCE");
  ::unsetenv("A2AD_OIDC_TENANT_CLAIM");
  client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  EXPECT_EQ(client_->Request("GET", "/a2a/rest/tasks").status, 401);  // on without keys
  json::object c = issuer_.Claims(kAudience, "alice", "", "tasks:read", testing::NowSeconds());
  c["org"] = "initech";
  EXPECT_EQ(As(SignJwt(issuer_.ec(), c), "GET", "/a2a/rest/tasks").status, 200);
  EXPECT_EQ(As(Token("acme", "tasks:read"), "GET", "/a2a/rest/tasks").status, 401);
}

}  // namespace
}  // namespace a2ad
