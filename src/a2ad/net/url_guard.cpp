#include "a2ad/net/url_guard.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace a2ad::net {
namespace asio = boost::asio;
namespace ip = boost::asio::ip;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

Error Refused(std::string_view url, std::string why, EgressFailure kind = EgressFailure::kRefused) {
  return EgressError(kind, "URL '" + std::string(url) + "' refused: " + std::move(why));
}

// asio's names for "this name has no address right now" (getaddrinfo EAI_NONAME, EAI_NODATA,
// EAI_AGAIN, EAI_FAIL).
bool IsDnsMiss(const boost::system::error_code& ec) {
  namespace err = boost::asio::error;
  return ec == err::host_not_found || ec == err::host_not_found_try_again || ec == err::no_data ||
         ec == err::no_recovery;
}

std::string Lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

bool InV4(uint32_t a, uint32_t base, int bits) {
  const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (a & mask) == (base & mask);
}

constexpr uint32_t V4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

std::optional<std::string> ForbiddenV4(uint32_t a) {
  struct Range {
    uint32_t base;
    int bits;
    const char* name;
  };
  // Order matters only for naming: specific entries first.
  static constexpr std::array<Range, 19> kRanges{{
      {V4(169, 254, 169, 254), 32, "cloud metadata"},
      {V4(168, 63, 129, 16), 32, "cloud metadata (Azure)"},
      {V4(100, 100, 100, 200), 32, "cloud metadata (Alibaba)"},
      {V4(0, 0, 0, 0), 8, "unspecified (0.0.0.0/8)"},
      {V4(10, 0, 0, 0), 8, "private (RFC 1918)"},
      {V4(100, 64, 0, 0), 10, "shared address space (CGNAT, RFC 6598)"},
      {V4(127, 0, 0, 0), 8, "loopback"},
      {V4(169, 254, 0, 0), 16, "link-local"},
      {V4(172, 16, 0, 0), 12, "private (RFC 1918)"},
      {V4(192, 0, 0, 0), 24, "IETF protocol assignments"},
      {V4(192, 0, 2, 0), 24, "documentation (TEST-NET-1)"},
      {V4(192, 88, 99, 0), 24, "6to4 relay anycast"},
      {V4(192, 168, 0, 0), 16, "private (RFC 1918)"},
      {V4(198, 18, 0, 0), 15, "benchmarking"},
      {V4(198, 51, 100, 0), 24, "documentation (TEST-NET-2)"},
      {V4(203, 0, 113, 0), 24, "documentation (TEST-NET-3)"},
      {V4(224, 0, 0, 0), 4, "multicast"},
      {V4(255, 255, 255, 255), 32, "broadcast"},
      {V4(240, 0, 0, 0), 4, "reserved (240.0.0.0/4)"},
  }};
  for (const auto& r : kRanges)
    if (InV4(a, r.base, r.bits)) return std::string(r.name);
  return std::nullopt;
}

bool InV6(const ip::address_v6::bytes_type& b, std::initializer_list<uint8_t> prefix, int bits) {
  for (size_t i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t want = i < prefix.size() ? *(prefix.begin() + i) : 0;
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((b[i] & mask) != (want & mask)) return false;
  }
  return true;
}

uint32_t V4At(const ip::address_v6::bytes_type& b, int offset) {
  return (uint32_t{b[offset]} << 24) | (uint32_t{b[offset + 1]} << 16) |
         (uint32_t{b[offset + 2]} << 8) | uint32_t{b[offset + 3]};
}

std::optional<std::string> Embedded(const char* form, uint32_t v4) {
  if (auto r = ForbiddenV4(v4)) return std::string(form) + " of a " + *r + " address";
  return std::nullopt;
}

std::optional<std::string> ForbiddenV6(const ip::address_v6& a) {
  const auto b = a.to_bytes();
  if (a.is_unspecified()) return "unspecified (::)";
  if (a.is_loopback()) return "loopback";
  // ::ffff:a.b.c.d (IPv4-mapped): judged by the IPv4 address.
  if (InV6(b, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96))
    return Embedded("IPv4-mapped form", V4At(b, 12));
  // ::a.b.c.d (deprecated IPv4-compatible) and the rest of ::/96: never a real destination.
  if (InV6(b, {}, 96)) return "IPv4-compatible (::/96)";
  if (InV6(b, {0x00, 0x64, 0xff, 0x9b}, 96)) {  // NAT64 64:ff9b::/96
    if (auto r = Embedded("NAT64 form", V4At(b, 12))) return r;
    return std::nullopt;  // NAT64 of a public address is a public destination
  }
  if (InV6(b, {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48)) return "local-use NAT64 (64:ff9b:1::/48)";
  if (InV6(b, {0x20, 0x02}, 16)) {  // 6to4 2002:V4::/48
    if (auto r = Embedded("6to4 form", V4At(b, 2))) return r;
    return std::nullopt;
  }
  if (InV6(b, {0x20, 0x01, 0x00, 0x00}, 32)) return "Teredo (2001::/32)";
  if (InV6(b, {0x20, 0x01, 0x0d, 0xb8}, 32)) return "documentation (2001:db8::/32)";
  if (InV6(b, {0x20, 0x01, 0x00, 0x10}, 28)) return "ORCHID (2001:10::/28)";
  if (InV6(b, {0x01, 0x00}, 64)) return "discard-only (100::/64)";
  if (InV6(b, {0xfc}, 7)) return "unique local (ULA, fc00::/7)";
  if (InV6(b, {0xfe, 0x80}, 10)) return "link-local";
  if (InV6(b, {0xfe, 0xc0}, 10)) return "site-local (deprecated)";
  if (InV6(b, {0xff}, 8)) return "multicast";
  if (!InV6(b, {0x20}, 3)) return "not global unicast (outside 2000::/3)";
  return std::nullopt;
}

// One inet_aton part: decimal, 0-prefixed octal or 0x-prefixed hex.
std::optional<uint64_t> LoosePart(std::string_view p) {
  if (p.empty()) return std::nullopt;
  int base = 10;
  if (p.size() > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    base = 16;
    p.remove_prefix(2);
    if (p.empty()) return uint64_t{0};  // "0x" is 0 for inet_aton
  } else if (p.size() > 1 && p[0] == '0') {
    base = 8;
    p.remove_prefix(1);
  }
  uint64_t v = 0;
  for (char ch : p) {
    int d;
    if (ch >= '0' && ch <= '9')
      d = ch - '0';
    else if (ch >= 'a' && ch <= 'f')
      d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F')
      d = ch - 'A' + 10;
    else
      return std::nullopt;
    if (d >= base) return std::nullopt;
    v = v * base + d;
    if (v > 0xffffffffull) return std::nullopt;
  }
  return v;
}

// WHATWG URL: a host whose last label is a number is meant as an IPv4 address.
bool LastLabelNumeric(std::string_view host) {
  auto dot = host.rfind('.');
  std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty()) return false;
  if (last.size() > 1 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X'))
    return std::all_of(last.begin() + 2, last.end(),
                       [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
  return std::all_of(last.begin(), last.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<ip::address_v4> ParseLooseIpv4(std::string_view host) {
  std::vector<uint64_t> parts;
  size_t start = 0;
  for (;;) {
    size_t dot = host.find('.', start);
    auto part =
        LoosePart(host.substr(start, dot == std::string_view::npos ? host.npos : dot - start));
    if (!part) return std::nullopt;
    parts.push_back(*part);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
    if (parts.size() == 4) return std::nullopt;
  }
  uint64_t value = 0;
  const size_t n = parts.size();
  for (size_t i = 0; i + 1 < n; ++i) {
    if (parts[i] > 255) return std::nullopt;
    value |= parts[i] << (8 * (3 - i));
  }
  const int rest_bits = 8 * static_cast<int>(5 - n);  // bytes the last part fills
  if (rest_bits < 64 && parts.back() >> rest_bits) return std::nullopt;
  value |= parts.back();
  return ip::address_v4(static_cast<uint32_t>(value));
}

std::optional<std::string> ForbiddenRange(const ip::address& a) {
  if (a.is_v4()) return ForbiddenV4(a.to_v4().to_uint());
  return ForbiddenV6(a.to_v6());
}

bool IsForbiddenHostName(std::string_view h) {
  static const char* const kNames[] = {"localhost",
                                       "metadata",
                                       "metadata.google.internal",
                                       "metadata.goog",
                                       "instance-data",
                                       "instance-data.ec2.internal",
                                       "metadata.azure.internal",
                                       "ip6-localhost",
                                       "ip6-loopback"};
  for (const char* n : kNames)
    if (h == n) return true;
  auto ends_with = [&](std::string_view suffix) {
    return h.size() > suffix.size() && h.substr(h.size() - suffix.size()) == suffix;
  };
  return ends_with(".localhost") || ends_with(".metadata.google.internal");
}

std::string ParsedUrl::HostHeader() const {
  std::string h = literal && literal->is_v6() ? "[" + host + "]" : host;
  const bool default_port = (scheme == "https" && port == 443) || (scheme == "http" && port == 80);
  if (!default_port) h += ":" + std::to_string(port);
  return h;
}

Result<ParsedUrl> ParseUrl(std::string_view url, const EgressPolicy& policy) {
  if (url.size() > 2048) return Refused(url.substr(0, 64), "longer than 2048 characters");
  auto parsed = boost::urls::parse_uri(url);  // a #fragment is allowed and never sent
  if (!parsed) return Refused(url, "not an absolute URL (" + parsed.error().message() + ")");
  const boost::urls::url_view& u = *parsed;
  ParsedUrl out;
  out.scheme = Lower(std::string(u.scheme()));
  if (out.scheme != "https" && !(out.scheme == "http" && policy.allow_http))
    return Refused(url, out.scheme == "http"
                            ? "plain http is not allowed (https only; the server must be "
                              "started with --egress-allow-http for development)"
                            : "scheme '" + out.scheme + "' is not allowed (https only)");
  if (!u.has_authority()) return Refused(url, "no host");
  if (u.has_userinfo()) return Refused(url, "user information ('user@') is not allowed in the URL");
  switch (u.host_type()) {
    case boost::urls::host_type::ipv4:
      out.literal = ip::address(ip::make_address_v4(u.host_ipv4_address().to_uint()));
      break;
    case boost::urls::host_type::ipv6: {
      auto bytes = u.host_ipv6_address().to_bytes();
      ip::address_v6::bytes_type b;
      std::copy(bytes.begin(), bytes.end(), b.begin());
      out.literal = ip::address(ip::address_v6(b));
      break;
    }
    case boost::urls::host_type::name: {
      std::string name = Lower(u.host());  // percent-decoded
      if (!name.empty() && name.back() == '.') name.pop_back();
      if (name.empty()) return Refused(url, "empty host");
      // No space or control byte (a Host header and SNI carry the name), no delimiter.
      const bool bad_char = std::any_of(name.begin(), name.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c <= 0x20 || c == 0x7f || ch == '%' || ch == '/' || ch == '\\' || ch == '@';
      });
      if (bad_char) return Refused(url, "host contains characters a host name cannot have");
      if (LastLabelNumeric(name)) {
        auto v4 = ParseLooseIpv4(name);
        if (!v4) return Refused(url, "numeric host '" + name + "' is not a valid IPv4 address");
        out.literal = ip::address(*v4);
      } else {
        out.host = std::move(name);
      }
      break;
    }
    default:
      return Refused(url, "IPvFuture hosts are not allowed");
  }
  if (out.literal) out.host = out.literal->to_string();
  if (u.has_port()) {
    if (u.port().empty() || u.port_number() == 0)
      return Refused(url, "port '" + std::string(u.port()) + "' is not a port number 1-65535");
    out.port = u.port_number();
  } else {
    out.port = out.scheme == "https" ? 443 : 80;
  }
  out.target = u.encoded_path().empty() ? "/" : std::string(u.encoded_path());
  if (out.target.front() != '/') return Refused(url, "path must start with '/'");
  if (u.has_query()) out.target += "?" + std::string(u.encoded_query());
  return out;
}

Result<UrlGuard> UrlGuard::Create(EgressPolicy policy, Resolver& resolver) {
  UrlGuard g(std::move(policy), resolver);
  for (const std::string& entry : g.policy_.allow_list) {
    auto slash = entry.find('/');
    boost::system::error_code ec;
    (void)ip::make_address(entry.substr(0, slash), ec);
    if (!ec) {
      auto range = ParseCidr(entry);
      if (!range)
        return Error(ErrorCode::kInvalidParams,
                     "egress allow-list entry " + range.error().message);
      g.cidrs_.push_back(*range);
      continue;
    }
    std::string host = Lower(entry);
    if (host.empty() || slash != std::string::npos ||
        host.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.-") != std::string::npos)
      return Error(ErrorCode::kInvalidParams, "egress allow-list entry '" + entry +
                                                  "': expected a CIDR, an address or a host name");
    g.hosts_.push_back(std::move(host));
  }
  return g;
}

bool UrlGuard::AllowedAddress(const ip::address& a) const {
  return InAnyCidr(a, cidrs_);
}

bool UrlGuard::AllowedHost(std::string_view host) const {
  return std::find(hosts_.begin(), hosts_.end(), host) != hosts_.end();
}

asio::awaitable<Result<VettedTarget>> UrlGuard::Vet(std::string url) const {
  co_return co_await Check(std::move(url), false);
}

asio::awaitable<Result<ParsedUrl>> UrlGuard::VetAtRegistration(std::string url) const {
  auto checked = co_await Check(std::move(url), true);
  if (!checked) co_return std::move(checked).error();
  co_return std::move(checked).value().url;
}

// Vet; with `accept_unresolved`, a name without an address passes with no endpoints.
asio::awaitable<Result<VettedTarget>> UrlGuard::Check(std::string url,
                                                      bool accept_unresolved) const {
  auto parsed = ParseUrl(url, policy_);
  if (!parsed) co_return std::move(parsed).error();
  VettedTarget out;
  out.url = std::move(parsed).value();
  const bool host_allowed = !out.url.literal && AllowedHost(out.url.host);
  if (!out.url.literal && !host_allowed && IsForbiddenHostName(out.url.host))
    co_return Refused(url, "host '" + out.url.host + "' is an internal name");
  std::vector<ip::address> addresses;
  if (out.url.literal) {
    addresses.push_back(*out.url.literal);
  } else {
    auto resolved = co_await resolver_->Resolve(out.url.host);
    if (!resolved) {
      const auto kind = EgressFailureOf(resolved.error()).value_or(EgressFailure::kRefused);
      if (kind == EgressFailure::kUnresolved && accept_unresolved) co_return out;
      co_return Refused(url, resolved.error().message, kind);
    }
    addresses = std::move(resolved).value();
    if (addresses.empty()) {
      if (accept_unresolved) co_return out;
      co_return Refused(url, "host '" + out.url.host + "' has no address",
                        EgressFailure::kUnresolved);
    }
  }
  for (const auto& a : addresses) {
    if (host_allowed || AllowedAddress(a)) continue;
    if (auto range = ForbiddenRange(a)) {
      std::string why = out.url.literal ? "address " + a.to_string() + " is " + *range
                                        : "host '" + out.url.host + "' resolves to " +
                                              a.to_string() + ", which is " + *range;
      co_return Refused(url, why + " (not a public destination)");
    }
  }
  for (const auto& a : addresses) out.endpoints.emplace_back(a, out.url.port);
  co_return out;
}

asio::awaitable<Result<std::vector<ip::address>>> SystemResolver::Resolve(std::string host) {
  ip::tcp::resolver resolver(co_await asio::this_coro::executor);
  boost::system::error_code ec;
  auto results =
      co_await resolver.async_resolve(host, "", asio::redirect_error(asio::use_awaitable, ec));
  if (ec)
    co_return EgressError(IsDnsMiss(ec) ? EgressFailure::kUnresolved : EgressFailure::kRefused,
                          "host '" + host + "' does not resolve (" + ec.message() + ")");
  std::vector<ip::address> out;
  for (const auto& entry : results) {
    auto a = entry.endpoint().address();
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  }
  if (out.empty())
    co_return EgressError(EgressFailure::kUnresolved, "host '" + host + "' has no address");
  co_return out;
}

asio::awaitable<Result<std::vector<ip::address>>> StaticResolver::Resolve(std::string host) {
  auto it = table_.find(host);
  if (it == table_.end()) {
    if (fallback_) co_return co_await fallback_->Resolve(std::move(host));
    co_return EgressError(EgressFailure::kUnresolved, "host '" + host + "' does not resolve");
  }
  std::vector<ip::address> out;
  for (const auto& text : it->second) out.push_back(ip::make_address(text));
  co_return out;
}

}  // namespace a2ad::net
