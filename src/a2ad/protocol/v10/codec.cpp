#include "a2ad/protocol/v10/codec.hpp"

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/push_config_codec.hpp"

namespace a2ad::protocol::v10 {
namespace json = boost::json;
using core::Result;

namespace {

bool ParseRole(const json::value& v, Role& out) {
  if (v.is_string()) {
    for (int i = 0; i < 3; ++i)
      if (v.get_string() == RoleName(static_cast<Role>(i), Wire::kV10)) {
        out = static_cast<Role>(i);
        return true;
      }
    return false;
  }
  if (v.is_int64() && v.get_int64() >= 0 && v.get_int64() <= 2) {
    out = static_cast<Role>(v.get_int64());
    return true;
  }
  return false;
}

// The path of a value being decoded, not spelled out: a decoder first runs with it, and only if
// that fails runs again with the path as text, for the error's message (a valid document
// builds no path strings).
struct Quiet {
  operator std::string_view() const { return {}; }  // NOLINT(google-explicit-constructor)
};
Quiet Join(Quiet, std::string_view) { return {}; }
Quiet Index(Quiet, size_t) { return {}; }
using protocol::Index;
using protocol::Join;

// `decode(path)` with a Quiet path, and again with `path` if that fails.
template <class Decode>
auto QuietFirst(std::string_view path, Decode decode) {
  auto quick = decode(Quiet{});
  if (quick) return quick;
  return decode(path);
}

template <class P>
Result<Part> PartAt(const json::value& v, const P& path);

template <class P>
Result<std::vector<Part>> PartsFromJson(const json::object& o, const P& path, bool required) {
  std::vector<Part> parts;
  const json::value* v = Find(o, "parts");
  const auto p = Join(path, "parts");
  if (!v || v->is_null()) {
    if (required) return FieldError(p, "required field is missing (at least one part)");
    return parts;
  }
  if (!v->is_array()) return FieldError(p, "expected an array of parts");
  const auto& a = v->get_array();
  if (required && a.empty()) return FieldError(p, "must contain at least one part");
  parts.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    A2AD_TRY_ASSIGN(auto part, PartAt(a[i], Index(p, i)));
    parts.push_back(std::move(part));
  }
  return parts;
}

Result<std::optional<int32_t>> HistoryLength(const json::object& o, std::string_view path) {
  A2AD_TRY_ASSIGN(auto h, OptInt(o, path, "historyLength", "history_length"));
  if (!h) return std::optional<int32_t>();
  if (*h < 0) return FieldError(Join(path, "historyLength"), "must not be negative");
  if (*h > INT32_MAX) return FieldError(Join(path, "historyLength"), "too large");
  return std::optional<int32_t>(static_cast<int32_t>(*h));
}

}  // namespace

bool ParseTaskState(const json::value& v, TaskState& out) {
  if (v.is_string()) {
    for (int i = 0; i < 9; ++i)
      if (v.get_string() == TaskStateName(static_cast<TaskState>(i), Wire::kV10)) {
        out = static_cast<TaskState>(i);
        return true;
      }
    return false;
  }
  if (v.is_int64() && v.get_int64() >= 0 && v.get_int64() <= 8) {
    out = static_cast<TaskState>(v.get_int64());
    return true;
  }
  return false;
}

json::object ListTasksResponseToJson(const ListTasksResponse& r) {
  json::object o;
  json::array tasks;
  tasks.reserve(r.tasks.size());
  for (const auto& t : r.tasks) tasks.emplace_back(protocol::TaskToJson(t, Wire::kV10));
  o["tasks"] = std::move(tasks);
  o["nextPageToken"] = r.next_page_token;
  o["pageSize"] = r.page_size;
  o["totalSize"] = r.total_size;
  return o;
}

// ---- decoding ---------------------------------------------------------------------------

namespace {

template <class P>
Result<Part> PartAt(const json::value& v, const P& path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  Part p;
  int kinds = 0;
  if (auto* t = o.if_contains("text")) {
    if (!t->is_string()) return FieldError(Join(path, "text"), "expected a string");
    p.kind = Part::Kind::kText;
    p.text = t->get_string();
    ++kinds;
  }
  if (auto* t = o.if_contains("raw")) {
    if (!t->is_string()) return FieldError(Join(path, "raw"), "expected base64 bytes as a string");
    p.kind = Part::Kind::kRaw;
    p.text = t->get_string();
    ++kinds;
  }
  if (auto* t = o.if_contains("url")) {
    if (!t->is_string()) return FieldError(Join(path, "url"), "expected a string");
    p.kind = Part::Kind::kUrl;
    p.text = t->get_string();
    ++kinds;
  }
  if (auto* t = o.if_contains("data")) {
    p.kind = Part::Kind::kData;
    p.data = *t;
    ++kinds;
  }
  if (kinds != 1)
    return FieldError(path, kinds == 0 ? "a part needs one of text, raw, url or data"
                                       : "a part has exactly one of text, raw, url or data");
  A2AD_TRY_ASSIGN(p.metadata, OptObject(o, path, "metadata"));
  A2AD_TRY_ASSIGN(p.filename, OptString(o, path, "filename"));
  A2AD_TRY_ASSIGN(p.media_type, OptString(o, path, "mediaType", "media_type"));
  return p;
}

template <class P>
Result<Message> MessageAt(const json::value& v, const P& path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  Message m;
  A2AD_TRY_ASSIGN(m.message_id, ReqString(o, path, "messageId", "message_id"));
  A2AD_TRY_ASSIGN(m.context_id, OptString(o, path, "contextId", "context_id"));
  A2AD_TRY_ASSIGN(m.task_id, OptString(o, path, "taskId", "task_id"));
  const json::value* role = Find(o, "role");
  if (!role) return FieldError(Join(path, "role"), "required field is missing");
  if (!ParseRole(*role, m.role) || m.role == Role::kUnspecified)
    return FieldError(Join(path, "role"), "expected \"ROLE_USER\" or \"ROLE_AGENT\"");
  A2AD_TRY_ASSIGN(m.parts, PartsFromJson(o, path, true));
  A2AD_TRY_ASSIGN(m.metadata, OptObject(o, path, "metadata"));
  A2AD_TRY_ASSIGN(m.extensions, OptStringList(o, path, "extensions"));
  A2AD_TRY_ASSIGN(m.reference_task_ids,
                  OptStringList(o, path, "referenceTaskIds", "reference_task_ids"));
  return m;
}

template <class P>
Result<Artifact> ArtifactAt(const json::value& v, const P& path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  Artifact a;
  A2AD_TRY_ASSIGN(a.artifact_id, ReqString(o, path, "artifactId", "artifact_id"));
  A2AD_TRY_ASSIGN(a.name, OptString(o, path, "name"));
  A2AD_TRY_ASSIGN(a.description, OptString(o, path, "description"));
  A2AD_TRY_ASSIGN(a.parts, PartsFromJson(o, path, false));
  A2AD_TRY_ASSIGN(a.metadata, OptObject(o, path, "metadata"));
  A2AD_TRY_ASSIGN(a.extensions, OptStringList(o, path, "extensions"));
  return a;
}

template <class P>
Result<Task> TaskAt(const json::value& v, const P& path) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(v, path));
  const json::object& o = *obj;
  Task t;
  A2AD_TRY_ASSIGN(t.id, ReqString(o, path, "id"));
  A2AD_TRY_ASSIGN(t.context_id, OptString(o, path, "contextId", "context_id"));
  const json::value* st = Find(o, "status");
  const auto sp = Join(path, "status");
  if (!st || !st->is_object()) return FieldError(sp, "required object is missing");
  const auto& so = st->get_object();
  const json::value* state = Find(so, "state");
  if (!state || !ParseTaskState(*state, t.status.state))
    return FieldError(Join(sp, "state"), "expected a TASK_STATE_* name");
  if (const json::value* m = Find(so, "message"); m && !m->is_null()) {
    A2AD_TRY_ASSIGN(t.status.message, MessageAt(*m, Join(sp, "message")));
  }
  if (const json::value* ts = Find(so, "timestamp"); ts && !ts->is_null()) {
    if (!ts->is_string() || !core::ParseTimestamp(ts->get_string(), t.status.timestamp_ms))
      return FieldError(Join(sp, "timestamp"), "expected an RFC 3339 timestamp");
  }
  if (const json::value* arts = Find(o, "artifacts"); arts && !arts->is_null()) {
    if (!arts->is_array()) return FieldError(Join(path, "artifacts"), "expected an array");
    for (size_t i = 0; i < arts->get_array().size(); ++i) {
      A2AD_TRY_ASSIGN(auto a, ArtifactAt(arts->get_array()[i], Index(Join(path, "artifacts"), i)));
      t.artifacts.push_back(std::move(a));
    }
  }
  if (const json::value* hist = Find(o, "history"); hist && !hist->is_null()) {
    if (!hist->is_array()) return FieldError(Join(path, "history"), "expected an array");
    for (size_t i = 0; i < hist->get_array().size(); ++i) {
      A2AD_TRY_ASSIGN(auto m, MessageAt(hist->get_array()[i], Index(Join(path, "history"), i)));
      t.history.push_back(std::move(m));
    }
  }
  A2AD_TRY_ASSIGN(t.metadata, OptObject(o, path, "metadata"));
  return t;
}

}  // namespace

Result<Part> PartFromJson(const json::value& v, std::string_view path) {
  return QuietFirst(path, [&](const auto& p) { return PartAt(v, p); });
}

Result<Message> MessageFromJson(const json::value& v, std::string_view path) {
  return QuietFirst(path, [&](const auto& p) { return MessageAt(v, p); });
}

Result<Artifact> ArtifactFromJson(const json::value& v, std::string_view path) {
  return QuietFirst(path, [&](const auto& p) { return ArtifactAt(v, p); });
}

Result<Task> TaskFromJson(const json::value& v, std::string_view path) {
  return QuietFirst(path, [&](const auto& p) { return TaskAt(v, p); });
}

Result<SendMessageRequest> SendMessageRequestFromJson(const json::value& params) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(params, "params"));
  const json::object& o = *obj;
  SendMessageRequest r;
  A2AD_TRY_ASSIGN(r.tenant, OptString(o, "params", "tenant"));
  const json::value* m = Find(o, "message");
  if (!m) return FieldError("params.message", "required field is missing");
  A2AD_TRY_ASSIGN(r.message, MessageFromJson(*m, "params.message"));
  if (const json::value* c = Find(o, "configuration"); c && !c->is_null()) {
    A2AD_TRY_ASSIGN(const json::object* co, AsObject(*c, "params.configuration"));
    const json::object& cfg = *co;
    const char* cp = "params.configuration";
    A2AD_TRY_ASSIGN(r.configuration.accepted_output_modes,
                    OptStringList(cfg, cp, "acceptedOutputModes", "accepted_output_modes"));
    A2AD_TRY_ASSIGN(r.configuration.history_length, HistoryLength(cfg, cp));
    A2AD_TRY_ASSIGN(auto ri, OptBool(cfg, cp, "returnImmediately", "return_immediately"));
    r.configuration.return_immediately = ri.value_or(false);
    if (const json::value* pc =
            Find(cfg, "taskPushNotificationConfig", "task_push_notification_config");
        pc && !pc->is_null()) {
      A2AD_TRY_ASSIGN(r.configuration.push_notification_config,
                      PushConfigFromJson(*pc, Join(cp, "taskPushNotificationConfig"), false));
    }
  }
  A2AD_TRY_ASSIGN(r.metadata, OptObject(o, "params", "metadata"));
  return r;
}

Result<GetTaskRequest> GetTaskRequestFromJson(const json::value& params) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(params, "params"));
  GetTaskRequest r;
  A2AD_TRY_ASSIGN(r.id, ReqString(*obj, "params", "id"));
  A2AD_TRY_ASSIGN(r.tenant, OptString(*obj, "params", "tenant"));
  A2AD_TRY_ASSIGN(r.history_length, HistoryLength(*obj, "params"));
  return r;
}

Result<ListTasksRequest> ListTasksRequestFromJson(const json::value& params) {
  ListTasksRequest r;
  if (params.is_null()) return r;  // all filters optional
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(params, "params"));
  const json::object& o = *obj;
  A2AD_TRY_ASSIGN(r.tenant, OptString(o, "params", "tenant"));
  A2AD_TRY_ASSIGN(r.context_id, OptString(o, "params", "contextId", "context_id"));
  if (const json::value* st = Find(o, "status"); st && !st->is_null()) {
    // The default enum value means "unset" in ProtoJSON (gRPC cannot tell them apart).
    // "UNRECOGNIZED" is what @a2a-js/sdk 1.x's ts-proto encoder puts on the wire for an
    // unset status; treat it as unset too rather than fail plain listTasks({}) calls.
    TaskState s;
    if (st->is_string() && st->get_string() == "UNRECOGNIZED") {
    } else if (!ParseTaskState(*st, s)) {
      return FieldError("params.status", "expected a TASK_STATE_* name");
    } else if (s != TaskState::kUnspecified) {
      r.status = s;
    }
  }
  A2AD_TRY_ASSIGN(auto ps, OptInt(o, "params", "pageSize", "page_size"));
  if (ps) {
    if (*ps < 1 || *ps > 100) return FieldError("params.pageSize", "must be between 1 and 100");
    r.page_size = static_cast<int32_t>(*ps);
  }
  A2AD_TRY_ASSIGN(r.page_token, OptString(o, "params", "pageToken", "page_token"));
  A2AD_TRY_ASSIGN(r.history_length, HistoryLength(o, "params"));
  if (const json::value* ts = Find(o, "statusTimestampAfter", "status_timestamp_after");
      ts && !ts->is_null()) {
    int64_t ms = 0;
    if (!ts->is_string() || !core::ParseTimestamp(ts->get_string(), ms))
      return FieldError("params.statusTimestampAfter", "expected an RFC 3339 timestamp");
    r.status_timestamp_after_ms = ms;
  }
  A2AD_TRY_ASSIGN(auto ia, OptBool(o, "params", "includeArtifacts", "include_artifacts"));
  r.include_artifacts = ia.value_or(false);
  return r;
}

Result<CancelTaskRequest> CancelTaskRequestFromJson(const json::value& params) {
  A2AD_TRY_ASSIGN(const json::object* obj, AsObject(params, "params"));
  CancelTaskRequest r;
  A2AD_TRY_ASSIGN(r.id, ReqString(*obj, "params", "id"));
  A2AD_TRY_ASSIGN(r.tenant, OptString(*obj, "params", "tenant"));
  A2AD_TRY_ASSIGN(r.metadata, OptObject(*obj, "params", "metadata"));
  return r;
}

}  // namespace a2ad::protocol::v10
