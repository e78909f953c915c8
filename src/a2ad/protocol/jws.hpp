#pragma once
// The JSON side of a2ad's ES256 keys (core/es256.hpp): a public key as a JWK (RFC 7517 §4,
// RFC 7518 §6.2), its RFC 7638 thumbprint, and a JWS with a detached payload (RFC 7515
// Appendix F) in the fields of the flattened JSON serialization (§7.2.2): what the agent
// card's `signatures` entries are (A2A §8.4; protocol/card_signature.hpp). Push JWTs (the
// compact serialization) are written by push/signer.hpp.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "a2ad/core/es256.hpp"
#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

/// The public JWK of `key` as a JWKS lists it:
/// {"kty":"EC","crv":"P-256","x":<b64url>,"y":<b64url>,"kid":kid,"use":"sig","alg":"ES256"}.
boost::json::object PublicJwk(const core::Es256PublicKey& key, std::string_view kid);

/// The RFC 7638 thumbprint of `key`: base64url (no padding) of the SHA-256 of the canonical
/// JSON (protocol/jcs.hpp) of its required members {"crv","kty","x","y"}; 43 characters.
/// Equal keys give equal thumbprints, so it is a kid that stays put as long as the key does.
std::string JwkThumbprint(const core::Es256PublicKey& key);

/// A JWS over a detached payload: the two fields a flattened JSON JWS carries besides the
/// payload, both base64url without padding.
struct DetachedJws {
  std::string protected_header;  // base64url(header JSON)
  std::string signature;         // base64url(ES256 R||S, 64 bytes)
};

/// Signs `payload` (the bytes themselves; base64url-encoded here for the signing input) with
/// `key`. `header` is the protected header and must say "alg":"ES256"; it is written as its
/// canonical JSON. signature = ES256(ASCII(protected + "." + base64url(payload))).
/// kInvalidParams when alg is not ES256 or the header has no canonical form; kInternal when
/// OpenSSL fails.
core::Result<DetachedJws> SignDetachedJws(const boost::json::object& header,
                                          std::string_view payload,
                                          const core::Es256PrivateKey& key);

/// Verifies a DetachedJws over `payload` with `key`; returns the decoded protected header.
/// kInvalidParams saying why not: a field that is not base64url, a header that is not a JSON
/// object, alg other than ES256, a `crit` header (none is understood, RFC 7515 §4.1.11), or a
/// signature that does not verify.
core::Result<boost::json::object> VerifyDetachedJws(const DetachedJws& jws,
                                                    std::string_view payload,
                                                    const core::Es256PublicKey& key);

}  // namespace a2ad::protocol
