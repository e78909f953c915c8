#pragma once
// The hybrid v0.3 + v1.0 agent card (WIRE.md §2.4): v1.0 `supportedInterfaces` plus the
// v0.3 `url`/`preferredTransport`/`protocolVersion`/`additionalInterfaces`, one skill per
// registered skill. Served at /.well-known/agent-card.json and /.well-known/agent.json.
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
  std::string rest_path = "/a2a/rest";  // the A2A 1.0 HTTP+JSON binding (a2a_rest.hpp)
  bool streaming = true;
  bool push_notifications = false;
  /// capabilities.extensions (ExtensionRegistry::CardEntries); left out when empty.
  boost::json::array extensions;
};

boost::json::object BuildAgentCard(const AgentCardConfig& config,
                                   const std::vector<tasks::SkillInfo>& skills);

}  // namespace a2ad::transport
