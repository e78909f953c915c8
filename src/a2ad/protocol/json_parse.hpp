#pragma once
// The one JSON reader for every byte that enters a2ad: request bodies (JSON-RPC, REST,
// webhooks), workflow files, interrupt tokens, JWKS, and what the stores read back.
//
// It accepts exactly the JSON that every peer reads the same way (RFC 8259 restricted as
// I-JSON, RFC 7493, recommends), so a value a2ad accepts can always be written back:
// - numbers must be finite doubles: `1e999` / `-1e999` (which a plain parser turns into
//   +-infinity, which no JSON writer can spell) are refused, naming the member;
// - integer literals must fit 64 bits (int64 or uint64) and are kept exactly; a longer
//   integer would silently become a rounded double, so it is refused. Integers beyond 2^53
//   are kept exactly here, but JavaScript clients read them as rounded doubles (I-JSON §2.2);
// - a member name may appear once per object (a plain parser keeps the last, a JavaScript one
//   too, others the first: the same bytes would mean different things to different readers);
// - strings must be valid UTF-8, and \u escapes must pair surrogates (a lone \ud800 has no
//   UTF-8 spelling);
// - nesting is bounded (`max_depth`);
// - no comments, no trailing commas, one document (trailing whitespace only).
//
// Errors are core::Error values: kParseError for text that is not JSON (with the byte offset
// of the fault), kInvalidParams for JSON whose values cannot be represented (with the path of
// the member at fault, "params.message.parts[1].data.a", as the `field` detail).
//
// Thread safety: pure function; safe from any thread.
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string_view>

#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

struct JsonParseOptions {
  /// Deepest nesting of arrays and objects accepted (the document itself is depth 1).
  size_t max_depth = 32;
};

/// Parses `text` as one strict JSON document (see the file comment for what is refused).
core::Result<boost::json::value> ParseJson(std::string_view text,
                                           const JsonParseOptions& options = {});

/// ParseJson, with every value of the document made with `storage` (a
/// boost::json::monotonic_resource on the stack, say, for a document read and dropped at once:
/// its nodes are then not allocated one by one, nor freed). The resource must outlive the
/// result and every value moved or copy-constructed from it (both keep the resource); assigning
/// a value to one made with another resource copies it into that one.
core::Result<boost::json::value> ParseJson(std::string_view text, boost::json::storage_ptr storage,
                                           const JsonParseOptions& options = {});

/// ParseJson, except that a value that cannot be represented (the kInvalidParams faults) does
/// not stop the parse: the document is returned with that value left out (null in its place;
/// of two members of one name the first stays) and the first such fault in `fault`. Text
/// that is not JSON still fails, and so does a lone surrogate escape (the reader cannot go
/// past it), with that escape's error. For callers that must read part of a faulty document to
/// answer it (the JSON-RPC id of a request whose params hold 1e999).
core::Result<boost::json::value> ParseJsonReportingFaults(std::string_view text,
                                                          std::optional<core::Error>& fault,
                                                          const JsonParseOptions& options = {});

/// ParseJson, then requires an object; else kInvalidParams "<what>: expected a JSON object".
core::Result<boost::json::object> ParseJsonObject(std::string_view text, std::string_view what,
                                                  const JsonParseOptions& options = {});

}  // namespace a2ad::protocol
