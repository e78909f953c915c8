#include "a2ad/transport/a2a/agent_card.hpp"

namespace a2ad::transport {
namespace json = boost::json;

namespace {
json::array Strings(const std::vector<std::string>& v) {
  json::array a;
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

// One scheme: its v1.0 oneof wrapper and, in the hybrid form, its 0.3 spelling beside it.
struct Scheme {
  const char* name;
  const char* wrapper;
  json::object v10;
  json::object v03;
};

std::vector<Scheme> Schemes(const AgentCardConfig& c) {
  std::vector<Scheme> out;
  // Bearer first: the usual way, and what clients that try only the first scheme send.
  const char* bearer_about = c.oidc_discovery_url.empty()
                                 ? "An a2ad API key as a bearer token."
                                 : "An a2ad API key, or an access token of the OIDC issuer.";
  out.push_back({"bearer",
                 "httpAuthSecurityScheme",
                 {{"scheme", "Bearer"}, {"description", bearer_about}},
                 {{"type", "http"}, {"scheme", "bearer"}, {"description", bearer_about}}});
  out.push_back({"apiKey",
                 "apiKeySecurityScheme",
                 {{"location", "header"},
                  {"name", "X-API-Key"},
                  {"description", "An a2ad API key (a2ad keys create)."}},
                 {{"type", "apiKey"},
                  {"in", "header"},
                  {"name", "X-API-Key"},
                  {"description", "An a2ad API key (a2ad keys create)."}}});
  if (!c.oidc_discovery_url.empty())
    out.push_back({"oidc",
                   "openIdConnectSecurityScheme",
                   {{"openIdConnectUrl", c.oidc_discovery_url}},
                   {{"type", "openIdConnect"}, {"openIdConnectUrl", c.oidc_discovery_url}}});
  if (c.mtls)
    out.push_back(
        {"mtls",
         "mtlsSecurityScheme",
         {{"description", "A client certificate of the configured CA."}},
         {{"type", "mutualTLS"}, {"description", "A client certificate of the configured CA."}}});
  return out;
}

// What the server reads, in the form's spelling (none in development mode: it reads none).
void AddSecurity(json::object& card, const AgentCardConfig& c, CardForm form) {
  if (!c.declare_security) return;
  json::object schemes;
  json::array requirements;  // v1.0: any one of them (each one scheme and one scope)
  json::array security;      // v0.3
  // The A2A methods need one of these scopes (auth.hpp; `admin` grants each): a requirement
  // names the scope with its scheme, so no requirement is an empty list, which the SDK's
  // canonicalization would drop from the signed payload (card_signature.hpp).
  static constexpr const char* kA2aScopes[] = {"tasks:read", "tasks:write", "push:manage"};
  for (Scheme& s : Schemes(c)) {
    for (const char* scope : kA2aScopes) {
      requirements.push_back(json::object{
          {"schemes", json::object{{s.name, json::object{{"list", json::array{scope}}}}}}});
      security.push_back(json::object{{s.name, json::array{scope}}});
    }
    if (form == CardForm::kV03)
      schemes[s.name] = std::move(s.v03);
    else
      schemes[s.name] = json::object{{s.wrapper, std::move(s.v10)}};
  }
  card["securitySchemes"] = std::move(schemes);
  if (form == CardForm::kV03)
    card["security"] = std::move(security);
  else
    card["securityRequirements"] = std::move(requirements);
}
}  // namespace

json::object BuildAgentCard(const AgentCardConfig& c, const std::vector<tasks::SkillInfo>& skills,
                            CardForm form, CardAudience audience) {
  const std::string rpc_url = c.base_url + c.jsonrpc_path;
  const std::string rest03_url = c.base_url + c.rest03_path;
  json::object card;
  card["name"] = c.name;
  card["description"] = c.description;
  card["version"] = c.version;
  if (form == CardForm::kV03) {
    // 0.3: url + preferredTransport, or an additionalInterfaces entry of a transport its
    // clients speak.
    card["url"] = rpc_url;
    card["preferredTransport"] = "JSONRPC";
    card["protocolVersion"] = "0.3.0";
    json::array additional{json::object{{"url", rpc_url}, {"transport", "JSONRPC"}},
                           json::object{{"url", rest03_url}, {"transport", "HTTP+JSON"}}};
    if (!c.grpc_address.empty())  // gRPC: host:port, no scheme (WIRE.md §2.3)
      additional.push_back(json::object{{"url", c.grpc_address}, {"transport", "GRPC"}});
    card["additionalInterfaces"] = std::move(additional);
    if (c.extended_card) card["supportsAuthenticatedExtendedCard"] = true;
    json::object caps{{"streaming", c.streaming}, {"pushNotifications", c.push_notifications}};
    if (!c.extensions.empty()) caps["extensions"] = c.extensions;
    card["capabilities"] = std::move(caps);
  } else {
    // 1.0: ordered, first = preferred: the 1.0 interfaces, then (while 0.3 is served) the 0.3
    // ones. Both versions share one JSON-RPC URL (method names differ) and one gRPC address
    // (lf.a2a.v1 and a2a.v1 are two services); their REST bindings have a base each.
    auto iface = [](const std::string& url, const char* binding, const char* version) {
      return json::object{
          {"url", url}, {"protocolBinding", binding}, {"protocolVersion", version}};
    };
    json::array ifaces{iface(rpc_url, "JSONRPC", "1.0"),
                       iface(c.base_url + c.rest_path, "HTTP+JSON", "1.0")};
    if (!c.grpc_address.empty()) ifaces.push_back(iface(c.grpc_address, "GRPC", "1.0"));
    if (c.serves_v03) {
      ifaces.push_back(iface(rpc_url, "JSONRPC", "0.3"));
      ifaces.push_back(iface(rest03_url, "HTTP+JSON", "0.3"));
      if (!c.grpc_address.empty()) ifaces.push_back(iface(c.grpc_address, "GRPC", "0.3"));
    }
    card["supportedInterfaces"] = std::move(ifaces);
    json::object caps{{"streaming", c.streaming},
                      {"pushNotifications", c.push_notifications},
                      {"extendedAgentCard", c.extended_card}};
    if (!c.extensions.empty()) caps["extensions"] = c.extensions;
    card["capabilities"] = std::move(caps);
  }
  AddSecurity(card, c, form);
  card["defaultInputModes"] = json::array{"text/plain", "application/json"};
  card["defaultOutputModes"] = json::array{"text/plain", "application/json"};
  json::array sk;
  for (const auto& s : skills) {
    if (!s.is_public && audience == CardAudience::kPublic) continue;
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
