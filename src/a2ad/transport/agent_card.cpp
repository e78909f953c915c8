#include "a2ad/transport/agent_card.hpp"

namespace a2ad::transport {
namespace json = boost::json;

namespace {
json::array Strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}
}  // namespace

json::object BuildAgentCard(const AgentCardConfig& c, const std::vector<tasks::SkillInfo>& skills,
                            CardForm form) {
  const std::string rpc_url = c.base_url + c.jsonrpc_path;
  json::object card;
  card["name"] = c.name;
  card["description"] = c.description;
  card["version"] = c.version;
  // v1.0: ordered, first = preferred. Both versions share one JSON-RPC URL (method names differ).
  card["supportedInterfaces"] = json::array{
      json::object{{"url", rpc_url}, {"protocolBinding", "JSONRPC"}, {"protocolVersion", "1.0"}},
      json::object{{"url", c.base_url + c.rest_path},
                   {"protocolBinding", "HTTP+JSON"},
                   {"protocolVersion", "1.0"}},
      json::object{{"url", rpc_url}, {"protocolBinding", "JSONRPC"}, {"protocolVersion", "0.3"}}};
  json::array& ifaces = card["supportedInterfaces"].as_array();
  if (!c.serves_v03) ifaces.erase(ifaces.end() - 1);  // the 0.3 JSON-RPC entry (last)
  if (!c.grpc_address.empty())                        // gRPC: host:port, no scheme (WIRE.md §2.3)
    ifaces.emplace(ifaces.begin() + 2, json::object{{"url", c.grpc_address},
                                                    {"protocolBinding", "GRPC"},
                                                    {"protocolVersion", "1.0"}});
  if (form == CardForm::kHybrid && c.serves_v03) {
    // v0.3 compatibility fields.
    card["url"] = rpc_url;
    card["preferredTransport"] = "JSONRPC";
    card["protocolVersion"] = "0.3.0";
    card["additionalInterfaces"] =
        json::array{json::object{{"url", rpc_url}, {"transport", "JSONRPC"}}};
  }
  card["capabilities"] = json::object{{"streaming", c.streaming},
                                      {"pushNotifications", c.push_notifications},
                                      {"extendedAgentCard", false}};
  if (!c.extensions.empty()) card["capabilities"].as_object()["extensions"] = c.extensions;
  card["defaultInputModes"] = json::array{"text/plain", "application/json"};
  card["defaultOutputModes"] = json::array{"text/plain", "application/json"};
  json::array sk;
  for (const auto& s : skills) {
    json::object o;
    o["id"] = s.id;
    o["name"] = s.name.empty() ? s.id : s.name;
    o["description"] = s.description;
    o["tags"] = Strings(s.tags);
    if (!s.examples.empty()) o["examples"] = Strings(s.examples);
    sk.emplace_back(std::move(o));
  }
  card["skills"] = std::move(sk);
  return card;
}

}  // namespace a2ad::transport
