#pragma once
// JWTs that others sign (RFC 7519, in the JWS compact serialization of RFC 7515 §7.1) and the
// JWK sets holding the keys that verify them (RFC 7517): the pure half of OIDC bearer
// authentication (transport/auth/oidc_verifier.hpp fetches the keys and turns claims into a
// principal). After the JWT best current practice (RFC 8725):
// - the algorithm is RS256, PS256 or ES256 (core/jws_public_key.hpp) and must fit the key:
//   its type, and its `alg` when the JWK names one. `none` and the HMAC algorithms are
//   refused by name; a `crit` header is refused (no extension is understood);
// - `iss` must equal the issuer exactly, `aud` (a string or an array of strings) must contain
//   the audience, `exp` is required, `nbf` and `iat` are honoured when present; the three
//   dates are compared with a leeway for clock skew.
//
// Errors: DecodeJwt, FindJwk and VerifyJwt answer kUnauthenticated with a message that says
// what is wrong ("invalid token: it expired at 2026-01-01T10:00:00.000Z"), never the token or
// anything it carries (a kid or a claim is the sender's text). ParseJwks answers
// kInvalidParams.
//
// Thread safety: pure functions; the values are immutable once built.
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/jws_public_key.hpp"
#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

struct Jwk {
  std::string kid;  // "" when the JWK has none
  std::string alg;  // the JWK's `alg`; "" when it names none
  core::JwsPublicKey key;
};

struct JwkSet {
  std::vector<Jwk> keys;
  /// The keys left out, one line each ("keys[2]: kty 'oct' is not a signature key type").
  std::vector<std::string> skipped;
};

/// At most this many keys of a JWKS are read; the rest are skipped.
inline constexpr size_t kMaxJwks = 64;

/// A JWKS document `{"keys": [...]}`: RSA keys (`n`, `e`) and EC P-256 keys (`crv`, `x`, `y`)
/// whose `use` is absent or "sig", whose `key_ops` (when given) include "verify" and whose
/// `alg` (when given) is one this verifier knows. Every other key is skipped and named in
/// `skipped`, so an issuer's encryption keys or newer key types do no harm. kInvalidParams
/// when the text is not a JSON object with a `keys` array.
core::Result<JwkSet> ParseJwks(std::string_view text);

/// A compact JWS, decoded but not verified.
struct Jwt {
  boost::json::object header;
  boost::json::object claims;
  core::JwsAlg alg = core::JwsAlg::kRs256;
  std::string kid;            // the header's kid; "" when none
  std::string signing_input;  // the first two parts with their dot, as sent
  std::string signature;      // the third part, decoded
};

/// Whether `text` has the shape of a compact JWS: three parts of base64url characters
/// separated by two dots, the first two non-empty (the third is empty in an unsecured JWS,
/// which DecodeJwt refuses by name). No decoding: how a credential is told from an API key.
bool LooksLikeJwt(std::string_view text);

/// Decodes `token`: three base64url parts (no padding), a header that is a JSON object with a
/// known `alg` (kUnauthenticated naming `none` and HS* specifically) and no `crit`, a string
/// `kid` when present, and a payload that is a JSON object.
core::Result<Jwt> DecodeJwt(std::string_view token);

/// The key of `set` that verifies `jwt`: the one with its kid (of several with that kid, the
/// first that accepts its alg); without a kid, the only key that accepts its alg. nullptr when
/// there is none (the set may be out of date: the caller may fetch it again);
/// kUnauthenticated when the token names no kid and several keys would fit.
core::Result<const Jwk*> FindJwk(const JwkSet& set, const Jwt& jwt);

struct JwtExpectations {
  std::string issuer;    // `iss` must equal it
  std::string audience;  // `aud` must be it or contain it
  int64_t leeway_s = 60;
};

/// Verifies `jwt` with `key` (alg fits the key and its `alg`; the signature), then its
/// registered claims against `expect` at `now_ms`: exp (required; refused once now >= exp +
/// leeway), nbf (refused while now + leeway < nbf), iat (refused when later than now +
/// leeway), iss, aud. Numeric dates may be integers or fractions of seconds.
core::Result<void> VerifyJwt(const Jwt& jwt, const Jwk& key, const JwtExpectations& expect,
                             int64_t now_ms);

}  // namespace a2ad::protocol
