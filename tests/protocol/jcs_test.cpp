// RFC 8785 canonical JSON: the examples of the RFC (§3.2.2 and §3.2.3, the number table of
// Appendix B), and the refusals.
#include "a2ad/protocol/jcs.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <boost/json.hpp>
#include <cmath>
#include <cstdint>
#include <limits>

#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

std::string Canonical(std::string_view text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v) << text;
  auto c = CanonicalJson(v ? *v : json::value());
  EXPECT_TRUE(c) << c.error().message;
  return c ? *c : "";
}

std::string Number(double d) {
  std::string out;
  auto r = AppendCanonicalNumber(out, d);
  EXPECT_TRUE(r) << d;
  return out;
}

// RFC 8785 §3.2.2: whitespace removed, members sorted, numbers and strings in their
// canonical forms.
TEST(Jcs, TheRfcExample) {
  EXPECT_EQ(Canonical(R"({
    "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
    "literals": [null, true, false]
  })"),
            "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,"
            "1e-27],\"string\":\"\xE2\x82\xAC$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
}

// RFC 8785 §3.2.3: names sorted by UTF-16 code units, so U+1F600 (D83D DE00) comes before
// U+FB33, which UTF-8 or code point order would put the other way round.
TEST(Jcs, MembersSortByUtf16CodeUnits) {
  const std::string c = Canonical(R"({
    "\u20ac": "Euro Sign",
    "\r": "Carriage Return",
    "\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\ud83d\ude00": "Emoji: Grinning Face",
    "\u0080": "Control",
    "\u00f6": "Latin Small Letter O With Diaeresis"
  })");
  EXPECT_EQ(c,
            "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xC2\x80\":\"Control\","
            "\"\xC3\xB6\":\"Latin Small Letter O With Diaeresis\",\"\xE2\x82\xAC\":\"Euro Sign\","
            "\"\xF0\x9F\x98\x80\":\"Emoji: Grinning Face\","
            "\"\xEF\xAC\xB3\":\"Hebrew Letter Dalet With Dagesh\"}");
}

TEST(Jcs, NestedObjectsAreSortedAndArraysKeepTheirOrder) {
  EXPECT_EQ(Canonical(R"({"b":[3,1,{"z":1,"a":2}],"a":{"d":{},"c":[]}})"),
            R"({"a":{"c":[],"d":{}},"b":[3,1,{"a":2,"z":1}]})");
}

// RFC 8785 Appendix B: IEEE 754 double (as hex bits) -> its JSON text.
TEST(Jcs, TheNumbersOfAppendixB) {
  const struct {
    uint64_t bits;
    const char* text;
  } cases[] = {
      {0x0000000000000000, "0"},
      {0x8000000000000000, "0"},  // minus zero
      {0x0000000000000001, "5e-324"},
      {0x8000000000000001, "-5e-324"},
      {0x7fefffffffffffff, "1.7976931348623157e+308"},
      {0xffefffffffffffff, "-1.7976931348623157e+308"},
      {0x4340000000000000, "9007199254740992"},
      {0xc340000000000000, "-9007199254740992"},
      {0x4430000000000000, "295147905179352830000"},
      {0x44b52d02c7e14af5, "9.999999999999997e+22"},
      {0x44b52d02c7e14af6, "1e+23"},
      {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
      {0x444b1ae4d6e2ef4e, "999999999999999700000"},
      {0x444b1ae4d6e2ef4f, "999999999999999900000"},
      {0x444b1ae4d6e2ef50, "1e+21"},
      {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
      {0x3eb0c6f7a0b5ed8d, "0.000001"},
      {0x41b3de4355555553, "333333333.3333332"},
      {0x41b3de4355555554, "333333333.33333325"},
      {0x41b3de4355555555, "333333333.3333333"},
      {0x41b3de4355555556, "333333333.3333334"},
      {0x41b3de4355555557, "333333333.33333343"},
      {0xbecbf647612f3696, "-0.0000033333333333333333"},
      {0x43143ff3c1cb0959, "1424953923781206.2"},
  };
  for (const auto& c : cases) EXPECT_EQ(Number(std::bit_cast<double>(c.bits)), c.text) << c.text;
}

TEST(Jcs, TheBoundariesOfEachNumberForm) {
  EXPECT_EQ(Number(1), "1");
  EXPECT_EQ(Number(-1.5), "-1.5");
  EXPECT_EQ(Number(100), "100");
  EXPECT_EQ(Number(1e20), "100000000000000000000");  // n = 21: still plain digits
  EXPECT_EQ(Number(1e21), "1e+21");                  // n = 22: exponent
  EXPECT_EQ(Number(1.5e21), "1.5e+21");
  EXPECT_EQ(Number(123.456), "123.456");
  EXPECT_EQ(Number(1e-6), "0.000001");  // n = -5: still "0.0..."
  EXPECT_EQ(Number(1e-7), "1e-7");      // n = -6: exponent
  EXPECT_EQ(Number(1.25e-7), "1.25e-7");
  EXPECT_EQ(Number(0.1), "0.1");
}

TEST(Jcs, IntegersAreExactUpTo2To53AndRoundedToDoublesBeyond) {
  EXPECT_EQ(CanonicalJson(json::value(int64_t{9007199254740992})).value(), "9007199254740992");
  EXPECT_EQ(CanonicalJson(json::value(int64_t{-9007199254740992})).value(), "-9007199254740992");
  EXPECT_EQ(CanonicalJson(json::value(int64_t{-42})).value(), "-42");
  EXPECT_EQ(CanonicalJson(json::value(uint64_t{7})).value(), "7");
  // 2^53 + 1 has no double: a JavaScript reader sees 2^53, and so does the canonical form.
  EXPECT_EQ(CanonicalJson(json::value(int64_t{9007199254740993})).value(), "9007199254740992");
  EXPECT_EQ(CanonicalJson(json::value(std::numeric_limits<uint64_t>::max())).value(),
            "18446744073709552000");
  EXPECT_EQ(CanonicalJson(json::value(std::numeric_limits<int64_t>::min())).value(),
            "-9223372036854776000");
}

TEST(Jcs, WhatHasNoCanonicalFormIsRefused) {
  for (double d :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    std::string out;
    EXPECT_FALSE(AppendCanonicalNumber(out, d));
    auto r = CanonicalJson(json::object{{"a", json::array{1, d}}});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
    EXPECT_NE(r.error().message.find("$.a[1]"), std::string::npos) << r.error().message;
  }
  auto bad_value = CanonicalJson(json::object{{"s", "\xC3"}});  // a truncated sequence
  ASSERT_FALSE(bad_value);
  EXPECT_NE(bad_value.error().message.find("$.s"), std::string::npos);
  EXPECT_FALSE(CanonicalJson(json::object{{"\xED\xA0\x80", 1}}));  // a surrogate, as UTF-8
  EXPECT_FALSE(CanonicalJson(json::array{"\xC0\xAF"}));            // overlong '/'
}

TEST(Jcs, StringsAreEscapedAsTheRfcSays) {
  // Control characters: the five short escapes, the rest \u00xx in lowercase; DEL, '/' and
  // non-ASCII as they are.
  EXPECT_EQ(CanonicalJson(json::value("\b\t\n\f\r\x01\x1f\x7f/\"\\\xE2\x82\xAC")).value(),
            "\"\\b\\t\\n\\f\\r\\u0001\\u001f\x7f/\\\"\\\\\xE2\x82\xAC\"");
}

}  // namespace
}  // namespace a2ad::protocol
