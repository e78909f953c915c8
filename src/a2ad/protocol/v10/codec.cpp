#include "a2ad/protocol/v10/codec.hpp"

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/push_config_codec.hpp"

namespace a2ad::protocol::v10 {
namespace json = boost::json;
using core::Result;

namespace {

constexpr std::string_view kStateNames[] = {
    "TASK_STATE_UNSPECIFIED",    "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",      "TASK_STATE_FAILED",    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED",  "TASK_STATE_AUTH_REQUIRED"};
constexpr std::string_view kRoleNames[] = {"ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"};

json::array StringsToJson(const std::vector<std::string>& v) {
  json::array a;
  a.reserve(v.size());
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

bool ParseRole(const json::value& v, Role& out) {
  if (v.is_string()) {
    for (int i = 0; i < 3; ++i)
      if (v.get_string() == kRoleNames[i]) {
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

Result<std::vector<Part>> PartsFromJson(const json::object& o, std::string_view path,
                                        bool required) {
  std::vector<Part> parts;
  const json::value* v = Find(o, "parts");
  std::string p = Join(path, "parts");
  if (!v || v->is_null()) {
    if (required) return FieldError(p, "required field is missing (at least one part)");
    return parts;
  }
  if (!v->is_array()) return FieldError(p, "expected an array of parts");
  const auto& a = v->get_array();
  if (required && a.empty()) return FieldError(p, "must contain at least one part");
  parts.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    auto part = PartFromJson(a[i], Index(p, i));
    if (!part) return std::move(part).error();
    parts.push_back(std::move(part).value());
  }
  return parts;
}

Result<std::optional<int32_t>> HistoryLength(const json::object& o, std::string_view path) {
  auto h = OptInt(o, path, "historyLength", "history_length");
  if (!h) return std::move(h).error();
  if (!h.value()) return std::optional<int32_t>();
  if (*h.value() < 0) return FieldError(Join(path, "historyLength"), "must not be negative");
  if (*h.value() > INT32_MAX) return FieldError(Join(path, "historyLength"), "too large");
  return std::optional<int32_t>(static_cast<int32_t>(*h.value()));
}

}  // namespace

std::string_view TaskStateName(TaskState s) { return kStateNames[static_cast<int>(s)]; }

bool ParseTaskState(const json::value& v, TaskState& out) {
  if (v.is_string()) {
    for (int i = 0; i < 9; ++i)
      if (v.get_string() == kStateNames[i]) {
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

json::object PartToJson(const Part& p) {
  json::object o;
  switch (p.kind) {
    case Part::Kind::kText:
      o["text"] = p.text;
      break;
    case Part::Kind::kRaw:
      o["raw"] = p.text;
      break;
    case Part::Kind::kUrl:
      o["url"] = p.text;
      break;
    case Part::Kind::kData:
      o["data"] = p.data;
      break;
  }
  if (!p.metadata.empty()) o["metadata"] = p.metadata;
  if (!p.filename.empty()) o["filename"] = p.filename;
  if (!p.media_type.empty()) o["mediaType"] = p.media_type;
  return o;
}

json::object MessageToJson(const Message& m) {
  json::object o;
  o["messageId"] = m.message_id;
  if (!m.context_id.empty()) o["contextId"] = m.context_id;
  if (!m.task_id.empty()) o["taskId"] = m.task_id;
  o["role"] = kRoleNames[static_cast<int>(m.role)];
  json::array parts;
  parts.reserve(m.parts.size());
  for (const auto& p : m.parts) parts.emplace_back(PartToJson(p));
  o["parts"] = std::move(parts);
  if (!m.metadata.empty()) o["metadata"] = m.metadata;
  if (!m.extensions.empty()) o["extensions"] = StringsToJson(m.extensions);
  if (!m.reference_task_ids.empty()) o["referenceTaskIds"] = StringsToJson(m.reference_task_ids);
  return o;
}

json::object ArtifactToJson(const Artifact& a) {
  json::object o;
  o["artifactId"] = a.artifact_id;
  if (!a.name.empty()) o["name"] = a.name;
  if (!a.description.empty()) o["description"] = a.description;
  json::array parts;
  parts.reserve(a.parts.size());
  for (const auto& p : a.parts) parts.emplace_back(PartToJson(p));
  o["parts"] = std::move(parts);
  if (!a.metadata.empty()) o["metadata"] = a.metadata;
  if (!a.extensions.empty()) o["extensions"] = StringsToJson(a.extensions);
  return o;
}

json::object TaskStatusToJson(const TaskStatus& s) {
  json::object o;
  o["state"] = TaskStateName(s.state);
  if (s.message) o["message"] = MessageToJson(*s.message);
  if (s.timestamp_ms) o["timestamp"] = core::FormatTimestamp(s.timestamp_ms);
  return o;
}

json::object TaskToJson(const Task& t) {
  json::object o;
  o["id"] = t.id;
  o["contextId"] = t.context_id;
  o["status"] = TaskStatusToJson(t.status);
  if (!t.artifacts.empty()) {
    json::array a;
    a.reserve(t.artifacts.size());
    for (const auto& x : t.artifacts) a.emplace_back(ArtifactToJson(x));
    o["artifacts"] = std::move(a);
  }
  if (!t.history.empty()) {
    json::array a;
    a.reserve(t.history.size());
    for (const auto& x : t.history) a.emplace_back(MessageToJson(x));
    o["history"] = std::move(a);
  }
  if (!t.metadata.empty()) o["metadata"] = t.metadata;
  return o;
}

json::object StreamEventToJson(const StreamEvent& e) {
  json::object o;
  switch (e.kind) {
    case StreamEvent::Kind::kTask:
      o["task"] = TaskToJson(e.task);
      break;
    case StreamEvent::Kind::kMessage:
      o["message"] = MessageToJson(e.message);
      break;
    case StreamEvent::Kind::kStatusUpdate: {
      const auto& u = e.status_update;
      json::object s;
      s["taskId"] = u.task_id;
      s["contextId"] = u.context_id;
      s["status"] = TaskStatusToJson(u.status);
      if (!u.metadata.empty()) s["metadata"] = u.metadata;
      o["statusUpdate"] = std::move(s);
      break;
    }
    case StreamEvent::Kind::kArtifactUpdate: {
      const auto& u = e.artifact_update;
      json::object s;
      s["taskId"] = u.task_id;
      s["contextId"] = u.context_id;
      s["artifact"] = ArtifactToJson(u.artifact);
      if (u.append) s["append"] = true;
      if (u.last_chunk) s["lastChunk"] = true;
      if (!u.metadata.empty()) s["metadata"] = u.metadata;
      o["artifactUpdate"] = std::move(s);
      break;
    }
  }
  return o;
}

json::object ListTasksResponseToJson(const ListTasksResponse& r) {
  json::object o;
  json::array tasks;
  tasks.reserve(r.tasks.size());
  for (const auto& t : r.tasks) tasks.emplace_back(TaskToJson(t));
  o["tasks"] = std::move(tasks);
  o["nextPageToken"] = r.next_page_token;
  o["pageSize"] = r.page_size;
  o["totalSize"] = r.total_size;
  return o;
}

// ---- direct text encoding (mirrors the builders above, member for member) ---------------

namespace {

void WritePart(JsonTextWriter& w, const Part& p) {
  switch (p.kind) {
    case Part::Kind::kText:
      w.Raw("{\"text\":");
      w.String(p.text);
      break;
    case Part::Kind::kRaw:
      w.Raw("{\"raw\":");
      w.String(p.text);
      break;
    case Part::Kind::kUrl:
      w.Raw("{\"url\":");
      w.String(p.text);
      break;
    case Part::Kind::kData:
      w.Raw("{\"data\":");
      w.Value(p.data);
      break;
  }
  w.OptObject(",\"metadata\":", p.metadata);
  w.OptString(",\"filename\":", p.filename);
  w.OptString(",\"mediaType\":", p.media_type);
  w.Raw('}');
}

void WriteMessage(JsonTextWriter& w, const Message& m) {
  w.Raw("{\"messageId\":");
  w.String(m.message_id);
  w.OptString(",\"contextId\":", m.context_id);
  w.OptString(",\"taskId\":", m.task_id);
  w.Raw(",\"role\":");
  w.String(kRoleNames[static_cast<int>(m.role)]);
  w.Raw(",\"parts\":");
  w.Array(m.parts, WritePart);
  w.OptObject(",\"metadata\":", m.metadata);
  w.OptStrings(",\"extensions\":", m.extensions);
  w.OptStrings(",\"referenceTaskIds\":", m.reference_task_ids);
  w.Raw('}');
}

void WriteArtifact(JsonTextWriter& w, const Artifact& a) {
  w.Raw("{\"artifactId\":");
  w.String(a.artifact_id);
  w.OptString(",\"name\":", a.name);
  w.OptString(",\"description\":", a.description);
  w.Raw(",\"parts\":");
  w.Array(a.parts, WritePart);
  w.OptObject(",\"metadata\":", a.metadata);
  w.OptStrings(",\"extensions\":", a.extensions);
  w.Raw('}');
}

void WriteTaskStatus(JsonTextWriter& w, const TaskStatus& s) {
  w.Raw("{\"state\":");
  w.String(TaskStateName(s.state));
  if (s.message) {
    w.Raw(",\"message\":");
    WriteMessage(w, *s.message);
  }
  if (s.timestamp_ms) {
    w.Raw(",\"timestamp\":");
    w.String(core::FormatTimestamp(s.timestamp_ms));
  }
  w.Raw('}');
}

}  // namespace

void AppendTaskJson(std::string& out, const Task& t) {
  out.reserve(out.size() + EstimateTaskJsonSize(t));
  JsonTextWriter w(out);
  w.Raw("{\"id\":");
  w.String(t.id);
  w.Raw(",\"contextId\":");
  w.String(t.context_id);
  w.Raw(",\"status\":");
  WriteTaskStatus(w, t.status);
  if (!t.artifacts.empty()) {
    w.Raw(",\"artifacts\":");
    w.Array(t.artifacts, WriteArtifact);
  }
  if (!t.history.empty()) {
    w.Raw(",\"history\":");
    w.Array(t.history, WriteMessage);
  }
  w.OptObject(",\"metadata\":", t.metadata);
  w.Raw('}');
}

// ---- decoding ---------------------------------------------------------------------------

Result<Part> PartFromJson(const json::value& v, std::string_view path) {
  auto obj = AsObject(v, path);
  if (!obj) return std::move(obj).error();
  const json::object& o = **obj;
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
  auto md = OptObject(o, path, "metadata");
  if (!md) return std::move(md).error();
  p.metadata = std::move(md).value();
  auto fn = OptString(o, path, "filename");
  if (!fn) return std::move(fn).error();
  p.filename = std::move(fn).value();
  auto mt = OptString(o, path, "mediaType", "media_type");
  if (!mt) return std::move(mt).error();
  p.media_type = std::move(mt).value();
  return p;
}

Result<Message> MessageFromJson(const json::value& v, std::string_view path) {
  auto obj = AsObject(v, path);
  if (!obj) return std::move(obj).error();
  const json::object& o = **obj;
  Message m;
  auto id = ReqString(o, path, "messageId", "message_id");
  if (!id) return std::move(id).error();
  m.message_id = std::move(id).value();
  auto ctx = OptString(o, path, "contextId", "context_id");
  if (!ctx) return std::move(ctx).error();
  m.context_id = std::move(ctx).value();
  auto tid = OptString(o, path, "taskId", "task_id");
  if (!tid) return std::move(tid).error();
  m.task_id = std::move(tid).value();
  const json::value* role = Find(o, "role");
  if (!role) return FieldError(Join(path, "role"), "required field is missing");
  if (!ParseRole(*role, m.role) || m.role == Role::kUnspecified)
    return FieldError(Join(path, "role"), "expected \"ROLE_USER\" or \"ROLE_AGENT\"");
  auto parts = PartsFromJson(o, path, true);
  if (!parts) return std::move(parts).error();
  m.parts = std::move(parts).value();
  auto md = OptObject(o, path, "metadata");
  if (!md) return std::move(md).error();
  m.metadata = std::move(md).value();
  auto ext = OptStringList(o, path, "extensions");
  if (!ext) return std::move(ext).error();
  m.extensions = std::move(ext).value();
  auto refs = OptStringList(o, path, "referenceTaskIds", "reference_task_ids");
  if (!refs) return std::move(refs).error();
  m.reference_task_ids = std::move(refs).value();
  return m;
}

Result<Artifact> ArtifactFromJson(const json::value& v, std::string_view path) {
  auto obj = AsObject(v, path);
  if (!obj) return std::move(obj).error();
  const json::object& o = **obj;
  Artifact a;
  auto id = ReqString(o, path, "artifactId", "artifact_id");
  if (!id) return std::move(id).error();
  a.artifact_id = std::move(id).value();
  auto name = OptString(o, path, "name");
  if (!name) return std::move(name).error();
  a.name = std::move(name).value();
  auto desc = OptString(o, path, "description");
  if (!desc) return std::move(desc).error();
  a.description = std::move(desc).value();
  auto parts = PartsFromJson(o, path, false);
  if (!parts) return std::move(parts).error();
  a.parts = std::move(parts).value();
  auto md = OptObject(o, path, "metadata");
  if (!md) return std::move(md).error();
  a.metadata = std::move(md).value();
  auto ext = OptStringList(o, path, "extensions");
  if (!ext) return std::move(ext).error();
  a.extensions = std::move(ext).value();
  return a;
}

Result<Task> TaskFromJson(const json::value& v, std::string_view path) {
  auto obj = AsObject(v, path);
  if (!obj) return std::move(obj).error();
  const json::object& o = **obj;
  Task t;
  auto id = ReqString(o, path, "id");
  if (!id) return std::move(id).error();
  t.id = std::move(id).value();
  auto ctx = OptString(o, path, "contextId", "context_id");
  if (!ctx) return std::move(ctx).error();
  t.context_id = std::move(ctx).value();
  const json::value* st = Find(o, "status");
  std::string sp = Join(path, "status");
  if (!st || !st->is_object()) return FieldError(sp, "required object is missing");
  const auto& so = st->get_object();
  const json::value* state = Find(so, "state");
  if (!state || !ParseTaskState(*state, t.status.state))
    return FieldError(Join(sp, "state"), "expected a TASK_STATE_* name");
  if (const json::value* m = Find(so, "message"); m && !m->is_null()) {
    auto msg = MessageFromJson(*m, Join(sp, "message"));
    if (!msg) return std::move(msg).error();
    t.status.message = std::move(msg).value();
  }
  if (const json::value* ts = Find(so, "timestamp"); ts && !ts->is_null()) {
    if (!ts->is_string() || !core::ParseTimestamp(ts->get_string(), t.status.timestamp_ms))
      return FieldError(Join(sp, "timestamp"), "expected an RFC 3339 timestamp");
  }
  if (const json::value* arts = Find(o, "artifacts"); arts && !arts->is_null()) {
    if (!arts->is_array()) return FieldError(Join(path, "artifacts"), "expected an array");
    for (size_t i = 0; i < arts->get_array().size(); ++i) {
      auto a = ArtifactFromJson(arts->get_array()[i], Index(Join(path, "artifacts"), i));
      if (!a) return std::move(a).error();
      t.artifacts.push_back(std::move(a).value());
    }
  }
  if (const json::value* hist = Find(o, "history"); hist && !hist->is_null()) {
    if (!hist->is_array()) return FieldError(Join(path, "history"), "expected an array");
    for (size_t i = 0; i < hist->get_array().size(); ++i) {
      auto m = MessageFromJson(hist->get_array()[i], Index(Join(path, "history"), i));
      if (!m) return std::move(m).error();
      t.history.push_back(std::move(m).value());
    }
  }
  auto md = OptObject(o, path, "metadata");
  if (!md) return std::move(md).error();
  t.metadata = std::move(md).value();
  return t;
}

Result<SendMessageRequest> SendMessageRequestFromJson(const json::value& params) {
  auto obj = AsObject(params, "params");
  if (!obj) return std::move(obj).error();
  const json::object& o = **obj;
  SendMessageRequest r;
  auto tenant = OptString(o, "params", "tenant");
  if (!tenant) return std::move(tenant).error();
  r.tenant = std::move(tenant).value();
  const json::value* m = Find(o, "message");
  if (!m) return FieldError("params.message", "required field is missing");
  auto msg = MessageFromJson(*m, "params.message");
  if (!msg) return std::move(msg).error();
  r.message = std::move(msg).value();
  if (const json::value* c = Find(o, "configuration"); c && !c->is_null()) {
    auto co = AsObject(*c, "params.configuration");
    if (!co) return std::move(co).error();
    const json::object& cfg = **co;
    const char* cp = "params.configuration";
    auto modes = OptStringList(cfg, cp, "acceptedOutputModes", "accepted_output_modes");
    if (!modes) return std::move(modes).error();
    r.configuration.accepted_output_modes = std::move(modes).value();
    auto hl = HistoryLength(cfg, cp);
    if (!hl) return std::move(hl).error();
    r.configuration.history_length = hl.value();
    auto ri = OptBool(cfg, cp, "returnImmediately", "return_immediately");
    if (!ri) return std::move(ri).error();
    r.configuration.return_immediately = ri.value().value_or(false);
    if (const json::value* pc =
            Find(cfg, "taskPushNotificationConfig", "task_push_notification_config");
        pc && !pc->is_null()) {
      auto push = PushConfigFromJson(*pc, Join(cp, "taskPushNotificationConfig"), false);
      if (!push) return std::move(push).error();
      r.configuration.push_notification_config = std::move(push).value();
    }
  }
  auto md = OptObject(o, "params", "metadata");
  if (!md) return std::move(md).error();
  r.metadata = std::move(md).value();
  return r;
}

Result<GetTaskRequest> GetTaskRequestFromJson(const json::value& params) {
  auto obj = AsObject(params, "params");
  if (!obj) return std::move(obj).error();
  GetTaskRequest r;
  auto id = ReqString(**obj, "params", "id");
  if (!id) return std::move(id).error();
  r.id = std::move(id).value();
  auto tenant = OptString(**obj, "params", "tenant");
  if (!tenant) return std::move(tenant).error();
  r.tenant = std::move(tenant).value();
  auto hl = HistoryLength(**obj, "params");
  if (!hl) return std::move(hl).error();
  r.history_length = hl.value();
  return r;
}

Result<ListTasksRequest> ListTasksRequestFromJson(const json::value& params) {
  ListTasksRequest r;
  if (params.is_null()) return r;  // all filters optional
  auto obj = AsObject(params, "params");
  if (!obj) return std::move(obj).error();
  const json::object& o = **obj;
  auto tenant = OptString(o, "params", "tenant");
  if (!tenant) return std::move(tenant).error();
  r.tenant = std::move(tenant).value();
  auto ctx = OptString(o, "params", "contextId", "context_id");
  if (!ctx) return std::move(ctx).error();
  r.context_id = std::move(ctx).value();
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
  auto ps = OptInt(o, "params", "pageSize", "page_size");
  if (!ps) return std::move(ps).error();
  if (ps.value()) {
    if (*ps.value() < 1 || *ps.value() > 100)
      return FieldError("params.pageSize", "must be between 1 and 100");
    r.page_size = static_cast<int32_t>(*ps.value());
  }
  auto tok = OptString(o, "params", "pageToken", "page_token");
  if (!tok) return std::move(tok).error();
  r.page_token = std::move(tok).value();
  auto hl = HistoryLength(o, "params");
  if (!hl) return std::move(hl).error();
  r.history_length = hl.value();
  if (const json::value* ts = Find(o, "statusTimestampAfter", "status_timestamp_after");
      ts && !ts->is_null()) {
    int64_t ms = 0;
    if (!ts->is_string() || !core::ParseTimestamp(ts->get_string(), ms))
      return FieldError("params.statusTimestampAfter", "expected an RFC 3339 timestamp");
    r.status_timestamp_after_ms = ms;
  }
  auto ia = OptBool(o, "params", "includeArtifacts", "include_artifacts");
  if (!ia) return std::move(ia).error();
  r.include_artifacts = ia.value().value_or(false);
  return r;
}

Result<CancelTaskRequest> CancelTaskRequestFromJson(const json::value& params) {
  auto obj = AsObject(params, "params");
  if (!obj) return std::move(obj).error();
  CancelTaskRequest r;
  auto id = ReqString(**obj, "params", "id");
  if (!id) return std::move(id).error();
  r.id = std::move(id).value();
  auto tenant = OptString(**obj, "params", "tenant");
  if (!tenant) return std::move(tenant).error();
  r.tenant = std::move(tenant).value();
  auto md = OptObject(**obj, "params", "metadata");
  if (!md) return std::move(md).error();
  r.metadata = std::move(md).value();
  return r;
}

}  // namespace a2ad::protocol::v10
