// protocol::ParseEventCursor / EventCursorFromJson: the one syntax of a stream cursor
// (Last-Event-ID, params.metadata.lastEventId, lastEventId, lastSequence).
#include "a2ad/protocol/event_cursor.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdint>
#include <string>

namespace a2ad::protocol {
namespace {
namespace json = boost::json;
using core::ErrorCode;

std::string Field(const core::Error& e) {
  for (const auto& [k, v] : e.details)
    if (k == "field") return v;
  return "<none>";
}

TEST(EventCursor, ReadsNonNegativeDecimalIntegersUpTo18Digits) {
  EXPECT_EQ(ParseEventCursor("0", "f").value(), 0);
  EXPECT_EQ(ParseEventCursor("7", "f").value(), 7);
  EXPECT_EQ(ParseEventCursor("0042", "f").value(), 42);
  EXPECT_EQ(ParseEventCursor("999999999999999999", "f").value(), 999999999999999999);
}

TEST(EventCursor, RefusesAnythingElseNamingTheField) {
  for (const char* text : {"-1", "+1", " 1", "1 ", "1x", "0x10", "1.0", "1e3", "abc", "١"}) {
    auto c = ParseEventCursor(text, "Last-Event-ID");
    ASSERT_FALSE(c) << text;
    EXPECT_EQ(c.error().code, ErrorCode::kInvalidParams) << text;
    EXPECT_EQ(Field(c.error()), "Last-Event-ID") << text;
    EXPECT_EQ(c.error().message,
              "Last-Event-ID: expected an event id (a non-negative integer), "
              "got '" +
                  std::string(text) + "'");
  }
  // Empty, and more than 18 digits (which could overflow an int64), without the echo.
  for (const char* text : {"", "1000000000000000000", "99999999999999999999999"}) {
    auto c = ParseEventCursor(text, "lastSequence");
    ASSERT_FALSE(c) << text;
    EXPECT_EQ(Field(c.error()), "lastSequence");
    EXPECT_EQ(c.error().message, "lastSequence: expected an event id (a non-negative integer)");
  }
}

TEST(EventCursor, FromJsonTakesIntegersAndDecimalStrings) {
  const std::string f = "params.metadata.lastEventId";
  EXPECT_EQ(EventCursorFromJson(json::value(3), f).value(), 3);
  EXPECT_EQ(EventCursorFromJson(json::value(0), f).value(), 0);
  EXPECT_EQ(EventCursorFromJson(json::value("12"), f).value(), 12);
  for (const json::value& v : {json::value(-1), json::value(1.0), json::value(nullptr),
                               json::value(true), json::value(std::uint64_t{18446744073709551615u}),
                               json::value(json::object()), json::value(json::array{1})}) {
    auto c = EventCursorFromJson(v, f);
    ASSERT_FALSE(c) << json::serialize(v);
    EXPECT_EQ(c.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Field(c.error()), f);
    EXPECT_EQ(c.error().message, f + ": expected an event id (a non-negative integer)");
  }
  auto s = EventCursorFromJson(json::value("x1"), f);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, f + ": expected an event id (a non-negative integer), got 'x1'");
}

}  // namespace
}  // namespace a2ad::protocol
