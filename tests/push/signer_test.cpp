// ES256 JWS signing, the JWKS, key rotation and the verifier's refusals (issue 5).
#include "a2ad/push/signer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "a2ad/core/encoding.hpp"

namespace a2ad::push {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;

class Signer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("a2ad-keys-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  json::object Claims(const std::string& jti, int64_t lifetime_s = 300) {
    const int64_t now = clock_.NowMs() / 1000;
    return json::object{{"iss", "https://a2ad.example"},
                        {"aud", "https://hooks.example.com/push"},
                        {"iat", now},
                        {"exp", now + lifetime_s},
                        {"jti", jti},
                        {"taskId", "t1"}};
  }
  VerifyOptions Options() {
    VerifyOptions o;
    o.issuer = "https://a2ad.example";
    o.audience = "https://hooks.example.com/push";
    return o;
  }

  fs::path dir_;
  core::ManualClock clock_;
};

TEST_F(Signer, SignedTokensVerifyAgainstTheJwksOnce) {
  auto keys = KeyStore::Open(dir_.string(), clock_, 300000);
  ASSERT_TRUE(keys) << keys.error().message;
  auto token = (*keys)->Sign(Claims("jti-1"));
  ASSERT_TRUE(token) << token.error().message;
  JwtVerifier verifier(Options(), clock_);
  ASSERT_TRUE(verifier.SetJwks((*keys)->Jwks()));
  auto claims = verifier.Verify(*token);
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->at("taskId"), "t1");
  // The same token again is a replay.
  auto again = verifier.Verify(*token);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("replay"), std::string::npos) << again.error().message;
  EXPECT_EQ(JwtKid(*token), (*keys)->keys().back().kid);
}

TEST_F(Signer, VerifierRefusesTamperingWrongAudienceAndExpiry) {
  auto keys = KeyStore::Open(dir_.string(), clock_, 300000);
  ASSERT_TRUE(keys);
  JwtVerifier verifier(Options(), clock_);
  ASSERT_TRUE(verifier.SetJwks((*keys)->Jwks()));
  auto expect_refused = [&](const std::string& jwt, const std::string& why) {
    auto r = verifier.Verify(jwt);
    ASSERT_FALSE(r) << why;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  };
  // A changed claim (taskId) keeps the old signature: refused.
  std::string token = *(*keys)->Sign(Claims("jti-a"));
  auto d1 = token.find('.');
  auto d2 = token.find('.', d1 + 1);
  json::object forged = Claims("jti-a");
  forged["taskId"] = "t2";
  expect_refused(
      token.substr(0, d1 + 1) + core::Base64UrlEncode(json::serialize(forged)) + token.substr(d2),
      "signature does not verify");
  // alg none.
  expect_refused(core::Base64UrlEncode(R"({"alg":"none","kid":"x"})") + "." +
                     core::Base64UrlEncode(json::serialize(Claims("jti-n"))) + ".",
                 "alg must be ES256");
  json::object wrong_aud = Claims("jti-b");
  wrong_aud["aud"] = "https://other.example.com/";
  expect_refused(*(*keys)->Sign(wrong_aud), "aud");
  std::string short_lived = *(*keys)->Sign(Claims("jti-c", 10));
  clock_.Advance(10 * 60 * 1000);
  expect_refused(short_lived, "expired");
  expect_refused("abc", "compact JWS");
}

TEST_F(Signer, RotationKeepsRetiredKeysUntilTheirTokensExpire) {
  const int64_t lifetime = 300000;
  auto keys = KeyStore::Open(dir_.string(), clock_, lifetime);
  ASSERT_TRUE(keys);
  const std::string old_kid = (*keys)->keys().front().kid;
  std::string old_token = *(*keys)->Sign(Claims("jti-old"));
  clock_.Advance(1000);
  // Rotate through a second KeyStore on the same directory, as `a2ad keys rotate` would.
  {
    auto cli = KeyStore::Open(dir_.string(), clock_, lifetime);
    ASSERT_TRUE(cli);
    auto kid = (*cli)->Rotate();
    ASSERT_TRUE(kid) << kid.error().message;
    EXPECT_NE(*kid, old_kid);
  }
  std::string new_token = *(*keys)->Sign(Claims("jti-new"));  // the server picks it up
  EXPECT_NE(JwtKid(new_token), old_kid);
  std::string jwks = (*keys)->Jwks();
  EXPECT_NE(jwks.find(old_kid), std::string::npos) << jwks;
  JwtVerifier verifier(Options(), clock_);
  ASSERT_TRUE(verifier.SetJwks(jwks));
  EXPECT_TRUE(verifier.Verify(old_token));
  EXPECT_TRUE(verifier.Verify(new_token));

  // Once every token of the old key has expired, it leaves the JWKS and the disk.
  clock_.Advance(lifetime + 2 * 60000);
  jwks = (*keys)->Jwks();
  EXPECT_EQ(jwks.find(old_kid), std::string::npos) << jwks;
  EXPECT_FALSE(fs::exists(dir_ / (old_kid + ".pem")));
  EXPECT_EQ((*keys)->keys().size(), 1u);
}

TEST_F(Signer, KeyFilesArePrivateAndSurviveReopen) {
  std::string kid;
  {
    auto keys = KeyStore::Open(dir_.string(), clock_, 300000);
    ASSERT_TRUE(keys);
    kid = (*keys)->keys().front().kid;
  }
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / (kid + ".pem")).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto reopened = KeyStore::Open(dir_.string(), clock_, 300000);
  ASSERT_TRUE(reopened);
  ASSERT_EQ((*reopened)->keys().size(), 1u);
  EXPECT_EQ((*reopened)->keys().front().kid, kid);
}

// An implementation we did not write (Node's WebCrypto) accepts our JWS and JWKS.
TEST_F(Signer, NodeVerifiesOurSignature) {
  if (std::system("node --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "node not installed";
  auto keys = KeyStore::Open(dir_.string(), clock_, 300000);
  ASSERT_TRUE(keys);
  std::string token = *(*keys)->Sign(Claims("jti-node"));
  fs::create_directories(dir_);
  std::ofstream(dir_ / "jwks.json") << (*keys)->Jwks();
  std::ofstream(dir_ / "token.txt") << token;
  std::ofstream(dir_ / "verify.mjs") << R"js(
import { readFileSync } from 'node:fs';
const dir = process.argv[2];
const jwks = JSON.parse(readFileSync(dir + '/jwks.json', 'utf8'));
const [h, p, s] = readFileSync(dir + '/token.txt', 'utf8').split('.');
const header = JSON.parse(Buffer.from(h, 'base64url'));
const jwk = jwks.keys.find(k => k.kid === header.kid);
const key = await crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
const ok = await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key,
  Buffer.from(s, 'base64url'), Buffer.from(h + '.' + p));
process.exit(ok ? 0 : 1);
)js";
  std::string cmd = "node " + (dir_ / "verify.mjs").string() + " " + dir_.string();
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(TokenFingerprint, IsShortStableAndNotTheToken) {
  std::string fp = TokenFingerprint("opaque-secret-123");
  EXPECT_LE(fp.size(), 32u);
  EXPECT_EQ(fp, TokenFingerprint("opaque-secret-123"));
  EXPECT_NE(fp, TokenFingerprint("opaque-secret-124"));
  EXPECT_EQ(fp.find("opaque"), std::string::npos);
  EXPECT_EQ(TokenFingerprint(""), "");
}

TEST(Base64Url, RoundTrips) {
  for (std::string s : {"", "f", "fo", "foo", "foob", "fooba", "foobar", "\xff\xfe\x00"}) {
    auto d = core::Base64UrlDecode(core::Base64UrlEncode(s));
    ASSERT_TRUE(d);
    EXPECT_EQ(*d, s);
  }
  EXPECT_FALSE(core::Base64UrlDecode("a+b/"));
  // Non-canonical trailing bits are refused: "QQ" is "A", "QR" would decode to it too.
  EXPECT_EQ(core::Base64UrlDecode("QQ"), std::optional<std::string>("A"));
  EXPECT_FALSE(core::Base64UrlDecode("QR"));
  EXPECT_EQ(core::Base64UrlDecode("QUI"), std::optional<std::string>("AB"));
  EXPECT_FALSE(core::Base64UrlDecode("QUJ"));
  EXPECT_EQ(HmacSha256Hex("key", "The quick brown fox jumps over the lazy dog"),
            "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
}

}  // namespace
}  // namespace a2ad::push
