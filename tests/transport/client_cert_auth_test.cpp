// Mutual TLS's certificate -> principal map (transport/auth/client_cert_auth.hpp) and how the
// Authenticator uses it (auth.hpp): the file's format and each refusal of it; a mapped
// subject is `cert:<subject>` of its tenant with its scopes; an unmapped one is refused 403;
// a map turns authentication on; an explicit credential wins over the certificate.
#include "a2ad/transport/auth/client_cert_auth.hpp"

#include <gtest/gtest.h>

#include "a2ad/core/api_key.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/transport/auth/auth.hpp"

namespace a2ad::transport {
namespace {
using core::ErrorCode;

constexpr const char* kMap = R"([
  {"subject": "CN=billing-agent,O=Acme", "tenant": "acme", "scopes": ["tasks:read", "tasks:write"]},
  {"subject": "CN=ops,O=Globex", "tenant": "globex", "scopes": ["admin"]}
])";

TEST(ClientCertMap, MapsASubjectToItsPrincipal) {
  auto map = ClientCertMap::Parse(kMap, "map");
  ASSERT_TRUE(map) << map.error().message;
  EXPECT_EQ(map->size(), 2u);
  auto p = map->PrincipalOf("CN=billing-agent,O=Acme");
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->id, "cert:CN=billing-agent,O=Acme");
  EXPECT_EQ(p->tenant, "acme");
  EXPECT_EQ(p->scopes, (std::vector<std::string>{"tasks:read", "tasks:write"}));
  EXPECT_FALSE(p->all_scopes);
  EXPECT_TRUE(p->authenticated);
  auto admin = map->PrincipalOf("CN=ops,O=Globex");
  ASSERT_TRUE(admin);
  EXPECT_TRUE(admin->all_scopes);
  // Byte for byte: another order or case is another subject.
  for (const char* other : {"O=Acme,CN=billing-agent", "CN=Billing-Agent,O=Acme", "CN=stranger"}) {
    auto refused = map->PrincipalOf(other);
    ASSERT_FALSE(refused) << other;
    EXPECT_EQ(refused.error().code, ErrorCode::kPermissionDenied);
    EXPECT_NE(refused.error().message.find(other), std::string::npos);
  }
}

TEST(ClientCertMap, RefusesAMalformedFileNamingTheProblem) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{}", "expected a JSON array"},
      {"[1]", "entry 0: expected an object"},
      {R"([{"tenant":"a","scopes":[]}])", "\"subject\" must be a non-empty string"},
      {R"([{"subject":"","tenant":"a","scopes":[]}])", "\"subject\" must be a non-empty string"},
      {R"([{"subject":"CN=a","scopes":[]}])", "\"tenant\" must be a non-empty string"},
      {R"([{"subject":"CN=a","tenant":"a"}])", "\"scopes\" must be an array"},
      {R"([{"subject":"CN=a","tenant":"a","scopes":[""]}])", "non-empty strings"},
      {R"([{"subject":"CN=a","tenant":"a","scopes":[],"cn":"a"}])", "unknown member \"cn\""},
      {R"([{"subject":"CN=a","tenant":"a","scopes":[]},{"subject":"CN=a","tenant":"b","scopes":[]}])",
       "entry 1: the subject \"CN=a\" is mapped twice"},
      {R"([{"subject":"CN=a","tenant":")" + std::string(129, 't') + R"(","scopes":[]}])",
       "longer than 128"},
      {"[", "map"},
  };
  for (const auto& [text, expected] : cases) {
    auto map = ClientCertMap::Parse(text, "map");
    ASSERT_FALSE(map) << text;
    EXPECT_EQ(map.error().code, ErrorCode::kInvalidParams) << text;
    EXPECT_NE(map.error().message.find(expected), std::string::npos)
        << text << " -> " << map.error().message;
  }
  auto missing = ClientCertMap::Load("/nonexistent/a2ad-client-map.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("--tls-client-map"), std::string::npos);
}

class CertAuthenticator : public ::testing::Test {
 protected:
  HttpRequest Request(std::string subject, std::vector<std::pair<std::string, std::string>> h) {
    HttpRequest r;
    r.method = "GET";
    r.target = "/a2a/rest/tasks";
    r.headers = std::move(h);
    r.client_cert_subject = std::move(subject);
    return r;
  }
  storage::MemoryApiKeyStore keys_;
  core::ManualClock clock_;
  Authenticator auth_{keys_, clock_};
  ClientCertMap map_ = ClientCertMap::Parse(kMap, "map").value();
};

TEST_F(CertAuthenticator, AMapTurnsAuthenticationOnAndACertificateAuthenticates) {
  EXPECT_FALSE(auth_.Enabled());  // no key: development mode
  EXPECT_EQ(auth_.AuthenticateBlocking(Request("CN=billing-agent,O=Acme", {}))->id, "anonymous");
  auth_.SetClientCertificates(&map_);
  EXPECT_TRUE(auth_.Enabled());
  auto p = auth_.AuthenticateBlocking(Request("CN=billing-agent,O=Acme", {}));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->id, "cert:CN=billing-agent,O=Acme");
  EXPECT_EQ(p->tenant, "acme");
  auto none = auth_.AuthenticateBlocking(Request("", {}));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kUnauthenticated);
  auto unmapped = auth_.AuthenticateBlocking(Request("CN=stranger,O=Acme", {}));
  ASSERT_FALSE(unmapped);
  EXPECT_EQ(unmapped.error().code, ErrorCode::kPermissionDenied);
}

TEST_F(CertAuthenticator, AnExplicitCredentialWinsOverTheCertificate) {
  auth_.SetClientCertificates(&map_);
  const core::ApiKeyParts k = core::NewApiKey();
  storage::ApiKeyRecord r;
  r.key_id = k.key_id;
  r.secret_sha256 = core::HashApiKeySecret(k.secret);
  r.tenant = "globex";
  r.scopes = {"tasks:read"};
  ASSERT_TRUE(keys_.Insert(r));
  const std::string key = core::FormatApiKey(k);
  auto p = auth_.AuthenticateBlocking(
      Request("CN=billing-agent,O=Acme", {{"Authorization", "Bearer " + key}}));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->tenant, "globex");
  EXPECT_EQ(p->id, k.key_id);
  // A wrong key is refused although the certificate would authenticate.
  auto wrong =
      auth_.AuthenticateBlocking(Request("CN=billing-agent,O=Acme", {{"X-API-Key", key + "x"}}));
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, ErrorCode::kUnauthenticated);
}

}  // namespace
}  // namespace a2ad::transport
