#include "a2ad/protocol/push_config_codec.hpp"

#include "a2ad/protocol/json_util.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Result;

namespace {
// An HTTP auth-scheme token (RFC 9110 §11.1): tchar+.
bool IsToken(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

Result<void> CheckCommon(PushNotificationConfig& c, std::string_view path) {
  if (c.url.size() > 2048) return FieldError(Join(path, "url"), "longer than 2048 characters");
  if (c.token.size() > 4096) return FieldError(Join(path, "token"), "longer than 4096 characters");
  if (c.id.size() > 256) return FieldError(Join(path, "id"), "longer than 256 characters");
  if (c.authentication) {
    if (!IsToken(c.authentication->scheme))
      return FieldError(Join(path, "authentication"),
                        "expected an HTTP authentication scheme name such as Bearer");
    if (c.authentication->credentials.find_first_of("\r\n") != std::string::npos)
      return FieldError(Join(path, "authentication.credentials"), "must be one line");
  }
  if (c.token.find_first_of("\r\n") != std::string::npos)
    return FieldError(Join(path, "token"), "must be one line");
  return core::Ok{};
}

// The members both wire versions spell alike.
Result<PushNotificationConfig> CommonMembers(const json::object& o, std::string_view path,
                                             std::string wire_version) {
  PushNotificationConfig c;
  c.wire_version = std::move(wire_version);
  A2AD_TRY_ASSIGN(c.url, ReqString(o, path, "url"));
  A2AD_TRY_ASSIGN(c.id, OptString(o, path, "id"));
  A2AD_TRY_ASSIGN(c.token, OptString(o, path, "token"));
  return c;
}
}  // namespace

namespace v03 {

Result<PushNotificationConfig> PushConfigFromJson(const json::value& v, std::string_view path) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(v, path));
  A2AD_TRY_ASSIGN(PushNotificationConfig c, CommonMembers(*o, path, "0.3"));
  if (const json::value* a = o->if_contains("authentication"); a && !a->is_null()) {
    std::string ap = Join(path, "authentication");
    A2AD_TRY_ASSIGN(const json::object* ao, AsObject(*a, ap));
    A2AD_TRY_ASSIGN(auto schemes, OptStringList(*ao, ap, "schemes"));
    if (schemes.empty()) return FieldError(Join(ap, "schemes"), "expected at least one scheme");
    AuthenticationInfo info;
    info.scheme = schemes.front();  // WIRE.md §16.1: schemes[0] <-> scheme
    A2AD_TRY_ASSIGN(info.credentials, OptString(*ao, ap, "credentials"));
    c.authentication = std::move(info);
  }
  if (auto ok = CheckCommon(c, path); !ok) return std::move(ok).error();
  return c;
}

Result<PushNotificationConfig> SetPushConfigParamsFromJson(const json::value& params) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(params, "params"));
  A2AD_TRY_ASSIGN(std::string task_id, ReqString(*o, "params", "taskId"));
  const json::value* pc = o->if_contains("pushNotificationConfig");
  if (!pc) return FieldError("params.pushNotificationConfig", "required field is missing");
  A2AD_TRY_ASSIGN(PushNotificationConfig c,
                  PushConfigFromJson(*pc, "params.pushNotificationConfig"));
  c.task_id = std::move(task_id);
  return c;
}

Result<PushConfigRef> PushConfigRefFromJson(const json::value& params, bool config_id_required) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(params, "params"));
  PushConfigRef r;
  A2AD_TRY_ASSIGN(r.task_id, ReqString(*o, "params", "id"));
  if (config_id_required) {
    A2AD_TRY_ASSIGN(r.config_id, ReqString(*o, "params", "pushNotificationConfigId"));
  } else {
    A2AD_TRY_ASSIGN(r.config_id, OptString(*o, "params", "pushNotificationConfigId"));
  }
  return r;
}

json::object TaskPushConfigToJson(const PushNotificationConfig& c) {
  json::object pc{{"id", c.id}, {"url", c.url}};
  if (!c.token.empty()) pc["token"] = c.token;
  if (c.authentication)
    pc["authentication"] =
        json::object{{"schemes", json::array{json::value(c.authentication->scheme)}}};
  return json::object{{"taskId", c.task_id}, {"pushNotificationConfig", std::move(pc)}};
}

}  // namespace v03

namespace v10 {

Result<PushNotificationConfig> PushConfigFromJson(const json::value& v, std::string_view path,
                                                  bool task_id_required) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(v, path));
  A2AD_TRY_ASSIGN(PushNotificationConfig c, CommonMembers(*o, path, "1.0"));
  if (task_id_required) {
    A2AD_TRY_ASSIGN(c.task_id, ReqString(*o, path, "taskId", "task_id"));
  }
  if (const json::value* a = o->if_contains("authentication"); a && !a->is_null()) {
    std::string ap = Join(path, "authentication");
    A2AD_TRY_ASSIGN(const json::object* ao, AsObject(*a, ap));
    AuthenticationInfo info;
    A2AD_TRY_ASSIGN(info.scheme, ReqString(*ao, ap, "scheme"));
    A2AD_TRY_ASSIGN(info.credentials, OptString(*ao, ap, "credentials"));
    c.authentication = std::move(info);
  }
  if (auto ok = CheckCommon(c, path); !ok) return std::move(ok).error();
  return c;
}

Result<PushConfigRef> PushConfigRefFromJson(const json::value& params, bool config_id_required) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(params, "params"));
  PushConfigRef r;
  A2AD_TRY_ASSIGN(r.task_id, ReqString(*o, "params", "taskId", "task_id"));
  if (config_id_required) {
    A2AD_TRY_ASSIGN(r.config_id, ReqString(*o, "params", "id"));
  }
  return r;
}

json::object TaskPushConfigToJson(const PushNotificationConfig& c) {
  json::object o{{"id", c.id}, {"taskId", c.task_id}, {"url", c.url}};
  if (!c.token.empty()) o["token"] = c.token;
  if (c.authentication) o["authentication"] = json::object{{"scheme", c.authentication->scheme}};
  return o;
}

}  // namespace v10
}  // namespace a2ad::protocol
