#pragma once
// The hybrid v0.3 + v1.0 agent card (WIRE.md §2.4): v1.0 `supportedInterfaces` (JSONRPC,
// HTTP+JSON and, when it is on, GRPC for 1.0, then the same three for 0.3) plus the v0.3
// `url`/`preferredTransport`/`protocolVersion`/`additionalInterfaces` (JSONRPC, HTTP+JSON and
// GRPC entries), one skill per registered skill. Served at /.well-known/agent-card.json and
// /.well-known/agent.json.
//
// Security (A2A §4.5, WIRE.md §17): `securitySchemes` names the credentials the server reads
// (auth.hpp) — `apiKey` (the X-API-Key header), `bearer` (Authorization: Bearer, an API key or
// an OIDC access token), `oidc` (OpenID Connect, when an issuer is configured) and `mtls`
// (client certificates, when configured) — and `securityRequirements` says any one of them
// suffices. The hybrid form also carries each scheme in 0.3's `type`-discriminated spelling
// (merged into the same entry, as a2a-python's compatibility writer does) and 0.3's
// `security`. They are declared whether or not authentication is on yet: a server in
// development mode (no credential configured) ignores credentials, so declaring what it will
// read once one is configured misleads nobody.
//
// The extended card (CardAudience::kExtended; `GetExtendedAgentCard`,
// `agent/getAuthenticatedExtendedCard`) is the card plus the skills whose workflows are marked
// non-public (metadata.customProperties.a2a.public: false). A2A requires it to be asked for
// with a credential, so the card declares it (`capabilities.extendedAgentCard: true`, 0.3
// `supportsAuthenticatedExtendedCard: true`) when authentication is on at startup, and not in
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
};

/// kHybrid: the card above, readable by v0.3 and v1.0 clients. kV10: without the top-level
/// v0.3 fields (url, preferredTransport, protocolVersion, additionalInterfaces), which a
/// strict 1.0 schema refuses; its supportedInterfaces still list the 0.3 interfaces while
/// the server serves 0.3 (a 1.x SDK in legacy mode picks one from there). Served to
/// requests that send `A2A-Version: 1.x`, and to every request when the server serves 1.0
/// only (`--a2a-versions 1.0`, with serves_v03 false: then no 0.3 interface either).
enum class CardForm { kHybrid, kV10 };
/// kPublic: the skills of public workflows only. kExtended: every skill.
enum class CardAudience { kPublic, kExtended };

boost::json::object BuildAgentCard(const AgentCardConfig& config,
                                   const std::vector<tasks::SkillInfo>& skills,
                                   CardForm form = CardForm::kHybrid,
                                   CardAudience audience = CardAudience::kPublic);

}  // namespace a2ad::transport
