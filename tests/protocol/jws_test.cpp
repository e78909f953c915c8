// The JWK of an ES256 key, its RFC 7638 thumbprint, and detached-payload JWS.
#include "a2ad/protocol/jws.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

// A fixed P-256 key (made with `openssl genpkey`) and its thumbprint as computed by the
// `jose` npm package (calculateJwkThumbprint, SHA-256) from Node's JWK export of the key.
constexpr const char* kPkcs8 = R"(-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgvrC3EsLwdkQnra/t
tksigq3a+Xuq7thR2Z0Iw/RoFPahRANCAATivBk8R49Kpqe8G1VExrxcS2C0rpwD
QA0kl8HtEasKKsb9jOqddgog/YPpkGX0FmdrE+3wQWf8IYythxq6wiaE
-----END PRIVATE KEY-----
)";
constexpr const char* kThumbprint = "gmJ_VW8qR6lP_ybcaTIIMe3E2TWeo5dQk88JJJ793j8";

core::Es256PrivateKey FixedKey() { return core::Es256PrivateKey::FromPem(kPkcs8).value(); }

TEST(Jws, TheThumbprintIsRfc7638s) {
  EXPECT_EQ(JwkThumbprint(FixedKey().public_key()), kThumbprint);
  auto other = core::Es256PrivateKey::Generate();
  ASSERT_TRUE(other);
  const std::string t = JwkThumbprint(other->public_key());
  EXPECT_EQ(t.size(), 43u);
  EXPECT_NE(t, kThumbprint);
}

TEST(Jws, ThePublicJwkHasTheJwksMembers) {
  const json::object jwk = PublicJwk(FixedKey().public_key(), "k1");
  EXPECT_EQ(jwk, (json::object{{"kty", "EC"},
                               {"crv", "P-256"},
                               {"x", "4rwZPEePSqanvBtVRMa8XEtgtK6cA0ANJJfB7RGrCio"},
                               {"y", "xv2M6p12CiD9g-mQZfQWZ2sT7fBBZ_whjK2HGrrCJoQ"},
                               {"kid", "k1"},
                               {"use", "sig"},
                               {"alg", "ES256"}}));
}

TEST(Jws, ADetachedJwsVerifiesForItsPayloadOnly) {
  const core::Es256PrivateKey key = FixedKey();
  const json::object header{{"typ", "JOSE"}, {"alg", "ES256"}, {"kid", kThumbprint}};
  auto jws = SignDetachedJws(header, "{\"a\":1}", key);
  ASSERT_TRUE(jws) << jws.error().message;
  // The protected header is the canonical JSON of the header.
  EXPECT_EQ(*core::Base64UrlDecode(jws->protected_header),
            std::string(R"({"alg":"ES256","kid":")") + kThumbprint + R"(","typ":"JOSE"})");
  // The signing input is protected "." base64url(payload).
  const std::string input = jws->protected_header + "." + core::Base64UrlEncode("{\"a\":1}");
  EXPECT_TRUE(key.public_key().Verify(input, *core::Base64UrlDecode(jws->signature)));
  auto verified = VerifyDetachedJws(*jws, "{\"a\":1}", key.public_key());
  ASSERT_TRUE(verified) << verified.error().message;
  EXPECT_EQ(verified->at("kid"), kThumbprint);

  auto refused = VerifyDetachedJws(*jws, "{\"a\":2}", key.public_key());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("does not verify"), std::string::npos);
  EXPECT_FALSE(
      VerifyDetachedJws(*jws, "{\"a\":1}", core::Es256PrivateKey::Generate()->public_key()));
  EXPECT_FALSE(VerifyDetachedJws({"%%%", jws->signature}, "{\"a\":1}", key.public_key()));
  EXPECT_FALSE(VerifyDetachedJws({jws->protected_header, "%%%"}, "{\"a\":1}", key.public_key()));
}

TEST(Jws, OnlyEs256IsSignedOrAccepted) {
  const core::Es256PrivateKey key = FixedKey();
  EXPECT_FALSE(SignDetachedJws(json::object{{"alg", "none"}}, "p", key));
  EXPECT_FALSE(SignDetachedJws(json::object{{"kid", "k"}}, "p", key));
  // A header that says another alg, signed with the right key anyway, is refused.
  const std::string prot = core::Base64UrlEncode(R"({"alg":"HS256"})");
  const std::string sig = core::Base64UrlEncode(*key.Sign(prot + "." + core::Base64UrlEncode("p")));
  auto r = VerifyDetachedJws({prot, sig}, "p", key.public_key());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("alg must be ES256"), std::string::npos);
  // So is a header with `crit`, even when it verifies.
  auto crit =
      SignDetachedJws(json::object{{"alg", "ES256"}, {"crit", json::array{"b64"}}}, "p", key);
  ASSERT_TRUE(crit);
  EXPECT_FALSE(VerifyDetachedJws(*crit, "p", key.public_key()));
}

}  // namespace
}  // namespace a2ad::protocol
