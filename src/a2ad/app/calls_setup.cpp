#include "a2ad/app/calls_setup.hpp"

#include "a2ad/app/server_secrets.hpp"
#include "a2ad/client/peer_card.hpp"

namespace a2ad::app {

namespace {

// Where the host answers itself: its listen address, a wildcard one replaced by loopback.
std::string SelfHost(const std::string& listen_host) {
  if (listen_host.empty() || listen_host == "0.0.0.0") return "127.0.0.1";
  if (listen_host == "::") return "::1";
  return listen_host;
}

}  // namespace

std::string SelfOrigin(const std::string& listen_host, uint16_t port, bool tls) {
  std::string host = SelfHost(listen_host);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return (tls ? "https://" : "http://") + host + ":" + std::to_string(port);
}

namespace {

// The guard and client of calls to `origin` (SelfOrigin): that host only.
core::Result<std::unique_ptr<EgressSetup>> OpenSelfEgress(const Config& config,
                                                          const std::string& listen_host) {
  auto setup = std::make_unique<EgressSetup>();
  setup->policy.allow_http = !config.Tls();
  setup->policy.allow_list = {SelfHost(listen_host)};
  if (config.Tls()) setup->policy.ca_file = config.tls_cert;
  setup->policy.redirects = net::RedirectPolicy::Never();
  setup->resolver = std::make_unique<net::SystemResolver>();
  auto guard = net::UrlGuard::Create(setup->policy, *setup->resolver);
  if (!guard) return std::move(guard).error();
  setup->guard = std::make_unique<net::UrlGuard>(std::move(guard).value());
  net::HttpClientOptions options;
  options.user_agent = "a2ad-self";
  options.reuse_connections = true;
  auto client = net::HttpClient::Create(*setup->guard, options);
  if (!client) return std::move(client).error();
  setup->client = std::move(client).value();
  return setup;
}

}  // namespace

core::Result<std::unique_ptr<CallsSetup>> OpenCalls(const Config& config,
                                                    storage::ServerKeys* server_keys,
                                                    const std::string& listen_host, uint16_t port,
                                                    const std::string& public_base_url,
                                                    char** environ_entries) {
  auto self = OpenSelfEgress(config, listen_host);
  if (!self) {
    core::Error e = std::move(self).error();
    e.message = "the self peer: " + e.message;
    return e;
  }
  auto peer_push_tokens = OpenTokenSecret(server_keys, config.data_dir, kPeerPushSecret);
  if (!peer_push_tokens) return std::move(peer_push_tokens).error();
  auto setup = std::unique_ptr<CallsSetup>(
      new CallsSetup{std::move(self).value(),
                     {},
                     PeerPushReceiver::Open(std::move(peer_push_tokens).value(), public_base_url),
                     {}});
  effects::EffectsConfig& ec = setup->effects;
  ec.push_target = [pp = &setup->peer_push](const std::string& run, const std::string& node,
                                            int64_t until) {
    return std::optional<effects::PushTarget>(pp->Target(run, node, until));
  };
  ec.self_http = setup->self_egress->client.get();
  ec.self_origin = SelfOrigin(listen_host, port, config.Tls());
  ec.self_credential = &setup->self_credential;
  std::vector<std::string> peers(std::begin(kDefaultPeers), std::end(kDefaultPeers));
  peers.insert(peers.end(), config.a2a_peers.begin(), config.a2a_peers.end());
  for (const auto& p : peers) {  // a later entry of a name replaces an earlier one
    const size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == p.size())
      return core::Error(core::ErrorCode::kInvalidParams,
                         "--a2a-peer '" + p + "': expected NAME=URL or NAME=self");
    const std::string name = p.substr(0, eq), where = p.substr(eq + 1);
    effects::PeerConfig pc;
    pc.self = where == "self";
    pc.card_url = client::PeerCardUrl(pc.self ? ec.self_origin : where);
    ec.peers[name] = std::move(pc);
  }
  effects::AddEnvironment(ec, environ_entries);
  return setup;
}

}  // namespace a2ad::app
