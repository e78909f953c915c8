#include "a2ad/protocol/card_signature.hpp"

#include <boost/json/array.hpp>
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "a2ad/protocol/jcs.hpp"
#include "a2ad/protocol/jws.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

Error Refuse(const std::string& path, std::string_view why) {
  return Error(ErrorCode::kInvalidParams, "card signature: " + path + " " + std::string(why),
               {{"field", path}});
}

// A member as the proto reader sees it: absent and null are both "not set".
const json::value* Member(const json::object& in, std::string_view name) {
  const json::value* v = in.if_contains(name);
  return v && !v->is_null() ? v : nullptr;
}

// One message of the v1.0 proto, read from `in` into `out` (the proto's JSON writer: only
// known fields, defaults left out). Each Copy* call handles one field.
class ProtoMessage {
 public:
  ProtoMessage(const json::object& in, std::string path) : in_(in), path_(std::move(path)) {}

  // Spellings the SDK's reader also accepts (proto field names); refused, not modelled.
  Result<void> RefuseAliases(std::initializer_list<std::string_view> names) const {
    for (std::string_view name : names)
      if (in_.contains(name))
        return Refuse(Path(name), "(the proto field name) is not normalized; use camelCase");
    return core::Ok{};
  }
  // v1.0 fields the normalization does not model: refused when set to anything but empty.
  Result<void> RefuseUnmodelled(std::initializer_list<std::string_view> names) const {
    for (std::string_view name : names) {
      const json::value* v = Member(in_, name);
      const bool empty = !v || (v->is_array() && v->get_array().empty()) ||
                         (v->is_object() && v->get_object().empty());
      if (!empty) return Refuse(Path(name), "is not normalized for signing (not supported)");
    }
    return core::Ok{};
  }

  // string: left out when "" (proto3 default); `optional string`: kept when set.
  Result<void> CopyString(std::string_view name, bool optional = false) {
    const json::value* v = Member(in_, name);
    if (!v) return core::Ok{};
    if (!v->is_string()) return Refuse(Path(name), "must be a string");
    if (optional || !v->get_string().empty()) out_[name] = *v;
    return core::Ok{};
  }
  // bool: left out when false; `optional bool`: kept when set.
  Result<void> CopyBool(std::string_view name, bool optional = false) {
    const json::value* v = Member(in_, name);
    if (!v) return core::Ok{};
    if (!v->is_bool()) return Refuse(Path(name), "must be true or false");
    if (optional || v->get_bool()) out_[name] = *v;
    return core::Ok{};
  }
  // repeated string: left out when empty.
  Result<void> CopyStrings(std::string_view name) {
    const json::value* v = Member(in_, name);
    if (!v) return core::Ok{};
    if (!v->is_array()) return Refuse(Path(name), "must be a list of strings");
    for (const auto& item : v->get_array())
      if (!item.is_string()) return Refuse(Path(name), "must be a list of strings");
    if (!v->get_array().empty()) out_[name] = *v;
    return core::Ok{};
  }
  // A google.protobuf.Struct: kept as it is (step 3 cleans it).
  Result<void> CopyStruct(std::string_view name) {
    const json::value* v = Member(in_, name);
    if (!v) return core::Ok{};
    if (!v->is_object()) return Refuse(Path(name), "must be an object");
    out_[name] = *v;
    return core::Ok{};
  }
  using Reader = std::function<Result<json::object>(const json::object&, std::string)>;
  // A message field: kept when set (even when all its fields are defaults: step 3 decides).
  Result<void> CopyMessage(std::string_view name, const Reader& read) {
    const json::value* v = Member(in_, name);
    if (!v) return core::Ok{};
    if (!v->is_object()) return Refuse(Path(name), "must be an object");
    auto m = read(v->get_object(), Path(name));
    if (!m) return std::move(m).error();
    out_[name] = std::move(m).value();
    return core::Ok{};
  }
  // repeated message: left out when empty.
  Result<void> CopyMessages(std::string_view name, const Reader& read) {
    const json::value* v = Member(in_, name);
    if (!v) return core::Ok{};
    if (!v->is_array()) return Refuse(Path(name), "must be a list of objects");
    json::array items;
    for (size_t i = 0; i < v->get_array().size(); ++i) {
      const json::value& item = v->get_array()[i];
      const std::string item_path = Path(name) + "[" + std::to_string(i) + "]";
      if (!item.is_object()) return Refuse(item_path, "must be an object");
      auto m = read(item.get_object(), item_path);
      if (!m) return std::move(m).error();
      items.emplace_back(std::move(m).value());
    }
    if (!items.empty()) out_[name] = std::move(items);
    return core::Ok{};
  }

  // map<string, message>: left out when empty.
  Result<void> CopyMessageMap(std::string_view name, const Reader& read) {
    const json::value* v = Member(in_, name);
    if (!v) return core::Ok{};
    if (!v->is_object()) return Refuse(Path(name), "must be an object");
    json::object entries;
    for (const auto& [key, item] : v->get_object()) {
      const std::string item_path = Path(name) + "." + std::string(key);
      if (!item.is_object()) return Refuse(item_path, "must be an object");
      auto m = read(item.get_object(), item_path);
      if (!m) return std::move(m).error();
      entries[key] = std::move(m).value();
    }
    if (!entries.empty()) out_[name] = std::move(entries);
    return core::Ok{};
  }
  // A oneof of message fields: at most one of `names` may be set.
  Result<void> CopyOneOf(std::initializer_list<std::pair<std::string_view, Reader>> cases) {
    std::string_view set;
    for (const auto& [name, read] : cases) {
      if (!Member(in_, name)) continue;
      if (!set.empty())
        return Refuse(Path(name), "is set beside " + std::string(set) + " (a oneof)");
      set = name;
      if (auto r = CopyMessage(name, read); !r) return r;
    }
    return core::Ok{};
  }

  json::object Take() { return std::move(out_); }

 private:
  std::string Path(std::string_view name) const { return path_ + "." + std::string(name); }
  const json::object& in_;
  std::string path_;
  json::object out_;
};

// Runs the Copy* steps in order and stops at the first refusal.
Result<json::object> Read(ProtoMessage& m,
                          std::initializer_list<std::function<Result<void>()>> steps) {
  for (const auto& step : steps)
    if (auto r = step(); !r) return std::move(r).error();
  return m.Take();
}

Result<json::object> ReadInterface(const json::object& in, std::string path) {
  ProtoMessage m(in, std::move(path));
  return Read(
      m, {[&] {
            return m.RefuseAliases({"protocol_binding", "protocol_version"});
          },
          [&] { return m.CopyString("url"); }, [&] { return m.CopyString("protocolBinding"); },
          [&] { return m.CopyString("tenant"); }, [&] { return m.CopyString("protocolVersion"); }});
}

Result<json::object> ReadProvider(const json::object& in, std::string path) {
  ProtoMessage m(in, std::move(path));
  return Read(m,
              {[&] { return m.CopyString("url"); }, [&] { return m.CopyString("organization"); }});
}

Result<json::object> ReadExtension(const json::object& in, std::string path) {
  ProtoMessage m(in, std::move(path));
  return Read(m, {[&] { return m.CopyString("uri"); }, [&] { return m.CopyString("description"); },
                  [&] { return m.CopyBool("required"); }, [&] { return m.CopyStruct("params"); }});
}

Result<json::object> ReadCapabilities(const json::object& in, std::string path) {
  ProtoMessage m(in, std::move(path));
  return Read(m, {[&] {
                    return m.RefuseAliases({"push_notifications", "extended_agent_card"});
                  },
                  [&] { return m.CopyBool("streaming", true); },
                  [&] { return m.CopyBool("pushNotifications", true); },
                  [&] { return m.CopyMessages("extensions", ReadExtension); },
                  [&] { return m.CopyBool("extendedAgentCard", true); }});
}

// The v1.0 SecurityScheme oneof (WIRE.md §17) less OAuth2, which a2ad does not declare.
Result<json::object> ReadSecurityScheme(const json::object& in, std::string path) {
  auto described = [](std::initializer_list<std::string_view> strings,
                      std::initializer_list<std::string_view> aliases) {
    std::vector<std::string_view> fields(strings), refused(aliases);
    return [fields, refused](const json::object& o, std::string p) -> Result<json::object> {
      ProtoMessage m(o, std::move(p));
      for (std::string_view a : refused)
        if (auto r = m.RefuseAliases({a}); !r) return std::move(r).error();
      for (std::string_view f : fields)
        if (auto r = m.CopyString(f); !r) return std::move(r).error();
      return m.Take();
    };
  };
  ProtoMessage m(in, std::move(path));
  return Read(
      m, {[&] {
            return m.RefuseAliases({"api_key_security_scheme", "http_auth_security_scheme",
                                    "oauth2_security_scheme", "open_id_connect_security_scheme",
                                    "mtls_security_scheme"});
          },
          [&] { return m.RefuseUnmodelled({"oauth2SecurityScheme"}); },
          [&] {
            return m.CopyOneOf(
                {{"apiKeySecurityScheme", described({"description", "location", "name"}, {})},
                 {"httpAuthSecurityScheme",
                  described({"description", "scheme", "bearerFormat"}, {"bearer_format"})},
                 {"openIdConnectSecurityScheme",
                  described({"description", "openIdConnectUrl"}, {"open_id_connect_url"})},
                 {"mtlsSecurityScheme", described({"description"}, {})}});
          }});
}

Result<json::object> ReadStringList(const json::object& in, std::string path) {
  ProtoMessage m(in, std::move(path));
  return Read(m, {[&] { return m.CopyStrings("list"); }});
}

Result<json::object> ReadSecurityRequirement(const json::object& in, std::string path) {
  ProtoMessage m(in, std::move(path));
  return Read(m, {[&] { return m.CopyMessageMap("schemes", ReadStringList); }});
}

Result<json::object> ReadSkill(const json::object& in, std::string path) {
  ProtoMessage m(in, std::move(path));
  return Read(
      m, {[&] {
            return m.RefuseAliases({"input_modes", "output_modes", "security_requirements"});
          },
          [&] { return m.RefuseUnmodelled({"securityRequirements"}); },
          [&] { return m.CopyString("id"); }, [&] { return m.CopyString("name"); },
          [&] { return m.CopyString("description"); }, [&] { return m.CopyStrings("tags"); },
          [&] { return m.CopyStrings("examples"); }, [&] { return m.CopyStrings("inputModes"); },
          [&] { return m.CopyStrings("outputModes"); }});
}

Result<json::object> ReadCard(const json::object& in) {
  ProtoMessage m(in, "card");
  return Read(
      m, {[&] {
            return m.RefuseAliases({"supported_interfaces", "documentation_url", "security_schemes",
                                    "security_requirements", "default_input_modes",
                                    "default_output_modes", "icon_url"});
          },
          [&] { return m.CopyString("name"); }, [&] { return m.CopyString("description"); },
          [&] { return m.CopyMessages("supportedInterfaces", ReadInterface); },
          [&] { return m.CopyMessage("provider", ReadProvider); },
          [&] { return m.CopyString("version"); },
          [&] { return m.CopyString("documentationUrl", true); },
          [&] { return m.CopyMessage("capabilities", ReadCapabilities); },
          [&] { return m.CopyMessageMap("securitySchemes", ReadSecurityScheme); },
          [&] { return m.CopyMessages("securityRequirements", ReadSecurityRequirement); },
          [&] { return m.CopyStrings("defaultInputModes"); },
          [&] { return m.CopyStrings("defaultOutputModes"); },
          [&] { return m.CopyMessages("skills", ReadSkill); },
          [&] { return m.CopyString("iconUrl", true); }});
  // `signatures` is not read: step 2.
}

// Step 3 (the SDK's cleanEmpty): false when `v` is "", null, or a list or object that is
// empty once cleaned; `v` is cleaned in place.
bool KeepCleaned(json::value& v) {
  if (v.is_null()) return false;
  if (v.is_string()) return !v.get_string().empty();
  if (v.is_array()) {
    json::array& a = v.get_array();
    json::array kept;
    for (auto& item : a)
      if (KeepCleaned(item)) kept.emplace_back(std::move(item));
    a = std::move(kept);
    return !a.empty();
  }
  if (v.is_object()) {
    json::object& o = v.get_object();
    for (auto it = o.begin(); it != o.end();)
      it = KeepCleaned(it->value()) ? std::next(it) : o.erase(it);
    return !o.empty();
  }
  return true;  // numbers (0 too) and booleans (false too)
}

}  // namespace

namespace {

// A 0.3 card (its top-level url, no supportedInterfaces): a2ad's 0.3 form (agent_card.hpp).
bool IsV03Card(const json::object& card) {
  return card.contains("url") && !card.contains("supportedInterfaces");
}

json::object WithoutSignatures(const json::object& card) {
  json::object copy = card;
  copy.erase("signatures");
  return copy;
}

}  // namespace

Result<json::object> CardSigningView(const json::object& card, CardCanonicalization how) {
  auto read = ReadCard(card);
  if (!read) return read;
  json::value view = std::move(read).value();
  if (how == CardCanonicalization::kSpec) return std::move(view.get_object());
  if (!KeepCleaned(view)) return json::object();
  return std::move(view.get_object());
}

Result<std::string> CardSigningPayload(const json::object& card, CardCanonicalization how) {
  if (IsV03Card(card)) return protocol::CanonicalJson(WithoutSignatures(card));
  auto view = CardSigningView(card, how);
  if (!view) return std::move(view).error();
  return protocol::CanonicalJson(*view);
}

Result<json::array> SignAgentCard(const json::object& card, const core::Es256PrivateKey& key,
                                  std::string_view jku) {
  json::object header{
      {"alg", "ES256"}, {"typ", "JOSE"}, {"kid", protocol::JwkThumbprint(key.public_key())}};
  if (!jku.empty()) header["jku"] = jku;
  json::array entries;
  std::string signed_payload;
  for (const auto how : {CardCanonicalization::kSpec, CardCanonicalization::kSdk}) {
    auto payload = CardSigningPayload(card, how);
    if (!payload) return std::move(payload).error();
    if (*payload == signed_payload) continue;  // the two read the card alike: one entry
    auto jws = protocol::SignDetachedJws(header, *payload, key);
    if (!jws) return std::move(jws).error();
    entries.push_back(
        json::object{{"protected", jws->protected_header}, {"signature", jws->signature}});
    signed_payload = std::move(payload).value();
  }
  return entries;
}

Result<void> AttachCardSignature(json::object& card, const core::Es256PrivateKey& key,
                                 std::string_view jku) {
  auto entries = SignAgentCard(card, key, jku);
  if (!entries) return std::move(entries).error();
  card["signatures"] = std::move(entries).value();
  for (const auto how : {CardCanonicalization::kSpec, CardCanonicalization::kSdk})
    if (auto r = VerifyAgentCardSignature(card, key.public_key(), how); !r)
      return Error(ErrorCode::kInternal,
                   "card signature: the signed card does not verify: " + r.error().message);
  return core::Ok{};
}

Result<void> VerifyAgentCardSignature(const json::object& card, const core::Es256PublicKey& key,
                                      std::optional<CardCanonicalization> only) {
  const json::value* sigs = card.if_contains("signatures");
  if (!sigs || !sigs->is_array() || sigs->get_array().empty())
    return Error(ErrorCode::kInvalidParams, "the card has no signatures");
  std::vector<std::string> payloads;
  for (const auto how : {CardCanonicalization::kSpec, CardCanonicalization::kSdk}) {
    if (only && *only != how) continue;
    auto payload = CardSigningPayload(card, how);
    if (!payload) return std::move(payload).error();
    payloads.push_back(std::move(payload).value());
  }
  Error last(ErrorCode::kInvalidParams, "no signature entry verifies");
  for (const auto& entry : sigs->get_array()) {
    const json::value* prot =
        entry.is_object() ? entry.get_object().if_contains("protected") : nullptr;
    const json::value* sig =
        entry.is_object() ? entry.get_object().if_contains("signature") : nullptr;
    if (!prot || !sig || !prot->is_string() || !sig->is_string()) {
      last = Error(ErrorCode::kInvalidParams, "a signature entry lacks protected or signature");
      continue;
    }
    for (const std::string& payload : payloads) {
      auto header = protocol::VerifyDetachedJws(
          {std::string(prot->get_string()), std::string(sig->get_string())}, payload, key);
      if (!header) {
        last = std::move(header).error();
        continue;
      }
      if (!header->contains("kid") || !header->contains("typ")) {
        last = Error(ErrorCode::kInvalidParams, "the protected header lacks kid or typ");
        continue;
      }
      return core::Ok{};
    }
  }
  return last;
}

}  // namespace a2ad::protocol
