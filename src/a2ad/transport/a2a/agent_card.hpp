#pragma once
// The agent card in the two shapes A2A has (WIRE.md §2.4), one skill per registered skill,
// served at /.well-known/agent-card.json and /.well-known/agent.json:
//   kV10  supportedInterfaces (JSONRPC, HTTP+JSON and, when it is on, GRPC for 1.0, then the
//         same three for 0.3 while 0.3 is served), capabilities.extendedAgentCard,
//         securitySchemes in the 1.0 oneof wrappers and securityRequirements; served to a
//         request that sends `A2A-Version: 1.x` (header or query parameter), and to every
//         request when the server serves 1.0 only (`--a2a-versions 1.0`);
//   kV03  url, preferredTransport, protocolVersion and additionalInterfaces, the 0.3 spelling
//         of the schemes with 0.3's `security`, supportsAuthenticatedExtendedCard; served to a
//         request without A2A-Version (A2A 1.0 §3.6.1: a header-less request is 0.3; OpenWOP
//         RFC 0152's receiver rule, openwop#1028: "a card with both shapes is neither"). The
//         1.x SDKs send the header when they fetch the card; the 0.3 ones read this one.
//
// Security (A2A §4.5, WIRE.md §17): `securitySchemes` names the credentials the server reads
// (auth.hpp) — `apiKey` (the X-API-Key header), `bearer` (Authorization: Bearer, an API key or
// an OIDC access token), `oidc` (OpenID Connect, when an issuer is configured) and `mtls`
// (client certificates, when configured) — and the requirements say any one of them suffices.
// A server in development mode (no credential configured: it reads none) declares none
// (AgentCardConfig::declare_security); the router serves the declaring cards as soon as the
// first key exists (router.hpp SetCards).
//
// The extended card (CardAudience::kExtended; `GetExtendedAgentCard`,
// `agent/getAuthenticatedExtendedCard`) is the card plus the skills whose workflows are marked
// non-public (metadata.customProperties.a2a.public: false). A2A requires it to be asked for
// with a credential, so the card declares it (`capabilities.extendedAgentCard: true`, 0.3
// `supportsAuthenticatedExtendedCard: true`) when authentication is on, and not in
// development mode, where nobody can authenticate.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <string>
#include <vector>

#include "a2ad/tasks/task_service.hpp"

namespace a2ad::transport {

struct AgentCardConfig {
  std::string name = "a2ad";
  std::string description =
      "Durable, human-in-the-loop OpenWOP workflows as A2A tasks: every workflow is a skill, "
      "every run is a task that survives disconnects and restarts.";
  std::string version;   // the agent's own version
  std::string base_url;  // e.g. "http://127.0.0.1:8080" (no trailing slash)
  std::string jsonrpc_path = "/v1/a2a";
  std::string rest_path = "/a2a/rest";      // the A2A 1.0 HTTP+JSON binding (a2a_rest.hpp)
  std::string rest03_path = "/a2a/rest03";  // the A2A 0.3 HTTP+JSON binding
  bool streaming = true;
  bool push_notifications = false;
  /// host:port of the gRPC binding; "" when it is off.
  std::string grpc_address;
  /// false when the server serves A2A 1.0 only: no 0.3 interface is listed.
  bool serves_v03 = true;
  /// capabilities.extensions (ExtensionRegistry::CardEntries); left out when empty.
  boost::json::array extensions;
  /// The OpenID Connect discovery URL of the configured issuer; "" when OIDC is off.
  std::string oidc_discovery_url;
  /// Client certificates are configured (mutual TLS).
  bool mtls = false;
  /// Authentication is on: the extended card is declared.
  bool extended_card = false;
  /// The security schemes and requirements are declared (authentication is on).
  bool declare_security = true;
};

/// The card's shape (above).
enum class CardForm { kV03, kV10 };
/// kPublic: the skills of public workflows only. kExtended: every skill.
enum class CardAudience { kPublic, kExtended };

boost::json::object BuildAgentCard(const AgentCardConfig& config,
                                   const std::vector<tasks::SkillInfo>& skills,
                                   CardForm form = CardForm::kV10,
                                   CardAudience audience = CardAudience::kPublic);

}  // namespace a2ad::transport
