#include "a2ad/protocol/v03/codec.hpp"

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/push_config_codec.hpp"

namespace a2ad::protocol::v03 {
namespace json = boost::json;
using core::Result;

namespace {

Result<std::optional<int32_t>> HistoryLength(const json::object& o, std::string_view path) {
  A2AD_TRY_ASSIGN(auto h, OptInt(o, path, "historyLength"));
  if (!h) return std::optional<int32_t>();
  if (*h < 0) return FieldError(Join(path, "historyLength"), "must not be negative");
  if (*h == 0) return std::optional<int32_t>();  // v0.3: 0 = unlimited
  if (*h > INT32_MAX) return FieldError(Join(path, "historyLength"), "too large");
  return std::optional<int32_t>(static_cast<int32_t>(*h));
}

}  // namespace

Result<Part> PartFromJson(const json::value& v, std::string_view path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  A2AD_TRY_ASSIGN(std::string kind, ReqString(o, path, "kind"));
  Part p;
  if (kind == "text") {
    const json::value* t = o.if_contains("text");
    if (!t || !t->is_string()) return FieldError(Join(path, "text"), "expected a string");
    p.text = t->get_string();
  } else if (kind == "file") {
    const json::value* f = o.if_contains("file");
    std::string fp = Join(path, "file");
    if (!f || !f->is_object()) return FieldError(fp, "expected an object with bytes or uri");
    const json::object& fo = f->get_object();
    A2AD_TRY_ASSIGN(std::string bytes, OptString(fo, fp, "bytes"));
    A2AD_TRY_ASSIGN(std::string uri, OptString(fo, fp, "uri"));
    if (bytes.empty() == uri.empty())
      return FieldError(fp, "a file part has exactly one of bytes or uri");
    p.kind = bytes.empty() ? Part::Kind::kUrl : Part::Kind::kRaw;
    p.text = bytes.empty() ? std::move(uri) : std::move(bytes);
    A2AD_TRY_ASSIGN(p.filename, OptString(fo, fp, "name"));
    A2AD_TRY_ASSIGN(p.media_type, OptString(fo, fp, "mimeType"));
  } else if (kind == "data") {
    const json::value* d = o.if_contains("data");
    if (!d || !d->is_object()) return FieldError(Join(path, "data"), "expected an object");
    p.kind = Part::Kind::kData;
    p.data = *d;
  } else {
    return FieldError(Join(path, "kind"), "expected \"text\", \"file\" or \"data\"");
  }
  A2AD_TRY_ASSIGN(p.metadata, OptObject(o, path, "metadata"));
  return p;
}

Result<Message> MessageFromJson(const json::value& v, std::string_view path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  if (const json::value* k = o.if_contains("kind");
      k && !(k->is_string() && k->get_string() == "message"))
    return FieldError(Join(path, "kind"), "expected \"message\"");
  Message m;
  A2AD_TRY_ASSIGN(m.message_id, ReqString(o, path, "messageId"));
  A2AD_TRY_ASSIGN(std::string role, ReqString(o, path, "role"));
  if (role == "user")
    m.role = Role::kUser;
  else if (role == "agent")
    m.role = Role::kAgent;
  else
    return FieldError(Join(path, "role"), "expected \"user\" or \"agent\"");
  const json::value* parts = o.if_contains("parts");
  std::string pp = Join(path, "parts");
  if (!parts || !parts->is_array()) return FieldError(pp, "required array is missing");
  if (parts->get_array().empty()) return FieldError(pp, "must contain at least one part");
  for (size_t i = 0; i < parts->get_array().size(); ++i) {
    A2AD_TRY_ASSIGN(Part p, PartFromJson(parts->get_array()[i], Index(pp, i)));
    m.parts.push_back(std::move(p));
  }
  A2AD_TRY_ASSIGN(m.context_id, OptString(o, path, "contextId"));
  A2AD_TRY_ASSIGN(m.task_id, OptString(o, path, "taskId"));
  A2AD_TRY_ASSIGN(m.reference_task_ids, OptStringList(o, path, "referenceTaskIds"));
  A2AD_TRY_ASSIGN(m.extensions, OptStringList(o, path, "extensions"));
  A2AD_TRY_ASSIGN(m.metadata, OptObject(o, path, "metadata"));
  return m;
}

Result<SendMessageRequest> SendMessageRequestFromJson(const json::value& params) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(params, "params"));
  const json::object& o = *obj;
  SendMessageRequest r;
  const json::value* m = o.if_contains("message");
  if (!m) return FieldError("params.message", "required field is missing");
  A2AD_TRY_ASSIGN(r.message, MessageFromJson(*m, "params.message"));
  if (const json::value* c = o.if_contains("configuration"); c && !c->is_null()) {
    const char* cp = "params.configuration";
    A2AD_TRY_ASSIGN(const json::object* cfg, AsObject(*c, cp));
    A2AD_TRY_ASSIGN(r.configuration.accepted_output_modes,
                    OptStringList(*cfg, cp, "acceptedOutputModes"));
    A2AD_TRY_ASSIGN(r.configuration.history_length, HistoryLength(*cfg, cp));
    A2AD_TRY_ASSIGN(auto blocking, OptBool(*cfg, cp, "blocking"));
    r.configuration.return_immediately = !blocking.value_or(true);
    if (const json::value* pc = cfg->if_contains("pushNotificationConfig"); pc && !pc->is_null()) {
      A2AD_TRY_ASSIGN(r.configuration.push_notification_config,
                      PushConfigFromJson(*pc, Join(cp, "pushNotificationConfig")));
    }
  }
  A2AD_TRY_ASSIGN(r.metadata, OptObject(o, "params", "metadata"));
  return r;
}

Result<GetTaskRequest> GetTaskRequestFromJson(const json::value& params) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(params, "params"));
  GetTaskRequest r;
  A2AD_TRY_ASSIGN(r.id, ReqString(*obj, "params", "id"));
  A2AD_TRY_ASSIGN(r.history_length, HistoryLength(*obj, "params"));
  return r;
}

Result<CancelTaskRequest> CancelTaskRequestFromJson(const json::value& params) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(params, "params"));
  CancelTaskRequest r;
  A2AD_TRY_ASSIGN(r.id, ReqString(*obj, "params", "id"));
  A2AD_TRY_ASSIGN(r.metadata, OptObject(*obj, "params", "metadata"));
  return r;
}

}  // namespace a2ad::protocol::v03
