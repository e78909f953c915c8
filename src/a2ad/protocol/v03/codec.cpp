#include "a2ad/protocol/v03/codec.hpp"

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/push_config_codec.hpp"

namespace a2ad::protocol::v03 {
namespace json = boost::json;
using core::Result;

namespace {

constexpr std::string_view kStateNames[] = {"unknown",        "submitted", "working",
                                            "completed",      "failed",    "canceled",
                                            "input-required", "rejected",  "auth-required"};

json::array StringsToJson(const std::vector<std::string>& v) {
  json::array a;
  a.reserve(v.size());
  for (const auto& s : v) a.emplace_back(s);
  return a;
}

json::object StatusToJson(const TaskStatus& s) {
  json::object o;
  o["state"] = TaskStateName(s.state);
  if (s.message) o["message"] = MessageToJson(*s.message);
  if (s.timestamp_ms) o["timestamp"] = core::FormatTimestamp(s.timestamp_ms);
  return o;
}

json::array PartsToJson(const std::vector<Part>& parts) {
  json::array a;
  a.reserve(parts.size());
  for (const auto& p : parts) a.emplace_back(PartToJson(p));
  return a;
}

Result<std::optional<int32_t>> HistoryLength(const json::object& o, std::string_view path) {
  A2AD_TRY_ASSIGN(auto h, OptInt(o, path, "historyLength"));
  if (!h) return std::optional<int32_t>();
  if (*h < 0) return FieldError(Join(path, "historyLength"), "must not be negative");
  if (*h == 0) return std::optional<int32_t>();  // v0.3: 0 = unlimited
  if (*h > INT32_MAX) return FieldError(Join(path, "historyLength"), "too large");
  return std::optional<int32_t>(static_cast<int32_t>(*h));
}

}  // namespace

std::string_view TaskStateName(TaskState s) { return kStateNames[static_cast<int>(s)]; }

json::object PartToJson(const Part& p) {
  json::object o;
  switch (p.kind) {
    case Part::Kind::kText:
      o["kind"] = "text";
      o["text"] = p.text;
      break;
    case Part::Kind::kRaw:
    case Part::Kind::kUrl: {
      o["kind"] = "file";
      json::object f;
      f[p.kind == Part::Kind::kRaw ? "bytes" : "uri"] = p.text;
      if (!p.filename.empty()) f["name"] = p.filename;
      if (!p.media_type.empty()) f["mimeType"] = p.media_type;
      o["file"] = std::move(f);
      break;
    }
    case Part::Kind::kData:
      o["kind"] = "data";
      if (p.data.is_object()) {
        o["data"] = p.data;
      } else {  // v0.3 DataPart.data must be an object: wrap, as the v1 SDK compat layers do
        o["data"] = json::object{{"value", p.data}};
      }
      break;
  }
  if (!p.metadata.empty()) o["metadata"] = p.metadata;
  return o;
}

json::object MessageToJson(const Message& m) {
  json::object o;
  o["kind"] = "message";
  o["messageId"] = m.message_id;
  o["role"] = m.role == Role::kAgent ? "agent" : "user";
  o["parts"] = PartsToJson(m.parts);
  if (!m.context_id.empty()) o["contextId"] = m.context_id;
  if (!m.task_id.empty()) o["taskId"] = m.task_id;
  if (!m.reference_task_ids.empty()) o["referenceTaskIds"] = StringsToJson(m.reference_task_ids);
  if (!m.extensions.empty()) o["extensions"] = StringsToJson(m.extensions);
  if (!m.metadata.empty()) o["metadata"] = m.metadata;
  return o;
}

json::object ArtifactToJson(const Artifact& a) {
  json::object o;
  o["artifactId"] = a.artifact_id;
  if (!a.name.empty()) o["name"] = a.name;
  if (!a.description.empty()) o["description"] = a.description;
  o["parts"] = PartsToJson(a.parts);
  if (!a.metadata.empty()) o["metadata"] = a.metadata;
  if (!a.extensions.empty()) o["extensions"] = StringsToJson(a.extensions);
  return o;
}

json::object TaskToJson(const Task& t) {
  json::object o;
  o["kind"] = "task";
  o["id"] = t.id;
  o["contextId"] = t.context_id;
  o["status"] = StatusToJson(t.status);
  if (!t.history.empty()) {
    json::array a;
    a.reserve(t.history.size());
    for (const auto& m : t.history) a.emplace_back(MessageToJson(m));
    o["history"] = std::move(a);
  }
  if (!t.artifacts.empty()) {
    json::array a;
    a.reserve(t.artifacts.size());
    for (const auto& x : t.artifacts) a.emplace_back(ArtifactToJson(x));
    o["artifacts"] = std::move(a);
  }
  if (!t.metadata.empty()) o["metadata"] = t.metadata;
  return o;
}

json::object StreamEventToJson(const StreamEvent& e) {
  switch (e.kind) {
    case StreamEvent::Kind::kTask:
      return TaskToJson(e.task);
    case StreamEvent::Kind::kMessage:
      return MessageToJson(e.message);
    case StreamEvent::Kind::kStatusUpdate: {
      const auto& u = e.status_update;
      json::object o;
      o["kind"] = "status-update";
      o["taskId"] = u.task_id;
      o["contextId"] = u.context_id;
      o["status"] = StatusToJson(u.status);
      o["final"] = u.final;
      if (!u.metadata.empty()) o["metadata"] = u.metadata;
      return o;
    }
    case StreamEvent::Kind::kArtifactUpdate: {
      const auto& u = e.artifact_update;
      json::object o;
      o["kind"] = "artifact-update";
      o["taskId"] = u.task_id;
      o["contextId"] = u.context_id;
      o["artifact"] = ArtifactToJson(u.artifact);
      o["append"] = u.append;
      o["lastChunk"] = u.last_chunk;
      if (!u.metadata.empty()) o["metadata"] = u.metadata;
      return o;
    }
  }
  return {};
}

// ---- direct text encoding (mirrors the builders above, member for member) ---------------

namespace {

void WritePart(JsonTextWriter& w, const Part& p) {
  switch (p.kind) {
    case Part::Kind::kText:
      w.Raw("{\"kind\":\"text\",\"text\":");
      w.String(p.text);
      break;
    case Part::Kind::kRaw:
    case Part::Kind::kUrl:
      w.Raw(p.kind == Part::Kind::kRaw ? "{\"kind\":\"file\",\"file\":{\"bytes\":"
                                       : "{\"kind\":\"file\",\"file\":{\"uri\":");
      w.String(p.text);
      if (!p.filename.empty()) {
        w.Raw(",\"name\":");
        w.String(p.filename);
      }
      if (!p.media_type.empty()) {
        w.Raw(",\"mimeType\":");
        w.String(p.media_type);
      }
      w.Raw('}');
      break;
    case Part::Kind::kData:
      w.Raw("{\"kind\":\"data\",\"data\":");
      if (p.data.is_object()) {
        w.Value(p.data);
      } else {  // wrapped as {"value": ...}, as PartToJson does
        w.Raw("{\"value\":");
        w.Value(p.data);
        w.Raw('}');
      }
      break;
  }
  w.OptObject(",\"metadata\":", p.metadata);
  w.Raw('}');
}

void WriteMessage(JsonTextWriter& w, const Message& m) {
  w.Raw("{\"kind\":\"message\",\"messageId\":");
  w.String(m.message_id);
  w.Raw(m.role == Role::kAgent ? ",\"role\":\"agent\"" : ",\"role\":\"user\"");
  w.Raw(",\"parts\":");
  w.Array(m.parts, WritePart);
  w.OptString(",\"contextId\":", m.context_id);
  w.OptString(",\"taskId\":", m.task_id);
  w.OptStrings(",\"referenceTaskIds\":", m.reference_task_ids);
  w.OptStrings(",\"extensions\":", m.extensions);
  w.OptObject(",\"metadata\":", m.metadata);
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

void WriteStatus(JsonTextWriter& w, const TaskStatus& s) {
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
  w.Raw("{\"kind\":\"task\",\"id\":");
  w.String(t.id);
  w.Raw(",\"contextId\":");
  w.String(t.context_id);
  w.Raw(",\"status\":");
  WriteStatus(w, t.status);
  if (!t.history.empty()) {
    w.Raw(",\"history\":");
    w.Array(t.history, WriteMessage);
  }
  if (!t.artifacts.empty()) {
    w.Raw(",\"artifacts\":");
    w.Array(t.artifacts, WriteArtifact);
  }
  w.OptObject(",\"metadata\":", t.metadata);
  w.Raw('}');
}

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
