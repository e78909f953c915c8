// The agent card signature: the payload is what @a2a-js/sdk 1.3.0's canonicalizeAgentCard
// computes (a known answer), one signature covers both card forms, and a changed card no
// longer verifies.
#include "a2ad/protocol/card_signature.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/jws.hpp"
#include "a2ad/transport/agent_card.hpp"

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
  json::object hybrid;
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
  return {BuildAgentCard(c, skills), BuildAgentCard(c, skills, CardForm::kV10)};
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

TEST(CardSignature, BothServedFormsHaveOnePayloadWithoutTheV03Members) {
  const Cards cards = Built();
  auto hybrid = CardSigningView(cards.hybrid);
  auto v10 = CardSigningView(cards.v10);
  ASSERT_TRUE(hybrid) << hybrid.error().message;
  ASSERT_TRUE(v10);
  EXPECT_EQ(*hybrid, *v10);
  for (const char* v03_only :
       {"url", "preferredTransport", "protocolVersion", "additionalInterfaces"}) {
    EXPECT_TRUE(cards.hybrid.contains(v03_only)) << v03_only;
    EXPECT_FALSE(hybrid->contains(v03_only)) << v03_only;
  }
  // capabilities.extendedAgentCard is an `optional` bool: kept although false.
  EXPECT_EQ(hybrid->at("capabilities").at("extendedAgentCard"), false);
  // The schemes in 1.0's oneof spelling only (0.3's `type`, `in` and `security` are outside the
  // v1.0 schema), and requirements whose empty scope lists the proto writer leaves out.
  EXPECT_EQ(hybrid->at("securitySchemes").at("apiKey"),
            (json::object{{"apiKeySecurityScheme",
                           json::object{{"description", "An a2ad API key (a2ad keys create)."},
                                        {"location", "header"},
                                        {"name", "X-API-Key"}}}}));
  EXPECT_FALSE(hybrid->contains("security"));
  // Requirements naming a scheme with no scopes are all defaults to the proto writer, and
  // the SDK's cleanEmpty then drops them: not covered by the signature, as in every SDK.
  EXPECT_FALSE(hybrid->contains("securityRequirements"));
  // The workflow skill keeps only what it has.
  EXPECT_EQ(hybrid->at("skills").at(1), (json::object{{"id", "wf"}, {"name", "wf"}}));
  // JSON-RPC, HTTP+JSON and gRPC, each in 1.0 and 0.3: all covered by the signature.
  EXPECT_EQ(hybrid->at("supportedInterfaces").as_array().size(), 6u);
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

TEST(CardSignature, OneSignatureVerifiesOnBothFormsAndCarriesTheKeysThumbprint) {
  Cards cards = Built();
  auto key = core::Es256PrivateKey::Generate();
  ASSERT_TRUE(key);
  auto attached = AttachCardSignature(cards.hybrid, cards.v10, *key,
                                      "http://127.0.0.1:8080/.well-known/jwks.json");
  ASSERT_TRUE(attached) << attached.error().message;
  EXPECT_EQ(cards.hybrid.at("signatures"), cards.v10.at("signatures"));
  ASSERT_EQ(cards.v10.at("signatures").as_array().size(), 1u);
  const json::object& entry = cards.v10.at("signatures").at(0).as_object();
  EXPECT_EQ(entry.size(), 2u);  // protected and signature; no unprotected header
  auto header = protocol::ParseJsonObject(*core::Base64UrlDecode(entry.at("protected").as_string()),
                                          "header");
  ASSERT_TRUE(header);
  EXPECT_EQ(*header, (json::object{{"alg", "ES256"},
                                   {"typ", "JOSE"},
                                   {"kid", protocol::JwkThumbprint(key->public_key())},
                                   {"jku", "http://127.0.0.1:8080/.well-known/jwks.json"}}));
  EXPECT_EQ(core::Base64UrlDecode(entry.at("signature").as_string())->size(), 64u);
  EXPECT_TRUE(VerifyAgentCardSignature(cards.hybrid, key->public_key()));
  EXPECT_TRUE(VerifyAgentCardSignature(cards.v10, key->public_key()));
  // The signature is over the detached payload: base64url(protected).base64url(payload).
  const std::string input = std::string(entry.at("protected").as_string()) + "." +
                            core::Base64UrlEncode(*CardSigningPayload(cards.v10));
  EXPECT_TRUE(
      key->public_key().Verify(input, *core::Base64UrlDecode(entry.at("signature").as_string())));
}

TEST(CardSignature, AChangedCardDoesNotVerify) {
  Cards cards = Built();
  auto key = core::Es256PrivateKey::Generate();
  ASSERT_TRUE(key);
  ASSERT_TRUE(AttachCardSignature(cards.hybrid, cards.v10, *key, ""));
  for (json::object* form : {&cards.hybrid, &cards.v10}) {
    json::object renamed = *form;
    renamed["name"] = "evil";
    EXPECT_FALSE(VerifyAgentCardSignature(renamed, key->public_key()));
    json::object moved = *form;
    moved["supportedInterfaces"].as_array()[0].as_object()["url"] = "http://evil.example/v1/a2a";
    EXPECT_FALSE(VerifyAgentCardSignature(moved, key->public_key()));
    json::object more = *form;
    more["capabilities"].as_object()["extendedAgentCard"] = true;
    EXPECT_FALSE(VerifyAgentCardSignature(more, key->public_key()));
    json::object weaker = *form;  // a scheme swapped for another is another card
    weaker["securitySchemes"]
        .as_object()["apiKey"]
        .as_object()["apiKeySecurityScheme"]
        .as_object()["name"] = "X-Other";
    EXPECT_FALSE(VerifyAgentCardSignature(weaker, key->public_key()));
    json::object unsigned_card = *form;
    unsigned_card.erase("signatures");
    auto r = VerifyAgentCardSignature(unsigned_card, key->public_key());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no signatures"), std::string::npos);
    // Another key does not verify it either.
    EXPECT_FALSE(VerifyAgentCardSignature(*form, core::Es256PrivateKey::Generate()->public_key()));
  }
  // The v0.3-only members are not covered (as with every SDK): changing them still verifies.
  json::object v03_changed = cards.hybrid;
  v03_changed["url"] = "http://elsewhere.example/v1/a2a";
  EXPECT_TRUE(VerifyAgentCardSignature(v03_changed, key->public_key()));
}

TEST(CardSignature, FormsThatDifferInSignedMembersAreNotSignedAsOne) {
  Cards cards = Built();
  cards.v10["name"] = "other";
  auto key = core::Es256PrivateKey::Generate();
  auto r = AttachCardSignature(cards.hybrid, cards.v10, *key, "");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, core::ErrorCode::kInternal);
  EXPECT_FALSE(cards.hybrid.contains("signatures"));
}

}  // namespace
}  // namespace a2ad::transport
