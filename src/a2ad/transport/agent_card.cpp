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
  // v1.0: ordered, first = preferred: the 1.0 interfaces, then (while 0.3 is served) the 0.3
  // ones. Both versions share one JSON-RPC URL (method names differ) and one gRPC address
  // (lf.a2a.v1 and a2a.v1 are two services); their REST bindings have a base each.
  const std::string rest03_url = c.base_url + c.rest03_path;
  auto iface = [](const std::string& url, const char* binding, const char* version) {
    return json::object{{"url", url}, {"protocolBinding", binding}, {"protocolVersion", version}};
  };
  json::array ifaces{iface(rpc_url, "JSONRPC", "1.0"),
                     iface(c.base_url + c.rest_path, "HTTP+JSON", "1.0")};
  // gRPC: host:port, no scheme (WIRE.md §2.3).
  if (!c.grpc_address.empty()) ifaces.push_back(iface(c.grpc_address, "GRPC", "1.0"));
  if (c.serves_v03) {
    ifaces.push_back(iface(rpc_url, "JSONRPC", "0.3"));
    ifaces.push_back(iface(rest03_url, "HTTP+JSON", "0.3"));
    if (!c.grpc_address.empty()) ifaces.push_back(iface(c.grpc_address, "GRPC", "0.3"));
  }
  card["supportedInterfaces"] = std::move(ifaces);
  if (form == CardForm::kHybrid && c.serves_v03) {
    // v0.3 compatibility fields: its clients pick url + preferredTransport, or an
    // additionalInterfaces entry of a transport they speak.
    card["url"] = rpc_url;
    card["preferredTransport"] = "JSONRPC";
    card["protocolVersion"] = "0.3.0";
    json::array additional{json::object{{"url", rpc_url}, {"transport", "JSONRPC"}},
                           json::object{{"url", rest03_url}, {"transport", "HTTP+JSON"}}};
    if (!c.grpc_address.empty())
      additional.push_back(json::object{{"url", c.grpc_address}, {"transport", "GRPC"}});
    card["additionalInterfaces"] = std::move(additional);
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
