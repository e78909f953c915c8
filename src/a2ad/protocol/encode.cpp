#include "a2ad/protocol/encode.hpp"

#include <boost/container/small_vector.hpp>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::protocol {
namespace json = boost::json;

namespace {

constexpr std::string_view kProtoStates[] = {
    "TASK_STATE_UNSPECIFIED",    "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",      "TASK_STATE_FAILED",    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED",  "TASK_STATE_AUTH_REQUIRED"};
constexpr std::string_view kRoles[] = {"ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"};

// A member name as the text sink writes it after another member, `,"name":`, so that a name
// is one append. Names are literals that need no escaping; KEY("name") makes one.
struct Name {
  std::string_view text;
  std::string_view bare() const { return text.substr(2, text.size() - 4); }
};
#define KEY(name) \
  Name { ",\"" name "\":" }

// Two sinks with one interface, so that each shape below is written once. A container's
// first member or item is written without a comma: one flag is enough, since a container that
// closes always leaves its parent with at least one member.

class TextSink {
 public:
  explicit TextSink(std::string& out) : w_(out) {}
  void Open() { Begin('{'); }
  void Close() { End('}'); }
  void OpenArray() { Begin('['); }
  void CloseArray() { End(']'); }
  void Item() { Comma(); }
  void Key(Name name) {
    w_.Raw(first_ ? name.text.substr(1) : name.text);
    first_ = false;
  }
  void String(std::string_view s) { w_.String(s); }
  void Bool(bool b) { w_.Bool(b); }
  void Value(const json::value& v) { w_.Value(v); }
  void Object(const json::object& o) { w_.Object(o); }

 private:
  void Begin(char c) {
    w_.Raw(c);
    first_ = true;
  }
  void End(char c) {
    w_.Raw(c);
    first_ = false;
  }
  void Comma() {
    if (!first_) w_.Raw(',');
    first_ = false;
  }
  JsonTextWriter w_;
  bool first_ = true;
};

class DomSink {
 public:
  void Open() {
    json::value& v = Slot();
    v.emplace_object();
    open_.push_back(&v);
  }
  void Close() { open_.pop_back(); }
  void OpenArray() {
    json::value& v = Slot();
    v.emplace_array();
    open_.push_back(&v);
  }
  void CloseArray() { open_.pop_back(); }
  void Item() {}
  void Key(Name name) { key_ = name.bare(); }
  void String(std::string_view s) { Slot() = s; }
  void Bool(bool b) { Slot() = b; }
  void Value(const json::value& v) { Slot() = v; }
  void Object(const json::object& o) { Slot() = o; }
  json::object Take() { return std::move(root_.as_object()); }

 private:
  // Where the next value goes: the root, the open object's member `key_`, or a new item of
  // the open array. Only the innermost open container grows, so the pointers stay valid.
  json::value& Slot() {
    if (open_.empty()) return root_;
    json::value& top = *open_.back();
    if (top.is_object()) {
      RoomForOne(top.get_object());
      return top.get_object()[key_];
    }
    RoomForOne(top.get_array());
    return top.get_array().emplace_back(nullptr);
  }
  json::value root_;
  // The deepest shape (a task's status message's file part) opens 6: no allocation per DOM.
  boost::container::small_vector<json::value*, 8> open_;
  std::string_view key_;
};

template <class S>
class Encoder {
 public:
  Encoder(S& s, Wire w) : s_(s), w_(w) {}

  void Part(const protocol::Part& p) {
    s_.Open();
    switch (w_) {
      case Wire::kV10:
        Member(p.kind == Part::Kind::kText  ? KEY("text")
               : p.kind == Part::Kind::kRaw ? KEY("raw")
               : p.kind == Part::Kind::kUrl ? KEY("url")
                                            : KEY("data"));
        if (p.kind == Part::Kind::kData)
          s_.Value(p.data);
        else
          s_.String(p.text);
        OptObject(KEY("metadata"), p.metadata);
        OptString(KEY("filename"), p.filename);
        OptString(KEY("mediaType"), p.media_type);
        break;
      case Wire::kV03:
      case Wire::kV03Proto: {
        const bool rpc = w_ == Wire::kV03;
        const bool file = p.kind == Part::Kind::kRaw || p.kind == Part::Kind::kUrl;
        if (rpc) Member(KEY("kind"), p.kind == Part::Kind::kText ? "text" : file ? "file" : "data");
        if (p.kind == Part::Kind::kText) {
          Member(KEY("text"), p.text);
        } else if (file) {
          Member(KEY("file"));
          s_.Open();
          const bool raw = p.kind == Part::Kind::kRaw;
          Member(rpc ? (raw ? KEY("bytes") : KEY("uri"))
                     : (raw ? KEY("fileWithBytes") : KEY("fileWithUri")),
                 p.text);
          OptString(KEY("name"), p.filename);
          OptString(KEY("mimeType"), p.media_type);
          s_.Close();
        } else {
          // v0.3's DataPart holds an object (a Struct in the proto): wrap any other value.
          Member(KEY("data"));
          if (!rpc) {
            s_.Open();
            Member(KEY("data"));
          }
          if (p.data.is_object()) {
            s_.Value(p.data);
          } else {
            s_.Open();
            Member(KEY("value"));
            s_.Value(p.data);
            s_.Close();
          }
          if (!rpc) s_.Close();
        }
        OptObject(KEY("metadata"), p.metadata);
        break;
      }
    }
    s_.Close();
  }

  void Message(const protocol::Message& m) {
    s_.Open();
    if (w_ == Wire::kV03) Member(KEY("kind"), "message");
    Member(KEY("messageId"), m.message_id);
    OptString(KEY("contextId"), m.context_id);
    OptString(KEY("taskId"), m.task_id);
    Member(KEY("role"), RoleName(m.role, w_));
    Parts(w_ == Wire::kV03Proto ? KEY("content") : KEY("parts"), m.parts);
    OptObject(KEY("metadata"), m.metadata);
    OptStrings(KEY("extensions"), m.extensions);
    if (w_ != Wire::kV03Proto) OptStrings(KEY("referenceTaskIds"), m.reference_task_ids);
    s_.Close();
  }

  void Artifact(const protocol::Artifact& a) {
    s_.Open();
    Member(KEY("artifactId"), a.artifact_id);
    OptString(KEY("name"), a.name);
    OptString(KEY("description"), a.description);
    Parts(KEY("parts"), a.parts);
    OptObject(KEY("metadata"), a.metadata);
    OptStrings(KEY("extensions"), a.extensions);
    s_.Close();
  }

  void Status(const TaskStatus& st) {
    s_.Open();
    Member(KEY("state"), TaskStateName(st.state, w_));
    if (st.message) {
      Member(KEY("message"));
      Message(*st.message);
    }
    if (st.timestamp_ms) Member(KEY("timestamp"), core::FormatTimestamp(st.timestamp_ms));
    s_.Close();
  }

  void Task(const protocol::Task& t) {
    s_.Open();
    if (w_ == Wire::kV03) Member(KEY("kind"), "task");
    Member(KEY("id"), t.id);
    if (w_ == Wire::kV03Proto)
      OptString(KEY("contextId"), t.context_id);
    else
      Member(KEY("contextId"), t.context_id);
    Member(KEY("status"));
    Status(t.status);
    if (!t.artifacts.empty()) {
      List(KEY("artifacts"), t.artifacts, [this](const protocol::Artifact& a) { Artifact(a); });
    }
    if (!t.history.empty()) {
      List(KEY("history"), t.history, [this](const protocol::Message& m) { Message(m); });
    }
    OptObject(KEY("metadata"), t.metadata);
    s_.Close();
  }

  void Event(const StreamEvent& e, Final f) {
    const bool bare = w_ == Wire::kV03;  // v0.3 JSON-RPC: the object itself, with its kind
    if (!bare) s_.Open();
    switch (e.kind) {
      case StreamEvent::Kind::kTask:
        if (!bare) Member(KEY("task"));
        Task(e.task);
        break;
      case StreamEvent::Kind::kMessage:
        if (!bare) Member(KEY("message"));
        Message(e.message);
        break;
      case StreamEvent::Kind::kStatusUpdate: {
        const auto& u = e.status_update;
        const bool final = u.final && f == Final::kAsProjected;
        if (!bare) Member(KEY("statusUpdate"));
        s_.Open();
        if (bare) Member(KEY("kind"), "status-update");
        Member(KEY("taskId"), u.task_id);
        Member(KEY("contextId"), u.context_id);
        Member(KEY("status"));
        Status(u.status);
        if (bare || (w_ == Wire::kV03Proto && final)) Flag(KEY("final"), final);
        OptObject(KEY("metadata"), u.metadata);
        s_.Close();
        break;
      }
      case StreamEvent::Kind::kArtifactUpdate: {
        const auto& u = e.artifact_update;
        if (!bare) Member(KEY("artifactUpdate"));
        s_.Open();
        if (bare) Member(KEY("kind"), "artifact-update");
        Member(KEY("taskId"), u.task_id);
        Member(KEY("contextId"), u.context_id);
        Member(KEY("artifact"));
        Artifact(u.artifact);
        if (bare || u.append) Flag(KEY("append"), u.append);
        if (bare || u.last_chunk) Flag(KEY("lastChunk"), u.last_chunk);
        OptObject(KEY("metadata"), u.metadata);
        s_.Close();
        break;
      }
    }
    if (!bare) s_.Close();
  }

 private:
  void Member(Name name) { s_.Key(name); }
  void Member(Name name, std::string_view value) {
    s_.Key(name);
    s_.String(value);
  }
  void Flag(Name name, bool value) {
    s_.Key(name);
    s_.Bool(value);
  }
  void OptString(Name name, std::string_view value) {
    if (!value.empty()) Member(name, value);
  }
  void OptObject(Name name, const json::object& value) {
    if (value.empty()) return;
    s_.Key(name);
    s_.Object(value);
  }
  void OptStrings(Name name, const std::vector<std::string>& values) {
    if (values.empty()) return;
    List(name, values, [this](const std::string& v) { s_.String(v); });
  }
  void Parts(Name name, const std::vector<protocol::Part>& parts) {
    List(name, parts, [this](const protocol::Part& p) { Part(p); });
  }
  template <class T, class Write>
  void List(Name name, const std::vector<T>& items, Write&& write) {
    s_.Key(name);
    s_.OpenArray();
    for (const auto& item : items) {
      s_.Item();
      write(item);
    }
    s_.CloseArray();
  }

  S& s_;
  Wire w_;
};

template <class Write>
json::object Dom(Wire w, Write&& write) {
  DomSink sink;
  Encoder<DomSink> e(sink, w);
  write(e);
  return sink.Take();
}

#undef KEY

}  // namespace

std::string_view RoleName(Role r, Wire w) {
  if (w == Wire::kV03) return r == Role::kAgent ? "agent" : "user";
  return kRoles[static_cast<int>(r)];
}

std::string_view TaskStateName(TaskState s, Wire w) {
  if (w == Wire::kV03) return TaskStateLabel(s);
  if (w == Wire::kV03Proto && s == TaskState::kCanceled) return "TASK_STATE_CANCELLED";
  return kProtoStates[static_cast<int>(s)];
}

void AppendTask(std::string& out, const Task& t, Wire w) {
  out.reserve(out.size() + EstimateTaskJsonSize(t));
  TextSink sink(out);
  Encoder<TextSink>(sink, w).Task(t);
}

void AppendMessage(std::string& out, const Message& m, Wire w) {
  TextSink sink(out);
  Encoder<TextSink>(sink, w).Message(m);
}

void AppendStreamEvent(std::string& out, const StreamEvent& e, Wire w, Final f) {
  if (e.kind == StreamEvent::Kind::kTask) out.reserve(out.size() + EstimateTaskJsonSize(e.task));
  TextSink sink(out);
  Encoder<TextSink>(sink, w).Event(e, f);
}

json::object PartToJson(const Part& p, Wire w) {
  return Dom(w, [&](auto& e) { e.Part(p); });
}
json::object MessageToJson(const Message& m, Wire w) {
  return Dom(w, [&](auto& e) { e.Message(m); });
}
json::object ArtifactToJson(const Artifact& a, Wire w) {
  return Dom(w, [&](auto& e) { e.Artifact(a); });
}
json::object TaskStatusToJson(const TaskStatus& s, Wire w) {
  return Dom(w, [&](auto& e) { e.Status(s); });
}
json::object TaskToJson(const Task& t, Wire w) {
  return Dom(w, [&](auto& e) { e.Task(t); });
}
json::object StreamEventToJson(const StreamEvent& e, Wire w, Final f) {
  return Dom(w, [&](auto& enc) { enc.Event(e, f); });
}

}  // namespace a2ad::protocol
