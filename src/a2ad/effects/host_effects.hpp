#pragma once
// HostEffects: the EffectRunner of a serving a2ad (workflow/effects.hpp), carrying out the
// calls of core.http and core.a2a.invoke nodes through the server's one HttpClient (so the
// egress guard vets every URL at the moment of the call) and the A2A client (client/).
//
// Peers (core.a2a.invoke `peer`): named in PeerConfig (--a2a-peer NAME=URL; a URL that is not
// a .json file gets /.well-known/agent-card.json appended), with the credentials the host
// holds for them: A2AD_PEER_<NAME>_BEARER (Authorization: Bearer) and
// A2AD_PEER_<NAME>_API_KEY (X-API-Key) from the environment. A node naming agentCardUrl
// calls without credentials. Secrets of core.http `secretHeaders`: A2AD_SECRET_<NAME>.
// Neither ever reaches the log: the logged request names the secret, and the result holds
// what the peer or API answered.
//
// How a node follows a peer's task (spec `mode`): poll (GetTask every pollMs), stream
// (SubscribeToTask, re-opened every stream_window; any status event makes the node look;
// a peer that cannot stream is polled, with a warning), push (a push config sent with the
// message; the node sleeps until the receiver nudges it or pollMs passes). In every mode
// what the node logs is what GetTask answers: events and pushes only say when to look, so
// nothing a stream or a push says is trusted or can be lost.
//
// A self peer (--a2a-peer NAME=self, app/calls_setup.hpp) is this host: its card and task
// calls go through EffectsConfig::self_http to self_origin.
//
// Cards are fetched on first use and kept for the life of the process (keyed by URL); an
// unsigned card is accepted with a warning in the log (once per card).
//
// Thread safety: Run and Cancel may be called concurrently from any thread.
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "a2ad/client/a2a_client.hpp"
#include "a2ad/core/api_key.hpp"
#include "a2ad/effects/effect_claims.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/workflow/effects.hpp"

namespace a2ad::effects {

struct PeerConfig {
  std::string card_url;
  net::HeaderList headers;  // credentials
  /// The host itself (--a2a-peer NAME=self): called through EffectsConfig::self_http, at
  /// EffectsConfig::self_origin whatever origin its card's endpoint names.
  bool self = false;
};

/// Where a peer pushes the changes of a task a node follows in push mode: a2ad's receiver
/// URL and the token it will check (X-A2A-Notification-Token).
struct PushTarget {
  std::string url;
  std::string token;
};
/// Mints the target for (run, node), valid until `expires_ms`; nullopt when this host has no
/// receiver (a node in push mode then fails with capability_required).
using PushTargetFn = std::function<std::optional<PushTarget>(
    const std::string& run_id, const std::string& node_id, int64_t expires_ms)>;

/// The key under which a node following a peer's task sleeps (ExecutionContext::
/// SleepUntilNudged): the receiver of the peer's pushes nudges it.
std::string PeerPushNudgeKey(std::string_view node_id);

struct EffectsConfig {
  std::map<std::string, PeerConfig> peers;     // by name
  std::map<std::string, std::string> secrets;  // core.http secretHeaders, by name
  std::string caller_agent_id = "a2ad";        // metadata.openwop.callerAgentId
  PushTargetFn push_target;                    // unset: no push mode
  /// Stream mode: how long one subscription to a peer's task stays open before the node
  /// looks at the task and subscribes again (a cancel or pause of the run is noticed then).
  std::chrono::milliseconds stream_window{15000};
  /// The client of calls to the host itself (self peers), its guard admitting only the
  /// host's listener, and where that is ("http://127.0.0.1:8080"); null: no self peers.
  const net::HttpClient* self_http = nullptr;
  std::string self_origin;
  /// What a self peer without credentials of its own (A2AD_PEER_<NAME>_*) presents: the
  /// host's credential for the calling run's tenant (transport/auth/auth.hpp); null: nothing.
  const core::SelfCredential* self_credential = nullptr;
  /// How peers whose card offers A2A 1.0 over gRPC are called (client/grpc/grpc_peer.hpp,
  /// through the same guard); null: such peers are refused.
  const client::PeerTransport* grpc = nullptr;
};

/// EffectsConfig::peers credentials and secrets from `environ`-style "NAME=VALUE" entries
/// (A2AD_PEER_<NAME>_BEARER, A2AD_PEER_<NAME>_API_KEY, A2AD_SECRET_<NAME>); peer names are
/// matched upper-cased with '-' as '_'.
void AddEnvironment(EffectsConfig& config, char** environ_entries);

class HostEffects final : public workflow::EffectRunner {
 public:
  /// `http` must outlive the runner.
  HostEffects(const net::HttpClient& http, EffectsConfig config);

  boost::asio::awaitable<boost::json::object> Run(tasks::ExecutionContext& ctx,
                                                  const std::string& node_id,
                                                  const boost::json::object& spec) override;
  boost::asio::awaitable<void> Cancel(const protocol::CallContext& ctx,
                                      const boost::json::object& spec) override;
  /// The claims that keep two executions of one run from making one call twice
  /// (effect_claims.hpp): core.http by its idempotency key, an A2A message by its messageId.
  EffectClaims& claims() { return claims_; }

 private:
  struct Peer {
    std::string name;
    PeerConfig config;
    const client::A2aClient* a2a = nullptr;  // a2a_, or self_a2a_ for a self peer
  };
  /// The peer a spec names, and the headers a call to it carries for a run of `tenant`.
  core::Result<Peer> ResolvePeer(const boost::json::object& spec, std::string_view tenant) const;
  boost::asio::awaitable<core::Result<client::PeerCard>> CardOf(const Peer& peer,
                                                                const client::CallOptions& o);
  boost::asio::awaitable<boost::json::object> Http(tasks::ExecutionContext& ctx,
                                                   const std::string& node_id,
                                                   const boost::json::object& spec,
                                                   const std::string& key);
  boost::asio::awaitable<boost::json::object> A2a(tasks::ExecutionContext& ctx,
                                                  const std::string& node_id,
                                                  const boost::json::object& spec);
  boost::asio::awaitable<boost::json::object> Wait(tasks::ExecutionContext& ctx,
                                                   const std::string& node_id,
                                                   const boost::json::object& spec,
                                                   const Peer& peer, const client::PeerCard& card,
                                                   const client::CallOptions& o);
  enum class Heard { kChange, kQuiet, kRefused, kDown };
  boost::asio::awaitable<Heard> Listen(const Peer& peer, const client::PeerCard& card,
                                       const std::string& task_id, const boost::json::object& spec,
                                       const client::CallOptions& o, std::string& why);

  const net::HttpClient& http_;
  client::A2aClient a2a_;
  EffectsConfig config_;
  std::optional<client::A2aClient> self_a2a_;
  std::mutex mu_;
  std::map<std::string, client::PeerCard> cards_;  // by card URL
  EffectClaims claims_;
};

}  // namespace a2ad::effects
