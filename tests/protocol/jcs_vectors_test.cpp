// a2ad's RFC 8785 canonicalization (protocol/jcs.hpp) and the agent card's signing bytes
// (protocol/card_signature.hpp) against the a2a-jcs-v01 cases of the A2A conformance kit,
// restated in data/jcs_vectors.json by data/gen_jcs_vectors.mjs (expected bytes from
// ECMAScript's JSON, never from a2ad): each accepted input, read by a2ad's JSON reader, gives
// exactly the expected bytes; each refused input is refused (by the reader or the
// canonicalizer), and bytes that keep a card's `signatures` are never a card's signing bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "a2ad/protocol/card_signature.hpp"
#include "a2ad/protocol/jcs.hpp"
#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

json::array Vectors() {
  std::ifstream in(std::string(A2AD_SOURCE_DIR) + "/tests/protocol/data/jcs_vectors.json");
  std::stringstream text;
  text << in.rdbuf();
  auto doc = ParseJson(text.str());
  EXPECT_TRUE(doc.ok()) << "data/jcs_vectors.json: " << (doc.ok() ? "" : doc.error().message);
  return doc.ok() ? doc->at("vectors").as_array() : json::array{};
}

std::string Str(const json::value& v, const char* key) {
  return std::string(v.at(key).as_string());
}

TEST(JcsVectors, EveryAcceptedCaseGivesTheExpectedBytesAndEveryRefusedOneIsRefused) {
  const json::array vectors = Vectors();
  ASSERT_EQ(vectors.size(), 57u);
  int accepted = 0, refused = 0;
  for (const auto& v : vectors) {
    const std::string id = Str(v, "id"), input = Str(v, "input"), expect = Str(v, "expect");
    SCOPED_TRACE(id + ": " + input);
    auto parsed = ParseJson(input);
    if (expect == "refuse") {
      ++refused;
      if (!parsed.ok()) continue;  // the reader refuses it (lone surrogates, NaN, Infinity)
      // A2's: bytes claiming to be a card's signing bytes while keeping `signatures`. Such
      // bytes are never what a2ad signs or verifies against.
      ASSERT_TRUE(parsed->is_object() && parsed->as_object().contains("signatures"))
          << "the reader accepted a case it must refuse";
      for (auto how : {CardCanonicalization::kSpec, CardCanonicalization::kSdk}) {
        auto payload = CardSigningPayload(parsed->as_object(), how);
        ASSERT_TRUE(payload.ok()) << payload.error().message;
        EXPECT_NE(*payload, input);
        EXPECT_EQ(payload->find("\"signatures\""), std::string::npos) << *payload;
      }
      continue;
    }
    ++accepted;
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    if (expect == "accept-card") {
      for (auto how : {CardCanonicalization::kSpec, CardCanonicalization::kSdk}) {
        auto payload = CardSigningPayload(parsed->as_object(), how);
        ASSERT_TRUE(payload.ok()) << payload.error().message;
        EXPECT_EQ(*payload, Str(v, "canonical"));
      }
      continue;
    }
    auto text = CanonicalJson(*parsed);
    ASSERT_TRUE(text.ok()) << text.error().message;
    EXPECT_EQ(*text, Str(v, "canonical"));
  }
  EXPECT_EQ(accepted, 47);
  EXPECT_EQ(refused, 10);
}

}  // namespace
}  // namespace a2ad::protocol
