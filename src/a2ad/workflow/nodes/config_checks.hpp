#pragma once
// Load-time checks of node config members that several kinds share (Validate hooks).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::workflow::nodes {

/// `o[key]`, when present, is an integer from `lo` to `hi`; else kInvalidParams naming
/// "<path>.<key>".
inline core::Result<void> CheckIntIn(const boost::json::object& o, std::string_view key, int64_t lo,
                                     int64_t hi, const std::string& path) {
  const boost::json::value* v = o.if_contains(key);
  if (v && (!v->is_int64() || v->as_int64() < lo || v->as_int64() > hi))
    return protocol::FieldError(
        path + "." + std::string(key),
        "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  return core::Ok{};
}

}  // namespace a2ad::workflow::nodes
