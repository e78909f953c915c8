// url_guard_fuzz: the SSRF guard (net/url_guard.hpp): ParseUrl and UrlGuard::Vet with
// an injected resolver that answers a fuzzed address list (no DNS). Input: one policy byte
// (bit 0 allow_http, bit 1 allow-list CIDRs 10.1.0.0/16 and fd00:1::/32, bit 2 allow-list
// name hooks.internal), one byte n (n % 4 addresses; bit 7: the resolver fails), the n
// addresses (a byte whose bit 0 picks IPv6, then 4 or 16 bytes), then the URL. Invariants:
//  - an accepted URL is https (http only when allowed), has a port 1-65535, a target that
//    starts with '/', and a host and Host header without whitespace or control bytes;
//  - a vetted target connects only to the literal, or exactly to the addresses the resolver
//    gave, on the URL's port; the resolver is not asked about a literal;
//  - none of those addresses is non-public (ForbiddenRange, and an independent check of
//    loopback, private, link-local, unspecified, multicast, ULA and their IPv4-mapped
//    forms) unless the policy's allow-list lets it through, nor is the host an internal
//    name unless allow-listed;
//  - ParseLooseIpv4 agrees with the C library's inet_aton on hosts made of digits, hex
//    letters, 'x' and dots (but for a bare "0x" part, which the guard reads as 0 as WHATWG
//    URL does).
#include <arpa/inet.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/net/url_guard.hpp"
#include "fuzz_check.hpp"

namespace a2ad::fuzz {
namespace {
namespace asio = boost::asio;
namespace ip = boost::asio::ip;

class FuzzResolver final : public net::Resolver {
 public:
  asio::awaitable<core::Result<std::vector<ip::address>>> Resolve(std::string host) override {
    ++calls;
    if (fail) co_return core::Error(core::ErrorCode::kInvalidParams, "no such host " + host);
    co_return addresses;
  }
  std::vector<ip::address> addresses;
  bool fail = false;
  int calls = 0;
};

uint32_t V4(const ip::address& a) { return a.to_v4().to_uint(); }

// Independent of the guard's table: ranges that must never be reached.
bool ObviouslyInternal(const ip::address& a) {
  if (a.is_v6()) {
    const ip::address_v6 v6 = a.to_v6();
    if (v6.is_v4_mapped()) return ObviouslyInternal(ip::make_address_v4(ip::v4_mapped, v6));
    const auto b = v6.to_bytes();
    return v6.is_loopback() || v6.is_unspecified() || v6.is_link_local() || v6.is_multicast() ||
           (b[0] & 0xfe) == 0xfc;  // ULA
  }
  const uint32_t x = V4(a);
  auto in = [x](uint32_t base, int bits) { return (x >> (32 - bits)) == (base >> (32 - bits)); };
  return in(0x7f000000, 8) || in(0x0a000000, 8) || in(0xac100000, 12) || in(0xc0a80000, 16) ||
         in(0xa9fe0000, 16) || in(0x00000000, 8) || in(0xe0000000, 4) || in(0x64400000, 10);
}

bool AllowListed(const ip::address& a, uint8_t policy_bits) {
  if (!(policy_bits & 2)) return false;
  ip::address x = a;
  if (x.is_v6() && x.to_v6().is_v4_mapped()) x = ip::make_address_v4(ip::v4_mapped, x.to_v6());
  if (x.is_v4()) return (V4(x) >> 16) == 0x0a01;  // 10.1.0.0/16
  const auto b = x.to_v6().to_bytes();
  return b[0] == 0xfd && b[1] == 0x00 && b[2] == 0x00 && b[3] == 0x01;  // fd00:1::/32
}

bool Clean(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  return true;
}

void CheckLooseIpv4(std::string_view host) {
  if (host.empty() || host.size() > 64 ||
      host.find_first_not_of("0123456789abcdefABCDEFxX.") != std::string_view::npos)
    return;
  // A part "0x" with no digits is 0 for the guard, as for the WHATWG URL parser; glibc
  // refuses it. Either way nothing is reached that the guard did not vet.
  const std::string s(host);
  for (size_t at = s.find_first_of("xX"); at != std::string::npos;
       at = s.find_first_of("xX", at + 1))
    if (at + 1 == s.size() || s[at + 1] == '.') return;
  in_addr libc{};
  const bool libc_ok = ::inet_aton(s.c_str(), &libc) != 0;
  const auto ours = net::ParseLooseIpv4(host);
  FUZZ_CHECK(libc_ok == ours.has_value(), "ParseLooseIpv4 and inet_aton disagree on '" + s + "' (" +
                                              (ours ? ours->to_string() : "refused") + ")");
  if (ours) FUZZ_CHECK(ours->to_uint() == ntohl(libc.s_addr), "'" + s + "' read differently");
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace a2ad;
  using namespace a2ad::fuzz;
  if (size < 2) return 0;
  const uint8_t policy_bits = data[0];
  const uint8_t n_byte = data[1];
  size_t at = 2;
  FuzzResolver resolver;
  resolver.fail = (n_byte & 0x80) != 0;
  for (int i = 0; i < (n_byte & 3) && at < size; ++i) {
    const bool v6 = data[at++] & 1;
    if (v6 && at + 16 <= size) {
      ip::address_v6::bytes_type b;
      std::copy(data + at, data + at + 16, b.begin());
      resolver.addresses.emplace_back(ip::address_v6(b));
      at += 16;
    } else if (!v6 && at + 4 <= size) {
      resolver.addresses.emplace_back(ip::address_v4(
          ip::address_v4::bytes_type{data[at], data[at + 1], data[at + 2], data[at + 3]}));
      at += 4;
    }
  }
  const std::string url(reinterpret_cast<const char*>(data) + at, size - at);
  CheckLooseIpv4(url);

  net::EgressPolicy policy;
  policy.allow_http = policy_bits & 1;
  if (policy_bits & 2) policy.allow_list = {"10.1.0.0/16", "fd00:1::/32"};
  if (policy_bits & 4) policy.allow_list.push_back("hooks.internal");
  auto guard = net::UrlGuard::Create(policy, resolver);
  FUZZ_CHECK(guard.ok(), guard.error().message);

  auto parsed = net::ParseUrl(url, policy);
  if (parsed) {
    const net::ParsedUrl& u = parsed.value();
    FUZZ_CHECK(u.scheme == "https" || (u.scheme == "http" && policy.allow_http), u.scheme);
    FUZZ_CHECK(u.port != 0, url);
    FUZZ_CHECK(!u.target.empty() && u.target[0] == '/' && Clean(u.target), u.target);
    FUZZ_CHECK(!u.host.empty() && Clean(u.host) && Clean(u.HostHeader()), u.HostHeader());
    if (u.literal) FUZZ_CHECK(u.host == u.literal->to_string(), u.host);
  }

  static asio::io_context io;
  core::Result<net::VettedTarget> vetted;
  asio::co_spawn(io, guard->Vet(url),
                 [&](std::exception_ptr ep, core::Result<net::VettedTarget> r) {
                   FUZZ_CHECK(!ep, "an exception escaped UrlGuard::Vet");
                   vetted = std::move(r);
                 });
  io.restart();
  io.run();
  if (!vetted) {
    FUZZ_CHECK(vetted.error().code == core::ErrorCode::kInvalidParams, vetted.error().message);
    return 0;
  }
  FUZZ_CHECK(parsed.ok(), "Vet accepts what ParseUrl refuses: " + url);
  const net::VettedTarget& t = vetted.value();
  FUZZ_CHECK(t.url.host == parsed->host && t.url.port == parsed->port, url);
  FUZZ_CHECK(!t.endpoints.empty(), url);
  const bool host_allowed = !t.url.literal && (policy_bits & 4) && t.url.host == "hooks.internal";
  if (t.url.literal) {
    FUZZ_CHECK(resolver.calls == 0, "the resolver was asked about a literal: " + url);
    FUZZ_CHECK(t.endpoints.size() == 1 && t.endpoints[0].address() == *t.url.literal, url);
  } else {
    FUZZ_CHECK(!resolver.fail && t.endpoints.size() == resolver.addresses.size(), url);
    for (size_t i = 0; i < t.endpoints.size(); ++i)
      FUZZ_CHECK(t.endpoints[i].address() == resolver.addresses[i], url);
    if (!host_allowed)
      FUZZ_CHECK(!net::IsForbiddenHostName(t.url.host), "internal name accepted: " + url);
  }
  for (const auto& ep : t.endpoints) {
    FUZZ_CHECK(ep.port() == t.url.port, url);
    if (host_allowed || AllowListed(ep.address(), policy_bits)) continue;
    FUZZ_CHECK(!net::ForbiddenRange(ep.address()), url + " vetted to " + ep.address().to_string() +
                                                        ", " + *net::ForbiddenRange(ep.address()));
    FUZZ_CHECK(!ObviouslyInternal(ep.address()),
               url + " vetted to the internal address " + ep.address().to_string());
  }
  return 0;
}
