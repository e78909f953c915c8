// What a2ad reads from other agents (client/peer_card.hpp): cards of both shapes and the
// version chosen, state names of both versions, and the verification of a signed card against
// a JWKS (a card signed here with the same code a2ad signs its own with).
#include "a2ad/client/peer_card.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/core/es256.hpp"
#include "a2ad/protocol/card_signature.hpp"
#include "a2ad/protocol/jws.hpp"

namespace a2ad::client {
namespace {
namespace json = boost::json;

json::object Card10() {
  return json::parse(R"({"name":"peer","description":"d","version":"1",
    "supportedInterfaces":[{"url":"https://p.example/a2a/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"},
                           {"url":"https://p.example/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
    "capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]})")
      .as_object();
}

TEST(PeerCard, PrefersTheNewestJsonRpcInterface) {
  auto c = ReadPeerCard(Card10());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->version, "1.0");
  EXPECT_EQ(c->url, "https://p.example/a2a");
  auto old =
      ReadPeerCard(json::parse(R"({"name":"o","protocolVersion":"0.3.0","url":"https://o/a2a"})"));
  ASSERT_TRUE(old);
  EXPECT_EQ(old->version, "0.3");
  // A card that offers 1.0 over gRPC only is spoken to over gRPC; one that offers nothing a2ad
  // speaks is refused, saying what it speaks.
  auto grpc_only = ReadPeerCard(json::parse(
      R"({"name":"g","supportedInterfaces":[{"url":"g:1","protocolBinding":"GRPC","protocolVersion":"1.0"}]})"));
  ASSERT_TRUE(grpc_only) << grpc_only.error().message;
  EXPECT_EQ(grpc_only->binding, "GRPC");
  EXPECT_EQ(grpc_only->url, "g:1");
  EXPECT_EQ(grpc_only->version, "1.0");
  auto other = ReadPeerCard(json::parse(
      R"({"name":"w","supportedInterfaces":[{"url":"w:1","protocolBinding":"WEBSOCKET","protocolVersion":"1.0"}]})"));
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("no interface a2ad speaks"), std::string::npos);
  // Where JSON-RPC is declared too, it is chosen; PreferGrpc asks for gRPC.
  json::object both = Card10();
  both["supportedInterfaces"].as_array().push_back(
      json::parse(R"({"url":"p.example:443","protocolBinding":"GRPC","protocolVersion":"1.0"})"));
  auto c2 = ReadPeerCard(both);
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->binding, "JSONRPC");
  EXPECT_EQ(PreferGrpc(*c2).binding, "GRPC");
  EXPECT_EQ(PreferGrpc(*c2).url, "p.example:443");
}

TEST(PeerCard, RestIsSpokenWhenTheCardDeclaresOnlyThatOrTheCallerAsks) {
  json::object both = Card10();
  both["supportedInterfaces"].as_array().push_back(json::parse(
      R"({"url":"https://p.example/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"})"));
  auto c = ReadPeerCard(both);
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->binding, "JSONRPC") << "JSON-RPC first when both are declared";
  EXPECT_EQ(c->rest_url, "https://p.example/rest");
  const PeerCard rest = PreferRest(*c);
  EXPECT_EQ(rest.binding, "HTTP+JSON");
  EXPECT_EQ(rest.url, "https://p.example/rest");
  EXPECT_EQ(rest.version, "1.0");
  // 1.0 REST only (and 0.3 JSON-RPC): the newer version wins, over REST.
  auto only = ReadPeerCard(json::parse(R"({"name":"r","supportedInterfaces":[
      {"url":"https://r/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"},
      {"url":"https://r/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]})"));
  ASSERT_TRUE(only) << only.error().message;
  EXPECT_EQ(only->binding, "HTTP+JSON");
  EXPECT_EQ(only->url, "https://r/rest");
  EXPECT_EQ(only->version, "1.0");
  // A card without REST stays as it is when REST is preferred.
  auto plain = ReadPeerCard(Card10());
  EXPECT_EQ(PreferRest(*plain).binding, "JSONRPC");
}

TEST(PeerCard, StatesOfBothVersionsNormalize) {
  EXPECT_EQ(NormalizeState(json::value("TASK_STATE_INPUT_REQUIRED")), "input-required");
  EXPECT_EQ(NormalizeState(json::value("TASK_STATE_CANCELLED")), "canceled");
  EXPECT_EQ(NormalizeState(json::value("auth-required")), "auth-required");
  EXPECT_EQ(NormalizeState(json::value("TASK_STATE_UNSPECIFIED")), "unknown");
  EXPECT_EQ(NormalizeState(json::value(3)), "unknown");
  EXPECT_EQ(PeerCardUrl("http://h:8080/"), "http://h:8080/.well-known/agent-card.json");
  EXPECT_EQ(PeerCardUrl("https://h/x/card.json"), "https://h/x/card.json");
}

TEST(PeerCard, ASignedCardVerifiesWithItsKeyAndATamperedOneDoesNot) {
  auto key = core::Es256PrivateKey::Generate().value();
  const std::string kid = protocol::JwkThumbprint(key.public_key());
  json::object card = Card10();
  auto entries = protocol::SignAgentCard(card, key, "https://p.example/.well-known/jwks.json");
  ASSERT_TRUE(entries) << entries.error().message;
  card["signatures"] = entries.value();
  const std::string jwks = json::serialize(
      json::object{{"keys", json::array{protocol::PublicJwk(key.public_key(), kid)}}});
  EXPECT_TRUE(VerifyCardWithJwks(card, jwks, kid));
  json::object tampered = card;
  tampered["name"] = "someone else";
  EXPECT_FALSE(VerifyCardWithJwks(tampered, jwks, kid));
  auto other = core::Es256PrivateKey::Generate().value();
  const std::string wrong_jwks = json::serialize(
      json::object{{"keys", json::array{protocol::PublicJwk(other.public_key(), kid)}}});
  EXPECT_FALSE(VerifyCardWithJwks(card, wrong_jwks, kid)) << "another key under the same kid";
  EXPECT_FALSE(VerifyCardWithJwks(card, jwks, "no-such-kid"));
  EXPECT_FALSE(VerifyCardWithJwks(card, "not json", kid));
}

}  // namespace
}  // namespace a2ad::client
