#pragma once
// The agent card signature (A2A §8.4 "Agent Card Signing"; WIRE.md §2.6): a JWS with a
// detached payload, ES256, in the card's `signatures` array as {"protected", "signature"}.
//
// What is signed, for a 1.0 card, is the card as the A2A v1.0 proto `AgentCard` reads it, in
// one of two canonicalizations (CardCanonicalization):
//   kSpec  A2A §8.4.1 to the letter: round trip through the v1.0 message (members outside the
//          schema dropped at every level; fields equal to their proto default left out: "",
//          false for a plain bool, empty repeated fields; proto3 `optional` fields and message
//          fields kept when set, map entries kept whatever their value), `signatures`
//          removed, RFC 8785 canonical JSON (protocol/jcs.hpp);
//   kSdk   the same, then every "", null and every list or object left empty removed,
//          recursively: what `canonicalizeAgentCard` of @a2a-js/sdk 1.3.0 computes (its
//          cleanEmpty).
// They differ when the card has a present message that is empty: a security requirement
// naming a scheme with no scopes ({"schemes": {"bearer": {}}}) is in the kSpec payload and
// gone from the kSdk one (so with kSdk alone a card stripped of its securityRequirements
// would still verify). SignAgentCard therefore signs both, kSpec first: a literal verifier
// and the SDK's each find the entry they compute (both try every entry); when the two
// payloads are equal it signs once.
//
// A 0.3 card (a2ad's 0.3 form, agent_card.hpp: a top-level url and no supportedInterfaces;
// no 0.3 SDK verifies signatures) is signed over the canonical JSON of the card without
// `signatures`, as it is.
//
// The normalization covers what BuildAgentCard writes (with `securitySchemes` of the API-key,
// HTTP, OpenID Connect and mTLS kinds, and `securityRequirements`), plus `provider`,
// `documentationUrl`, `iconUrl` and skill `inputModes`/`outputModes`. A v1.0 member it does
// not model (an OAuth2 scheme, a skill's `securityRequirements`), a snake_case spelling the SDK
// would also read (`supported_interfaces`, ...), or a member of the wrong JSON type is refused
// (kInvalidParams naming it) rather than signed in a form a verifier would compute
// differently.
//
// Thread safety: pure functions (keys are immutable, core/es256.hpp).
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "a2ad/core/es256.hpp"
#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

enum class CardCanonicalization { kSpec, kSdk };

/// A 1.0 card as a verifier sees it before canonicalization (above).
core::Result<boost::json::object> CardSigningView(
    const boost::json::object& card, CardCanonicalization how = CardCanonicalization::kSdk);

/// The JWS payload: the canonical JSON of CardSigningView(card, how); of a 0.3 card, the
/// canonical JSON of the card without `signatures` (`how` does not matter).
core::Result<std::string> CardSigningPayload(
    const boost::json::object& card, CardCanonicalization how = CardCanonicalization::kSdk);

/// The `signatures` entries for `card` (kSpec, then kSdk when it differs), each {"protected":
/// base64url of the header {"alg":"ES256","typ":"JOSE","kid":<RFC 7638 thumbprint of the
/// key>,"jku":jku} (jku left out when empty), "signature": base64url of R||S}. ECDSA nonces
/// are random: two calls give different (equally valid) signatures.
core::Result<boost::json::array> SignAgentCard(const boost::json::object& card,
                                               const core::Es256PrivateKey& key,
                                               std::string_view jku);

/// Sets `card`'s `signatures` (SignAgentCard) and checks that it verifies both ways.
core::Result<void> AttachCardSignature(boost::json::object& card,
                                       const core::Es256PrivateKey& key, std::string_view jku);

/// Whether some entry of `card`'s `signatures` verifies with `key` (protected header with
/// alg ES256, kid and typ; the payload recomputed from the card as received) in either
/// canonicalization, or only in `only`'s. kInvalidParams saying why not (no signatures; the
/// last entry's reason).
core::Result<void> VerifyAgentCardSignature(
    const boost::json::object& card, const core::Es256PublicKey& key,
    std::optional<CardCanonicalization> only = std::nullopt);

}  // namespace a2ad::protocol
