#pragma once
// Public keys that check the JWS signatures (RFC 7515; algorithms of RFC 7518 §3) of tokens
// other parties sign: the bearer JWTs of an OIDC issuer (protocol/jwt.hpp,
// transport/auth/oidc_verifier.hpp). Three algorithms, each bound to one key type:
//
//   RS256  RSASSA-PKCS1-v1_5 with SHA-256                               RSA key
//   PS256  RSASSA-PSS with SHA-256, MGF1 with SHA-256, 32-byte salt     RSA key
//          (RFC 7518 §3.5)
//   ES256  ECDSA on P-256 with SHA-256, signature raw R||S (§3.4)       EC P-256 key
//
// Nothing else: not `none`, not HMAC (a public key is no secret: "HS256 with the public key as
// the secret" is the classic forgery, RFC 8725 §2.1), no other curve. Verify refuses an
// algorithm the key's type does not take, so a token cannot choose how its own signature is
// checked (RFC 8725 §3.1). RSA moduli of 2048 to 8192 bits only (RFC 7518 §3.3 asks for at
// least 2048; the upper bound keeps one verification cheap).
//
// Errors: kInvalidParams for key material that is not a usable key, the message saying why
// ("an RSA modulus of 1024 bits; at least 2048 are required", "not a point of P-256").
//
// Thread safety: immutable handles (copies share the OpenSSL key); Verify may run on any
// number of threads at once (OpenSSL 3 allows concurrent use of an EVP_PKEY nobody changes).
#include <openssl/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "a2ad/core/es256.hpp"
#include "a2ad/core/result.hpp"

namespace a2ad::core {

enum class JwsAlg { kRs256, kPs256, kEs256 };

/// "RS256", "PS256", "ES256" -> the algorithm; nullopt for any other name ("none", "HS256",
/// "RS384", "rs256", ...).
std::optional<JwsAlg> ParseJwsAlg(std::string_view name);
/// The JOSE name of `alg` ("RS256", ...).
std::string_view JwsAlgName(JwsAlg alg);

class JwsPublicKey {
 public:
  enum class Type { kRsa, kEc };

  /// An RSA public key from its modulus and public exponent, unsigned big-endian bytes (a
  /// JWK's decoded `n` and `e`; leading zero bytes are ignored). kInvalidParams unless the
  /// modulus has 2048 to 8192 bits and the exponent is odd, at least 3 and shorter than the
  /// modulus.
  static Result<JwsPublicKey> FromRsa(std::string_view n, std::string_view e);
  /// A P-256 public key from its affine coordinates, 32 bytes big-endian each (a JWK's decoded
  /// `x` and `y`). kInvalidParams when they are not 32 bytes or not a point of the curve.
  static Result<JwsPublicKey> FromEcP256(std::string_view x, std::string_view y);

  Type type() const { return type_; }
  /// Whether this key verifies `alg`: RS256 and PS256 for RSA, ES256 for EC.
  bool Accepts(JwsAlg alg) const;
  /// Whether `signature` is an `alg` signature of `input` by the private half of this key.
  /// false for an algorithm the key does not accept and for any malformed signature.
  bool Verify(JwsAlg alg, std::string_view input, std::string_view signature) const;

 private:
  Type type_ = Type::kEc;
  std::shared_ptr<EVP_PKEY> rsa_;  // set for kRsa
  Es256PublicKey ec_;              // set for kEc
};

}  // namespace a2ad::core
