#pragma once
// Composition of the egress module (net/; DIGEST §6.3): the one EgressPolicy built from
// Config (--egress-allowlist, --egress-allow-http, --egress-ca-file and their --push-*
// aliases), and the resolver, SSRF guard and HTTP client built from it, which every outbound
// caller shares (push deliveries and webhook registration today). Built once at startup,
// read-only afterwards; the guard and client are thread-safe.
#include <memory>
#include <string>
#include <vector>

#include "a2ad/app/config.hpp"
#include "a2ad/client/grpc/grpc_peer.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/net/url_guard.hpp"

namespace a2ad::app {

struct EgressSetup {
  net::EgressPolicy policy;
  std::unique_ptr<net::SystemResolver> resolver;
  std::unique_ptr<net::UrlGuard> guard;
  std::unique_ptr<net::HttpClient> client;  // one connection per request
  /// A2A push notification configs: the policy plus --push-allow-http / --push-allowlist;
  /// OpenWOP webhooks: plus --webhook-*. Each has its client (one connection per request).
  std::unique_ptr<net::UrlGuard> push_guard, webhook_guard;
  std::unique_ptr<net::HttpClient> push_client, webhook_client;
  /// The same guard, reusing connections: the calls of workflow nodes (core.http,
  /// core.a2a.invoke), which go to a few origins again and again. Push deliveries and
  /// webhooks, to many receivers, keep `client`: no idle connection is held open at them.
  std::unique_ptr<net::HttpClient> calls_client;
  /// The same guard for peers called over gRPC (client/grpc/grpc_peer.hpp).
  std::unique_ptr<client::GrpcPeerTransport> grpc_peers;
};

/// "a, b,c" -> {"a", "b", "c"} (commas and spaces separate; empty items dropped).
std::vector<std::string> SplitList(const std::string& text);

/// The policy the configuration asks for; redirects: never followed.
net::EgressPolicy EgressPolicyOf(const Config& config);

/// Builds the policy, guard and client, logging a warning when the allow-list or plain http
/// relaxes the guard. Errors name the bad setting (an allow-list entry, the CA file).
core::Result<std::unique_ptr<EgressSetup>> OpenEgress(const Config& config);

}  // namespace a2ad::app
