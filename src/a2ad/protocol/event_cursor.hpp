#pragma once
// The cursor a client sends to resume an event stream where it left off: the SSE
// `Last-Event-ID` header (A2A streams and GET /v1/runs/{id}/events), the JSON-RPC
// params.metadata.lastEventId, the REST `lastEventId` and `lastSequence` query values. It is
// the sequence number of the last event the client has seen.
//
// One syntax everywhere: a non-negative decimal integer of 1 to 18 digits (so it always fits
// an int64); no sign, no spaces, nothing after it. Anything else is kInvalidParams naming
// the field ("Last-Event-ID: expected an event id (a non-negative integer), got 'abc'"),
// with the `field` detail. Transports that answer in another vocabulary (OpenWOP REST)
// keep their own message and only take the verdict.
//
// Thread safety: pure functions; safe from any thread.
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

/// The most digits a cursor may have (10^18 - 1 < 2^63).
inline constexpr size_t kMaxEventCursorDigits = 18;

/// Reads `text` as a cursor (see the file comment); `field` names it in the error.
core::Result<int64_t> ParseEventCursor(std::string_view text, std::string_view field);

/// A cursor given as a JSON value: a non-negative integer, or a string ParseEventCursor
/// accepts. Anything else (a negative number, a double, null, an object...) is kInvalidParams
/// "<field>: expected an event id (a non-negative integer)".
core::Result<int64_t> EventCursorFromJson(const boost::json::value& v, std::string_view field);

}  // namespace a2ad::protocol
