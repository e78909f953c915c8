// The safe defaults of the server's credential source (app/api_keys.hpp): without any API
// key, loopback only, unless --insecure-no-auth, mutual TLS or an OIDC issuer; with a key, any
// address.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "a2ad/app/api_keys.hpp"

namespace a2ad::app {
namespace {

TEST(AuthDefaults, LoopbackHosts) {
  for (const char* h : {"127.0.0.1", "127.1.2.3", "::1", "localhost"})
    EXPECT_TRUE(IsLoopbackHost(h)) << h;
  for (const char* h : {"0.0.0.0", "::", "10.0.0.1", "192.168.1.2", "example.com", ""})
    EXPECT_FALSE(IsLoopbackHost(h)) << h;
}

TEST(AuthDefaults, NoKeysServesLoopbackOnlyUnlessInsecure) {
  Config config;
  storage::MemoryApiKeyStore keys;
  auto OpenServerKeys = [&](const Config& c, std::vector<std::string> hosts) {
    return CheckServerKeys(c, hosts, keys);
  };
  EXPECT_TRUE(OpenServerKeys(config, {"127.0.0.1", "::1"}));
  auto refused = OpenServerKeys(config, {"127.0.0.1", "0.0.0.0"});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, core::ErrorCode::kInvalidParams);
  EXPECT_NE(refused.error().message.find("--insecure-no-auth"), std::string::npos);
  config.insecure_no_auth = true;
  EXPECT_TRUE(OpenServerKeys(config, {"0.0.0.0"}));
  config.insecure_no_auth = false;
  // Mutual TLS authenticates callers by their certificates: no key needed to serve any address.
  config.tls_cert = "server.pem";
  config.tls_client_ca = "clients-ca.pem";
  EXPECT_TRUE(OpenServerKeys(config, {"0.0.0.0"}));
  config.tls_client_ca.clear();  // TLS alone authenticates no one
  EXPECT_FALSE(OpenServerKeys(config, {"0.0.0.0"}));
  config.tls_cert.clear();
  {
    ASSERT_TRUE(OpenServerKeys(config, {"127.0.0.1"}));
    storage::ApiKeyRecord k;
    k.key_id = "0123456789abcdef";
    k.secret_sha256 = std::string(64, '0');
    k.tenant = "acme";
    k.scopes = {"admin"};
    ASSERT_TRUE(keys.Insert(k));
  }
  EXPECT_TRUE(OpenServerKeys(config, {"0.0.0.0"}));  // a key exists: authentication is on
}

TEST(AuthDefaults, AnOidcIssuerServesAnyAddressWithoutKeys) {
  Config config;
  storage::MemoryApiKeyStore keys;
  auto OpenServerKeys = [&](const Config& c, std::vector<std::string> hosts) {
    return CheckServerKeys(c, hosts, keys);
  };
  ASSERT_FALSE(OpenServerKeys(config, {"0.0.0.0"}));
  config.oidc_issuer = "https://login.example.com/realms/acme";
  config.oidc_audience = "a2ad";
  EXPECT_TRUE(OpenServerKeys(config, {"0.0.0.0", "10.0.0.1"}));
  EXPECT_TRUE(config.OidcEnabled());
  EXPECT_EQ(config.OidcDiscoveryUrl(),
            "https://login.example.com/realms/acme/.well-known/openid-configuration");
}

}  // namespace
}  // namespace a2ad::app
