#include "a2ad/protocol/run_snapshot.hpp"

#include <algorithm>
#include <array>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::protocol {
namespace json = boost::json;

namespace {

// One table per struct names each typed member once: its JSON name, how it is read, whether
// it is written, and how. A member read with an unexpected type goes to `extra` instead and
// is written back from there, unless the typed member has been set since (it wins).

bool Take(json::value& v, std::string& out) {
  if (!v.is_string()) return false;
  out = v.get_string();
  return true;
}
bool Take(json::value& v, int64_t& out) {
  if (!v.is_int64()) return false;
  out = v.get_int64();
  return true;
}
bool Take(json::value& v, json::object& out) {
  if (!v.is_object()) return false;
  out = std::move(v.get_object());
  return true;
}
bool Take(json::value& v, json::array& out) {
  if (!v.is_array()) return false;
  out = std::move(v.get_array());
  return true;
}
bool Take(json::value& v, json::value& out) {  // any type
  out = std::move(v);
  return true;
}
template <class T>
bool Take(json::value& v, std::optional<T>& out) {
  T taken;
  if (!Take(v, taken)) return false;
  out = std::move(taken);
  return true;
}

bool Set(const std::string& s) { return !s.empty(); }
bool Set(int64_t n) { return n != 0; }
bool Set(const json::object& o) { return !o.empty(); }
template <class T>
bool Set(const std::optional<T>& o) {
  return o.has_value();
}

void Put(JsonTextWriter& w, const std::string& s) { w.String(s); }
void Put(JsonTextWriter& w, int64_t n) { w.Int(n); }
void Put(JsonTextWriter& w, const json::object& o) { w.Object(o); }
void Put(JsonTextWriter& w, const json::array& a) {  // (as Value(a) would, without a copy)
  w.Array(a, [](JsonTextWriter& x, const json::value& v) { x.Value(v); });
}
void Put(JsonTextWriter& w, const json::value& v) { w.Value(v); }
template <class T>
void Put(JsonTextWriter& w, const std::optional<T>& o) {
  Put(w, *o);
}

template <class S>
struct Member {
  std::string_view name;
  bool (*take)(json::value&, S&);
  bool (*set)(const S&);
  void (*put)(JsonTextWriter&, const S&);
};

template <class S, auto M>
constexpr Member<S> Field(std::string_view name) {
  return {name, [](json::value& v, S& s) { return Take(v, s.*M); },
          [](const S& s) { return Set(s.*M); },
          [](JsonTextWriter& w, const S& s) { Put(w, s.*M); }};
}

bool TakeNodeStates(json::value& v, RunSnapshot& r);
void PutNodeStates(JsonTextWriter& w, const RunSnapshot& r);

bool TakeCounts(json::value& v, RunSnapshot& r) {
  if (!v.is_object()) return false;
  for (const auto& kv : v.get_object())
    if (!kv.value().is_int64()) return false;
  r.interrupt_counts.clear();
  for (const auto& kv : v.get_object())
    r.interrupt_counts.emplace_back(kv.key(), kv.value().get_int64());
  return true;
}

void PutCounts(JsonTextWriter& w, const RunSnapshot& r) {
  w.Raw('{');
  bool first = true;
  for (const auto& [node, n] : r.interrupt_counts) {
    if (!first) w.Raw(',');
    first = false;
    w.Key(node);
    w.Int(n);
  }
  w.Raw('}');
}

bool TakeChildRuns(json::value& v, RunSnapshot& r) {
  if (!v.is_array()) return false;
  for (const auto& c : v.get_array()) {
    if (!c.is_object() || c.get_object().size() != 2) return false;
    const json::value* id = c.get_object().if_contains("runId");
    if (!id || !id->is_string() || !c.get_object().contains("status")) return false;
  }
  r.child_runs.clear();
  for (auto& c : v.get_array())
    r.child_runs.push_back(ChildRun{std::string(c.get_object().at("runId").get_string()),
                                    std::move(c.get_object().at("status"))});
  return true;
}

void PutChildRuns(JsonTextWriter& w, const RunSnapshot& r) {
  w.Array(r.child_runs, [](JsonTextWriter& a, const ChildRun& c) {
    a.Raw("{\"runId\":");
    a.String(c.run_id);
    a.Raw(",\"status\":");
    a.Value(c.status);
    a.Raw('}');
  });
}

using R = RunSnapshot;
// Whether a run's always-written member `name` is written though empty: yes, unless the run
// read it with another type (kept in extra, and written from there).
bool Whole(const R& r, std::string_view name) { return !r.empty() && !r.extra.contains(name); }

// The order members are written in (the fold's order of setting them).
const std::array<Member<R>, 29> kRunMembers = {
    Field<R, &R::run_id>("runId"),
    Field<R, &R::workflow_id>("workflowId"),
    Field<R, &R::status>("status"),
    Field<R, &R::created_at>("createdAt"),
    Field<R, &R::started_at>("startedAt"),
    Field<R, &R::completed_at>("completedAt"),
    // A run has variables and nodeStates, even empty ones (unless it holds another type).
    Member<R>{"variables", [](json::value& v, R& r) { return Take(v, r.variables); },
              [](const R& r) { return !r.variables.empty() || Whole(r, "variables"); },
              [](JsonTextWriter& w, const R& r) { w.Object(r.variables); }},
    Member<R>{"nodeStates", TakeNodeStates,
              [](const R& r) { return !r.node_states.empty() || Whole(r, "nodeStates"); },
              PutNodeStates},
    Field<R, &R::tags>("tags"),
    Field<R, &R::inputs>("inputs"),
    Field<R, &R::request_digest>("requestDigest"),
    Field<R, &R::metadata>("metadata"),
    Field<R, &R::parent_run_id>("parentRunId"),
    Field<R, &R::parent_node_id>("parentNodeId"),
    Field<R, &R::engine_version>("engineVersion"),
    Field<R, &R::event_log_schema_version>("eventLogSchemaVersion"),
    Field<R, &R::accepted_messages>("acceptedMessages"),
    Field<R, &R::current_node_id>("currentNodeId"),
    Member<R>{"interruptCounts", TakeCounts, [](const R& r) { return !r.interrupt_counts.empty(); },
              PutCounts},
    Field<R, &R::node_executions>("nodeExecutions"),
    Field<R, &R::interrupt>("interrupt"),
    Field<R, &R::resume_values>("resumeValues"),
    Member<R>{"childRuns", TakeChildRuns, [](const R& r) { return !r.child_runs.empty(); },
              PutChildRuns},
    Field<R, &R::waiting_on>("waitingOn"),
    Field<R, &R::pause>("pause"),
    Field<R, &R::last_resume>("lastResume"),
    Field<R, &R::outputs>("outputs"),
    Field<R, &R::error>("error"),
    Field<R, &R::failed_node_id>("failedNodeId"),
};

using N = NodeState;
const std::array<Member<N>, 13> kNodeMembers = {
    Field<N, &N::status>("status"),
    Field<N, &N::type_id>("typeId"),
    Field<N, &N::attempt>("attempt"),
    Field<N, &N::started_at>("startedAt"),
    Field<N, &N::wake_at>("wakeAt"),
    Field<N, &N::started_at_ms>("startedAtMs"),
    Field<N, &N::child_run_id>("childRunId"),
    Field<N, &N::child_workflow_id>("childWorkflowId"),
    Field<N, &N::completed_at>("completedAt"),
    Field<N, &N::outputs>("outputs"),
    Field<N, &N::error>("error"),
    Field<N, &N::reason>("reason"),
    Field<N, &N::effect>("effect"),
};

template <class S, size_t K>
S Read(S s, json::object& o, const std::array<Member<S>, K>& members) {
  for (auto& kv : o) {
    auto m = std::find_if(members.begin(), members.end(),
                          [&](const Member<S>& x) { return x.name == kv.key(); });
    if (m == members.end() || !m->take(kv.value(), s)) s.extra[kv.key()] = std::move(kv.value());
  }
  return s;
}

template <class S, size_t K>
void Write(JsonTextWriter& w, const S& s, const std::array<Member<S>, K>& members) {
  w.Raw('{');
  bool first = true;
  auto key = [&](std::string_view name) {
    if (!first) w.Raw(',');
    first = false;
    w.Key(name);
  };
  for (const Member<S>& m : members)
    if (m.set(s)) {
      key(m.name);
      m.put(w, s);
    }
  for (const auto& kv : s.extra) {
    auto m = std::find_if(members.begin(), members.end(),
                          [&](const Member<S>& x) { return x.name == kv.key(); });
    if (m != members.end() && m->set(s)) continue;  // set since it was read: the typed one
    key(kv.key());
    w.Value(kv.value());
  }
  w.Raw('}');
}

bool TakeNodeStates(json::value& v, RunSnapshot& r) {
  if (!v.is_object()) return false;
  for (const auto& kv : v.get_object())
    if (!kv.value().is_object()) return false;  // not a shape this host wrote: kept whole
  r.node_states.clear();
  r.node_states.reserve(v.get_object().size());
  for (auto& kv : v.get_object()) {
    NodeState s;
    s.id = kv.key();
    r.node_states.push_back(Read(std::move(s), kv.value().get_object(), kNodeMembers));
  }
  return true;
}

void PutNodeStates(JsonTextWriter& w, const RunSnapshot& r) {
  w.Raw('{');
  bool first = true;
  for (const NodeState& s : r.node_states) {
    if (!first) w.Raw(',');
    first = false;
    w.Key(s.id);
    Write(w, s, kNodeMembers);
  }
  w.Raw('}');
}

}  // namespace

namespace {

template <class States>
auto* FindNode(States& states, std::string_view id) {
  auto it =
      std::find_if(states.begin(), states.end(), [id](const NodeState& s) { return s.id == id; });
  return it == states.end() ? nullptr : &*it;
}

}  // namespace

const NodeState* RunSnapshot::Node(std::string_view id) const { return FindNode(node_states, id); }

NodeState* RunSnapshot::Node(std::string_view id) { return FindNode(node_states, id); }

NodeState& RunSnapshot::NodeOrNew(std::string_view id) {
  if (NodeState* s = Node(id)) return *s;
  NodeState& s = node_states.emplace_back();
  s.id = id;
  return s;
}

int64_t RunSnapshot::InterruptCount(std::string_view id) const {
  for (const auto& [node, n] : interrupt_counts)
    if (node == id) return n;
  return 0;
}

const json::object& NodeState::OutputsObject() const {
  static const json::object none;
  return outputs && outputs->is_object() ? outputs->get_object() : none;
}

const json::object& NodeState::EffectObject() const { return OrEmpty(effect); }

const json::object& OrEmpty(const std::optional<json::object>& o) {
  static const json::object none;
  return o ? *o : none;
}

const NodeState& NoNodeState() {
  static const NodeState none;
  return none;
}

RunSnapshot RunSnapshotFromJson(json::object o) { return Read(RunSnapshot{}, o, kRunMembers); }

void WriteRunSnapshot(JsonTextWriter& w, const RunSnapshot& run) { Write(w, run, kRunMembers); }

json::object RunSnapshotToJson(const RunSnapshot& run) {
  std::string text;
  JsonTextWriter w(text);
  WriteRunSnapshot(w, run);
  auto parsed = ParseJsonObject(text, "run");
  return parsed ? std::move(parsed).value() : json::object();
}

}  // namespace a2ad::protocol
