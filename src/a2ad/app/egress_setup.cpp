#include "a2ad/app/egress_setup.hpp"

#include "a2ad/core/log.hpp"

namespace a2ad::app {

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

net::EgressPolicy EgressPolicyOf(const Config& config) {
  net::EgressPolicy policy;
  policy.allow_http = config.egress_allow_http;
  policy.allow_list = SplitList(config.egress_allowlist);
  policy.ca_file = config.egress_ca_file;
  policy.redirects = net::RedirectPolicy::Never();
  return policy;
}

core::Result<std::unique_ptr<EgressSetup>> OpenEgress(const Config& config) {
  auto setup = std::make_unique<EgressSetup>();
  setup->policy = EgressPolicyOf(config);
  setup->resolver = std::make_unique<net::SystemResolver>();
  auto guard = net::UrlGuard::Create(setup->policy, *setup->resolver);
  if (!guard) {
    core::Error e = std::move(guard).error();
    e.message = "--egress-allowlist: " + e.message;
    return e;
  }
  setup->guard = std::make_unique<net::UrlGuard>(std::move(guard).value());
  if (!setup->policy.allow_list.empty())
    core::LogWarn("egress: the SSRF allow-list is ON (" + config.egress_allowlist +
                  "): outbound calls (push notifications, webhooks, workflow calls) may reach "
                  "these private addresses; for development and tests only");
  if (setup->policy.allow_http)
    core::LogWarn(
        "egress: plain http destinations are allowed (push notifications, webhooks, workflow "
        "calls); for development and tests only");
  // Push configs and webhooks: the policy, relaxed further by their own switches.
  auto narrowed = [&](const char* what, bool allow_http, const std::string& list,
                      std::unique_ptr<net::UrlGuard>& g,
                      std::unique_ptr<net::HttpClient>& c) -> core::Result<void> {
    net::EgressPolicy p = setup->policy;
    p.allow_http = p.allow_http || allow_http;
    for (auto& entry : SplitList(list)) p.allow_list.push_back(std::move(entry));
    auto made = net::UrlGuard::Create(p, *setup->resolver);
    if (!made) {
      core::Error e = std::move(made).error();
      e.message = std::string("--") + what + "-allowlist: " + e.message;
      return e;
    }
    g = std::make_unique<net::UrlGuard>(std::move(made).value());
    auto client = net::HttpClient::Create(*g);
    if (!client) return std::move(client).error();
    c = std::move(client).value();
    if (allow_http)
      core::LogWarn(std::string("egress: plain http destinations are allowed for ") + what +
                    "s; for development and tests only");
    if (!list.empty())
      core::LogWarn(std::string("egress: ") + what + "s may reach " + list +
                    "; for development and tests only");
    return core::Ok{};
  };
  if (auto r = narrowed("push", config.push_allow_http, config.push_allowlist, setup->push_guard,
                        setup->push_client);
      !r)
    return std::move(r).error();
  if (auto r = narrowed("webhook", config.webhook_allow_http, config.webhook_allowlist,
                        setup->webhook_guard, setup->webhook_client);
      !r)
    return std::move(r).error();
  auto client = net::HttpClient::Create(*setup->guard);
  if (!client) {
    core::Error e = std::move(client).error();
    e.message = "--egress-ca-file: " + e.message;
    return e;
  }
  setup->client = std::move(client).value();
  // Workflows' calls keep their connections to a peer or an API for the next call (the
  // server's one io_context outlives the client).
  net::HttpClientOptions reuse;
  reuse.reuse_connections = true;
  auto calls = net::HttpClient::Create(*setup->guard, reuse);
  if (!calls) return std::move(calls).error();
  setup->calls_client = std::move(calls).value();
  auto grpc = client::GrpcPeerTransport::Create(*setup->guard);
  if (!grpc) {
    core::Error e = std::move(grpc).error();
    e.message = "--egress-ca-file: " + e.message;
    return e;
  }
  setup->grpc_peers = std::move(grpc).value();
  return setup;
}

}  // namespace a2ad::app
