#pragma once
// ES256 keys: ECDSA over NIST P-256 with SHA-256 (RFC 7518 §3.4), the one JWS algorithm a2ad
// signs with (push JWTs, push/signer.hpp; the agent card signature,
// protocol/card_signature.hpp). Generation, PEM import and export, signing into the JWS
// form (raw R||S, 32 + 32 bytes big-endian, not OpenSSL's DER ECDSA-Sig-Value) and
// verification. No JSON here: the JWK of a key is protocol/jws.hpp's.
//
// Errors: kInvalidParams for input that is not what is asked for (a PEM that does not read,
// a key of another type or curve, a point not on the curve); kInternal for an OpenSSL failure
// on valid input. Messages name what was found ("an RSA key", "an EC key on secp384r1").
//
// A default-constructed key is empty (a placeholder to assign to): Sign fails with kInternal,
// Verify is false, x() and y() are "".
//
// Thread safety: both key types are immutable handles (copies share the OpenSSL key); every
// const member may be called from any number of threads at once (OpenSSL 3 allows concurrent
// use of one EVP_PKEY that is not being modified). The free functions are pure.
#include <openssl/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"

namespace a2ad::core {

/// A P-256 public key.
class Es256PublicKey {
 public:
  /// From the affine coordinates, 32 bytes big-endian each (a JWK's decoded `x` and `y`).
  /// kInvalidParams when they are not 32 bytes or not a point of P-256.
  static Result<Es256PublicKey> FromXY(std::string_view x, std::string_view y);

  /// The affine coordinates, 32 bytes big-endian each.
  const std::string& x() const { return x_; }
  const std::string& y() const { return y_; }

  /// Whether `signature` (raw R||S, 64 bytes) is an ES256 signature of `input` by the private
  /// half of this key. false for any malformed signature.
  bool Verify(std::string_view input, std::string_view signature) const;

 private:
  friend class Es256PrivateKey;
  std::shared_ptr<EVP_PKEY> key_;
  std::string x_, y_;
};

/// A P-256 private key.
class Es256PrivateKey {
 public:
  /// A fresh key from OpenSSL's CSPRNG. kInternal if OpenSSL fails.
  static Result<Es256PrivateKey> Generate();

  /// A key from PEM text: PKCS#8 ("BEGIN PRIVATE KEY", what Export writes) or SEC1 ("BEGIN EC
  /// PRIVATE KEY", what `openssl ecparam -genkey` writes). kInvalidParams when the text holds
  /// no readable private key, an encrypted one (there is no passphrase to give; never
  /// prompts), or a key that is not EC on P-256 (the message names the type or curve found).
  static Result<Es256PrivateKey> FromPem(std::string_view pem);

  /// The key as unencrypted PKCS#8 PEM text. Keep it secret (files 0600).
  std::string ToPem() const;

  const Es256PublicKey& public_key() const { return public_; }

  /// The ES256 signature of `input` (SHA-256, then ECDSA with a random nonce, so two
  /// signatures of one input differ), raw R||S, 64 bytes. kInternal if OpenSSL fails.
  Result<std::string> Sign(std::string_view input) const;

 private:
  std::shared_ptr<EVP_PKEY> key_;
  Es256PublicKey public_;
};

}  // namespace a2ad::core
