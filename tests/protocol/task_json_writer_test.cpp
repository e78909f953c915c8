// The JSON text writer against boost::json::serialize: the text must be byte-identical.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdint>
#include <limits>
#include <string>

#include "a2ad/protocol/json_text.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

// Every byte that needs care, in one string (valid UTF-8, so the text parses back).
std::string Nasty() {
  std::string s = "q\"uo\\te/slash";
  for (int c = 0; c < 0x20; ++c) s.push_back(static_cast<char>(c));
  s += "\x7f|é|日本|😀";
  return s;
}

// ---- the string escaper against the library ----------------------------------------------

TEST(JsonText, EveryByteEscapesAsBoostDoes) {
  for (int c = 0; c < 256; ++c) {
    for (std::string s : {std::string(1, static_cast<char>(c)),
                          "ab" + std::string(1, static_cast<char>(c)) + "cd"}) {
      std::string out;
      AppendJsonString(out, s);
      EXPECT_EQ(out, json::serialize(json::string_view(s))) << "byte " << c;
    }
  }
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  std::string out;
  AppendJsonString(out, all);
  EXPECT_EQ(out, json::serialize(json::string_view(all)));
  // Long enough to cross the library's internal chunk boundaries, escapes at every offset.
  std::string longer;
  for (int i = 0; i < 5000; ++i) longer += (i % 7 == 0) ? std::string("\x01") : std::string("x");
  out.clear();
  AppendJsonString(out, longer);
  EXPECT_EQ(out, json::serialize(json::string_view(longer)));
}

TEST(JsonText, PinnedEscapes) {
  auto esc = [](std::string_view s) {
    std::string out;
    AppendJsonString(out, s);
    return out;
  };
  EXPECT_EQ(esc(std::string_view("\0", 1)), R"("\u0000")");
  EXPECT_EQ(esc("\x1f\x1b\x0b"), R"("\u001f\u001b\u000b")");  // lowercase hex
  EXPECT_EQ(esc("\b\t\n\f\r"), R"("\b\t\n\f\r")");
  EXPECT_EQ(esc("\"\\/"), R"("\"\\/")");  // '/' is not escaped
  EXPECT_EQ(esc("\x7f"), "\"\x7f\"");
  EXPECT_EQ(esc("é日本😀"), "\"é日本😀\"");
  EXPECT_EQ(esc(""), R"("")");
}

TEST(JsonText, IntsAndValuesAsBoostWritesThem) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{42}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    std::string out;
    AppendJsonInt(out, v);
    EXPECT_EQ(out, json::serialize(json::value(v)));
  }
  // A value several times the writer's chunk size, nested, so the serializer suspends.
  json::object big;
  for (int i = 0; i < 300; ++i)
    big[Nasty() + std::to_string(i)] =
        json::object{{"a", json::array{i, 1.5, -0.0, nullptr, true, Nasty()}}};
  std::string out = "prefix";
  JsonTextWriter w(out);
  w.Object(big);
  w.Raw(',');
  w.Value(json::value(big));
  w.Raw(',');
  w.Value(json::value(std::numeric_limits<uint64_t>::max()));
  EXPECT_EQ(out, "prefix" + json::serialize(big) + "," + json::serialize(big) + "," +
                     json::serialize(json::value(std::numeric_limits<uint64_t>::max())));
}

}  // namespace
}  // namespace a2ad::protocol
