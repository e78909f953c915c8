#pragma once
// The egress SSRF guard (issue 5; DIGEST §6.3; WIRE.md §16.2): every URL a caller names as a
// push or webhook destination passes here when it is registered AND again at every delivery.
//
//  1. Parse with Boost.URL. Schemes: https; http only with GuardPolicy::allow_http. No
//     userinfo ("https://a@b" tricks), no IPvFuture/zone ids, no empty host, port 1-65535.
//  2. Host normalisation: a host whose last label is numeric is an IPv4 address in the
//     inet_aton sense (decimal "2130706433", octal "0177.0.0.1", hex "0x7f.1", short forms
//     "127.1"); one that does not parse as such is refused rather than guessed at. A trailing
//     dot is dropped; percent-encoding is decoded; names are lower-cased.
//  3. Hostnames refused outright: localhost (and *.localhost), metadata,
//     metadata.google.internal and the other well-known metadata names.
//  4. Every address (the literal, or every result of resolving the name) must be public:
//     ForbiddenRange() names the range of one that is not (loopback, RFC 1918, link-local,
//     CGNAT, ULA, multicast, unspecified, reserved, documentation, cloud metadata, and the
//     IPv4-mapped / IPv4-compatible / NAT64 / 6to4 forms of those; Teredo is refused whole).
//  5. The caller connects ONLY to VettedTarget::endpoints (no second resolution between the
//     check and the connect: DNS rebinding), sends Host/SNI = the original host, and never
//     follows redirects (webhook_client.hpp).
//
// GuardPolicy::allow_list (CIDRs and host names) is for local development and tests: an
// address inside an allowed CIDR, or any address of an allowed host name, skips step 4 (and
// an allowed name skips step 3). It is empty by default; app/ logs a warning when it is set.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::push {

struct GuardPolicy {
  bool allow_http = false;              // plain http:// destinations (development only)
  std::vector<std::string> allow_list;  // "127.0.0.0/8", "::1/128", "10.1.2.3", "hooks.local"
};

/// A URL that passed the syntactic checks (steps 1-3). Pure value.
struct ParsedUrl {
  std::string scheme;  // "https" or "http"
  std::string host;    // normalised: lower-case name, or the canonical address text
  uint16_t port = 0;   // explicit or the scheme's default
  std::string target;  // origin-form request target: path (at least "/") and query
  std::optional<boost::asio::ip::address> literal;  // set when the host is an address
  /// The Host header value: host (bracketed for IPv6) plus ":port" when not the default.
  std::string HostHeader() const;
};

/// A destination that passed every check: connect only to `endpoints`.
struct VettedTarget {
  ParsedUrl url;
  std::vector<boost::asio::ip::tcp::endpoint> endpoints;  // non-empty
};

/// Steps 1-3 (no DNS). kInvalidParams with a message saying what is wrong.
core::Result<ParsedUrl> ParseWebhookUrl(std::string_view url, const GuardPolicy& policy);

/// inet_aton-style IPv4 parsing of a host text: 1-4 dot-separated parts, each decimal, octal
/// (leading 0) or hex (0x); the last part fills the remaining bytes. nullopt if not numeric.
std::optional<boost::asio::ip::address_v4> ParseLooseIpv4(std::string_view host);

/// The name of the non-public range `a` falls in ("loopback", "private (RFC 1918)", ...), or
/// nullopt for a public unicast address. Embedded IPv4 forms are judged by the IPv4 inside.
std::optional<std::string> ForbiddenRange(const boost::asio::ip::address& a);

/// Host names refused whatever they resolve to (step 3).
bool IsForbiddenHostName(std::string_view normalised_host);

/// Name resolution, injected (STYLE.md #5). Implementations are thread-safe.
class Resolver {
 public:
  virtual ~Resolver() = default;
  /// Every address of `host` (an empty vector is an error). kInvalidParams when the name does
  /// not resolve.
  virtual boost::asio::awaitable<core::Result<std::vector<boost::asio::ip::address>>> Resolve(
      std::string host) = 0;
};

/// Production: asio's resolver (getaddrinfo on asio's internal thread).
class SystemResolver final : public Resolver {
 public:
  boost::asio::awaitable<core::Result<std::vector<boost::asio::ip::address>>> Resolve(
      std::string host) override;
};

/// Tests: a fixed name -> addresses table; other names fall through to `fallback` when set,
/// else fail to resolve.
class StaticResolver final : public Resolver {
 public:
  explicit StaticResolver(std::map<std::string, std::vector<std::string>> table,
                          Resolver* fallback = nullptr)
      : table_(std::move(table)), fallback_(fallback) {}
  boost::asio::awaitable<core::Result<std::vector<boost::asio::ip::address>>> Resolve(
      std::string host) override;

 private:
  std::map<std::string, std::vector<std::string>> table_;
  Resolver* fallback_;
};

class UrlGuard {
 public:
  /// kInvalidParams for an allow-list entry that is neither a CIDR, an address nor a name.
  static core::Result<UrlGuard> Create(GuardPolicy policy, Resolver& resolver);

  /// Steps 1-4 with DNS. kInvalidParams naming the reason ("... resolves to 10.0.0.5, a
  /// private (RFC 1918) address"). Thread-safe.
  boost::asio::awaitable<core::Result<VettedTarget>> Vet(std::string url) const;

  const GuardPolicy& policy() const { return policy_; }
  bool relaxed() const { return !policy_.allow_list.empty() || policy_.allow_http; }

 private:
  struct Cidr {
    boost::asio::ip::address base;
    int bits = 0;
  };
  UrlGuard(GuardPolicy policy, Resolver& resolver)
      : policy_(std::move(policy)), resolver_(&resolver) {}
  bool AllowedAddress(const boost::asio::ip::address& a) const;
  bool AllowedHost(std::string_view host) const;

  GuardPolicy policy_;
  Resolver* resolver_;
  std::vector<Cidr> cidrs_;
  std::vector<std::string> hosts_;
};

}  // namespace a2ad::push
