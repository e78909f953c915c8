#pragma once
// The agent card signature (A2A §8.4 "Agent Card Signing"; WIRE.md §2.6): a JWS with a
// detached payload, ES256, in the card's `signatures` array as {"protected", "signature"}.
//
// What is signed is the card as the A2A v1.0 proto `AgentCard` reads it, exactly as
// `canonicalizeAgentCard` of @a2a-js/sdk 1.3.0 computes it (the Python SDK's MessageToDict
// path is the same idea), so a client verifies it with its SDK's own verifier:
// 1. round trip through the v1.0 message: members outside the v1.0 schema are dropped (at
//    every level), and fields equal to their proto default are left out (""; false for a
//    plain bool such as an extension's `required`; empty lists). Proto3 `optional` fields
//    keep their value when set, so `capabilities.extendedAgentCard: false` stays;
// 2. `signatures` removed;
// 3. then, recursively, every "" and null, and every list or object left empty, removed
//    (the SDK's cleanEmpty: this also drops "" items of string lists);
// 4. RFC 8785 canonical JSON (protocol/jcs.hpp).
// The hybrid card's v0.3-only members (url, preferredTransport, protocolVersion,
// additionalInterfaces; agent_card.hpp) are outside the v1.0 schema: they are NOT covered by
// the signature, as with every SDK. Both served forms therefore have one payload, and one
// signature verifies on both.
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
#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "a2ad/core/es256.hpp"
#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

/// Steps 1 to 3 above: the card as a verifier sees it before canonicalization.
core::Result<boost::json::object> CardSigningView(const boost::json::object& card);

/// The JWS payload: the canonical JSON of CardSigningView(card).
core::Result<std::string> CardSigningPayload(const boost::json::object& card);

/// One `signatures` entry for `card`: {"protected": base64url of the header {"alg":"ES256",
/// "typ":"JOSE","kid":<RFC 7638 thumbprint of the key>,"jku":jku} (jku left out when empty),
/// "signature": base64url of R||S}. ECDSA nonces are random: two calls give two different
/// (equally valid) signatures.
core::Result<boost::json::object> SignAgentCard(const boost::json::object& card,
                                                const core::Es256PrivateKey& key,
                                                std::string_view jku);

/// Signs `v10_card` and sets `signatures: [entry]` on both forms of the card (agent_card.hpp
/// CardForm), then checks that each form verifies. kInternal if the two forms do not share
/// one payload (they differ outside the v0.3-only members: a bug) or a check fails.
core::Result<void> AttachCardSignature(boost::json::object& hybrid_card,
                                       boost::json::object& v10_card,
                                       const core::Es256PrivateKey& key, std::string_view jku);

/// Whether some entry of `card`'s `signatures` verifies with `key`, as the SDK's
/// verifyAgentCardSignature checks it (protected header with alg ES256, kid and typ; the
/// payload recomputed from the card as received). kInvalidParams saying why not (no
/// signatures; the last entry's reason).
core::Result<void> VerifyAgentCardSignature(const boost::json::object& card,
                                            const core::Es256PublicKey& key);

}  // namespace a2ad::protocol
