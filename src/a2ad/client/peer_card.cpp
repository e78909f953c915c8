#include "a2ad/client/peer_card.hpp"

#include "a2ad/core/encoding.hpp"
#include "a2ad/protocol/card_signature.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::client {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using protocol::ObjOr;
using protocol::Str;

namespace {

bool IsJsonRpc(std::string_view binding) { return binding.empty() || binding == "JSONRPC"; }

json::array NormalizeParts(const json::value* parts) {
  json::array out;
  if (!parts || !parts->is_array()) return out;
  for (const auto& p : parts->get_array()) {
    if (!p.is_object()) continue;
    json::object part = p.get_object();
    part.erase("kind");
    out.push_back(std::move(part));
  }
  return out;
}

// The EC P-256 key named `kid` in a JWKS document.
core::Result<core::Es256PublicKey> KeyFromJwks(std::string_view body, const std::string& kid) {
  auto parsed = protocol::ParseJson(body);
  if (!parsed || !parsed.value().is_object())
    return Error(ErrorCode::kInvalidAgentResponse, "the JWKS is not a JSON object");
  const json::value* keys = parsed.value().get_object().if_contains("keys");
  if (keys && keys->is_array())
    for (const auto& k : keys->get_array()) {
      if (!k.is_object() || Str(k.get_object(), "kid") != kid) continue;
      if (Str(k.get_object(), "kty") != "EC" || Str(k.get_object(), "crv") != "P-256")
        return Error(ErrorCode::kInvalidAgentResponse,
                     "the key '" + kid + "' is not an EC P-256 key");
      auto x = core::Base64UrlDecode(Str(k.get_object(), "x"));
      auto y = core::Base64UrlDecode(Str(k.get_object(), "y"));
      if (!x || !y)
        return Error(ErrorCode::kInvalidAgentResponse, "the key '" + kid + "' is malformed");
      return core::Es256PublicKey::FromXY(*x, *y);
    }
  return Error(ErrorCode::kInvalidAgentResponse, "the JWKS has no key '" + kid + "'");
}

}  // namespace

core::Result<void> VerifyCardWithJwks(const json::object& card, std::string_view jwks,
                                      const std::string& kid) {
  auto key = KeyFromJwks(jwks, kid);
  if (!key) return std::move(key).error();
  return protocol::VerifyAgentCardSignature(card, key.value());
}

std::string PeerCardUrl(std::string url) {
  if (url.ends_with(".json")) return url;
  while (url.ends_with("/")) url.pop_back();
  return url + "/.well-known/agent-card.json";
}

core::Result<PeerCard> ReadPeerCard(const json::value& value) {
  if (!value.is_object())
    return Error(ErrorCode::kInvalidAgentResponse, "the agent card is not a JSON object");
  const json::object& card = value.get_object();
  PeerCard out;
  out.card = card;
  out.name = Str(card, "name");
  if (const json::value* s = card.if_contains("signatures"); s && s->is_array())
    out.is_signed = !s->get_array().empty();
  std::string url03, url10;
  if (const json::value* ifs = card.if_contains("supportedInterfaces"); ifs && ifs->is_array())
    for (const auto& i : ifs->get_array()) {
      if (!i.is_object()) continue;
      const json::object& o = i.get_object();
      if (Str(o, "url").empty()) continue;
      std::string_view v = Str(o, "protocolVersion");
      if (Str(o, "protocolBinding") == "HTTP+JSON") {
        if (v.starts_with("1") && out.rest_url.empty()) out.rest_url = Str(o, "url");
        continue;
      }
      if (Str(o, "protocolBinding") == "GRPC") {
        if (v.starts_with("1") && out.grpc_url.empty()) out.grpc_url = Str(o, "url");
        continue;
      }
      if (!IsJsonRpc(Str(o, "protocolBinding"))) continue;
      if (v.starts_with("1") && url10.empty()) url10 = Str(o, "url");
      if (v.starts_with("0.3") && url03.empty()) url03 = Str(o, "url");
    }
  if (!url10.empty() || !out.rest_url.empty() || !out.grpc_url.empty()) {
    out.version = "1.0";
    out.url = url10;
    if (!url10.empty()) return out;
    return out.rest_url.empty() ? PreferGrpc(std::move(out)) : PreferRest(std::move(out));
  }
  // The 0.3 shape.
  if (url03.empty() && Str(card, "protocolVersion").starts_with("0.")) {
    std::string_view preferred = Str(card, "preferredTransport");
    if (IsJsonRpc(preferred) && !Str(card, "url").empty()) url03 = Str(card, "url");
    if (const json::value* ifs = card.if_contains("additionalInterfaces"); ifs && ifs->is_array())
      for (const auto& i : ifs->get_array())
        if (url03.empty() && i.is_object() && Str(i.get_object(), "transport") == "JSONRPC")
          url03 = Str(i.get_object(), "url");
  }
  if (url03.empty())
    return Error(ErrorCode::kInvalidAgentResponse,
                 "the agent card of '" + out.name +
                     "' declares no interface a2ad speaks: JSON-RPC, HTTP+JSON or GRPC of A2A "
                     "1.x (supportedInterfaces), or JSON-RPC of 0.3 (url with preferredTransport "
                     "JSONRPC, additionalInterfaces)");
  out.url = std::move(url03);
  out.version = "0.3";
  return out;
}

PeerCard PreferGrpc(PeerCard card) {
  if (card.grpc_url.empty()) return card;
  card.url = card.grpc_url;
  card.version = "1.0";
  card.binding = "GRPC";
  return card;
}

PeerCard PreferRest(PeerCard card) {
  if (card.rest_url.empty()) return card;
  card.url = card.rest_url;
  card.version = "1.0";
  card.binding = "HTTP+JSON";
  return card;
}

std::string NormalizeState(const json::value& state) {
  if (!state.is_string()) return "unknown";
  std::string s(state.get_string());
  if (s.starts_with("TASK_STATE_")) {
    s = s.substr(11);
    for (char& c : s)
      c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (s == "cancelled") s = "canceled";
  for (const char* known : {"submitted", "working", "input-required", "auth-required", "completed",
                            "failed", "canceled", "rejected"})
    if (s == known) return s;
  return "unknown";
}

bool IsTerminalState(std::string_view s) {
  return s == "completed" || s == "failed" || s == "canceled" || s == "rejected";
}

bool AsksForInput(std::string_view s) { return s == "input-required" || s == "auth-required"; }

json::object NormalizeMessage(const json::object& m) {
  json::object out = m;
  out.erase("kind");
  out["parts"] = NormalizeParts(m.if_contains("parts"));
  std::string role(Str(m, "role"));
  if (role == "ROLE_AGENT") role = "agent";
  if (role == "ROLE_USER") role = "user";
  out["role"] = role;
  return out;
}

json::object NormalizeTask(const json::object& t) {
  json::object out = t;
  out.erase("kind");
  json::object status = ObjOr(t, "status");
  const json::value* st = status.if_contains("state");
  const std::string state = NormalizeState(st ? *st : json::value());
  status["state"] = state;
  if (auto* m = status.if_contains("message"); m && m->is_object())
    status["message"] = NormalizeMessage(m->get_object());
  out["status"] = std::move(status);
  out["state"] = state;
  json::array artifacts;
  if (const json::value* a = t.if_contains("artifacts"); a && a->is_array())
    for (const auto& x : a->get_array()) {
      if (!x.is_object()) continue;
      json::object art = x.get_object();
      art["parts"] = NormalizeParts(x.get_object().if_contains("parts"));
      artifacts.push_back(std::move(art));
    }
  out["artifacts"] = std::move(artifacts);
  out.erase("history");  // the peer's history is its own; the node keeps the result
  return out;
}

}  // namespace a2ad::client
