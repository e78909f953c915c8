#pragma once
// Composition of the calls workflows make (issue 16; effects/host_effects.hpp, docs/CALLS.md):
// the peers of --a2a-peer and their credentials from the environment, the receiver of the
// pushes of peers followed in push mode (peer_push.hpp), and the `self` peer.
//
// `--a2a-peer NAME=self` names this host: its calls go to the host's own listener (a
// wildcard listen address is reached on loopback) through a guard that admits that address
// and nothing else, so it works under the default egress policy, which refuses loopback for
// every other call. Plain http unless the host serves TLS; then the host's own certificate
// is trusted, and it must name the address called. When the host authenticates its callers,
// a self call presents a credential of the host's own for the calling run's tenant
// (core::SelfCredential), unless the environment gives the peer credentials
// (A2AD_PEER_<NAME>_BEARER / _API_KEY). Without --a2a-peer drafter=..., `drafter` is `self`:
// the bundled campaign-brief drafts with the bundled brief-drafter skill.
//
// Built once at startup, read-only afterwards.
#include <cstdint>
#include <memory>
#include <string>

#include "a2ad/app/config.hpp"
#include "a2ad/app/egress_setup.hpp"
#include "a2ad/app/peer_push.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/effects/host_effects.hpp"
#include "a2ad/storage/server_keys.hpp"

namespace a2ad::app {

/// The peers a host knows without being told (overridden by --a2a-peer with the same name).
inline constexpr const char* kDefaultPeers[] = {"drafter=self"};

struct CallsSetup {
  std::unique_ptr<EgressSetup> self_egress;  // calls to the host itself
  core::SelfCredential self_credential;      // ... and what they present (Authenticator)
  PeerPushReceiver peer_push;
  effects::EffectsConfig effects;  // holds a pointer into self_egress and peer_push
};

/// Where the host answers itself: "http(s)://<listen host>:<port>", a wildcard listen
/// address replaced by loopback (0.0.0.0 -> 127.0.0.1, :: -> ::1).
std::string SelfOrigin(const std::string& listen_host, uint16_t port, bool tls);

/// `server_keys`: the backend's (Backend::Keys()), where the peer-push secret is when given
/// (server_secrets.hpp). kInvalidParams naming the --a2a-peer entry that is not NAME=URL or
/// NAME=self; the errors of OpenTokenSecret and of the self guard otherwise.
core::Result<std::unique_ptr<CallsSetup>> OpenCalls(const Config& config,
                                                    storage::ServerKeys* server_keys,
                                                    const std::string& listen_host, uint16_t port,
                                                    const std::string& public_base_url,
                                                    char** environ_entries);

}  // namespace a2ad::app
