// The client address behind a trusted proxy (transport/http/forwarded.hpp): read only from a
// trusted peer, right to left past trusted hops, from Forwarded (RFC 7239) before
// X-Forwarded-For; unusable nodes give nothing.
#include "a2ad/transport/http/forwarded.hpp"

#include <gtest/gtest.h>

namespace a2ad::transport {
namespace {
namespace ip = boost::asio::ip;

const std::vector<net::Cidr> kTrusted = net::ParseCidrList("10.0.0.0/8, ::1").value();
const ip::address kProxy = ip::make_address("10.0.0.2");

std::string Client(const Headers& h, const ip::address& peer = kProxy) {
  auto a = ForwardedClient(peer, h, kTrusted);
  return a ? a->to_string() : "-";
}

TEST(Forwarded, OnlyATrustedPeerIsBelieved) {
  EXPECT_EQ(Client({{"X-Forwarded-For", "203.0.113.7"}}), "203.0.113.7");
  EXPECT_EQ(Client({{"X-Forwarded-For", "203.0.113.7"}}, ip::make_address("192.0.2.1")), "-");
  EXPECT_EQ(ForwardedClient(kProxy, {{"X-Forwarded-For", "203.0.113.7"}}, {}), std::nullopt);
  EXPECT_EQ(Client({}), "-");
  EXPECT_EQ(Client({{"X-Forwarded-For", "203.0.113.7"}}, ip::make_address("::1")), "203.0.113.7");
  EXPECT_EQ(Client({{"X-Forwarded-For", "203.0.113.7"}}, ip::make_address("::ffff:10.1.2.3")),
            "203.0.113.7");
}

TEST(Forwarded, TheNearestUntrustedHopIsTheClient) {
  // A client may put anything left of the truth: only what trusted hops appended counts.
  EXPECT_EQ(Client({{"X-Forwarded-For", "1.1.1.1, 203.0.113.7, 10.0.0.9"}}), "203.0.113.7");
  EXPECT_EQ(Client({{"x-forwarded-for", "1.1.1.1"}, {"X-Forwarded-For", "203.0.113.7"}}),
            "203.0.113.7");
  EXPECT_EQ(Client({{"X-Forwarded-For", "10.0.0.7, 10.0.0.9"}}), "-");  // only proxies
  EXPECT_EQ(Client({{"X-Forwarded-For", "203.0.113.7:4711"}}), "203.0.113.7");
  EXPECT_EQ(Client({{"X-Forwarded-For", "2001:db8::1"}}), "2001:db8::1");
  EXPECT_EQ(Client({{"X-Forwarded-For", "[2001:db8::1]:4711"}}), "2001:db8::1");
  EXPECT_EQ(Client({{"X-Forwarded-For", "::ffff:203.0.113.7"}}), "203.0.113.7");
}

TEST(Forwarded, Rfc7239ComesFirstAndUnusableNodesGiveNothing) {
  EXPECT_EQ(Client({{"Forwarded", "for=192.0.2.60;proto=http;by=203.0.113.43"},
                    {"X-Forwarded-For", "203.0.113.7"}}),
            "192.0.2.60");
  EXPECT_EQ(Client({{"Forwarded", R"(for="[2001:db8:cafe::17]:4711", For=10.0.0.5)"}}),
            "2001:db8:cafe::17");
  EXPECT_EQ(Client({{"Forwarded", "for=unknown"}}), "-");
  EXPECT_EQ(Client({{"Forwarded", "for=_hidden, for=10.0.0.5"}}), "-");
  EXPECT_EQ(Client({{"Forwarded", "proto=https"}}), "-");
  EXPECT_EQ(Client({{"X-Forwarded-For", "not-an-address"}}), "-");
  EXPECT_EQ(Client({{"X-Forwarded-For", "203.0.113.7, garbage, 10.0.0.9"}}), "-");
  EXPECT_EQ(Client({{"X-Forwarded-For", ""}}), "-");
}

// Behind a proxy that only appends to X-Forwarded-For, the client's own Forwarded header
// must not be read: naming the header the proxy sets reads that one alone.
TEST(Forwarded, TheHeaderTheProxySetsIsTheOnlyOneRead) {
  const Headers spoofed{{"Forwarded", "for=6.6.6.7"}, {"X-Forwarded-For", "203.0.113.7"}};
  EXPECT_EQ(Client(spoofed), "6.6.6.7");  // auto: Forwarded first (an RFC 7239 proxy)
  auto xff = ForwardedClient(kProxy, spoofed, kTrusted, ForwardedHeader::kXForwardedFor);
  ASSERT_TRUE(xff);
  EXPECT_EQ(xff->to_string(), "203.0.113.7");
  const Headers unknown{{"Forwarded", "for=unknown"}, {"X-Forwarded-For", "203.0.113.7"}};
  EXPECT_EQ(
      ForwardedClient(kProxy, unknown, kTrusted, ForwardedHeader::kXForwardedFor)->to_string(),
      "203.0.113.7");
  auto rfc = ForwardedClient(kProxy, spoofed, kTrusted, ForwardedHeader::kForwarded);
  ASSERT_TRUE(rfc);
  EXPECT_EQ(rfc->to_string(), "6.6.6.7");
  EXPECT_FALSE(ForwardedClient(kProxy, {{"X-Forwarded-For", "203.0.113.7"}}, kTrusted,
                               ForwardedHeader::kForwarded));
  EXPECT_EQ(ParseForwardedHeader("x-forwarded-for"), ForwardedHeader::kXForwardedFor);
  EXPECT_EQ(ParseForwardedHeader("X-Real-IP"), std::nullopt);
}

TEST(Forwarded, TheTrustedListIsParsedStrictly) {
  EXPECT_TRUE(net::ParseCidrList("").value().empty());
  EXPECT_EQ(net::ParseCidrList(" 10.0.0.0/8 ,, ::1/128 ").value().size(), 2u);
  EXPECT_FALSE(net::ParseCidrList("10.0.0.0/33").ok());
  EXPECT_FALSE(net::ParseCidrList("proxy.internal").ok());
  EXPECT_FALSE(net::ParseCidrList("10.0.0.0/").ok());
}

}  // namespace
}  // namespace a2ad::transport
