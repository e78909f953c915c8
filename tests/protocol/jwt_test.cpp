// protocol/jwt.hpp against keys the test makes with OpenSSL (RSA 2048, EC P-256): JWKS
// reading (what is kept, what is skipped and why), the compact JWS decoding, the key choice,
// and every refusal of VerifyJwt: expired, not yet valid, issued in the future, wrong or
// missing aud (also in an array), wrong iss, missing exp, alg none, HS256 with the public key
// as the secret (alg confusion), an alg that does not fit the key or its JWK's alg, tampered
// payload and signature, malformed base64 and JSON, crit.
#include "a2ad/protocol/jwt.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/core/encoding.hpp"
#include "test_issuer.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;
using testing::HmacJwt;
using testing::SignJwt;
using testing::TestSigningKey;
using testing::UnsignedJwt;

constexpr int64_t kNow = 1767261600;  // 2026-01-01T10:00:00Z
constexpr const char* kIssuer = "https://issuer.example";
constexpr const char* kAudience = "a2ad";

class JwtTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    rsa_ = new TestSigningKey(TestSigningKey::Rsa("rsa-1"));
    ec_ = new TestSigningKey(TestSigningKey::Ec("ec-1"));
  }
  static void TearDownTestSuite() {
    delete rsa_;
    delete ec_;
  }

  static json::object Claims() {
    return json::object{
        {"iss", kIssuer}, {"aud", kAudience}, {"sub", "alice"}, {"iat", kNow}, {"exp", kNow + 600}};
  }
  static JwkSet Set(std::vector<json::object> jwks) {
    json::array keys;
    for (auto& k : jwks) keys.push_back(std::move(k));
    auto set = ParseJwks(json::serialize(json::object{{"keys", keys}}));
    EXPECT_TRUE(set) << set.error().message;
    return set ? std::move(set).value() : JwkSet{};
  }
  // Decodes, finds the key in a set of both test keys and verifies at kNow (+ offset).
  static core::Result<void> Check(const std::string& token, int64_t offset_s = 0,
                                  JwkSet set = Set({rsa_->Jwk(), ec_->Jwk()})) {
    auto jwt = DecodeJwt(token);
    if (!jwt) return std::move(jwt).error();
    auto key = FindJwk(set, *jwt);
    if (!key) return std::move(key).error();
    if (!*key) return core::Error(core::ErrorCode::kInternal, "no key");
    return VerifyJwt(*jwt, **key, {kIssuer, kAudience, 60}, (kNow + offset_s) * 1000);
  }
  static std::string Why(const core::Result<void>& r) {
    return r ? std::string("accepted") : r.error().message;
  }
  static void ExpectRefused(const core::Result<void>& r, std::string_view why) {
    ASSERT_FALSE(r) << "accepted, expected: " << why;
    EXPECT_EQ(r.error().code, core::ErrorCode::kUnauthenticated) << r.error().message;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  }

  static TestSigningKey* rsa_;
  static TestSigningKey* ec_;
};
TestSigningKey* JwtTest::rsa_ = nullptr;
TestSigningKey* JwtTest::ec_ = nullptr;

TEST_F(JwtTest, ValidTokensOfEachAlgorithmVerify) {
  EXPECT_TRUE(Check(SignJwt(*rsa_, Claims()))) << Why(Check(SignJwt(*rsa_, Claims())));
  EXPECT_TRUE(Check(SignJwt(*ec_, Claims()))) << Why(Check(SignJwt(*ec_, Claims())));
  // PS256 with an RSA JWK that names no alg (one that names RS256 refuses it, below).
  const std::string ps = SignJwt(*rsa_, Claims(), "PS256");
  EXPECT_TRUE(Check(ps, 0, Set({rsa_->Jwk(false)}))) << Why(Check(ps, 0, Set({rsa_->Jwk(false)})));
  // Fractional dates and an aud array that contains ours.
  json::object c = Claims();
  c["exp"] = kNow + 0.5;
  c["aud"] = json::array{"other", kAudience};
  EXPECT_TRUE(Check(SignJwt(*ec_, c))) << Why(Check(SignJwt(*ec_, c)));
  auto jwt = DecodeJwt(SignJwt(*ec_, Claims()));
  ASSERT_TRUE(jwt);
  EXPECT_EQ(jwt->kid, "ec-1");
  EXPECT_EQ(jwt->alg, core::JwsAlg::kEs256);
  EXPECT_EQ(jwt->claims.at("sub"), "alice");
}

TEST_F(JwtTest, TheDatesAreHonouredWithTheLeeway) {
  json::object c = Claims();
  c["exp"] = kNow - 30;  // expired, within the 60 s leeway
  EXPECT_TRUE(Check(SignJwt(*rsa_, c))) << Why(Check(SignJwt(*rsa_, c)));
  c["exp"] = kNow - 60;
  ExpectRefused(Check(SignJwt(*rsa_, c)), "expired at 2026-01-01T09:59:00.000Z");
  c = Claims();
  c["nbf"] = kNow + 61;
  ExpectRefused(Check(SignJwt(*rsa_, c)), "not valid before");
  c["nbf"] = kNow + 59;
  EXPECT_TRUE(Check(SignJwt(*rsa_, c))) << Why(Check(SignJwt(*rsa_, c)));
  c = Claims();
  c["iat"] = kNow + 120;
  ExpectRefused(Check(SignJwt(*rsa_, c)), "issued in the future");
  c = Claims();
  c.erase("exp");
  ExpectRefused(Check(SignJwt(*rsa_, c)), "no exp");
  c["exp"] = "tomorrow";
  ExpectRefused(Check(SignJwt(*rsa_, c)), "exp is not a number");
  c["exp"] = -1e20;  // a date no clock can show: named at the bound
  ExpectRefused(Check(SignJwt(*rsa_, c)), "expired at 1970-01-01T00:00:00.000Z");
  c["exp"] = kNow + 600;
  c["nbf"] = 1e300;
  ExpectRefused(Check(SignJwt(*rsa_, c)), "not valid before 9999-12-31T23:59:59.000Z");
  // The same token passes at kNow and is refused once its exp (+ leeway) is reached.
  const std::string t = SignJwt(*ec_, Claims());
  EXPECT_TRUE(Check(t, 659));
  ExpectRefused(Check(t, 660), "expired");
}

TEST_F(JwtTest, IssuerAndAudienceMustBeOurs) {
  json::object c = Claims();
  c["iss"] = "https://issuer.example/";  // exact match: a trailing '/' is another issuer
  ExpectRefused(Check(SignJwt(*rsa_, c)), "iss is not");
  c.erase("iss");
  ExpectRefused(Check(SignJwt(*rsa_, c)), "iss is not");
  c = Claims();
  c["aud"] = "someone-else";
  ExpectRefused(Check(SignJwt(*rsa_, c)), "aud does not name");
  c["aud"] = json::array{"x", "y"};
  ExpectRefused(Check(SignJwt(*rsa_, c)), "aud does not name");
  c["aud"] = json::array{kAudience, 7};
  ExpectRefused(Check(SignJwt(*rsa_, c)), "other than strings");
  c["aud"] = 7;
  ExpectRefused(Check(SignJwt(*rsa_, c)), "neither a string nor an array");
  c.erase("aud");
  ExpectRefused(Check(SignJwt(*rsa_, c)), "no aud");
}

TEST_F(JwtTest, UnsignedAndHmacTokensAreRefusedByName) {
  ExpectRefused(Check(UnsignedJwt(Claims())), "alg 'none' is refused");
  // alg confusion: HS256 with the RSA public key (as PEM, and as the JWK's n) for the secret.
  ExpectRefused(Check(HmacJwt(rsa_->PublicPem(), Claims(), "rsa-1")), "HMAC tokens are not");
  ExpectRefused(Check(HmacJwt(std::string(rsa_->Jwk().at("n").as_string()), Claims(), "rsa-1")),
                "HMAC tokens are not");
  ExpectRefused(Check(SignJwt(*rsa_, Claims(), "", {{"alg", "RS512"}})), "not accepted");
  ExpectRefused(Check(SignJwt(*rsa_, Claims(), "", {{"alg", nullptr}})), "names no alg");
  ExpectRefused(Check(SignJwt(*rsa_, Claims(), "", {{"crit", json::array{"exp"}}})), "crit");
}

TEST_F(JwtTest, TheAlgMustFitTheKeyAndItsJwk) {
  // An ES256 signature under the RSA key's kid: refused for the key's type, not tried.
  ExpectRefused(Check(SignJwt(*ec_, Claims(), "ES256", {{"kid", "rsa-1"}})),
                "does not fit the issuer's key (an RSA key)");
  // RS256 under the EC key's kid.
  ExpectRefused(Check(SignJwt(*rsa_, Claims(), "RS256", {{"kid", "ec-1"}})),
                "does not fit the issuer's key (an EC key)");
  // PS256 with the JWK's alg RS256.
  ExpectRefused(Check(SignJwt(*rsa_, Claims(), "PS256")), "not the alg of the issuer's key");
  // Another RSA key under our kid: the signature does not verify.
  const TestSigningKey other = TestSigningKey::Rsa("rsa-1");
  ExpectRefused(Check(SignJwt(other, Claims())), "signature does not verify");
}

TEST_F(JwtTest, TamperedTokensAreRefused) {
  const std::string t = SignJwt(*rsa_, Claims());
  const size_t d1 = t.find('.');
  const size_t d2 = t.find('.', d1 + 1);
  json::object more = Claims();
  more["scope"] = "admin";
  const std::string payload =
      t.substr(0, d1 + 1) + core::Base64UrlEncode(json::serialize(more)) + t.substr(d2);
  ExpectRefused(Check(payload), "signature does not verify");
  std::string sig = t;
  sig[d2 + 5] = sig[d2 + 5] == 'A' ? 'B' : 'A';
  ExpectRefused(Check(sig), "signature does not verify");
  const std::string ec = SignJwt(*ec_, Claims());
  ExpectRefused(Check(ec.substr(0, ec.rfind('.') + 1) + "AAAA"), "signature does not verify");
  // Another header under the same signature.
  const std::string header =
      core::Base64UrlEncode(R"({"alg":"RS256","kid":"rsa-1","typ":"at+jwt"})");
  ExpectRefused(Check(header + t.substr(d1)), "signature does not verify");
}

TEST_F(JwtTest, MalformedTokensAreRefusedSayingWhy) {
  for (const char* t : {"", "a.b", "a.b.c.d", "a..c", ".b.c", "a.b.c d", "a+b.c.d"})
    ExpectRefused(Check(t), "not a JWT");
  EXPECT_FALSE(LooksLikeJwt("a2ad_k_0123456789abcdef_secret"));
  EXPECT_TRUE(LooksLikeJwt("eyJ.eyJ.c2ln"));
  const std::string t = SignJwt(*rsa_, Claims());
  const size_t d1 = t.find('.');
  ExpectRefused(Check("A" + t.substr(1)), "");  // header bytes changed: not JSON, or no verify
  ExpectRefused(Check(t.substr(0, d1 - 1) + "=" + t.substr(d1)), "not a JWT");
  ExpectRefused(Check("Zm9v" + t.substr(d1)), "header is not a JSON object");  // "foo"
  ExpectRefused(Check(core::Base64UrlEncode("[1]") + t.substr(d1)), "header is not a JSON object");
  const std::string header = core::Base64UrlEncode(R"({"alg":"RS256","kid":"rsa-1"})");
  ExpectRefused(Check(header + ".bm90IGpzb24." + "c2ln"), "payload is not a JSON object");
  ExpectRefused(Check(header + "." + core::Base64UrlEncode(R"({"a":1,"a":2})") + ".c2ln"),
                "payload is not a JSON object");
  ExpectRefused(Check(header + ".e30.c2lna"), "not base64url");  // 5 chars: impossible length
  ExpectRefused(Check(SignJwt(*rsa_, Claims(), "", {{"kid", 7}})), "kid is not a string");
}

TEST_F(JwtTest, TheKeyIsChosenByKidOrByAlgAlone) {
  const JwkSet both = Set({rsa_->Jwk(), ec_->Jwk()});
  auto jwt = DecodeJwt(SignJwt(*rsa_, Claims(), "", {{"kid", "rotated"}}));
  ASSERT_TRUE(jwt);
  auto none = FindJwk(both, *jwt);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, nullptr);  // unknown kid: the caller may refresh
  // Without a kid: the only key of the alg's type.
  jwt = DecodeJwt(SignJwt(*ec_, Claims(), "", {{"kid", nullptr}}));
  ASSERT_TRUE(jwt);
  auto only = FindJwk(both, *jwt);
  ASSERT_TRUE(only && *only);
  EXPECT_EQ((*only)->kid, "ec-1");
  EXPECT_TRUE(VerifyJwt(*jwt, **only, {kIssuer, kAudience, 60}, kNow * 1000));
  const TestSigningKey ec2 = TestSigningKey::Ec("ec-2");
  auto two = FindJwk(Set({ec_->Jwk(), ec2.Jwk()}), *jwt);
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("several keys"), std::string::npos);
}

TEST_F(JwtTest, JwksKeepsSignatureKeysAndSaysWhyOthersAreSkipped) {
  const TestSigningKey small = TestSigningKey::Rsa("small", 1024);
  json::object enc = ec_->Jwk();
  enc["use"] = "enc";
  enc["kid"] = "enc";
  json::object p384 = ec_->Jwk();
  p384["crv"] = "P-384";
  json::object off_curve = ec_->Jwk();
  off_curve["y"] = off_curve["x"];
  json::object sign_only = rsa_->Jwk();
  sign_only["key_ops"] = json::array{"sign"};
  json::object hs = rsa_->Jwk();
  hs["alg"] = "HS256";
  json::object bad_n = rsa_->Jwk();
  bad_n["n"] = "*";
  json::object ops_ok = ec_->Jwk();
  ops_ok["key_ops"] = json::array{"verify"};
  json::array keys{rsa_->Jwk(), json::object{{"kty", "oct"}, {"k", "c2VjcmV0"}, {"kid", "hmac"}},
                   enc,         small.Jwk(),
                   p384,        off_curve,
                   sign_only,   hs,
                   bad_n,       7,
                   ops_ok};
  auto set = ParseJwks(json::serialize(json::object{{"keys", keys}}));
  ASSERT_TRUE(set) << set.error().message;
  ASSERT_EQ(set->keys.size(), 2u);
  EXPECT_EQ(set->keys[0].kid, "rsa-1");
  EXPECT_EQ(set->keys[0].alg, "RS256");
  EXPECT_EQ(set->keys[1].kid, "ec-1");
  ASSERT_EQ(set->skipped.size(), 9u);
  const std::vector<std::string> why = {"not a signature key type",
                                        "use is not",
                                        "1024 bits",
                                        "P-256",
                                        "not a point of P-256",
                                        "key_ops",
                                        "alg is not",
                                        "needs base64url n and e",
                                        "not an object"};
  for (size_t i = 0; i < why.size(); ++i)
    EXPECT_NE(set->skipped[i].find(why[i]), std::string::npos) << set->skipped[i];
  for (const char* bad : {"[]", "{}", R"({"keys":{}})", "not json"}) {
    auto r = ParseJwks(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
  }
}

}  // namespace
}  // namespace a2ad::protocol
