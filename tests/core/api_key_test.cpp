// core/api_key.hpp: the key's text, the stored digest, the constant-time compare and the
// expiries the CLI takes.
#include "a2ad/core/api_key.hpp"

#include <gtest/gtest.h>

#include <set>

namespace a2ad::core {
namespace {

TEST(ApiKey, NewKeysAreRandomAndRoundTrip) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const ApiKeyParts k = NewApiKey();
    EXPECT_EQ(k.key_id.size(), 16u);
    EXPECT_EQ(k.secret.size(), 43u);  // 32 bytes, base64url without padding
    const std::string text = FormatApiKey(k);
    EXPECT_TRUE(text.starts_with("a2ad_k_")) << text;
    auto parsed = ParseApiKey(text);
    ASSERT_TRUE(parsed) << text;  // a secret with '_' in it too
    EXPECT_EQ(parsed->key_id, k.key_id);
    EXPECT_EQ(parsed->secret, k.secret);
    EXPECT_TRUE(seen.insert(k.secret).second);
    EXPECT_TRUE(seen.insert(k.key_id).second);
  }
}

TEST(SelfCredential, OnlyTheKeyThatMadeOneAcceptsItForItsTenant) {
  const SelfCredential mine, other;
  const std::string acme = mine.For("acme");
  EXPECT_TRUE(acme.starts_with("a2ad_s_")) << acme;
  EXPECT_EQ(mine.TenantOf(acme), std::optional<std::string>("acme"));
  EXPECT_EQ(mine.TenantOf(mine.For("a.b/c d")), std::optional<std::string>("a.b/c d"));
  EXPECT_EQ(other.TenantOf(acme), std::nullopt) << "another process's key";
  // The tenant of one with the MAC of another: refused.
  const std::string globex = mine.For("globex");
  const std::string swapped = globex.substr(0, globex.find('.')) + acme.substr(acme.find('.'));
  EXPECT_EQ(mine.TenantOf(swapped), std::nullopt);
  for (const std::string& bad : {std::string(""), std::string("a2ad_s_"), std::string("a2ad_s_.x"),
                                 acme.substr(0, acme.size() - 1), "a2ad_k_" + acme.substr(7)})
    EXPECT_EQ(mine.TenantOf(bad), std::nullopt) << bad;
}

TEST(ApiKey, MalformedKeysDoNotParse) {
  for (const char* bad :
       {"", "a2ad_k_", "a2ad_k_0123456789abcdef", "a2ad_k_0123456789abcdef_",
        "a2ad_k_0123456789ABCDEF_secret", "a2ad_k_0123_secret", "b2ad_k_0123456789abcdef_secret",
        "a2ad_k_0123456789abcdef_sec ret", "a2ad_k_0123456789abcdef_sec=ret"})
    EXPECT_FALSE(ParseApiKey(bad)) << bad;
}

TEST(ApiKey, TheDigestIsSha256HexAndComparesInConstantTime) {
  // SHA-256("abc"), FIPS 180-2 B.1.
  EXPECT_EQ(HashApiKeySecret("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(ConstantTimeEquals("abcd", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abce"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
}

TEST(ApiKey, Expiries) {
  const int64_t now = 1767261600000;  // 2026-01-01T10:00:00Z
  EXPECT_EQ(ParseExpiry("30d", now), now + 30LL * 86400000);
  EXPECT_EQ(ParseExpiry("12h", now), now + 12LL * 3600000);
  EXPECT_EQ(ParseExpiry("90m", now), now + 90LL * 60000);
  EXPECT_EQ(ParseExpiry("3600s", now), now + 3600000);
  EXPECT_EQ(ParseExpiry("2027-01-31T00:00:00Z", now), 1801353600000);
  for (const char* bad :
       {"", "d", "0d", "-1d", "1w", "30 d", "2025-01-01T00:00:00Z", "2027-13-01T00:00:00Z",
        "2027-01-31 00:00:00", "2027-01-31T00:00:00+01:00"})
    EXPECT_FALSE(ParseExpiry(bad, now)) << bad;
}

}  // namespace
}  // namespace a2ad::core
