#include "a2ad/protocol/v03/proto_json.hpp"

#include <climits>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::protocol::v03::proto_json {
namespace json = boost::json;
using core::Result;

namespace {

constexpr std::string_view kTasks = "tasks/";
constexpr std::string_view kConfigs = "/pushNotificationConfigs";

void PutIfSet(json::object& o, std::string_view key, const std::string& s) {
  if (!s.empty()) o[key] = s;
}

/// "tasks/{id}" -> id. With `configs_suffix`, "tasks/{id}/pushNotificationConfigs" too (the
/// proto binds a create's `parent` that way, a list's without it).
Result<std::string> TaskIdOfName(const json::object& o, std::string_view key, bool configs_suffix) {
  A2AD_TRY_ASSIGN(std::string name, ReqString(o, "", key));
  std::string_view rest(name);
  if (rest.starts_with(kTasks)) {
    rest.remove_prefix(kTasks.size());
    if (configs_suffix && rest.ends_with(kConfigs)) rest.remove_suffix(kConfigs.size());
    if (!rest.empty() && rest.find('/') == std::string_view::npos) return std::string(rest);
  }
  return FieldError(key,
                    configs_suffix ? "expected \"tasks/{taskId}\"" : "expected \"tasks/{id}\"");
}

Result<PushConfigRef> ConfigRefOfName(const json::object& o, std::string_view key) {
  A2AD_TRY_ASSIGN(std::string name, ReqString(o, "", key));
  std::string_view rest(name);
  const std::string_view sep = "/pushNotificationConfigs/";
  if (rest.starts_with(kTasks)) {
    rest.remove_prefix(kTasks.size());
    const size_t at = rest.find(sep);
    if (at != std::string_view::npos && at > 0) {
      PushConfigRef ref{std::string(rest.substr(0, at)), std::string(rest.substr(at + sep.size()))};
      if (ref.task_id.find('/') == std::string::npos && !ref.config_id.empty() &&
          ref.config_id.find('/') == std::string::npos)
        return ref;
    }
  }
  return FieldError(key, "expected \"tasks/{taskId}/pushNotificationConfigs/{configId}\"");
}

/// A history limit: 0 or absent is no limit (the proto's comment), negative is refused.
Result<std::optional<int32_t>> HistoryLength(const json::object& o, std::string_view path) {
  A2AD_TRY_ASSIGN(auto h, OptInt(o, path, "historyLength", "history_length"));
  if (!h || *h == 0) return std::optional<int32_t>();
  if (*h < 0) return FieldError(Join(path, "historyLength"), "must not be negative");
  if (*h > INT32_MAX) return FieldError(Join(path, "historyLength"), "too large");
  return std::optional<int32_t>(static_cast<int32_t>(*h));
}

bool ParseRole(const json::value& v, Role& out) {
  for (int i = 1; i < 3; ++i)
    if ((v.is_string() && v.get_string() == RoleName(static_cast<Role>(i), Wire::kV03Proto)) ||
        (v.is_int64() && v.get_int64() == i)) {
      out = static_cast<Role>(i);
      return true;
    }
  return false;
}

Result<Part> FilePartFromJson(const json::value& v, std::string_view path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& f = *obj;
  A2AD_TRY_ASSIGN(std::string uri, OptString(f, path, "fileWithUri", "file_with_uri"));
  A2AD_TRY_ASSIGN(std::string bytes, OptString(f, path, "fileWithBytes", "file_with_bytes"));
  if (uri.empty() == bytes.empty())
    return FieldError(path, "a file part has exactly one of fileWithUri or fileWithBytes");
  Part p;
  p.kind = uri.empty() ? Part::Kind::kRaw : Part::Kind::kUrl;
  p.text = uri.empty() ? std::move(bytes) : std::move(uri);
  A2AD_TRY_ASSIGN(p.media_type, OptString(f, path, "mimeType", "mime_type"));
  A2AD_TRY_ASSIGN(p.filename, OptString(f, path, "name"));
  return p;
}

}  // namespace

json::object TaskPushConfigToJson(const PushNotificationConfig& c) {
  json::object pc{{"id", c.id}, {"url", c.url}};
  PutIfSet(pc, "token", c.token);
  if (c.authentication)
    pc["authentication"] =
        json::object{{"schemes", json::array{json::value(c.authentication->scheme)}}};
  return json::object{
      {"name", std::string(kTasks) + c.task_id + std::string(kConfigs) + "/" + c.id},
      {"pushNotificationConfig", std::move(pc)}};
}

Result<Part> PartFromJson(const json::value& v, std::string_view path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  const json::value* text = o.if_contains("text");
  const json::value* file = o.if_contains("file");
  const json::value* data = o.if_contains("data");
  if ((text != nullptr) + (file != nullptr) + (data != nullptr) != 1)
    return FieldError(path, "a part has exactly one of text, file or data");
  Part p;
  if (text) {
    if (!text->is_string()) return FieldError(Join(path, "text"), "expected a string");
    p.text = text->get_string();
  } else if (file) {
    A2AD_TRY_ASSIGN(p, FilePartFromJson(*file, Join(path, "file")));
  } else {
    const std::string dp = Join(path, "data");
    A2AD_TRY_ASSIGN(const json::object* d, AsObject(*data, dp));
    p.kind = Part::Kind::kData;
    // DataPart {data: Struct}: the object is one level down. A part written the JSON-RPC way
    // ({"data": {"k": 1}}) would lose its members to a ProtoJSON parser; it is refused instead.
    if (!d->empty() && !d->contains("data"))
      return FieldError(dp, "expected {\"data\": {...}} (a DataPart wraps its object)");
    A2AD_TRY_ASSIGN(json::object value, OptObject(*d, dp, "data"));
    p.data = std::move(value);
  }
  A2AD_TRY_ASSIGN(p.metadata, OptObject(o, path, "metadata"));
  return p;
}

Result<Message> MessageFromJson(const json::value& v, std::string_view path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  Message m;
  A2AD_TRY_ASSIGN(m.message_id, ReqString(o, path, "messageId", "message_id"));
  A2AD_TRY_ASSIGN(m.context_id, OptString(o, path, "contextId", "context_id"));
  A2AD_TRY_ASSIGN(m.task_id, OptString(o, path, "taskId", "task_id"));
  const json::value* role = o.if_contains("role");
  if (!role || role->is_null()) return FieldError(Join(path, "role"), "required field is missing");
  if (!ParseRole(*role, m.role))
    return FieldError(Join(path, "role"), "expected \"ROLE_USER\" or \"ROLE_AGENT\"");
  const std::string cp = Join(path, "content");
  const json::value* content = o.if_contains("content");
  if (!content || content->is_null())
    return FieldError(cp, "required field is missing (at least one part)");
  if (!content->is_array()) return FieldError(cp, "expected an array of parts");
  if (content->get_array().empty()) return FieldError(cp, "must contain at least one part");
  for (size_t i = 0; i < content->get_array().size(); ++i) {
    A2AD_TRY_ASSIGN(Part p, PartFromJson(content->get_array()[i], Index(cp, i)));
    m.parts.push_back(std::move(p));
  }
  A2AD_TRY_ASSIGN(m.metadata, OptObject(o, path, "metadata"));
  A2AD_TRY_ASSIGN(m.extensions, OptStringList(o, path, "extensions"));
  return m;
}

Result<SendMessageRequest> SendMessageRequestFromJson(const json::value& request) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(request, "request"));
  const json::object& o = *obj;
  SendMessageRequest r;
  const json::value* m = Find(o, "message", "request");
  if (!m || m->is_null()) return FieldError("message", "required field is missing");
  A2AD_TRY_ASSIGN(r.message, MessageFromJson(*m, "message"));
  if (const json::value* c = o.if_contains("configuration"); c && !c->is_null()) {
    const char* cp = "configuration";
    A2AD_TRY_ASSIGN(const json::object* cfg, AsObject(*c, cp));
    A2AD_TRY_ASSIGN(r.configuration.accepted_output_modes,
                    OptStringList(*cfg, cp, "acceptedOutputModes", "accepted_output_modes"));
    A2AD_TRY_ASSIGN(r.configuration.history_length, HistoryLength(*cfg, cp));
    A2AD_TRY_ASSIGN(auto blocking, OptBool(*cfg, cp, "blocking"));
    r.configuration.return_immediately = !blocking.value_or(false);
    if (const json::value* pc = Find(*cfg, "pushNotification", "push_notification");
        pc && !pc->is_null()) {
      A2AD_TRY_ASSIGN(r.configuration.push_notification_config,
                      v03::PushConfigFromJson(*pc, "configuration.pushNotification"));
    }
  }
  A2AD_TRY_ASSIGN(r.metadata, OptObject(o, "", "metadata"));
  return r;
}

Result<GetTaskRequest> GetTaskRequestFromJson(const json::value& request) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(request, "request"));
  GetTaskRequest r;
  A2AD_TRY_ASSIGN(r.id, TaskIdOfName(*o, "name", false));
  A2AD_TRY_ASSIGN(r.history_length, HistoryLength(*o, ""));
  return r;
}

Result<CancelTaskRequest> CancelTaskRequestFromJson(const json::value& request) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(request, "request"));
  CancelTaskRequest r;
  A2AD_TRY_ASSIGN(r.id, TaskIdOfName(*o, "name", false));
  return r;
}

Result<std::string> TaskSubscriptionFromJson(const json::value& request) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(request, "request"));
  return TaskIdOfName(*o, "name", false);
}

Result<PushNotificationConfig> CreatePushConfigFromJson(const json::value& request) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(request, "request"));
  const json::object& o = *obj;
  A2AD_TRY_ASSIGN(std::string task_id, TaskIdOfName(o, "parent", true));
  // The whole CreateTaskPushNotificationConfigRequest, or the TaskPushNotificationConfig.
  const json::value* wrapped = o.if_contains("config");
  const bool whole = wrapped && !wrapped->is_null();
  const std::string path = whole ? "config" : "";
  const json::object* config = &o;
  if (whole) {
    A2AD_TRY_ASSIGN(config, AsObject(*wrapped, "config"));
  }
  const json::value* pc = Find(*config, "pushNotificationConfig", "push_notification_config");
  const std::string pcp = Join(path, "pushNotificationConfig");
  if (!pc || pc->is_null()) return FieldError(pcp, "required field is missing");
  A2AD_TRY_ASSIGN(PushNotificationConfig c, v03::PushConfigFromJson(*pc, pcp));
  if (c.id.empty()) {
    A2AD_TRY_ASSIGN(c.id, OptString(o, "", "configId", "config_id"));
  }
  if (c.id.empty()) {  // "tasks/{t}/pushNotificationConfigs/{id}": the id, if it names one
    A2AD_TRY_ASSIGN(std::string name, OptString(*config, path, "name"));
    if (const size_t slash = name.rfind('/');
        slash != std::string::npos && name.find(kConfigs) != std::string::npos)
      c.id = name.substr(slash + 1);
  }
  if (c.id.size() > 256) return FieldError(Join(pcp, "id"), "longer than 256 characters");
  c.task_id = std::move(task_id);
  return c;
}

Result<PushConfigRef> PushConfigNameFromJson(const json::value& request) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(request, "request"));
  return ConfigRefOfName(*o, "name");
}

Result<PushConfigRef> PushConfigParentFromJson(const json::value& request) {
  A2AD_TRY_ASSIGN(const json::object* o, AsObject(request, "request"));
  PushConfigRef r;
  A2AD_TRY_ASSIGN(r.task_id, TaskIdOfName(*o, "parent", true));
  return r;
}

}  // namespace a2ad::protocol::v03::proto_json
