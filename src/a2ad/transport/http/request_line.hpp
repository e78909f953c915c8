#pragma once
// The path of a request, for shaping its error answer (http_server.cpp): from its target, or
// from the raw request line of a head that could not be read to its end (too large, timed
// out, malformed), so that even that error takes the shape of the surface it was sent to.
//
// Thread safety: pure functions.
#include <cstddef>
#include <string>
#include <string_view>

namespace a2ad::transport {

/// `target` without its query.
std::string_view PathOfTarget(std::string_view target);

/// The path of the request line that starts `head`, or "" unless that line is complete
/// within `limit` bytes and well formed (`token SP target SP HTTP/d.d CRLF`).
std::string PathOfRequestLine(std::string_view head, size_t limit);

}  // namespace a2ad::transport
