#pragma once
// EgressPolicy: the one description of what this server may call out to (DIGEST §6.3; issue 5
// and the egress module). app/ builds it once from the configuration (--egress-allowlist,
// --egress-allow-http, --egress-ca-file; the --push-* spellings are aliases) and hands it to
// every outbound caller through one UrlGuard (url_guard.hpp) and HttpClient (http_client.hpp):
// push deliveries, OpenWOP webhooks and, later, peer A2A calls, HTTP workflow nodes and JWKS
// fetches. Pure values; copy freely.
#include <string>
#include <vector>

namespace a2ad::net {

/// What an HttpClient does with a 3xx answer carrying a Location (http_client.hpp).
struct RedirectPolicy {
  /// 0 (the default, DIGEST §6.3 item 4): never follow; the 3xx is returned as the answer.
  /// N > 0: follow up to N redirects, each Location vetted again by the guard (fresh DNS,
  /// every rule) before it is requested, never from https to http; one more is an error.
  int max_redirects = 0;

  static RedirectPolicy Never() { return {}; }
  static RedirectPolicy Follow(int n) { return RedirectPolicy{n}; }
};

struct EgressPolicy {
  /// Plain http:// destinations (development and tests only; logged as a warning).
  bool allow_http = false;
  /// CIDRs, addresses and host names that may be reached although they are private,
  /// loopback or internal names: "127.0.0.0/8", "::1/128", "10.1.2.3", "hooks.local".
  /// Empty by default (development and tests only; logged as a warning).
  std::vector<std::string> allow_list;
  /// Extra trusted CAs (PEM bundle) for https, next to the system store; "" = system only.
  std::string ca_file;
  /// The default of every HttpClient request that does not choose its own.
  RedirectPolicy redirects;

  bool relaxed() const { return allow_http || !allow_list.empty(); }
};

}  // namespace a2ad::net
