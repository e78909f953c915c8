#include "a2ad/protocol/jwt.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

Error Invalid(const std::string& why) {
  return Error(ErrorCode::kUnauthenticated, "invalid token: " + why);
}

bool IsBase64UrlChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

// The header and the claims are small flat objects: a shallow depth is plenty.
constexpr JsonParseOptions kTokenJson{8};

std::optional<std::string> B64Member(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (!v || !v->is_string()) return std::nullopt;
  return core::Base64UrlDecode(v->get_string());
}

std::string_view StrMember(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// One entry of a JWKS, or why it is skipped.
Result<Jwk> ReadJwk(const json::object& o) {
  auto skip = [](std::string why) { return Error(ErrorCode::kInvalidParams, std::move(why)); };
  if (const json::value* use = o.if_contains("use"); use && (!use->is_string() || *use != "sig"))
    return skip("use is not \"sig\"");
  if (const json::value* ops = o.if_contains("key_ops")) {
    bool verify = false;
    if (ops->is_array())
      for (const auto& op : ops->get_array()) verify = verify || op == "verify";
    if (!verify) return skip("key_ops does not include \"verify\"");
  }
  Jwk jwk;
  if (const json::value* kid = o.if_contains("kid")) {
    if (!kid->is_string()) return skip("kid is not a string");
    jwk.kid = std::string(kid->get_string());
  }
  if (const json::value* alg = o.if_contains("alg")) {
    if (!alg->is_string() || !core::ParseJwsAlg(alg->get_string()))
      return skip("alg is not RS256, PS256 or ES256");
    jwk.alg = std::string(alg->get_string());
  }
  const std::string_view kty = StrMember(o, "kty");
  if (kty == "RSA") {
    auto n = B64Member(o, "n");
    auto e = B64Member(o, "e");
    if (!n || !e) return skip("an RSA key needs base64url n and e");
    auto key = core::JwsPublicKey::FromRsa(*n, *e);
    if (!key) return skip(key.error().message);
    jwk.key = std::move(key).value();
  } else if (kty == "EC") {
    if (StrMember(o, "crv") != "P-256") return skip("an EC key on a curve other than P-256");
    auto x = B64Member(o, "x");
    auto y = B64Member(o, "y");
    if (!x || !y) return skip("an EC key needs base64url x and y");
    auto key = core::JwsPublicKey::FromEcP256(*x, *y);
    if (!key) return skip(key.error().message);
    jwk.key = std::move(key).value();
  } else {
    return skip("kty '" + std::string(kty.substr(0, 16)) + "' is not a signature key type");
  }
  if (!jwk.alg.empty() && !jwk.key.Accepts(*core::ParseJwsAlg(jwk.alg)))
    return skip("alg " + jwk.alg + " does not fit kty " + std::string(kty));
  return jwk;
}

std::optional<double> NumericDate(const json::value& v) {
  double d;
  if (v.is_int64())
    d = static_cast<double>(v.get_int64());
  else if (v.is_uint64())
    d = static_cast<double>(v.get_uint64());
  else if (v.is_double())
    d = v.get_double();
  else
    return std::nullopt;
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

// A numeric date for a message; a date outside years 1970-9999 is shown at that bound.
std::string When(double seconds) {
  const double clamped = std::clamp(seconds, 0.0, 253402300799.0);
  return core::FormatTimestamp(static_cast<int64_t>(std::floor(clamped * 1000)));
}

}  // namespace

Result<JwkSet> ParseJwks(std::string_view text) {
  auto doc = ParseJsonObject(text, "JWKS");
  if (!doc) return Error(ErrorCode::kInvalidParams, "JWKS: " + doc.error().message);
  const json::value* keys = doc->if_contains("keys");
  if (!keys || !keys->is_array())
    return Error(ErrorCode::kInvalidParams, "JWKS: expected a \"keys\" array");
  JwkSet set;
  size_t i = 0;
  for (const auto& entry : keys->get_array()) {
    const std::string where = "keys[" + std::to_string(i++) + "]: ";
    if (set.keys.size() == kMaxJwks) {
      set.skipped.push_back(where + "more than " + std::to_string(kMaxJwks) + " keys");
      continue;
    }
    if (!entry.is_object()) {
      set.skipped.push_back(where + "not an object");
      continue;
    }
    auto jwk = ReadJwk(entry.get_object());
    if (jwk)
      set.keys.push_back(std::move(jwk).value());
    else
      set.skipped.push_back(where + jwk.error().message);
  }
  return set;
}

bool LooksLikeJwt(std::string_view text) {
  int dots = 0;
  size_t run = 0;
  for (char c : text) {
    if (c == '.') {
      if (run == 0 || ++dots > 2) return false;
      run = 0;
    } else if (IsBase64UrlChar(c)) {
      ++run;
    } else {
      return false;
    }
  }
  return dots == 2;  // the signature may be empty: an unsecured JWS, refused by name later
}

Result<Jwt> DecodeJwt(std::string_view token) {
  if (!LooksLikeJwt(token)) return Invalid("not a JWT (three base64url parts separated by dots)");
  const size_t first = token.find('.');
  const size_t second = token.find('.', first + 1);
  auto header_text = core::Base64UrlDecode(token.substr(0, first));
  auto payload_text = core::Base64UrlDecode(token.substr(first + 1, second - first - 1));
  auto signature = core::Base64UrlDecode(token.substr(second + 1));
  if (!header_text || !payload_text || !signature)
    return Invalid("a part is not base64url (RFC 7515 §2)");
  Jwt jwt;
  auto header = ParseJsonObject(*header_text, "header", kTokenJson);
  if (!header) return Invalid("the header is not a JSON object");
  jwt.header = std::move(header).value();
  const json::value* alg = jwt.header.if_contains("alg");
  if (!alg || !alg->is_string()) return Invalid("the header names no alg");
  const std::string_view alg_name = alg->get_string();
  if (alg_name == "none" || alg_name == "None" || alg_name == "NONE")
    return Invalid("alg 'none' is refused: the token is not signed");
  if (alg_name.starts_with("HS"))
    return Invalid("alg '" + std::string(alg_name.substr(0, 8)) +
                   "' is refused: HMAC tokens are not accepted (RS256, PS256, ES256 are)");
  auto known = core::ParseJwsAlg(alg_name);
  if (!known)
    return Invalid("alg '" + std::string(alg_name.substr(0, 16)) +
                   "' is not accepted (RS256, PS256, ES256 are)");
  jwt.alg = *known;
  if (jwt.header.contains("crit"))
    return Invalid("the header has crit, naming extensions this server does not understand");
  if (const json::value* kid = jwt.header.if_contains("kid")) {
    if (!kid->is_string()) return Invalid("the header's kid is not a string");
    jwt.kid = std::string(kid->get_string());
  }
  auto claims = ParseJsonObject(*payload_text, "claims", kTokenJson);
  if (!claims) return Invalid("the payload is not a JSON object");
  jwt.claims = std::move(claims).value();
  jwt.signing_input = std::string(token.substr(0, second));
  jwt.signature = std::move(*signature);
  return jwt;
}

Result<const Jwk*> FindJwk(const JwkSet& set, const Jwt& jwt) {
  if (!jwt.kid.empty()) {
    const Jwk* named = nullptr;
    for (const auto& k : set.keys) {
      if (k.kid != jwt.kid) continue;
      if (k.key.Accepts(jwt.alg)) return &k;
      if (!named) named = &k;
    }
    return named;  // VerifyJwt refuses the alg that does not fit it
  }
  const Jwk* only = nullptr;
  for (const auto& k : set.keys) {
    if (!k.key.Accepts(jwt.alg)) continue;
    if (only) return Invalid("the token names no kid and the issuer has several keys for its alg");
    only = &k;
  }
  return only;
}

Result<void> VerifyJwt(const Jwt& jwt, const Jwk& key, const JwtExpectations& expect,
                       int64_t now_ms) {
  const std::string_view alg = core::JwsAlgName(jwt.alg);
  if (!key.key.Accepts(jwt.alg))
    return Invalid("alg " + std::string(alg) + " does not fit the issuer's key (an " +
                   (key.key.type() == core::JwsPublicKey::Type::kRsa ? "RSA" : "EC") + " key)");
  if (!key.alg.empty() && key.alg != alg)
    return Invalid("alg " + std::string(alg) + " is not the alg of the issuer's key (" + key.alg +
                   ")");
  if (!key.key.Verify(jwt.alg, jwt.signing_input, jwt.signature))
    return Invalid("the signature does not verify");
  const double now = static_cast<double>(now_ms) / 1000.0;
  const auto leeway = static_cast<double>(expect.leeway_s);
  const json::value* exp = jwt.claims.if_contains("exp");
  if (!exp) return Invalid("it has no exp (an expiry is required)");
  auto exp_s = NumericDate(*exp);
  if (!exp_s) return Invalid("exp is not a number of seconds");
  if (now >= *exp_s + leeway) return Invalid("it expired at " + When(*exp_s));
  if (const json::value* nbf = jwt.claims.if_contains("nbf")) {
    auto nbf_s = NumericDate(*nbf);
    if (!nbf_s) return Invalid("nbf is not a number of seconds");
    if (now + leeway < *nbf_s) return Invalid("it is not valid before " + When(*nbf_s));
  }
  if (const json::value* iat = jwt.claims.if_contains("iat")) {
    auto iat_s = NumericDate(*iat);
    if (!iat_s) return Invalid("iat is not a number of seconds");
    if (*iat_s > now + leeway) return Invalid("it was issued in the future (" + When(*iat_s) + ")");
  }
  const json::value* iss = jwt.claims.if_contains("iss");
  if (!iss || !iss->is_string() || iss->get_string() != expect.issuer)
    return Invalid("iss is not this server's issuer");
  const json::value* aud = jwt.claims.if_contains("aud");
  if (!aud) return Invalid("it has no aud");
  bool ours = false;
  if (aud->is_string()) {
    ours = aud->get_string() == expect.audience;
  } else if (aud->is_array()) {
    for (const auto& a : aud->get_array()) {
      if (!a.is_string()) return Invalid("aud holds something other than strings");
      ours = ours || a.get_string() == expect.audience;
    }
  } else {
    return Invalid("aud is neither a string nor an array of strings");
  }
  if (!ours) return Invalid("aud does not name this server's audience");
  return core::Ok{};
}

}  // namespace a2ad::protocol
