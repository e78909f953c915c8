// protocol::ParseJson (the strict reader of every byte that enters a2ad) and SerializeJson
// (the one writer): what is refused, how the refusal names its field, and that no writer can
// produce a number that is not JSON.
#include "a2ad/protocol/json_parse.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "a2ad/protocol/json_text.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;
using core::ErrorCode;

std::string Field(const core::Error& e) {
  for (const auto& [k, v] : e.details)
    if (k == "field") return v;
  return "<none>";
}

TEST(ParseJson, ReadsOrdinaryDocuments) {
  auto v = ParseJson(R"({"a":[1,-2,3.5,"x",true,null,{"b":{}}],"c":"\u00e9\ud83d\ude00"})");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(*v, json::parse(R"({"a":[1,-2,3.5,"x",true,null,{"b":{}}],"c":"é😀"})"));
  EXPECT_EQ(SerializeJson(*v), json::serialize(*v));
}

TEST(ParseJson, GrowsContainersByDoublingFromFour) {
  // One allocation for a container of up to 4 members or items, then one per doubling
  // (Boost.JSON's own growth reallocates at 1, 2, 3, 4, 6 and 9: five times for five).
  auto doc = ParseJson(R"({"a":1,"b":2,"c":3,"d":4,"e":5,"list":[1,2,3,4,5],"one":{"x":1}})");
  ASSERT_TRUE(doc) << doc.error().message;
  const json::object& o = doc->as_object();
  EXPECT_EQ(o.size(), 7u);
  EXPECT_EQ(o.capacity(), 8u);
  EXPECT_EQ(o.at("list").as_array().capacity(), 8u);
  EXPECT_EQ(o.at("one").as_object().capacity(), 4u);
  EXPECT_EQ(SerializeJson(*doc),
            R"({"a":1,"b":2,"c":3,"d":4,"e":5,"list":[1,2,3,4,5],"one":{"x":1}})");
}

TEST(ParseJson, RefusesNumbersBeyondADoubleNamingTheMember) {
  for (const char* text : {R"({"a":{"b":[0,-1e999]}})", R"({"a":{"b":[0,1E400]}})",
                           R"({"a":{"b":[0,1.7976931348623159e308]}})"}) {
    auto v = ParseJson(text);
    ASSERT_FALSE(v) << text;
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidParams) << text;
    EXPECT_EQ(Field(v.error()), "a.b[1]") << text;
    EXPECT_NE(v.error().message.find("number out of range"), std::string::npos)
        << v.error().message;
  }
  // Inside an object inside an array: each open container is named by its parent's state.
  auto nested = ParseJson(R"({"a":[{"x":1},{"c":[1],"b":1e999}]})");
  ASSERT_FALSE(nested);
  EXPECT_EQ(Field(nested.error()), "a[1].b");
  auto top = ParseJson("1e999");
  ASSERT_FALSE(top);
  EXPECT_EQ(Field(top.error()), "");
}

TEST(ParseJson, KeepsTheLargestFiniteDoubleAndUnderflowsToZero) {
  auto max = ParseJson("[1.7976931348623157e308,-1.7976931348623157e308,1e-400]");
  ASSERT_TRUE(max) << max.error().message;
  EXPECT_EQ(max->as_array()[0].as_double(), std::numeric_limits<double>::max());
  EXPECT_EQ(max->as_array()[2].as_double(), 0.0);
  // Below the halfway point to the next power: still the largest double, which Boost 1.81
  // reads as infinity (tests/fuzz/json_parse_fuzz, corpus: boost-misreads-negative-max).
  auto near = ParseJson("[1.7976931348623158e308,-1.7976931348623158e308]");
  ASSERT_TRUE(near) << near.error().message;
  EXPECT_EQ(near->as_array()[0].as_double(), std::numeric_limits<double>::max());
  EXPECT_EQ(near->as_array()[1].as_double(), -std::numeric_limits<double>::max());
}

// Found by tests/fuzz/json_parse_fuzz (corpus: zero-huge-exponent): Boost 1.81 reads a zero
// with an exponent past the double range ("0e400") as NaN; it is 0, and stays a number.
TEST(ParseJson, ReadsAZeroWithAHugeExponentAsZero) {
  auto v = ParseJson("[0e6686666,-0.0e400,0E999]");
  ASSERT_TRUE(v) << v.error().message;
  for (const auto& x : v->as_array()) {
    ASSERT_TRUE(x.is_double());
    EXPECT_EQ(x.as_double(), 0.0);
  }
  EXPECT_TRUE(std::signbit(v->as_array()[1].as_double()));
  EXPECT_EQ(SerializeJson(*v), "[0E0,-0E0,0E0]");
}

TEST(ParseJson, IntegersMustFit64BitsAndAreKeptExactly) {
  auto v = ParseJson("[9007199254740993,-9223372036854775808,18446744073709551615]");
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->as_array()[0].as_int64(), 9007199254740993);  // 2^53 + 1, not rounded
  EXPECT_EQ(v->as_array()[1].as_int64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(v->as_array()[2].as_uint64(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(SerializeJson(*v), "[9007199254740993,-9223372036854775808,18446744073709551615]");
  for (const char* text : {R"({"n":18446744073709551616})", R"({"n":-9223372036854775809})",
                           R"({"n":123456789012345678901234567890})"}) {
    auto big = ParseJson(text);
    ASSERT_FALSE(big) << text;
    EXPECT_EQ(big.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Field(big.error()), "n");
    EXPECT_NE(big.error().message.find("integer out of range"), std::string::npos);
  }
  // With a fraction or an exponent it is a double, and doubles may be large.
  EXPECT_TRUE(ParseJson("123456789012345678901234567890.0"));
  EXPECT_TRUE(ParseJson("1e29"));
}

// Found by tests/fuzz/jsonrpc_fuzz (corpus: regress-long-integer-page-size): an integer
// literal of more than 40 digits was shortened for the message ("666...") before being
// classified, and the "..." made it look like a fraction: it was read as a double.
TEST(ParseJson, RefusesLongIntegersAsIntegers) {
  for (std::string digits :
       {std::string(41, '6'), std::string(60, '6') + "101", "-" + std::string(45, '9')}) {
    auto v = ParseJson(R"({"params":{"pageSize":)" + digits + "}}");
    ASSERT_FALSE(v) << digits;
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Field(v.error()), "params.pageSize");
    EXPECT_NE(v.error().message.find("integer out of range: " + digits.substr(0, 37) + "..."),
              std::string::npos)
        << v.error().message;
  }
  EXPECT_TRUE(ParseJson("6666666666666666666666666666666666666666.5"));  // a double: fine
}

TEST(ParseJson, RefusesAMemberNameGivenTwice) {
  auto v = ParseJson(R"({"x":[{"a":1},{"a":1,"b":2,"a":3}]})");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Field(v.error()), "x[1].a");
  // The same name in different objects, or as a value, is fine.
  EXPECT_TRUE(ParseJson(R"({"a":{"a":"a"},"b":[{"a":1},{"a":2}]})"));
}

TEST(ParseJson, FindsADuplicateAmongManyMembersWithoutQuadraticCost) {
  std::string text = "{";
  for (int i = 0; i < 50000; ++i)
    text += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  std::string ok = text;
  ok.back() = '}';
  auto v = ParseJson(ok);
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->as_object().size(), 50000u);
  text += "\"k123\":0}";
  auto dup = ParseJson(text);
  ASSERT_FALSE(dup);
  EXPECT_EQ(Field(dup.error()), "k123");
}

TEST(ParseJson, RefusesTextThatIsNotUtf8OrPairsNoSurrogates) {
  // A \u escape of an unpaired surrogate is well-formed JSON that cannot be represented: a
  // value fault naming the member (issue 35), like 1e999.
  for (const std::string& text : {std::string("{\"a\":[1,{\"b\":\"x\\ud800\"}]}"),
                                  std::string("{\"a\":[1,{\"b\":\"\\udc00\"}]}"),
                                  std::string("{\"a\":[1,{\"b\":\"\\ud800\\u0041\"}]}")}) {
    auto v = ParseJson(text);
    ASSERT_FALSE(v) << text;
    EXPECT_EQ(v.error().code, ErrorCode::kInvalidParams) << text;
    EXPECT_EQ(Field(v.error()), "a[1].b") << text;
    EXPECT_NE(v.error().message.find("surrogate"), std::string::npos) << v.error().message;
  }
  for (const std::string& text : {std::string("\"\xff\""),
                                  std::string("\"\xc0\xaf\""),          // overlong '/'
                                  std::string("\"\xed\xa0\x80\""),      // a surrogate in UTF-8
                                  std::string("\"\xf4\x90\x80\x80\""),  // beyond U+10FFFF
                                  std::string("\"\xe2\x82\"")}) {       // truncated sequence
    auto v = ParseJson(text);
    ASSERT_FALSE(v) << text;
    EXPECT_EQ(v.error().code, ErrorCode::kParseError) << text;
  }
  EXPECT_TRUE(ParseJson("\"\\ud83d\\ude00 \xf0\x9f\x98\x80\""));  // a pair, and its UTF-8
}

TEST(ParseJson, BoundsNesting) {
  auto nest = [](int depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  EXPECT_TRUE(ParseJson(nest(32)));
  auto deep = ParseJson(nest(33));
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().code, ErrorCode::kParseError);
  EXPECT_NE(deep.error().message.find("deeper than 32"), std::string::npos);
  EXPECT_TRUE(ParseJson(nest(64), {.max_depth = 64}));
  EXPECT_FALSE(ParseJson(nest(100000)));  // no stack overflow either
}

TEST(ParseJson, RefusesExtensionsAndTrailingText) {
  for (const char* text :
       {"", " ", "[1,]", "{\"a\":1,}", "// c\n1", "/* c */1", "1 2", "{} x", "NaN", "Infinity",
        "-Infinity", "[01]", "[.5]", "[+1]", "'a'", "{a:1}", "[1e]", "\"\t\""}) {
    auto v = ParseJson(text);
    EXPECT_FALSE(v) << "accepted: " << text;
    if (!v) {
      EXPECT_EQ(v.error().code, ErrorCode::kParseError) << text;
    }
  }
  EXPECT_TRUE(ParseJson(" \n{}\r\n\t"));
}

TEST(ParseJson, ReportingFaultsKeepsReadingAndNamesTheFirst) {
  std::optional<core::Error> fault;
  auto v = ParseJsonReportingFaults(R"({"id":7,"p":{"x":1e999,"y":2,"y":3},"z":-1e999})", fault);
  ASSERT_TRUE(v) << v.error().message;
  ASSERT_TRUE(fault);
  EXPECT_EQ(Field(*fault), "p.x");
  EXPECT_EQ(v->at("id"), 7);
  EXPECT_TRUE(v->at("p").at("x").is_null());
  EXPECT_EQ(v->at("p").at("y"), 2);  // of a name given twice, the first stays
  EXPECT_TRUE(v->at("z").is_null());
  std::optional<core::Error> none;
  EXPECT_FALSE(ParseJsonReportingFaults("[1", none));  // not JSON still fails
}

// Every container and string of the document is made with the resource given, at every depth
// and in every way the parser makes one (a string in one piece or in parts, a key's value, an
// item, the document itself).
void ExpectAllOn(const json::value& v, const json::memory_resource* resource) {
  if (v.is_object()) {
    EXPECT_EQ(v.get_object().storage().get(), resource);
    for (const auto& member : v.get_object()) ExpectAllOn(member.value(), resource);
  } else if (v.is_array()) {
    EXPECT_EQ(v.get_array().storage().get(), resource);
    for (const auto& item : v.get_array()) ExpectAllOn(item, resource);
  } else {
    EXPECT_EQ(v.storage().get(), resource);
  }
}

TEST(ParseJson, MakesEveryValueWithTheResourceGiven) {
  const std::string text = R"({"a":[1,-2,18446744073709551615,3.5,true,null,{"b":{"c":[]}}],)"
                           R"("long":")" +
                           std::string(300, 'x') + R"(","\u00e9":"\ud83d\ude00"})";
  unsigned char buffer[1024];  // smaller than the document: the arena also grows onto the heap
  json::monotonic_resource arena(buffer, sizeof buffer);
  auto v = ParseJson(text, &arena);
  ASSERT_TRUE(v) << v.error().message;
  ExpectAllOn(*v, &arena);
  EXPECT_EQ(*v, *ParseJson(text));  // the same document as on the default resource
  ExpectAllOn(*ParseJson(text), json::storage_ptr().get());

  // Strict as ever: the faults are found, named, and nothing of the document is returned.
  json::monotonic_resource arena2;
  auto dup = ParseJson(R"({"x":[{"a":1,"a":2}]})", &arena2);
  ASSERT_FALSE(dup);
  EXPECT_EQ(Field(dup.error()), "x[0].a");
  auto big = ParseJson(R"({"n":[1e999]})", &arena2);
  ASSERT_FALSE(big);
  EXPECT_EQ(Field(big.error()), "n[0]");
}

TEST(ParseJson, ObjectHelperNamesWhatItWanted) {
  auto v = ParseJsonObject("[1]", "body");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(v.error().message, "body: expected a JSON object");
}

TEST(SerializeJson, NeverWritesANumberThatIsNotJson) {
  json::object o{{"inf", std::numeric_limits<double>::infinity()},
                 {"ninf", -std::numeric_limits<double>::infinity()},
                 {"nan", std::nan("")},
                 {"arr", json::array{1.5, std::numeric_limits<double>::infinity()}}};
  const std::string text = SerializeJson(o);
  EXPECT_EQ(text, R"({"inf":null,"ninf":null,"nan":null,"arr":[1.5E0,null]})");
  EXPECT_TRUE(ParseJson(text));
  std::string appended;
  JsonTextWriter(appended).Double(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(appended, "null");
}

// Every finite value is written as boost::json::serialize writes it, so stored text and
// golden answers did not change when this became the only writer.
TEST(SerializeJson, MatchesBoostForEveryFiniteValue) {
  std::mt19937_64 rng(42);
  std::function<json::value(int)> gen = [&](int depth) -> json::value {
    switch (rng() % (depth > 4 ? 6 : 8)) {
      case 0:
        return nullptr;
      case 1:
        return rng() % 2 == 0;
      case 2:
        return static_cast<int64_t>(rng());
      case 3:
        return static_cast<uint64_t>(rng());
      case 4: {
        double d;
        uint64_t bits = rng();
        std::memcpy(&d, &bits, sizeof d);
        return std::isfinite(d) ? json::value(d) : json::value(0.25);
      }
      case 5: {
        std::string s;
        for (int i = 0, n = static_cast<int>(rng() % 20); i < n; ++i)
          s.push_back(static_cast<char>(rng() % 128));
        return json::string(s);
      }
      case 6: {
        json::array a;
        for (int i = 0, n = static_cast<int>(rng() % 5); i < n; ++i) a.push_back(gen(depth + 1));
        return a;
      }
      default: {
        json::object o;
        for (int i = 0, n = static_cast<int>(rng() % 5); i < n; ++i)
          o["k" + std::to_string(rng() % 10)] = gen(depth + 1);
        return o;
      }
    }
  };
  for (int i = 0; i < 2000; ++i) {
    json::value v = gen(0);
    ASSERT_EQ(SerializeJson(v), json::serialize(v));
    auto back = ParseJson(SerializeJson(v));
    ASSERT_TRUE(back) << back.error().message << "\n" << SerializeJson(v);
    ASSERT_EQ(*back, v);
  }
}

}  // namespace
}  // namespace a2ad::protocol
