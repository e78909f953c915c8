#include "a2ad/transport/openwop/openwop_discovery.hpp"

#include <algorithm>
#include <boost/json.hpp>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::transport {
namespace json = boost::json;

extern const std::string_view kOpenApiDocument;  // openapi_doc.cpp (generated)

// The discovery's a2a block (RFC 0100), with the versions served (RFC 0152): the same set the
// agent card's supportedInterfaces[].protocolVersion holds, preferred first, and a profile per
// version (a2a-1.0, a2a-0.3-legacy).
namespace {

json::object A2aBlock(const OpenwopApiOptions& o) {
  json::array versions, profiles;
  for (const auto& v : o.a2a_versions) {
    versions.push_back(json::value(v));
    profiles.push_back(json::value(v == "0.3" ? "a2a-0.3-legacy" : "a2a-" + v));
  }
  // The well-known card (RFC 0152 §B, openwop#1028): header-less it is the 0.3 card while
  // 0.3 is served, with `A2A-Version: 1.0` the 1.0 card (agent_card.hpp).
  json::object a2a{{"supported", true},
                   {"agentCardUrl", o.base_url + "/.well-known/agent-card.json"},
                   {"streaming", o.streaming},
                   {"pushNotifications", o.push_notifications},
                   {"durableTasks", true},
                   {"protocolVersions", std::move(versions)},
                   {"profiles", std::move(profiles)}};
  if (!o.a2a_versions.empty()) a2a["preferredVersion"] = o.a2a_versions.front();
  return a2a;
}

}  // namespace

json::object Discovery(const OpenwopApiOptions& o, const std::vector<tasks::SkillInfo>& skills) {
  json::array fixtures;
  for (const auto& s : skills)
    if (s.id.starts_with("conformance-")) fixtures.push_back(json::value(s.id));
  return json::object{
      {"protocolVersion", "1.0"},
      // The clarification interrupt is the one envelope kind the engine acts on (a node asks,
      // the run waits in waiting-input, the answers resume it): the openwop-interrupts
      // profile's predicate. a2ad generates no AI envelopes, so nothing else is listed.
      {"supportedEnvelopes", json::array{"clarification.request"}},
      {"schemaVersions", json::object()},
      {"limits", json::object{{"clarificationRounds", 3},
                              {"schemaRounds", 2},
                              {"envelopesPerTurn", 5},
                              {"maxNodeExecutions", 100},
                              {"maxRequestBodyBytes", o.body_limit}}},
      {"implementation",
       json::object{{"name", "a2ad"}, {"version", o.version}, {"vendor", "a2ad"}}},
      {"engineVersion", 1},
      {"eventLogSchemaVersion", 2},
      {"supportedTransports", json::array{"rest", "a2a"}},
      {"fixtures", std::move(fixtures)},
      {"subWorkflow", json::object{{"inputMapping", true}}},
      // RFC 0104: approverGroupRefs / approverRoleRefs are enforced at resolve time
      // (workflow/approval_policy.hpp); `audience` is passed through, not honored.
      {"interrupt",
       json::object{{"approverRouting", json::object{{"supported", true},
                                                     {"refKinds", json::array{"group", "role"}},
                                                     {"audience", false}}}}},
      {"webhooks", json::object{{"supported", o.webhooks},
                                {"signatureAlgorithms", json::array{"v1"}},
                                {"durable", o.webhooks}}},
      {"a2a", A2aBlock(o)},
      // RFC 0011: a caller that presents a credential sees the families it can use.
      {"discovery",
       json::object{{"authScoped", json::object{{"supported", true}, {"mode", "same-endpoint"}}}}}};
}

json::object ScopedDiscovery(json::object discovery, const protocol::CallContext& caller) {
  const auto has = [&](std::initializer_list<const char*> any_of) {
    for (const char* scope : any_of)
      if (caller.principal.all_scopes ||
          std::find(caller.principal.scopes.begin(), caller.principal.scopes.end(), scope) !=
              caller.principal.scopes.end())
        return true;
    return false;
  };
  // A family whose operations need a scope the caller has none of is left out; what stays is
  // the public view's (never more than a broader credential sees: no authorization oracle).
  if (!has({"push:manage"})) discovery.erase("webhooks");
  if (!has({"tasks:read", "tasks:write"})) discovery.erase("a2a");
  if (!has({"interrupts:resolve", "runs:write"})) discovery.erase("interrupt");
  if (!has({"runs:write"})) {
    discovery.erase("subWorkflow");
    discovery.erase("fixtures");
  }
  return discovery;
}

// The OpenAPI 3.1 description (openapi.json, compiled in), with this server's version and
// base URL.
std::string OpenApi(const OpenwopApiOptions& o) {
  auto doc = protocol::ParseJson(kOpenApiDocument);
  if (!doc || !doc->is_object()) return std::string(kOpenApiDocument);  // tests keep it valid
  json::object& d = doc->as_object();
  if (auto* info = d.if_contains("info"); info && info->is_object())
    info->as_object()["version"] = o.version;
  d["servers"] = json::array{json::object{{"url", o.base_url}}};
  return protocol::SerializeJson(*doc);
}

}  // namespace a2ad::transport
