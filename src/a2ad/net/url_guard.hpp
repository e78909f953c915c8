#pragma once
// The egress SSRF guard (DIGEST §6.3; WIRE.md §16.2): every URL this server calls out to
// passes here. Push and webhook destinations pass when they are registered (VetAtRegistration)
// AND again at every delivery (Vet, through HttpClient::Fetch); so do peer agents, HTTP nodes
// and JWKS issuers.
//
//  1. Parse with Boost.URL. Schemes: https; http only with EgressPolicy::allow_http. No
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
//     check and the connect: DNS rebinding), sends Host/SNI = the original host, and follows
//     a redirect only as its RedirectPolicy allows, vetting the Location here again
//     (http_client.hpp).
//
// EgressPolicy::allow_list (CIDRs and host names) is for local development and tests: an
// address inside an allowed CIDR, or any address of an allowed host name, skips step 4 (and
// an allowed name skips step 3). It is empty by default; app/ logs a warning when it is set.
//
// Errors: kInvalidParams, message "URL '<url>' refused: <why>", detail {"egress", "refused"}
// or, when the host name has no address right now, {"egress", "unresolved"}
// (egress_error.hpp).
//
// Thread safety: UrlGuard is immutable after Create; Vet may run on any thread at once.
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
#include "a2ad/net/cidr.hpp"
#include "a2ad/net/egress_error.hpp"
#include "a2ad/net/egress_policy.hpp"

namespace a2ad::net {

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

/// Steps 1-2 (no DNS; only `policy.allow_http` is read). kInvalidParams saying what is wrong.
core::Result<ParsedUrl> ParseUrl(std::string_view url, const EgressPolicy& policy);

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
  /// Every address of `host`, non-empty. When the name has no address right now (no such
  /// host, no data, a temporary or server DNS failure): an error with EgressFailure
  /// kUnresolved. Other failures: kRefused.
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
/// else do not resolve (kUnresolved).
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
  /// `resolver` must outlive the guard.
  static core::Result<UrlGuard> Create(EgressPolicy policy, Resolver& resolver);

  /// Steps 1-4 with DNS, at the moment of use. kInvalidParams naming the reason ("... resolves
  /// to 10.0.0.5, which is private (RFC 1918)"); a name that does not resolve is refused
  /// (kUnresolved): nothing can be connected to.
  boost::asio::awaitable<core::Result<VettedTarget>> Vet(std::string url) const;

  /// The check when a destination is registered for later use (a push config, a webhook):
  /// as Vet, except that a host name which does not resolve right now passes (an A2A client
  /// may register a public name this machine cannot resolve yet; every use vets it again with
  /// fresh DNS). A literal non-public address, an internal name, or a name that does resolve
  /// to a non-public address is refused at once.
  boost::asio::awaitable<core::Result<ParsedUrl>> VetAtRegistration(std::string url) const;

  const EgressPolicy& policy() const { return policy_; }
  bool relaxed() const { return policy_.relaxed(); }

 private:
  UrlGuard(EgressPolicy policy, Resolver& resolver)
      : policy_(std::move(policy)), resolver_(&resolver) {}
  boost::asio::awaitable<core::Result<VettedTarget>> Check(std::string url,
                                                           bool accept_unresolved) const;
  bool AllowedAddress(const boost::asio::ip::address& a) const;
  bool AllowedHost(std::string_view host) const;

  EgressPolicy policy_;
  Resolver* resolver_;
  std::vector<Cidr> cidrs_;
  std::vector<std::string> hosts_;
};

}  // namespace a2ad::net
