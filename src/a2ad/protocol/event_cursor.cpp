#include "a2ad/protocol/event_cursor.hpp"

#include <string>

namespace a2ad::protocol {
using core::Error;
using core::ErrorCode;

namespace {

Error NotACursor(std::string_view field, std::string_view suffix = {}) {
  return Error(
      ErrorCode::kInvalidParams,
      std::string(field) + ": expected an event id (a non-negative integer)" + std::string(suffix),
      {{"field", std::string(field)}});
}

}  // namespace

core::Result<int64_t> ParseEventCursor(std::string_view text, std::string_view field) {
  if (text.empty() || text.size() > kMaxEventCursorDigits) return NotACursor(field);
  int64_t n = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return NotACursor(field, ", got '" + std::string(text) + "'");
    n = n * 10 + (ch - '0');
  }
  return n;
}

core::Result<int64_t> EventCursorFromJson(const boost::json::value& v, std::string_view field) {
  if (v.is_int64() && v.get_int64() >= 0) return v.get_int64();
  if (v.is_string()) return ParseEventCursor(v.get_string(), field);
  return NotACursor(field);
}

}  // namespace a2ad::protocol
