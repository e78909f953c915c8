#pragma once
// Node config members that several kinds share: their load-time checks (Validate hooks) and
// what they become in a call's spec.
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

/// A node's `retry` config {maxAttempts 1..10, backoffMs 0..60000}, when present; refused
/// naming "<path>.retry...".
inline core::Result<void> CheckRetry(const boost::json::object& config, const std::string& path) {
  const boost::json::value* r = config.if_contains("retry");
  if (!r) return core::Ok{};
  if (!r->is_object())
    return protocol::FieldError(path + ".retry", "expected {maxAttempts, backoffMs}");
  if (auto a = CheckIntIn(r->get_object(), "maxAttempts", 1, 10, path + ".retry"); !a) return a;
  return CheckIntIn(r->get_object(), "backoffMs", 0, 60000, path + ".retry");
}

/// The retry policy a call's spec carries (effects.hpp): the config's, with the defaults
/// (3 attempts, 500 ms doubling).
inline boost::json::object RetrySpec(const boost::json::object& config) {
  const boost::json::object& r = protocol::ObjOr(config, "retry");
  return boost::json::object{{"maxAttempts", protocol::IntOr(r, "maxAttempts", 3)},
                             {"backoffMs", protocol::IntOr(r, "backoffMs", 500)}};
}

}  // namespace a2ad::workflow::nodes
