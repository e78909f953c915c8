#include "a2ad/transport/auth/client_cert_auth.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <fstream>
#include <optional>
#include <sstream>

#include "a2ad/protocol/json_parse.hpp"

namespace a2ad::transport {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

Error Invalid(std::string message) { return Error(ErrorCode::kInvalidParams, std::move(message)); }

// A non-empty string member `name` of `entry`; "" (and `error` set) otherwise.
std::string StringMember(const json::object& entry, std::string_view name, const std::string& at,
                         std::optional<Error>& error) {
  const json::value* v = entry.if_contains(name);
  if (!v || !v->is_string() || v->get_string().empty()) {
    if (!error) error = Invalid(at + ": \"" + std::string(name) + "\" must be a non-empty string");
    return {};
  }
  return std::string(v->get_string());
}

}  // namespace

core::Result<ClientCertMap> ClientCertMap::Parse(std::string_view text, std::string_view what) {
  auto parsed = protocol::ParseJson(text);
  if (!parsed) return Invalid(std::string(what) + ": " + parsed.error().message);
  if (!parsed->is_array())
    return Invalid(std::string(what) +
                   ": expected a JSON array of {\"subject\", \"tenant\", \"scopes\"}");
  ClientCertMap out;
  size_t i = 0;
  for (const json::value& v : parsed->get_array()) {
    const std::string at = std::string(what) + " entry " + std::to_string(i++);
    if (!v.is_object()) return Invalid(at + ": expected an object");
    const json::object& entry = v.get_object();
    for (const auto& member : entry)
      if (member.key() != "subject" && member.key() != "tenant" && member.key() != "scopes")
        return Invalid(at + ": unknown member \"" + std::string(member.key()) +
                       "\" (expected subject, tenant, scopes)");
    std::optional<Error> error;
    std::string subject = StringMember(entry, "subject", at, error);
    Entry e;
    e.tenant = StringMember(entry, "tenant", at, error);
    if (error) return *error;
    if (e.tenant.size() > 128) return Invalid(at + ": \"tenant\" is longer than 128 characters");
    const json::value* scopes = entry.if_contains("scopes");
    if (!scopes || !scopes->is_array())
      return Invalid(at + ": \"scopes\" must be an array of scope names");
    for (const json::value& s : scopes->get_array()) {
      if (!s.is_string() || s.get_string().empty())
        return Invalid(at + ": \"scopes\" must hold non-empty strings");
      e.scopes.emplace_back(s.get_string());
    }
    if (out.entries_.contains(subject))
      return Invalid(at + ": the subject \"" + subject + "\" is mapped twice");
    out.entries_.emplace(std::move(subject), std::move(e));
  }
  return out;
}

core::Result<ClientCertMap> ClientCertMap::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Invalid("--tls-client-map '" + path + "': cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  return Parse(ss.str(), "--tls-client-map '" + path + "'");
}

core::Result<protocol::Principal> ClientCertMap::PrincipalOf(std::string_view subject) const {
  auto it = entries_.find(subject);
  if (it == entries_.end())
    return Error(ErrorCode::kPermissionDenied,
                 "permission denied: the client certificate \"" + std::string(subject) +
                     "\" is not mapped to a tenant on this server (--tls-client-map)");
  protocol::Principal p;
  p.id = "cert:" + it->first;
  p.tenant = it->second.tenant;
  p.scopes = it->second.scopes;
  p.all_scopes = std::find(p.scopes.begin(), p.scopes.end(), "admin") != p.scopes.end();
  p.authenticated = true;
  return p;
}

}  // namespace a2ad::transport
