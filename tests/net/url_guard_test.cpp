// The egress SSRF guard, table-driven (issue 5: at least 40 hostile URLs refused with the
// allow-list off), plus the allow-list, the URL normalisation it relies on, and the
// registration-time check that lets a name which does not resolve yet pass.
#include "a2ad/net/url_guard.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

namespace a2ad::net {
namespace {
namespace asio = boost::asio;

// Names the table resolves without touching the network.
std::map<std::string, std::vector<std::string>> DnsTable() {
  return {
      {"hooks.example.com", {"93.184.216.34"}},
      {"v6hooks.example.com", {"2606:2800:220:1:248:1893:25c8:1946"}},
      {"internal.example.com", {"10.0.0.5"}},
      {"corp.example.com", {"192.168.1.20"}},
      {"loop.example.com", {"127.0.0.1"}},
      {"meta.example.com", {"169.254.169.254"}},
      {"cgnat.example.com", {"100.64.0.1"}},
      {"ula.example.com", {"fd00::1"}},
      {"v6loop.example.com", {"::1"}},
      {"mapped.example.com", {"::ffff:10.0.0.1"}},
      {"mixed.example.com", {"93.184.216.34", "127.0.0.1"}},  // one bad answer is enough
      {"zero.example.com", {"0.0.0.0"}},
      {"linklocal6.example.com", {"fe80::1"}},
      {"hooks.local-dev.test", {"127.0.0.1"}},
  };
}

template <class T>
T RunSync(asio::awaitable<T> op) {
  asio::io_context io;
  T out;
  asio::co_spawn(io, std::move(op), [&](std::exception_ptr ep, T r) {
    if (ep) std::rethrow_exception(ep);
    out = std::move(r);
  });
  io.run();
  return out;
}

core::Result<VettedTarget> VetSync(const UrlGuard& guard, const std::string& url) {
  return RunSync(guard.Vet(url));
}

core::Result<ParsedUrl> VetAtRegistrationSync(const UrlGuard& guard, const std::string& url) {
  return RunSync(guard.VetAtRegistration(url));
}

struct Hostile {
  const char* url;
  const char* why;  // a fragment the refusal message must contain
};

// With allow_http on (so the address arm, not the scheme arm, must refuse these) unless the
// case is about the scheme.
const Hostile kHostileHttp[] = {
    {"http://127.0.0.1/hook", "loopback"},
    {"http://127.255.255.254:8080/", "loopback"},
    {"http://localhost/", "internal name"},
    {"http://LOCALHOST./", "internal name"},
    {"http://api.localhost/", "internal name"},
    {"http://10.0.0.5/push", "private"},
    {"http://172.16.0.1/", "private"},
    {"http://172.31.255.255/", "private"},
    {"http://192.168.0.1/", "private"},
    {"http://169.254.169.254/latest/meta-data/", "metadata"},
    {"http://169.254.10.10/", "link-local"},
    {"http://metadata.google.internal/computeMetadata/v1/", "internal name"},
    {"http://metadata/", "internal name"},
    {"http://168.63.129.16/", "metadata"},
    {"http://100.64.0.1/", "CGNAT"},
    {"http://100.100.100.200/", "metadata"},
    {"http://0.0.0.0/", "unspecified"},
    {"http://0/", "unspecified"},
    {"http://224.0.0.1/", "multicast"},
    {"http://255.255.255.255/", "broadcast"},
    {"http://240.0.0.1/", "reserved"},
    {"http://198.18.0.1/", "benchmarking"},
    {"http://192.0.2.1/", "documentation"},
    // numeric tricks
    {"http://2130706433/", "loopback"},       // decimal 127.0.0.1
    {"http://0x7f000001/", "loopback"},       // hex
    {"http://0177.0.0.1/", "loopback"},       // octal
    {"http://0x7f.1/", "loopback"},           // hex + short form
    {"http://127.1/", "loopback"},            // short form
    {"http://127.0.1/", "loopback"},          // short form, 3 parts
    {"http://012.0.0.1/", "private"},         // octal 10.0.0.1
    {"http://3232235521/", "private"},        // decimal 192.168.0.1
    {"http://%31%32%37.0.0.1/", "loopback"},  // percent-encoded
    // Boost.URL 1.81 reads this as host 127.0.0.1 with path "./": refused either way.
    {"http://127.0.0.1./", "path must start"},
    {"http://0x7f.0.0.1./", "loopback"},         // trailing dot
    {"http://1.2.3.256/", "not a valid IPv4"},   // numeric, but no address
    {"http://0x1g.0.0.1/", "not a valid IPv4"},  // would be "guessed"
    // IPv6 and embedded forms
    {"http://[::1]/", "loopback"},
    {"http://[::]/", "unspecified"},
    {"http://[::ffff:127.0.0.1]/", "IPv4-mapped"},
    {"http://[::ffff:a9fe:a9fe]/", "IPv4-mapped"},  // 169.254.169.254
    {"http://[::127.0.0.1]/", "IPv4-compatible"},
    {"http://[64:ff9b::10.0.0.1]/", "NAT64"},
    {"http://[64:ff9b::7f00:1]/", "NAT64"},
    {"http://[2002:7f00:1::]/", "6to4"},
    {"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo"},
    {"http://[fd00::1]/", "ULA"},
    {"http://[fc00::abcd]/", "ULA"},
    {"http://[fe80::1]/", "link-local"},
    {"http://[ff02::1]/", "multicast"},
    {"http://[fec0::1]/", "site-local"},
    {"http://[2001:db8::1]/", "documentation"},
    // DNS names that resolve to non-public addresses
    {"http://internal.example.com/", "resolves to 10.0.0.5"},
    {"http://corp.example.com/", "private"},
    {"http://loop.example.com/", "loopback"},
    {"http://meta.example.com/", "metadata"},
    {"http://cgnat.example.com/", "CGNAT"},
    {"http://ula.example.com/", "ULA"},
    {"http://v6loop.example.com/", "loopback"},
    {"http://mapped.example.com/", "IPv4-mapped"},
    {"http://mixed.example.com/", "loopback"},
    {"http://zero.example.com/", "unspecified"},
    {"http://linklocal6.example.com/", "link-local"},
    {"http://nowhere.example.com/", "does not resolve"},
    // syntax tricks
    {"http://hooks.example.com@127.0.0.1/", "user information"},
    {"http://user:pw@hooks.example.com/", "user information"},
    {"http://hooks.example.com:0/", "port"},
    {"http:///path", "empty host"},
    {"http://[v1.fe80::a+en1]/", "IPvFuture"},
    {"//hooks.example.com/", "not an absolute URL"},
    {"http://hooks.example.com\\@127.0.0.1/", "not an absolute URL"},
    // control bytes in a (percent-decoded) name; found by tests/fuzz/url_guard_fuzz
    // (corpus: regress-control-byte-in-host): only space, tab, CR, LF and NUL were refused
    {"http://loca%2ch%7fst/", "a host name cannot have"},
    {"http://hooks.exa%01mple.com/", "a host name cannot have"},
    {"http://hooks.example.com%0b/", "a host name cannot have"},
};

// With the default policy (https only): the scheme arm.
const Hostile kHostileScheme[] = {
    {"http://hooks.example.com/push", "plain http is not allowed"},
    {"ftp://hooks.example.com/", "scheme 'ftp'"},
    {"file:///etc/passwd", "scheme 'file'"},
    {"gopher://hooks.example.com:70/", "scheme 'gopher'"},
    {"javascript:alert(1)", "scheme 'javascript'"},
    {"https://10.0.0.5/push", "private"},  // the suite's address arm, https
};

TEST(UrlGuard, RefusesEveryHostileUrlWithTheAllowListOff) {
  StaticResolver dns(DnsTable());
  EgressPolicy http_policy;
  http_policy.allow_http = true;
  auto guard = UrlGuard::Create(http_policy, dns);
  ASSERT_TRUE(guard);
  auto strict = UrlGuard::Create(EgressPolicy{}, dns);
  ASSERT_TRUE(strict);
  size_t n = 0;
  for (const auto& h : kHostileHttp) {
    auto r = VetSync(*guard, h.url);
    ASSERT_FALSE(r) << h.url << " was accepted";
    EXPECT_NE(r.error().message.find(h.why), std::string::npos)
        << h.url << ": " << r.error().message;
    EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
    EXPECT_TRUE(EgressFailureOf(r.error())) << h.url;
    // The https form is refused for the same reason.
    std::string https = std::string("https") + (h.url + 4);
    if (std::string_view(h.url).rfind("http://", 0) == 0) {
      EXPECT_FALSE(VetSync(*strict, https)) << https;
    }
    ++n;
  }
  for (const auto& h : kHostileScheme) {
    auto r = VetSync(*strict, h.url);
    ASSERT_FALSE(r) << h.url << " was accepted";
    EXPECT_NE(r.error().message.find(h.why), std::string::npos)
        << h.url << ": " << r.error().message;
    ++n;
  }
  EXPECT_GE(n, 40u);
}

TEST(UrlGuard, AcceptsPublicDestinationsAndPinsTheirAddresses) {
  StaticResolver dns(DnsTable());
  auto guard = UrlGuard::Create(EgressPolicy{}, dns);
  ASSERT_TRUE(guard);
  auto r = VetSync(*guard, "https://Hooks.Example.com/a2a/push?x=1#frag");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->url.host, "hooks.example.com");
  EXPECT_EQ(r->url.port, 443);
  EXPECT_EQ(r->url.target, "/a2a/push?x=1");
  EXPECT_EQ(r->url.HostHeader(), "hooks.example.com");
  ASSERT_EQ(r->endpoints.size(), 1u);
  EXPECT_EQ(r->endpoints[0].address().to_string(), "93.184.216.34");

  auto v6 = VetSync(*guard, "https://v6hooks.example.com:8443");
  ASSERT_TRUE(v6) << v6.error().message;
  EXPECT_EQ(v6->url.target, "/");
  EXPECT_EQ(v6->url.HostHeader(), "v6hooks.example.com:8443");
  // NAT64 and 6to4 forms of a public IPv4 address are public.
  EXPECT_TRUE(VetSync(*guard, "https://[64:ff9b::5db8:d822]/"));
  EXPECT_TRUE(VetSync(*guard, "https://[2002:5db8:d822::1]/"));
  EXPECT_TRUE(VetSync(*guard, "https://8.8.8.8/"));
}

TEST(UrlGuard, AllowListAdmitsOnlyWhatItNames) {
  StaticResolver dns(DnsTable());
  EgressPolicy p;
  p.allow_http = true;
  p.allow_list = {"127.0.0.0/8", "::1", "hooks.local-dev.test"};
  auto guard = UrlGuard::Create(p, dns);
  ASSERT_TRUE(guard) << guard.error().message;
  EXPECT_TRUE(guard->relaxed());
  auto loop = VetSync(*guard, "http://127.0.0.1:9999/hook");
  ASSERT_TRUE(loop) << loop.error().message;
  EXPECT_EQ(loop->endpoints[0].port(), 9999);
  EXPECT_EQ(loop->url.HostHeader(), "127.0.0.1:9999");
  EXPECT_TRUE(VetSync(*guard, "http://[::1]:80/"));
  EXPECT_TRUE(VetSync(*guard, "http://hooks.local-dev.test/"));
  EXPECT_TRUE(VetSync(*guard, "http://2130706433/"));  // still 127.0.0.1
  // Everything not named stays refused.
  EXPECT_FALSE(VetSync(*guard, "http://10.0.0.5/"));
  EXPECT_FALSE(VetSync(*guard, "http://internal.example.com/"));
  EXPECT_FALSE(VetSync(*guard, "http://[fd00::1]/"));

  EgressPolicy bad;
  bad.allow_list = {"10.0.0.0/33"};
  EXPECT_FALSE(UrlGuard::Create(bad, dns));
  bad.allow_list = {"not a host!"};
  EXPECT_FALSE(UrlGuard::Create(bad, dns));
}

TEST(UrlGuard, RealDnsLocalhostResolvesOnlyToForbiddenAddresses) {
  SystemResolver system;
  auto out = RunSync(system.Resolve("localhost"));
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_FALSE(out->empty());
  for (const auto& a : *out) EXPECT_TRUE(ForbiddenRange(a)) << a.to_string();
  // A name refused by the allow-list-free guard whatever it resolves to, via real DNS too.
  StaticResolver fallthrough({}, &system);
  EgressPolicy p;
  p.allow_http = true;
  auto guard = UrlGuard::Create(p, fallthrough);
  ASSERT_TRUE(guard);
  EXPECT_FALSE(VetSync(*guard, "http://localhost:8080/"));
}

TEST(UrlGuard, AnUnresolvableNameIsRefusedAtUseButPassesAtRegistration) {
  StaticResolver dns(DnsTable());
  auto guard = UrlGuard::Create(EgressPolicy{}, dns);
  ASSERT_TRUE(guard);
  // At use (a delivery): nothing to connect to, refused as unresolved.
  auto used = VetSync(*guard, "https://nowhere.example.com/webhook");
  ASSERT_FALSE(used);
  EXPECT_EQ(EgressFailureOf(used.error()), EgressFailure::kUnresolved);
  EXPECT_NE(used.error().message.find("does not resolve"), std::string::npos);
  // At registration: accepted (the A2A TCK registers https://example.com/webhook on machines
  // that cannot resolve it); the parsed URL comes back.
  auto registered = VetAtRegistrationSync(*guard, "https://Nowhere.Example.com/webhook?a=1");
  ASSERT_TRUE(registered) << registered.error().message;
  EXPECT_EQ(registered->host, "nowhere.example.com");
  EXPECT_EQ(registered->target, "/webhook?a=1");
  // Still refused at once: literal non-public addresses, internal names, names resolving to
  // a non-public address, the scheme arm, syntax.
  for (const char* url :
       {"https://10.0.0.5/push", "https://127.0.0.1/", "https://[::1]/", "https://2130706433/",
        "https://localhost/", "https://metadata.google.internal/", "https://internal.example.com/",
        "https://mixed.example.com/", "http://nowhere.example.com/",
        "https://a@nowhere.example.com/"}) {
    auto r = VetAtRegistrationSync(*guard, url);
    ASSERT_FALSE(r) << url << " was accepted";
    EXPECT_EQ(EgressFailureOf(r.error()), EgressFailure::kRefused) << url;
  }
  // A public name that resolves is accepted at both.
  EXPECT_TRUE(VetAtRegistrationSync(*guard, "https://hooks.example.com/"));
}

TEST(UrlGuard, SystemResolverCallsANameWithoutAnAddressUnresolved) {
  SystemResolver system;
  // RFC 6761: .invalid never resolves (with or without a reachable DNS server).
  auto out = RunSync(system.Resolve("no-such-host.invalid"));
  ASSERT_FALSE(out);
  EXPECT_EQ(EgressFailureOf(out.error()), EgressFailure::kUnresolved) << out.error().message;
  auto guard = UrlGuard::Create(EgressPolicy{}, system);
  ASSERT_TRUE(guard);
  EXPECT_TRUE(VetAtRegistrationSync(*guard, "https://no-such-host.invalid/webhook"));
  EXPECT_FALSE(VetSync(*guard, "https://no-such-host.invalid/webhook"));
}

TEST(UrlGuard, LooseIpv4ParsingFollowsInetAton) {
  EXPECT_EQ(ParseLooseIpv4("2130706433")->to_string(), "127.0.0.1");
  EXPECT_EQ(ParseLooseIpv4("0x7f.0.0.1")->to_string(), "127.0.0.1");
  EXPECT_EQ(ParseLooseIpv4("10.1")->to_string(), "10.0.0.1");
  EXPECT_EQ(ParseLooseIpv4("192.168.257")->to_string(), "192.168.1.1");
  EXPECT_EQ(ParseLooseIpv4("0300.0250.0.1")->to_string(), "192.168.0.1");
  EXPECT_FALSE(ParseLooseIpv4("1.2.3.4.5"));
  EXPECT_FALSE(ParseLooseIpv4("256.1.1.1"));
  EXPECT_FALSE(ParseLooseIpv4("4294967296"));
  EXPECT_FALSE(ParseLooseIpv4("08.1.1.1"));  // 8 is not an octal digit
  EXPECT_FALSE(ParseLooseIpv4("example.com"));
}

}  // namespace
}  // namespace a2ad::net
