#pragma once
// The hybrid v0.3 + v1.0 agent card (WIRE.md §2.4): v1.0 `supportedInterfaces` (JSONRPC,
// HTTP+JSON and, when it is on, GRPC for 1.0, then the same three for 0.3) plus the v0.3
// `url`/`preferredTransport`/`protocolVersion`/`additionalInterfaces` (JSONRPC, HTTP+JSON and
// GRPC entries), one skill per registered skill. Served at /.well-known/agent-card.json and
// /.well-known/agent.json.
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
};

/// kHybrid: the card above, readable by v0.3 and v1.0 clients. kV10: without the top-level
/// v0.3 fields (url, preferredTransport, protocolVersion, additionalInterfaces), which a
/// strict 1.0 schema refuses; its supportedInterfaces still list the 0.3 interfaces while
/// the server serves 0.3 (a 1.x SDK in legacy mode picks one from there). Served to
/// requests that send `A2A-Version: 1.x`, and to every request when the server serves 1.0
/// only (`--a2a-versions 1.0`, with serves_v03 false: then no 0.3 interface either).
enum class CardForm { kHybrid, kV10 };

boost::json::object BuildAgentCard(const AgentCardConfig& config,
                                   const std::vector<tasks::SkillInfo>& skills,
                                   CardForm form = CardForm::kHybrid);

}  // namespace a2ad::transport
