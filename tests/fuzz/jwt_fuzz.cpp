// jwt_fuzz: bearer JWTs and JWKS documents from others (protocol/jwt.hpp). The first input
// byte picks the mode; the rest is
//  - mode 0 (mod 3): a token. Decoding never crashes; whatever decodes, no key of the
//    verifier's set accepts it (the fuzzer cannot sign with the set's private key);
//  - mode 1: claims text, signed here with the set's key (ES256, kid "k"). It decodes iff it
//    is a strict JSON object, and then verifies iff its registered claims are good: then iss
//    is the issuer, aud names the audience and exp is later than now - leeway;
//  - mode 2: a JWKS document. Parsing never crashes; every key kept accepts the alg its JWK
//    names, and at most kMaxJwks are kept.
#include <boost/json.hpp>
#include <cstdint>
#include <string>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/es256.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/jws.hpp"
#include "a2ad/protocol/jwt.hpp"
#include "fuzz_check.hpp"

namespace {
namespace json = boost::json;
using namespace a2ad;

constexpr int64_t kNowMs = 1767261600000;  // 2026-01-01T10:00:00Z
const protocol::JwtExpectations kExpect{"https://issuer.example", "a2ad", 60};

struct Issuer {
  core::Es256PrivateKey key = core::Es256PrivateKey::Generate().value();
  protocol::JwkSet set;
  Issuer() {
    const json::object jwks{{"keys", json::array{protocol::PublicJwk(key.public_key(), "k")}}};
    set = protocol::ParseJwks(protocol::SerializeJson(jwks)).value();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Issuer issuer;
  if (size == 0) return 0;
  const int mode = data[0] % 3;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (mode == 0) {
    auto jwt = protocol::DecodeJwt(rest);
    if (!jwt) return 0;
    auto key = protocol::FindJwk(issuer.set, *jwt);
    if (!key || !*key) return 0;
    FUZZ_CHECK(!protocol::VerifyJwt(*jwt, **key, kExpect, kNowMs), rest);
  } else if (mode == 1) {
    const std::string input =
        core::Base64UrlEncode(R"({"alg":"ES256","kid":"k"})") + "." + core::Base64UrlEncode(rest);
    const std::string token = input + "." + core::Base64UrlEncode(issuer.key.Sign(input).value());
    auto jwt = protocol::DecodeJwt(token);
    const bool object = protocol::ParseJsonObject(rest, "claims", {8}).ok();
    FUZZ_CHECK(jwt.ok() == object, rest);
    if (!jwt) return 0;
    auto key = protocol::FindJwk(issuer.set, *jwt);
    FUZZ_CHECK(key && *key, rest);
    if (!protocol::VerifyJwt(*jwt, **key, kExpect, kNowMs)) return 0;
    const json::object& c = jwt->claims;
    FUZZ_CHECK(c.at("iss").is_string() && c.at("iss").get_string() == kExpect.issuer, rest);
    const json::value& aud = c.at("aud");
    bool names = aud.is_string() && aud.get_string() == kExpect.audience;
    if (aud.is_array())
      for (const auto& a : aud.get_array())
        names = names || (a.is_string() && a.get_string() == kExpect.audience);
    FUZZ_CHECK(names, rest);
    FUZZ_CHECK(c.at("exp").to_number<double>() * 1000 + 60000 > static_cast<double>(kNowMs), rest);
  } else {
    auto set = protocol::ParseJwks(rest);
    if (!set) return 0;
    FUZZ_CHECK(set->keys.size() <= protocol::kMaxJwks, rest);
    for (const auto& k : set->keys)
      if (!k.alg.empty()) FUZZ_CHECK(k.key.Accepts(*core::ParseJwsAlg(k.alg)), rest);
  }
  return 0;
}
