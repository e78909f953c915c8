#pragma once
// RFC 8785 JSON Canonicalization Scheme (JCS): the one text of a JSON value that signers and
// verifiers agree on byte for byte (the agent card signature, protocol/card_signature.hpp;
// RFC 7638 JWK thumbprints, protocol/jws.hpp). The second JSON writer of a2ad, next to
// json_text.hpp (which writes everything that is sent or stored); it is used only to compute
// bytes to sign or hash. tests/lint/check_sources.sh names both.
//
// The text (RFC 8785 §3.2):
// - no whitespace;
// - object members sorted by their names as arrays of UTF-16 code units (§3.2.3; so U+1F600,
//   the surrogates D83D DE00, sorts before U+FB33), array order kept;
// - strings escaped as json_text.hpp's AppendJsonString does, which is §3.2.2.2: `"` and `\`
//   backslashed, \b \t \n \f \r, other bytes below 0x20 as \u00xx (lowercase hex), all else
//   (0x7F, '/', non-ASCII) as UTF-8;
// - numbers as ECMAScript's Number.prototype.toString (§3.2.2.3): the shortest digits that
//   read back to the same double, `1e+21` from 10^21 up, `1e-7` below 10^-6, -0 as `0`.
//   An integer (int64 / uint64) of magnitude up to 2^53 is written as it is; a larger one is
//   first rounded to the nearest double, as a JavaScript reader of the JSON text would (JCS is
//   defined over I-JSON, RFC 7493, whose numbers are doubles).
//
// Errors (kInvalidParams, naming the JSON path): a non-finite double (no JSON form), a string
// or member name that is not UTF-8, two members with the same name.
//
// Thread safety: pure functions.
#include <boost/json/value.hpp>
#include <string>

#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

/// The RFC 8785 canonical text of `v`.
core::Result<std::string> CanonicalJson(const boost::json::value& v);

/// Appends the RFC 8785 / ECMAScript text of a finite double ("0", "5e-324", "1e+21",
/// "0.000001", "333333333.3333333"). kInvalidParams for NaN and the infinities.
core::Result<void> AppendCanonicalNumber(std::string& out, double d);

}  // namespace a2ad::protocol
