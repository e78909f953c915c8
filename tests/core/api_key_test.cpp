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
