// OidcVerifier (transport/auth/oidc_verifier.hpp) against a real issuer over loopback
// (tests/support/test_issuer.hpp: discovery and JWKS served on 127.0.0.1:<port>, fetches
// counted), through the real egress client, on a manual clock: the principal a token makes
// (claims, default and custom; missing tenant; scopes filtered), key rotation picked up
// without a restart, single-flight and rate-limited fetches for unknown kids, keys that cannot
// be fetched (503, then recovery), the Cache-Control max-age refresh in the background, stale
// keys kept while the issuer is down, the discovery document's issuer. Then the Authenticator's
// dispatch (API key, JWT, neither) and the router's answers in each surface's shape.
#include "a2ad/transport/auth/oidc_verifier.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json.hpp>
#include <functional>
#include <future>
#include <random>
#include <thread>

#include "a2ad/core/api_key.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "in_process_router.hpp"
#include "test_issuer.hpp"
#include "wait_for.hpp"

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using core::ErrorCode;
using testing::SignJwt;
using testing::TestIssuer;
using testing::TestSigningKey;
using testing::WaitFor;

constexpr const char* kAudience = "a2ad-test";

// A guard that lets the egress client reach the loopback issuer over plain http.
struct LoopbackEgress {
  net::SystemResolver resolver;
  std::unique_ptr<net::UrlGuard> guard;
  std::unique_ptr<net::HttpClient> client;
  LoopbackEgress() {
    net::EgressPolicy policy;
    policy.allow_http = true;
    policy.allow_list = {"127.0.0.1/32"};
    guard = std::make_unique<net::UrlGuard>(net::UrlGuard::Create(policy, resolver).value());
    client = net::HttpClient::Create(*guard).value();
  }
};

class OidcVerifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    verifier_.reset();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  OidcOptions Options() const {
    OidcOptions o;
    o.issuer = issuer_.url();
    o.audience = kAudience;
    return o;
  }
  void Make(OidcOptions o) {
    auto made = OidcVerifier::Create(std::move(o), *egress_.client, clock_, io_.get_executor());
    ASSERT_TRUE(made) << made.error().message;
    verifier_ = std::move(made).value();
  }
  void Make() { Make(Options()); }
  json::object Claims(const std::string& tenant = "acme", const std::string& scope = "tasks:read") {
    return issuer_.Claims(kAudience, "alice", tenant, scope, clock_.NowMs() / 1000);
  }
  core::Result<protocol::Principal> Auth(const std::string& token) {
    return verifier_->AuthenticateBlocking(token);
  }
  // `tokens` authenticated at once, each in its own coroutine on the I/O threads.
  std::vector<core::Result<protocol::Principal>> AuthAll(const std::vector<std::string>& tokens) {
    std::vector<std::future<core::Result<protocol::Principal>>> futures;
    for (const auto& t : tokens)
      futures.push_back(asio::co_spawn(io_, verifier_->Authenticate(t), asio::use_future));
    std::vector<core::Result<protocol::Principal>> out;
    for (auto& f : futures) out.push_back(f.get());
    return out;
  }
  static void ExpectRefused(const core::Result<protocol::Principal>& r, ErrorCode code,
                            std::string_view why) {
    ASSERT_FALSE(r) << "accepted as " << r->id;
    EXPECT_EQ(r.error().code, code) << r.error().message;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  }
  std::string RandomKid() { return "forged-" + std::to_string(random_()); }

  TestIssuer issuer_;
  core::ManualClock clock_{testing::NowSeconds() * 1000};
  LoopbackEgress egress_;
  asio::io_context io_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      io_.get_executor()};
  std::vector<std::thread> threads_;
  std::unique_ptr<OidcVerifier> verifier_;
  std::mt19937_64 random_{std::random_device{}()};
};

TEST_F(OidcVerifierTest, TheTokenMakesThePrincipal) {
  Make();
  auto p = Auth(SignJwt(issuer_.rsa(), Claims("acme", "tasks:read openid tasks:write tasks:read")));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->id, "oidc:alice");
  EXPECT_EQ(p->tenant, "acme");
  EXPECT_EQ(p->scopes, (std::vector<std::string>{"tasks:read", "tasks:write"}));
  EXPECT_FALSE(p->all_scopes);
  EXPECT_TRUE(p->authenticated);
  // ES256, and admin: every scope.
  p = Auth(SignJwt(issuer_.ec(), Claims("globex", "admin")));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->tenant, "globex");
  EXPECT_TRUE(p->all_scopes);
  // No scope claim: `scp`, as an array; neither: authenticated without scopes.
  json::object c = Claims("acme", "");
  c["scp"] = json::array{"runs:read", "push:manage"};
  p = Auth(SignJwt(issuer_.rsa(), c));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->scopes, (std::vector<std::string>{"runs:read", "push:manage"}));
  p = Auth(SignJwt(issuer_.rsa(), Claims("acme", "")));
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->scopes.empty());
  EXPECT_FALSE(p->all_scopes);
  c = Claims();
  c["scope"] = 7;
  ExpectRefused(Auth(SignJwt(issuer_.rsa(), c)), ErrorCode::kUnauthenticated,
                "neither a space-separated string nor an array");
  // One discovery and one JWKS fetch served all of them.
  EXPECT_EQ(issuer_.discovery_fetches(), 1u);
  EXPECT_EQ(issuer_.jwks_fetches(), 1u);
}

TEST_F(OidcVerifierTest, ATokenWithoutTheTenantClaimIsRefusedUnlessADefaultTenantIsSet) {
  Make();
  ExpectRefused(Auth(SignJwt(issuer_.rsa(), Claims(""))), ErrorCode::kUnauthenticated,
                "it has no 'tenant' claim");
  json::object c = Claims();
  c["tenant"] = json::array{"a", "b"};
  ExpectRefused(Auth(SignJwt(issuer_.rsa(), c)), ErrorCode::kUnauthenticated,
                "'tenant' claim is not a string");
  c = Claims();
  c.erase("sub");
  ExpectRefused(Auth(SignJwt(issuer_.rsa(), c)), ErrorCode::kUnauthenticated, "'sub' claim");
  OidcOptions o = Options();
  o.default_tenant = "shared";
  Make(o);
  auto p = Auth(SignJwt(issuer_.rsa(), Claims("")));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->tenant, "shared");
  EXPECT_EQ(Auth(SignJwt(issuer_.rsa(), Claims("acme")))->tenant, "acme");
}

TEST_F(OidcVerifierTest, ClaimNamesAreConfigurable) {
  OidcOptions o = Options();
  o.tenant_claim = "org";
  o.scope_claim = "roles";
  o.principal_claim = "email";
  Make(o);
  json::object c = Claims("", "");
  c["org"] = "initech";
  c["roles"] = json::array{"tasks:write", "nonsense"};
  c["email"] = "bob@initech.example";
  c["scope"] = "admin";  // not the configured claim: ignored
  auto p = Auth(SignJwt(issuer_.ec(), c));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->id, "oidc:bob@initech.example");
  EXPECT_EQ(p->tenant, "initech");
  EXPECT_EQ(p->scopes, std::vector<std::string>{"tasks:write"});
  EXPECT_FALSE(p->all_scopes);
}

TEST_F(OidcVerifierTest, ARotatedKeyIsPickedUpWithoutARestart) {
  Make();
  verifier_->Start();  // as the server does: that fetch is not one a request started
  ASSERT_TRUE(Auth(SignJwt(issuer_.rsa(), Claims())));
  const TestSigningKey next = TestSigningKey::Rsa("rsa-2");
  const std::string by_next = SignJwt(next, Claims());
  issuer_.SetKeys({next, issuer_.ec()});  // rsa-1 retired, rsa-2 in
  auto p = Auth(by_next);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(issuer_.jwks_fetches(), 2u);
  // The retired key is gone from the set: refused, and without another fetch (rate limit).
  ExpectRefused(Auth(SignJwt(issuer_.rsa(), Claims())), ErrorCode::kUnauthenticated,
                "its kid names none of the issuer's signing keys");
  EXPECT_EQ(issuer_.jwks_fetches(), 2u);
}

TEST_F(OidcVerifierTest, UnknownKidsStartAtMostOneFetchPerInterval) {
  Make();
  issuer_.SetDelay(std::chrono::milliseconds(200));  // they all overlap the one fetch
  std::vector<std::string> forged;
  const TestSigningKey stranger = TestSigningKey::Ec("x");
  for (int i = 0; i < 24; ++i)
    forged.push_back(SignJwt(stranger, Claims(), "", {{"kid", RandomKid()}}));
  for (const auto& r : AuthAll(forged))
    ExpectRefused(r, ErrorCode::kUnauthenticated, "its kid names none");
  EXPECT_EQ(issuer_.jwks_fetches(), 1u);
  issuer_.SetDelay(std::chrono::milliseconds(0));
  for (int i = 0; i < 10; ++i)
    ExpectRefused(Auth(SignJwt(stranger, Claims(), "", {{"kid", RandomKid()}})),
                  ErrorCode::kUnauthenticated, "its kid names none");
  EXPECT_EQ(issuer_.jwks_fetches(), 1u);
  // Known kids still verify meanwhile, without fetching.
  EXPECT_TRUE(Auth(SignJwt(issuer_.ec(), Claims())));
  EXPECT_EQ(issuer_.jwks_fetches(), 1u);
  // One interval later, one more fetch.
  clock_.Advance(30'000);
  for (int i = 0; i < 5; ++i)
    ExpectRefused(Auth(SignJwt(stranger, Claims(), "", {{"kid", RandomKid()}})),
                  ErrorCode::kUnauthenticated, "its kid names none");
  EXPECT_EQ(issuer_.jwks_fetches(), 2u);
  EXPECT_EQ(issuer_.discovery_fetches(), 1u);  // the jwks_uri is remembered
}

TEST_F(OidcVerifierTest, KeysThatCannotBeFetchedAreUnavailableUntilTheIssuerAnswers) {
  issuer_.SetStatus(500);
  Make();
  verifier_->Start();
  const std::string token = SignJwt(issuer_.rsa(), Claims());
  ExpectRefused(Auth(token), ErrorCode::kUnavailable, "signing keys are unavailable");
  const size_t tried = issuer_.discovery_fetches();
  EXPECT_GE(tried, 1u);
  EXPECT_LE(tried, 2u);  // Start's, and perhaps one by the request
  for (int i = 0; i < 5; ++i) ExpectRefused(Auth(token), ErrorCode::kUnavailable, "unavailable");
  EXPECT_EQ(issuer_.discovery_fetches(), tried);  // rate-limited
  issuer_.SetStatus(200);
  clock_.Advance(30'000);
  auto p = Auth(token);
  ASSERT_TRUE(p) << p.error().message;
}

TEST_F(OidcVerifierTest, KeysAreRefreshedAfterTheirMaxAgeAndKeptWhileTheIssuerIsDown) {
  issuer_.SetCacheControl("public, max-age=120");
  Make();
  ASSERT_TRUE(Auth(SignJwt(issuer_.rsa(), Claims())));
  EXPECT_EQ(issuer_.jwks_fetches(), 1u);
  clock_.Advance(119'000);
  ASSERT_TRUE(Auth(SignJwt(issuer_.rsa(), Claims())));
  EXPECT_EQ(issuer_.jwks_fetches(), 1u);
  // Past the max age: the request is answered with the keys held, a fetch starts behind it.
  // The issuer is down now: the old keys stay in use.
  issuer_.SetStatus(503);
  clock_.Advance(1'000);
  ASSERT_TRUE(Auth(SignJwt(issuer_.rsa(), Claims())));
  WaitFor([&] { return issuer_.jwks_fetches() >= 2; }, std::chrono::seconds(10));
  EXPECT_EQ(issuer_.jwks_fetches(), 2u);
  auto stale = Auth(SignJwt(issuer_.rsa(), Claims()));
  EXPECT_TRUE(stale) << stale.error().message;
  EXPECT_EQ(issuer_.jwks_fetches(), 2u);  // the failed refresh is retried once per interval
  // The issuer is back with rsa-1 retired: the next refresh drops it.
  issuer_.SetStatus(200);
  issuer_.SetKeys({issuer_.ec()});
  clock_.Advance(30'000);
  // (until the failed refresh has finished, a request finds one in flight and starts none)
  bool accepted = true;  // (every request meanwhile)
  WaitFor(
      [&] {
        if (issuer_.jwks_fetches() >= 3) return true;
        accepted = static_cast<bool>(Auth(SignJwt(issuer_.ec(), Claims())));
        return !accepted;
      },
      std::chrono::seconds(10));
  ASSERT_TRUE(accepted);
  ASSERT_EQ(issuer_.jwks_fetches(), 3u);
  // (a request may race the refresh's end; the one after it sees the new set)
  WaitFor([&] { return !Auth(SignJwt(issuer_.rsa(), Claims())); }, std::chrono::seconds(10));
  ExpectRefused(Auth(SignJwt(issuer_.rsa(), Claims())), ErrorCode::kUnauthenticated, "kid");
}

TEST_F(OidcVerifierTest, TheDiscoveryDocumentMustNameOurIssuerAndAGivenJwksUrlSkipsIt) {
  issuer_.SetDiscoveryIssuer("https://elsewhere.example");
  Make();
  ExpectRefused(Auth(SignJwt(issuer_.rsa(), Claims())), ErrorCode::kUnavailable, "unavailable");
  EXPECT_EQ(issuer_.jwks_fetches(), 0u);
  OidcOptions o = Options();
  o.jwks_url = issuer_.jwks_url();
  Make(o);
  EXPECT_TRUE(Auth(SignJwt(issuer_.rsa(), Claims())));
  EXPECT_EQ(issuer_.discovery_fetches(), 1u);  // only the first verifier's
  EXPECT_EQ(issuer_.jwks_fetches(), 1u);
}

TEST_F(OidcVerifierTest, BadOptionsAreRefused) {
  OidcOptions o = Options();
  o.audience.clear();
  auto r = OidcVerifier::Create(o, *egress_.client, clock_, io_.get_executor());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
  o = Options();
  o.tenant_claim.clear();
  EXPECT_FALSE(OidcVerifier::Create(o, *egress_.client, clock_, io_.get_executor()));
  o = Options();
  o.leeway_s = -1;
  EXPECT_FALSE(OidcVerifier::Create(o, *egress_.client, clock_, io_.get_executor()));
  EXPECT_EQ(OidcDiscoveryUrl("https://a.example/realms/x/"),
            "https://a.example/realms/x/.well-known/openid-configuration");
}

TEST_F(OidcVerifierTest, TheAuthenticatorSendsApiKeysToTheStoreAndJwtsToTheVerifier) {
  Make();
  storage::MemoryApiKeyStore keys;
  const core::ApiKeyParts k = core::NewApiKey();
  storage::ApiKeyRecord record;
  record.key_id = k.key_id;
  record.secret_sha256 = core::HashApiKeySecret(k.secret);
  record.tenant = "keyed";
  record.scopes = {"tasks:read"};
  auto request = [](std::vector<std::pair<std::string, std::string>> h) {
    HttpRequest r;
    r.method = "GET";
    r.target = "/a2a/rest/tasks";
    r.headers = std::move(h);
    return r;
  };
  const std::string jwt = SignJwt(issuer_.rsa(), Claims());
  // Without a verifier (and no key): development mode; with a key, a JWT is refused.
  Authenticator plain(keys, clock_);
  EXPECT_TRUE(plain.AuthenticateBlocking(request({{"Authorization", "Bearer " + jwt}})));
  ASSERT_TRUE(keys.Insert(record));
  ExpectRefused(plain.AuthenticateBlocking(request({{"Authorization", "Bearer " + jwt}})),
                ErrorCode::kUnauthenticated, "takes no JWTs");
  // With one: on even without keys, each credential to its checker.
  storage::MemoryApiKeyStore none;
  Authenticator oidc_only(none, clock_, verifier_.get());
  EXPECT_TRUE(oidc_only.Enabled());
  ExpectRefused(oidc_only.AuthenticateBlocking(request({})), ErrorCode::kUnauthenticated,
                "authentication required");
  Authenticator both(keys, clock_, verifier_.get());
  auto p = both.AuthenticateBlocking(request({{"Authorization", "Bearer " + jwt}}));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->id, "oidc:alice");
  p = both.AuthenticateBlocking(request({{"X-API-Key", core::FormatApiKey(k)}}));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->tenant, "keyed");
  ExpectRefused(both.AuthenticateBlocking(request({{"X-API-Key", jwt}})),
                ErrorCode::kUnauthenticated, "goes in Authorization: Bearer");
  ExpectRefused(both.AuthenticateBlocking(request({{"Authorization", "Bearer opaque-token"}})),
                ErrorCode::kUnauthenticated, "neither an a2ad API key nor a JWT");
  // An API key's id can never be mistaken for a token subject.
  json::object c = Claims();
  c["sub"] = k.key_id;
  p = both.AuthenticateBlocking(request({{"Authorization", "Bearer " + SignJwt(issuer_.ec(), c)}}));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, "oidc:" + k.key_id);
  // The coroutine path gives the same answers.
  HttpRequest r = request({{"Authorization", "Bearer " + jwt}});
  auto async = asio::co_spawn(io_, both.Authenticate(r), asio::use_future).get();
  ASSERT_TRUE(async);
  EXPECT_EQ(async->id, "oidc:alice");
}

// The router: each surface's 401 for a refused JWT (error="invalid_token"), its 503 while the
// issuer's keys are unavailable, and a good token served.
TEST(OidcRouter, EachSurfaceAnswersInItsOwnShape) {
  TestIssuer issuer;
  LoopbackEgress egress;
  testing::InProcessRouter app;
  app.clock.Set(testing::NowSeconds() * 1000);
  app.router = std::make_unique<Router>(app.service, json::object{{"name", "t"}});
  OidcOptions o;
  o.issuer = issuer.url();
  o.audience = kAudience;
  // The fetch runs on the router's own io_context, which Call runs.
  auto verifier = OidcVerifier::Create(o, *egress.client, app.clock, app.io.get_executor());
  ASSERT_TRUE(verifier);
  storage::MemoryApiKeyStore keys;
  Authenticator auth(keys, app.clock, verifier->get());
  app.router->SetAuthenticator(&auth);
  auto get = [&](const std::string& target, const std::string& token) {
    HttpRequest r;
    r.method = "GET";
    r.target = target;
    r.headers = {{"Authorization", "Bearer " + token}};
    return app.Call(std::move(r));
  };
  auto header = [](const HttpResponse& r, std::string_view name) {
    for (const auto& [k, v] : r.headers)
      if (k == name) return v;
    return std::string();
  };
  const int64_t now = app.clock.NowMs() / 1000;
  const std::string good =
      SignJwt(issuer.rsa(), issuer.Claims(kAudience, "alice", "acme", "tasks:read", now));
  json::object stale = issuer.Claims(kAudience, "alice", "acme", "tasks:read", now - 7200);
  const std::string expired = SignJwt(issuer.rsa(), stale);
  EXPECT_EQ(get("/a2a/rest/tasks", good).status, 200);
  for (const auto& [target, check] :
       std::vector<std::pair<std::string, std::function<void(const json::value&)>>>{
           {"/a2a/rest/tasks",
            [](const json::value& b) { EXPECT_EQ(b.at("error").at("status"), "UNAUTHENTICATED"); }},
           {"/a2a/rest03/v1/tasks/x",
            [](const json::value& b) { EXPECT_EQ(b.at("code"), -32014); }},
           {"/v1/runs",
            [](const json::value& b) { EXPECT_EQ(b.at("error"), "unauthenticated"); }}}) {
    const HttpResponse r = get(target, expired);
    EXPECT_EQ(r.status, 401) << target << " " << r.body;
    EXPECT_EQ(header(r, "WWW-Authenticate"), "Bearer realm=\"a2ad\", error=\"invalid_token\"");
    check(json::parse(r.body));
    EXPECT_EQ(r.body.find(expired), std::string::npos);
    EXPECT_NE(r.body.find("expired"), std::string::npos) << r.body;
  }
  // JSON-RPC: id null, -32014.
  HttpRequest rpc;
  rpc.method = "POST";
  rpc.target = "/v1/a2a";
  rpc.headers = {{"Authorization", "Bearer " + expired},
                 {"A2A-Version", "1.0"},
                 {"Content-Type", "application/json"}};
  rpc.body = R"({"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"x"}})";
  const HttpResponse refused = app.Call(rpc);
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(json::parse(refused.body).at("id"), 3);
  EXPECT_EQ(json::parse(refused.body).at("error").at("code"), -32014);
  // A scope the token lacks: 403 with the request's id.
  rpc.headers[0].second = "Bearer " + good;
  rpc.body = R"({"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"x"}})";
  const HttpResponse denied = app.Call(rpc);
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(json::parse(denied.body).at("id"), 4);
  // Keys unavailable (a second verifier, its issuer down): 503 in the surface's shape, no
  // WWW-Authenticate.
  TestIssuer down;
  down.SetStatus(500);
  o.issuer = down.url();
  auto blind = OidcVerifier::Create(o, *egress.client, app.clock, app.io.get_executor());
  ASSERT_TRUE(blind);
  Authenticator auth2(keys, app.clock, blind->get());
  app.router->SetAuthenticator(&auth2);
  const HttpResponse unavailable =
      get("/a2a/rest/tasks",
          SignJwt(down.rsa(), down.Claims(kAudience, "alice", "acme", "tasks:read", now)));
  EXPECT_EQ(unavailable.status, 503) << unavailable.body;
  EXPECT_EQ(json::parse(unavailable.body).at("error").at("status"), "UNAVAILABLE");
  EXPECT_EQ(header(unavailable, "WWW-Authenticate"), "");
}

}  // namespace
}  // namespace a2ad::transport
