// The agent card signature: the SDK-style payload is what @a2a-js/sdk 1.3.0's
// canonicalizeAgentCard computes (a known answer); the §8.4.1 payload keeps the security
// requirements the SDK's cleanEmpty drops, so the card carries both signatures and a card
// stripped of its requirements fails a literal verifier; the 0.3 card is signed as it is; a
// changed card no longer verifies.
#include "a2ad/protocol/card_signature.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/jcs.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/jws.hpp"
#include "a2ad/transport/a2a/agent_card.hpp"

namespace a2ad::transport {
using namespace ::a2ad::protocol;  // card_signature.hpp moved to protocol/
namespace {
namespace json = boost::json;

json::object Parse(std::string_view text) {
  auto v = protocol::ParseJsonObject(text, "test card");
  EXPECT_TRUE(v) << v.error().message;
  return v ? *v : json::object();
}

// The cards a2ad serves, as server.cpp builds them (with gRPC and the 0.3 interface).
struct Cards {
  json::object v03;
  json::object v10;
};
Cards Built() {
  AgentCardConfig c;
  c.version = "1.2.3";
  c.base_url = "http://127.0.0.1:8080";
  c.push_notifications = true;
  c.grpc_address = "127.0.0.1:50051";
  const std::vector<tasks::SkillInfo> skills{
      {"echo", "Echo", "Echoes.", {"echo", "test"}, {"hello"}},
      {"wf", "", "", {}, {}},  // a workflow without name, description, tags or examples
  };
  return {BuildAgentCard(c, skills, CardForm::kV03), BuildAgentCard(c, skills, CardForm::kV10)};
}

// A card with a bit of everything the normalization touches, and the payload the SDK computes
// for it: `node -e` with canonicalizeAgentCard from @a2a-js/sdk 1.3.0 (tests/interop). The
// v0.3 members, unknown members, "" / false / empty defaults, "" and null list items and empty
// objects are gone; `optional` bools stay even when false; numbers and names are canonical.
constexpr std::string_view kKnownCard = R"({
  "name": "kat", "description": "", "version": "1.0.0",
  "url": "http://h/v1/a2a", "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
  "additionalInterfaces": [{"url": "http://h/v1/a2a", "transport": "JSONRPC"}],
  "supportedInterfaces": [
    {"url": "http://h/v1/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": ""},
    {"url": "h:1", "protocolBinding": "GRPC", "protocolVersion": "1.0", "extra": "dropped"}],
  "provider": {"url": "", "organization": ""},
  "documentationUrl": "",
  "iconUrl": "http://h/icon.png",
  "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": false,
    "stateTransitionHistory": true,
    "extensions": [{"uri": "urn:x", "description": "", "required": false,
      "params": {"z": 1.0, "\u00e9": [0, "", null, {}, 1e21, 0.000001, false], "a": {"b": ""},
                 "\ud83d\ude00": "\u2028\u0007"}}]},
  "defaultInputModes": ["text/plain", ""], "defaultOutputModes": [],
  "skills": [{"id": "s", "name": "S", "description": "", "tags": ["t", ""], "examples": [],
              "inputModes": ["a/b"]}],
  "signatures": [{"protected": "x", "signature": "y"}],
  "supportsAuthenticatedExtendedCard": false
})";
constexpr std::string_view kKnownPayload =
    R"({"capabilities":{"extendedAgentCard":false,"extensions":[{"params":{"z":1,)"
    "\"\xC3\xA9\":[0,1e+21,0.000001,false],\"\xF0\x9F\x98\x80\":\"\xE2\x80\xA8\\u0007\"},"
    R"("uri":"urn:x"}],"pushNotifications":false,"streaming":true},)"
    R"("defaultInputModes":["text/plain"],"iconUrl":"http://h/icon.png","name":"kat",)"
    R"("skills":[{"id":"s","inputModes":["a/b"],"name":"S","tags":["t"]}],)"
    R"("supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0",)"
    R"("url":"http://h/v1/a2a"},{"protocolBinding":"GRPC","protocolVersion":"1.0","url":"h:1"}],)"
    R"("version":"1.0.0"})";

TEST(CardSignature, ThePayloadIsTheSdksCanonicalCard) {
  auto payload = CardSigningPayload(Parse(kKnownCard));
  ASSERT_TRUE(payload) << payload.error().message;
  EXPECT_EQ(*payload, kKnownPayload);
}

// Issue 29, 5 (ACTS): the SDK's cleanEmpty drops empty members that A2A §8.4.1's presence
// rules keep (a map entry whose message is empty: a security requirement naming a scheme
// with no scopes). a2ad's requirements name a scope each, so its card reads alike both ways
// and one signature satisfies the SDK and a literal verifier; a card that does have such a
// requirement gets both signatures.
TEST(CardSignature, TheSpecAndSdkPayloadsOfA2adsCardAgreeAndCoverTheRequirements) {
  const Cards cards = Built();
  auto sdk = CardSigningView(cards.v10, CardCanonicalization::kSdk);
  auto spec = CardSigningView(cards.v10, CardCanonicalization::kSpec);
  ASSERT_TRUE(sdk) << sdk.error().message;
  ASSERT_TRUE(spec);
  EXPECT_EQ(*spec, *sdk);
  EXPECT_EQ(sdk->at("securityRequirements").as_array().size(), 6u);
  EXPECT_EQ(sdk->at("securityRequirements").at(0),
            (json::object{{"schemes", json::object{{"bearer", json::object{{"list",
                                                                           json::array{"tasks:read"}}}}}}}));
  // capabilities.extendedAgentCard is an `optional` bool, kept although false; the schemes in
  // 1.0's oneof spelling; the workflow skill with only what it has.
  EXPECT_EQ(sdk->at("capabilities").at("extendedAgentCard"), false);
  EXPECT_EQ(sdk->at("securitySchemes").at("apiKey"),
            (json::object{{"apiKeySecurityScheme",
                           json::object{{"description", "An a2ad API key (a2ad keys create)."},
                                        {"location", "header"},
                                        {"name", "X-API-Key"}}}}));
  EXPECT_EQ(sdk->at("skills").at(1), (json::object{{"id", "wf"}, {"name", "wf"}}));
  EXPECT_EQ(sdk->at("supportedInterfaces").as_array().size(), 6u);
  // A requirement with no scopes: in the §8.4.1 payload, gone from the SDK's.
  json::object empty = cards.v10;
  empty["securityRequirements"] =
      json::array{json::object{{"schemes", json::object{{"bearer", json::object{{"list", json::array{}}}}}}}};
  auto spec_empty = CardSigningView(empty, CardCanonicalization::kSpec);
  auto sdk_empty = CardSigningView(empty, CardCanonicalization::kSdk);
  EXPECT_EQ(spec_empty->at("securityRequirements"),
            (json::array{json::object{{"schemes", json::object{{"bearer", json::object{}}}}}}));
  EXPECT_FALSE(sdk_empty->contains("securityRequirements"));
  auto key = core::Es256PrivateKey::Generate();
  ASSERT_TRUE(AttachCardSignature(empty, *key, ""));
  EXPECT_EQ(empty.at("signatures").as_array().size(), 2u);
  EXPECT_TRUE(VerifyAgentCardSignature(empty, key->public_key(), CardCanonicalization::kSpec));
  EXPECT_TRUE(VerifyAgentCardSignature(empty, key->public_key(), CardCanonicalization::kSdk));
}

TEST(CardSignature, WhatTheNormalizationDoesNotModelIsRefused) {
  auto refused = [](std::string_view text, std::string_view field) {
    auto r = CardSigningPayload(Parse(text));
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
    EXPECT_NE(r.error().message.find(field), std::string::npos) << r.error().message;
  };
  refused(R"({"name":"n","securitySchemes":{"k":{"oauth2SecurityScheme":{"flows":{}}}}})",
          "card.securitySchemes.k.oauth2SecurityScheme");
  refused(R"({"name":"n","securitySchemes":{"k":{"apiKeySecurityScheme":{},
                                                 "mtlsSecurityScheme":{}}}})",
          "card.securitySchemes.k.mtlsSecurityScheme");  // a oneof holds one
  refused(R"({"name":"n","securitySchemes":{"k":{"http_auth_security_scheme":{}}}})",
          "card.securitySchemes.k.http_auth_security_scheme");
  refused(R"({"name":"n","securityRequirements":[{"schemes":{"k":{"list":[1]}}}]})",
          "card.securityRequirements[0].schemes.k.list");
  refused(R"({"name":"n","skills":[{"id":"s","securityRequirements":[{"schemes":{}}]}]})",
          "card.skills[0].securityRequirements");
  refused(R"({"name":"n","supported_interfaces":[]})", "card.supported_interfaces");
  refused(R"({"name":7})", "card.name");
  refused(R"({"capabilities":{"streaming":"yes"}})", "card.capabilities.streaming");
  refused(R"({"skills":[{"id":"s","tags":["a",1]}]})", "card.skills[0].tags");
  refused(R"({"capabilities":{"extensions":[{"uri":"u","params":[1]}]}})",
          "card.capabilities.extensions[0].params");
  // Empty ones are what the proto writer leaves out anyway.
  EXPECT_TRUE(CardSigningPayload(Parse(R"({"name":"n","securitySchemes":{},
                                           "securityRequirements":[]})")));
  EXPECT_EQ(*CardSigningPayload(Parse("{}")), "{}");
}

TEST(CardSignature, The10CardsSignatureVerifiesBothWaysAndCarriesTheKeysThumbprint) {
  Cards cards = Built();
  auto key = core::Es256PrivateKey::Generate();
  ASSERT_TRUE(key);
  auto attached =
      AttachCardSignature(cards.v10, *key, "http://127.0.0.1:8080/.well-known/jwks.json");
  ASSERT_TRUE(attached) << attached.error().message;
  // One signature: the two readings of a2ad's card agree.
  ASSERT_EQ(cards.v10.at("signatures").as_array().size(), 1u);
  const CardCanonicalization order[] = {CardCanonicalization::kSpec, CardCanonicalization::kSdk};
  for (size_t i = 0; i < 2; ++i) {
    const json::object& entry = cards.v10.at("signatures").at(0).as_object();
    EXPECT_EQ(entry.size(), 2u);  // protected and signature; no unprotected header
    auto header = protocol::ParseJsonObject(
        *core::Base64UrlDecode(entry.at("protected").as_string()), "header");
    ASSERT_TRUE(header);
    EXPECT_EQ(*header, (json::object{{"alg", "ES256"},
                                     {"typ", "JOSE"},
                                     {"kid", protocol::JwkThumbprint(key->public_key())},
                                     {"jku", "http://127.0.0.1:8080/.well-known/jwks.json"}}));
    // Over the detached payload: base64url(protected).base64url(payload), in its order.
    const std::string input = std::string(entry.at("protected").as_string()) + "." +
                              core::Base64UrlEncode(*CardSigningPayload(cards.v10, order[i]));
    EXPECT_TRUE(
        key->public_key().Verify(input, *core::Base64UrlDecode(entry.at("signature").as_string())));
    EXPECT_TRUE(VerifyAgentCardSignature(cards.v10, key->public_key(), order[i]));
  }
  // Stripped of its requirements, the card verifies neither way.
  json::object stripped = cards.v10;
  stripped.erase("securityRequirements");
  EXPECT_FALSE(VerifyAgentCardSignature(stripped, key->public_key(), CardCanonicalization::kSpec));
  EXPECT_FALSE(VerifyAgentCardSignature(stripped, key->public_key(), CardCanonicalization::kSdk));
  // The 0.3 card: one signature over the card as it is, every member covered.
  ASSERT_TRUE(AttachCardSignature(cards.v03, *key, ""));
  ASSERT_EQ(cards.v03.at("signatures").as_array().size(), 1u);
  json::object copy = cards.v03;
  copy.erase("signatures");
  const json::object& entry = cards.v03.at("signatures").at(0).as_object();
  const std::string input = std::string(entry.at("protected").as_string()) + "." +
                            core::Base64UrlEncode(*CanonicalJson(copy));
  EXPECT_TRUE(
      key->public_key().Verify(input, *core::Base64UrlDecode(entry.at("signature").as_string())));
}

TEST(CardSignature, AChangedCardDoesNotVerify) {
  Cards cards = Built();
  auto key = core::Es256PrivateKey::Generate();
  ASSERT_TRUE(key);
  ASSERT_TRUE(AttachCardSignature(cards.v03, *key, ""));
  ASSERT_TRUE(AttachCardSignature(cards.v10, *key, ""));
  for (json::object* form : {&cards.v03, &cards.v10}) {
    json::object renamed = *form;
    renamed["name"] = "evil";
    EXPECT_FALSE(VerifyAgentCardSignature(renamed, key->public_key()));
    json::object more = *form;
    more["capabilities"].as_object()["streaming"] = false;
    EXPECT_FALSE(VerifyAgentCardSignature(more, key->public_key()));
    json::object unsigned_card = *form;
    unsigned_card.erase("signatures");
    auto r = VerifyAgentCardSignature(unsigned_card, key->public_key());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no signatures"), std::string::npos);
    // Another key does not verify it either.
    EXPECT_FALSE(VerifyAgentCardSignature(*form, core::Es256PrivateKey::Generate()->public_key()));
  }
  json::object moved = cards.v10;
  moved["supportedInterfaces"].as_array()[0].as_object()["url"] = "http://evil.example/v1/a2a";
  EXPECT_FALSE(VerifyAgentCardSignature(moved, key->public_key()));
  json::object weaker = cards.v10;  // a scheme swapped for another is another card
  weaker["securitySchemes"].as_object()["apiKey"].as_object()["apiKeySecurityScheme"].as_object()
      ["name"] = "X-Other";
  EXPECT_FALSE(VerifyAgentCardSignature(weaker, key->public_key()));
  // The 0.3 card's own members are covered too.
  json::object elsewhere = cards.v03;
  elsewhere["url"] = "http://elsewhere.example/v1/a2a";
  EXPECT_FALSE(VerifyAgentCardSignature(elsewhere, key->public_key()));
}

}  // namespace
}  // namespace a2ad::transport
