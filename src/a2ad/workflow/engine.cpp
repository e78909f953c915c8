#include "a2ad/workflow/engine.hpp"

#include <algorithm>
#include <regex>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/workflow/answer_schema.hpp"
#include "a2ad/workflow/answers.hpp"

namespace a2ad::workflow {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using tasks::EventDraft;

namespace {

// ---- small JSON helpers ------------------------------------------------------------------

std::string_view Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

const json::object& ObjOr(const json::object& o, std::string_view key) {
  static const json::object kEmpty;
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? v->get_object() : kEmpty;
}

int64_t IntOr(const json::object& o, std::string_view key, int64_t fallback) {
  const json::value* v = o.if_contains(key);
  if (!v) return fallback;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->as_double());
  return fallback;
}

EventDraft Ev(std::string type, std::string node, json::object payload) {
  EventDraft d;
  d.type = std::move(type);
  d.node_id = std::move(node);
  d.payload = std::move(payload);
  if (!d.node_id.empty()) d.payload["nodeId"] = d.node_id;
  return d;
}

json::object ErrorObj(std::string_view code, std::string_view message) {
  return json::object{{"code", code}, {"message", message}};
}

// node.failed + run.failed: the run fails with the node's error (DIGEST §3.3 failure sequence).
void FailNode(std::vector<EventDraft>& out, const Node& n, json::object error) {
  out.push_back(Ev(protocol::kEvNodeFailed, n.id, json::object{{"error", error}, {"attempts", 1}}));
  out.push_back(Ev(protocol::kEvRunFailed, "",
                   json::object{{"error", std::move(error)}, {"failedNodeId", n.id}}));
}

void FailRun(std::vector<EventDraft>& out, json::object error) {
  out.push_back(Ev(protocol::kEvRunFailed, "", json::object{{"error", std::move(error)}}));
}

// The node's A2A artifact (nodes with an artifactType), carrying its outputs as a data part.
void NodeArtifact(std::vector<EventDraft>& out, const std::string& run_id, const Node& n,
                  const json::value& data, std::string_view artifact_type) {
  protocol::Artifact a;
  a.artifact_id = run_id + ":" + n.id;
  a.name = n.name.empty() ? n.id : n.name;
  a.parts.push_back(protocol::Part::Data(data));
  out.push_back(Ev(protocol::kEvArtifactCreated, n.id,
                   json::object{{"artifactId", a.artifact_id},
                                {"artifactType", artifact_type},
                                {"artifact", protocol::v10::ArtifactToJson(a)},
                                {"lastChunk", true}}));
}

void CompleteNode(std::vector<EventDraft>& out, const std::string& run_id, const Node& n,
                  json::object outputs, int64_t duration_ms = 0) {
  if (!n.artifact_type.empty()) NodeArtifact(out, run_id, n, outputs, n.artifact_type);
  out.push_back(Ev(protocol::kEvNodeCompleted, n.id,
                   json::object{{"outputs", std::move(outputs)}, {"durationMs", duration_ms}}));
}

// ---- inputs and conditions -----------------------------------------------------------------

// Resolves a node's input ports (static, variable, connection). Absent sources stay absent.
json::object ResolveInputs(const Node& n, const json::object& run) {
  json::object out;
  const json::object& vars = ObjOr(run, "variables");
  const json::object& states = ObjOr(run, "nodeStates");
  for (const auto& kv : n.inputs) {
    const json::object& pv = kv.value().get_object();
    std::string_view type = Str(pv, "type");
    if (type == "static") {
      out[kv.key()] = pv.at("value");
    } else if (type == "variable") {
      if (const json::value* v = vars.if_contains(Str(pv, "variableName"))) out[kv.key()] = *v;
    } else if (type == "connection") {
      const json::object& outputs = ObjOr(ObjOr(states, Str(pv, "nodeId")), "outputs");
      if (const json::value* v = outputs.if_contains(Str(pv, "outputKey"))) out[kv.key()] = *v;
    }
  }
  return out;
}

// "output.approved" / "outputs.a.b" / "a.b" against a node's outputs.
const json::value* Lookup(const json::object& outputs, std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    parts.emplace_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  size_t i = 0;
  if (!parts.empty() && (parts[0] == "output" || parts[0] == "outputs")) i = 1;
  const json::value* cur = nullptr;
  const json::object* obj = &outputs;
  for (; i < parts.size(); ++i) {
    if (!obj) return nullptr;
    cur = obj->if_contains(parts[i]);
    if (!cur) return nullptr;
    obj = cur->is_object() ? &cur->get_object() : nullptr;
  }
  return cur;
}

std::string AsText(const json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : protocol::SerializeJson(v);
}

bool ConditionHolds(const json::object& cond, const json::object& source_outputs) {
  if (cond.empty()) return true;
  std::string_view type = Str(cond, "type");
  const json::value* left = Lookup(source_outputs, Str(cond, "left"));
  const json::value right = cond.contains("right") ? cond.at("right") : json::value();
  if (type == "equals") return left && *left == right;
  if (type == "notEquals") return !left || *left != right;
  if (!left) return false;
  if (type == "contains") {
    if (left->is_array())
      return std::find(left->get_array().begin(), left->get_array().end(), right) !=
             left->get_array().end();
    return AsText(*left).find(AsText(right)) != std::string::npos;
  }
  if (type == "regex") {
    try {
      // The subject may be a caller's answer of any length: linear time, no deep recursion.
      return std::regex_search(AsText(*left), CompileLinearTimeRegex(AsText(right)));
    } catch (const std::regex_error&) {
      return false;
    }
  }
  return false;
}

enum class Readiness { kReady, kSkip, kWait };

Readiness ReadinessOf(const Workflow& w, const Node& n, const json::object& states) {
  size_t incoming = 0, finished = 0, satisfied = 0, failed = 0;
  for (const auto& e : w.edges) {
    if (e.target != n.id) continue;
    ++incoming;
    const json::object& st = ObjOr(states, e.source);
    std::string_view status = Str(st, "status");
    if (status == "completed" || status == "failed" || status == "skipped") ++finished;
    if (status == "failed") ++failed;
    if (status == "completed" && ConditionHolds(e.condition, ObjOr(st, "outputs"))) ++satisfied;
  }
  if (incoming == 0) return Readiness::kReady;
  if (finished < incoming) return Readiness::kWait;
  std::string rule = "all_success";
  for (const auto& e : w.edges)
    if (e.target == n.id && e.trigger_rule != "all_success") rule = e.trigger_rule;
  bool go = false;
  if (rule == "all_success")
    go = satisfied == incoming;
  else if (rule == "any_success")
    go = satisfied > 0;
  else if (rule == "all_complete")
    go = true;
  else if (rule == "none_failed")
    go = failed == 0;
  else if (rule == "any_failed")
    go = failed > 0;
  return go ? Readiness::kReady : Readiness::kSkip;
}

// ---- interrupts ------------------------------------------------------------------------------

std::string InterruptKindOf(const Node& n) {
  if (n.type_id == "core.approvalGate") return "approval";
  if (n.type_id == "core.clarificationGate") return "clarification";
  return std::string(Str(n.config, "kind"));
}

json::array ApprovalActions(const Node& n) {
  if (const json::value* a = n.config.if_contains("actions"); a && a->is_array())
    return a->get_array();
  return json::array{"accept", "reject"};
}

// The interrupt's data (InterruptPayload.data, DIGEST §4.3-4.5).
json::object InterruptData(const std::string& run_id, const Node& n, const std::string& kind) {
  if (n.type_id == "core.interrupt") {
    const json::value* d = n.config.if_contains("data");
    json::object data = d && d->is_object() ? d->get_object() : json::object();
    if (kind == "approval") {
      if (!data.contains("actions")) data["actions"] = json::array{"accept", "reject"};
      if (!data.contains("artifactId")) data["artifactId"] = run_id + ":" + n.id;
      if (!data.contains("artifactType")) data["artifactType"] = "approval";
      if (!data.contains("title")) data["title"] = n.name.empty() ? n.id : n.name;
    }
    return data;
  }
  if (kind == "approval") {
    json::object data{
        {"artifactId", run_id + ":" + n.id},
        {"artifactType", n.artifact_type.empty() ? "approval" : n.artifact_type},
        {"title", Str(n.config, "title").empty() ? json::value(n.name.empty() ? n.id : n.name)
                                                 : n.config.at("title")},
        {"actions", ApprovalActions(n)},
        {"requiredApprovals", 1}};
    for (const char* k : {"description", "artifactData", "approversList", "rejectionPolicy"})
      if (const json::value* v = n.config.if_contains(k)) data[k] = *v;
    return data;
  }
  return json::object{{"questions", n.config.at("questions")}};
}

// A human-readable status message for A2A clients that do not read metadata.openwop.
protocol::Message PromptMessage(const std::string& kind, const json::object& data,
                                const json::object& flat) {
  protocol::Message m;
  m.role = protocol::Role::kAgent;
  m.message_id = std::string(Str(flat, "interruptId")) + "-prompt";
  std::string text;
  if (kind == "approval") {
    text =
        "Approval needed: " + AsText(data.contains("title") ? data.at("title") : json::value(""));
    if (data.contains("description")) text += "\n" + AsText(data.at("description"));
    std::string actions;
    if (auto* a = data.if_contains("actions"); a && a->is_array())
      for (const auto& x : a->get_array()) actions += (actions.empty() ? "" : "|") + AsText(x);
    text += "\nReply with a data part {\"action\": \"" + actions + "\", \"feedback\": \"...\"}.";
  } else if (kind == "clarification") {
    text = "Input needed:";
    if (auto* q = data.if_contains("questions"); q && q->is_array())
      for (const auto& x : q->get_array())
        if (x.is_object())
          text += "\n- " + AsText(x.get_object().at("id")) + ": " +
                  AsText(x.get_object().at("question"));
    text +=
        "\nReply with a data part {\"answers\": {\"<id>\": \"...\"}} (or plain text when "
        "there is one question).";
  } else if (kind == "external-event") {
    text = "Waiting for the external event " +
           AsText(data.contains("eventType") ? data.at("eventType") : json::value("(unnamed)"));
  } else {
    text = "Waiting for input (" + kind + ")";
  }
  m.parts.push_back(protocol::Part::Text(std::move(text)));
  m.parts.push_back(protocol::Part::Data(flat));
  return m;
}

// Steps that raise `n`'s interrupt: node.started (unless already), interrupt.requested,
// approval/clarification.requested, node.suspended.
std::vector<EventDraft> RaiseInterrupt(const std::string& run_id, const Node& n,
                                       const json::object& run, bool started, const PlanEnv& env) {
  std::vector<EventDraft> out;
  const std::string kind = InterruptKindOf(n);
  const json::object& counts = ObjOr(run, "interruptCounts");
  const int64_t ordinal = IntOr(counts, n.id, 0);
  const std::string key = run_id + ":" + n.id + ":" + std::to_string(ordinal);
  const std::string interrupt_id = n.id + "-" + std::to_string(ordinal);
  json::object data = InterruptData(run_id, n, kind);
  const int64_t timeout_ms = IntOr(n.config, "timeoutMs", 0);
  const std::string requested_at = core::FormatTimestamp(env.now_ms);

  if (!started)
    out.push_back(
        Ev(protocol::kEvNodeStarted, n.id, json::object{{"typeId", n.type_id}, {"attempt", 0}}));
  json::object requested{{"kind", kind},
                         {"key", key},
                         {"data", data},
                         {"runId", run_id},
                         {"interruptId", interrupt_id},
                         {"requestedAt", requested_at}};
  if (timeout_ms > 0) requested["timeoutMs"] = timeout_ms;
  out.push_back(Ev(protocol::kEvInterruptRequested, n.id, requested));
  if (kind == "approval") {
    json::object a{{"interruptId", interrupt_id}};
    for (const char* k : {"artifactId", "artifactType", "title", "actions", "requiredApprovals"})
      if (const json::value* v = data.if_contains(k)) a[k] = *v;
    out.push_back(Ev(protocol::kEvApprovalRequested, n.id, std::move(a)));
  } else if (kind == "clarification" && data.contains("questions")) {
    out.push_back(
        Ev(protocol::kEvClarificationRequested, n.id,
           json::object{{"questions", data.at("questions")}, {"interruptId", interrupt_id}}));
  }
  // The token: the bearer credential of /v1/interrupts/{token} (DIGEST §4.7).
  int64_t token_ttl = env.token_ttl_ms;
  if (timeout_ms > 0) token_ttl = std::min(token_ttl, timeout_ms);
  TokenClaims claims{run_id, n.id, interrupt_id, env.now_ms + token_ttl, "resolve"};
  const std::string token = env.tokens ? env.tokens->Mint(claims) : std::string();

  json::object interrupt{{"nodeId", n.id},
                         {"interruptId", interrupt_id},
                         {"kind", kind},
                         {"key", key},
                         {"data", data}};
  if (timeout_ms > 0) interrupt["expiresAt"] = env.now_ms + timeout_ms;
  if (!token.empty()) {
    interrupt["tokenExpiresAt"] = core::FormatTimestamp(claims.expires_at_ms);
    if (!env.public_url.empty())
      interrupt["callbackUrl"] = env.public_url + "/v1/interrupts/" + token;
  }
  // The A2A view: the interrupt's identity and the shape a client needs to render it.
  json::object flat{{"kind", kind}, {"nodeId", n.id}, {"interruptId", interrupt_id}};
  for (const auto& kv : data) flat[kv.key()] = kv.value();
  json::object suspended{
      {"interruptId", interrupt_id},
      {"kind", kind},
      {"key", key},
      {"interrupt", flat},
      {"run", interrupt},
      {"message", protocol::v10::MessageToJson(PromptMessage(kind, data, flat))}};
  if (!token.empty()) suspended["interruptToken"] = token;
  out.push_back(Ev(protocol::kEvInputRequired, n.id, std::move(suspended)));
  return out;
}

// The node's completion once its interrupt has a resume value (normalized by Resolve).
std::vector<EventDraft> FinishGate(const std::string& run_id, const Node& n,
                                   const json::value& resume) {
  std::vector<EventDraft> out;
  const std::string kind = InterruptKindOf(n);
  const json::object empty;
  const json::object& rv = resume.is_object() ? resume.get_object() : empty;
  if (std::string_view(Str(rv, "outcome")) == "timeout") {
    FailNode(out, n,
             ErrorObj(kind == "approval" ? "approval_timeout" : "interrupt_timeout",
                      "the interrupt of node '" + n.id + "' timed out"));
    return out;
  }
  if (kind == "approval") {
    std::string_view action = Str(rv, "action");
    if (action == "reject") {
      std::string message = "rejected by " + std::string(Str(rv, "decidedBy"));
      if (!Str(rv, "feedback").empty()) message += ": " + std::string(Str(rv, "feedback"));
      FailNode(out, n, ErrorObj("approval_rejected", message));
      return out;
    }
    json::object outputs = rv;
    if (action == "edit-accept" && rv.contains("editedArtifactData"))
      NodeArtifact(out, run_id, n, rv.at("editedArtifactData"),
                   n.artifact_type.empty() ? "approval" : n.artifact_type);
    CompleteNode(out, run_id, n, std::move(outputs));
    return out;
  }
  if (kind == "clarification") {
    CompleteNode(out, run_id, n,
                 json::object{{"answers", rv.contains("answers") ? rv.at("answers")
                                                                 : json::value(json::object())}});
    return out;
  }
  json::object outputs;
  if (resume.is_object())
    outputs = resume.get_object();
  else
    outputs["value"] = resume;
  CompleteNode(out, run_id, n, std::move(outputs));
  return out;
}

std::vector<EventDraft> ChildStatusStep(const Node& n, const std::string& child_run_id,
                                        const std::string& status, const json::object& child) {
  std::vector<EventDraft> out;
  json::object payload{{"childRunId", child_run_id}, {"status", status}};
  if (const json::value* i = child.if_contains("interrupt"); i && i->is_object()) {
    json::object brief;
    for (const char* k : {"nodeId", "interruptId", "kind"})
      if (const json::value* v = i->get_object().if_contains(k)) brief[k] = *v;
    payload["interrupt"] = std::move(brief);
  }
  out.push_back(Ev(protocol::kEvChildStatus, n.id, std::move(payload)));
  return out;
}

int64_t DelayMs(const Node& n, const json::object& inputs, std::string& error) {
  const json::value* v = inputs.if_contains("delayMs");
  for (const char* k : {"delayMs", "ms", "durationMs"})
    if (!v) v = n.config.if_contains(k);
  if (!v) return 0;
  if (!v->is_number()) {
    error = "delayMs must be a number of milliseconds";
    return -1;
  }
  double ms = v->to_number<double>();
  if (ms < 0 || ms > 30.0 * 24 * 3600 * 1000) {
    error = "delayMs must be between 0 and 30 days";
    return -1;
  }
  return static_cast<int64_t>(ms);
}

json::object RunOutputs(const json::object& run) {
  json::object outputs = ObjOr(run, "variables");
  outputs.erase("_askExchanges");
  return outputs;
}

}  // namespace

// ---- Plan --------------------------------------------------------------------------------------

Decision Plan(const Workflow& w, const std::string& run_id, const json::object& run,
              const PlanEnv& env) {
  Decision d;
  const std::string_view status = Str(run, "status");
  if (run.empty() || tasks::IsTerminalRunStatus(status)) return d;
  if (status == "pending") {
    json::object vars;
    for (const auto& v : w.variables)
      if (v.default_value) vars[v.name] = *v.default_value;
    for (const auto& kv : ObjOr(run, "inputs")) vars[kv.key()] = kv.value();
    d.kind = Decision::Kind::kCommit;
    d.events.push_back(Ev(protocol::kEvRunStarted, "",
                          json::object{{"workflowId", w.id},
                                       {"inputs", ObjOr(run, "inputs")},
                                       {"variables", std::move(vars)},
                                       {"transport", "a2a"},
                                       {"engineVersion", "1"}}));
    return d;
  }
  if (status == "paused" || (status.starts_with("waiting-") && !run.contains("waitingOn"))) {
    d.kind = Decision::Kind::kParked;
    d.wake_at = IntOr(ObjOr(run, "interrupt"), "expiresAt", 0);
    return d;
  }
  // Run-duration cap (settings.timeout).
  int64_t deadline = 0;
  if (w.timeout_ms > 0) {
    int64_t started = env.now_ms;
    int64_t parsed = 0;
    if (core::ParseTimestamp(Str(run, "startedAt"), parsed)) started = parsed;
    deadline = started + w.timeout_ms;
    if (env.now_ms >= deadline) {
      d.kind = Decision::Kind::kCommit;
      d.events.push_back(Ev(protocol::kEvCapBreached, "",
                            json::object{{"kind", "run-duration"},
                                         {"limit", w.timeout_ms},
                                         {"observed", env.now_ms - started}}));
      FailRun(d.events, ErrorObj("run_timeout", "the run exceeded settings.timeout (" +
                                                    std::to_string(w.timeout_ms) + " ms)"));
      return d;
    }
  }
  const json::object& states = ObjOr(run, "nodeStates");
  // A node in flight continues where its log left it.
  for (const auto& n : w.nodes) {
    const json::object& st = ObjOr(states, n.id);
    if (Str(st, "status") != "running") continue;
    d.node = &n;
    if (n.type_id == "core.delay") {
      d.kind = Decision::Kind::kSleep;
      d.wake_at = IntOr(st, "wakeAt", env.now_ms);
      if (deadline > 0 && deadline < d.wake_at) {
        d.wake_at = deadline;  // wake for the run's deadline; the next Plan fails the run
        return d;
      }
      CompleteNode(d.events, run_id, n, json::object(),
                   d.wake_at - IntOr(st, "startedAtMs", d.wake_at));
      return d;
    }
    if (n.type_id == "core.subWorkflow") {
      d.kind = Decision::Kind::kWaitChild;
      d.child_run_id = std::string(Str(st, "childRunId"));
      return d;
    }
    if (n.type_id == "core.approvalGate" || n.type_id == "core.clarificationGate" ||
        n.type_id == "core.interrupt") {
      const int64_t ordinal = IntOr(ObjOr(run, "interruptCounts"), n.id, 0) - 1;
      const std::string key = run_id + ":" + n.id + ":" + std::to_string(ordinal);
      d.kind = Decision::Kind::kCommit;
      if (const json::value* rv = ObjOr(run, "resumeValues").if_contains(key); rv && ordinal >= 0)
        d.events = FinishGate(run_id, n, *rv);
      else
        d.events = RaiseInterrupt(run_id, n, run, true, env);
      return d;
    }
    d.kind = Decision::Kind::kCommit;  // one-step kinds: finish what a crash cut short
    CompleteNode(d.events, run_id, n, json::object());
    return d;
  }
  // The next node, in declaration order among the ready ones (DIGEST §5.1).
  for (const auto& n : w.nodes) {
    if (states.contains(n.id)) continue;
    Readiness r = n.disabled ? Readiness::kSkip : ReadinessOf(w, n, states);
    if (r == Readiness::kWait) continue;
    d.kind = Decision::Kind::kCommit;
    d.node = &n;
    if (r == Readiness::kSkip) {
      d.events.push_back(Ev(protocol::kEvNodeSkipped, n.id,
                            json::object{{"reason", n.disabled ? "disabled" : "condition"}}));
      return d;
    }
    const int64_t executions = IntOr(run, "nodeExecutions", 0);
    if (executions >= env.max_node_executions) {
      d.events.push_back(Ev(protocol::kEvCapBreached, n.id,
                            json::object{{"kind", "node-executions"},
                                         {"limit", env.max_node_executions},
                                         {"observed", executions + 1}}));
      FailRun(d.events, ErrorObj("recursion_limit_exceeded",
                                 "more than " + std::to_string(env.max_node_executions) +
                                     " node executions"));
      return d;
    }
    json::object started{{"typeId", n.type_id}, {"attempt", 0}};
    const json::object inputs = ResolveInputs(n, run);
    if (n.type_id == "core.noop" || n.type_id == "core.identity") {
      d.events.push_back(Ev(protocol::kEvNodeStarted, n.id, started));
      CompleteNode(d.events, run_id, n, n.type_id == "core.identity" ? inputs : json::object());
    } else if (n.type_id == "core.fail") {
      d.events.push_back(Ev(protocol::kEvNodeStarted, n.id, started));
      std::string code(Str(n.config, "code")), message(Str(n.config, "message"));
      FailNode(d.events, n,
               ErrorObj(code.empty() ? "conformance_test_failure" : code,
                        message.empty() ? "Intentional conformance failure" : message));
    } else if (n.type_id == "core.delay") {
      std::string error;
      const int64_t ms = DelayMs(n, inputs, error);
      d.events.push_back(Ev(protocol::kEvNodeStarted, n.id, started));
      if (ms < 0) {
        FailNode(d.events, n, ErrorObj("validation_error", "node '" + n.id + "': " + error));
      } else {
        d.events.back().payload["wakeAt"] = env.now_ms + ms;
        d.events.back().payload["startedAtMs"] = env.now_ms;
      }
    } else if (n.type_id == "core.subWorkflow") {
      started["childRunId"] = tasks::NameBasedId("child\n" + run_id + "\n" + n.id);
      started["childWorkflowId"] = n.config.at("workflowId");
      d.events.push_back(Ev(protocol::kEvNodeStarted, n.id, started));
    } else {
      d.events = RaiseInterrupt(run_id, n, run, false, env);
    }
    return d;
  }
  // Nothing left to run.
  d.kind = Decision::Kind::kCommit;
  json::object outputs = RunOutputs(run);
  protocol::Artifact a;
  a.artifact_id = run_id + ":outputs";
  a.name = "outputs";
  a.parts.push_back(protocol::Part::Data(outputs));
  d.events.push_back(Ev(protocol::kEvArtifactCreated, "",
                        json::object{{"artifactId", a.artifact_id},
                                     {"artifactType", "run.outputs"},
                                     {"artifact", protocol::v10::ArtifactToJson(a)},
                                     {"lastChunk", true}}));
  d.events.push_back(
      Ev(protocol::kEvRunCompleted, "", json::object{{"outputs", std::move(outputs)}}));
  return d;
}

std::vector<EventDraft> FinishChild(const Workflow& w, const Node& n, const json::object& parent,
                                    const std::string& child_run_id, const json::object& child) {
  (void)w;
  std::vector<EventDraft> out;
  std::string status(Str(child, "status"));
  const std::string run_id(Str(parent, "runId"));
  if (status == "completed") {
    const json::object& child_vars = ObjOr(child, "variables");
    const json::object& parent_vars = ObjOr(parent, "variables");
    for (const auto& kv : ObjOr(n.config, "outputMapping")) {
      const json::value* v = child_vars.if_contains(kv.value().get_string());
      if (!v) continue;  // a missing child variable does not overwrite the parent's
      json::object change{{"name", kv.key()}, {"next", *v}};
      if (const json::value* prev = parent_vars.if_contains(kv.key())) change["previous"] = *prev;
      out.push_back(Ev(protocol::kEvVariableChanged, n.id, std::move(change)));
    }
  }
  json::object outputs{{"childRunId", child_run_id}, {"childStatus", status}};
  if (status == "failed" && Str(n.config, "onChildFailure") != "absorb") {
    json::object err = ObjOr(child, "error");
    FailNode(out, n,
             ErrorObj("child_run_failed", "child run " + child_run_id +
                                              " failed: " + std::string(Str(err, "message"))));
    return out;
  }
  CompleteNode(out, run_id, n, std::move(outputs));
  return out;
}

// ---- the executor ----------------------------------------------------------------------------

WorkflowExecutor::WorkflowExecutor(std::shared_ptr<const Workflow> workflow,
                                   tasks::TaskService& service, const InterruptTokens& tokens,
                                   const core::Clock& clock, EngineOptions options)
    : workflow_(std::move(workflow)),
      service_(service),
      tokens_(tokens),
      clock_(clock),
      options_(std::move(options)) {}

std::optional<Error> WorkflowExecutor::CheckInputs(const json::object& inputs) const {
  std::string missing;
  for (const auto& v : workflow_->variables)
    if (v.required && !v.default_value && !inputs.contains(v.name))
      missing += (missing.empty() ? "" : ", ") + v.name;
  if (missing.empty()) return std::nullopt;
  return Error(ErrorCode::kInvalidParams,
               "inputs: workflow '" + workflow_->id + "' needs the variable(s) " + missing +
                   " (send them as fields of a data part, or in POST /v1/runs inputs)",
               {{"field", "inputs"}, {"reason", "validation_error"}, {"missing", missing}});
}

PlanEnv WorkflowExecutor::Env() const {
  PlanEnv env;
  env.tokens = &tokens_;
  env.now_ms = clock_.NowMs();
  env.token_ttl_ms = options_.token_ttl_ms;
  env.max_node_executions = options_.max_node_executions;
  env.public_url = options_.public_url;
  return env;
}

std::vector<EventDraft> WorkflowExecutor::FirstSteps(const storage::TaskRecord& current) const {
  Decision d = Plan(*workflow_, current.task.id, current.run, Env());
  if (d.kind != Decision::Kind::kCommit) return {};
  return std::move(d.events);
}

asio::awaitable<void> WorkflowExecutor::Execute(std::shared_ptr<tasks::ExecutionContext> ctx) {
  auto rec = std::make_shared<const storage::TaskRecord>(ctx->record());
  const std::string run_id = rec->task.id;
  for (int guard = 0; guard < 100000; ++guard) {
    if (ctx->cancel_requested()) co_return;
    Decision d = Plan(*workflow_, run_id, rec->run, Env());
    switch (d.kind) {
      case Decision::Kind::kDone:
        co_return;
      case Decision::Kind::kCommit:
        break;
      case Decision::Kind::kSleep:
        if (!co_await ctx->SleepUntil(d.wake_at)) co_return;
        if (d.events.empty()) {  // woke for the run deadline: decide again
          auto fresh = co_await service_.GetRecord(ctx->call_context(), run_id);
          if (!fresh || !fresh.value()) co_return;
          rec = std::make_shared<const storage::TaskRecord>(std::move(*fresh.value()));
          continue;
        }
        break;
      case Decision::Kind::kParked: {
        if (d.wake_at <= 0) co_return;  // nothing to time out: the answer starts a new run
        const std::string interrupt_id(Str(ObjOr(rec->run, "interrupt"), "interruptId"));
        if (!co_await ctx->SleepUntil(d.wake_at)) co_return;
        tasks::ResolveRequest timeout;
        timeout.via = "timeout";
        timeout.resume_value = json::value(json::object{{"interruptId", interrupt_id}});
        // The server answers, in the run's tenant (decidedBy "system:timeout").
        protocol::CallContext by_timeout = ctx->call_context();
        by_timeout.principal.id = "system:timeout";
        // Refused when answered meanwhile (the interrupt id no longer matches): fine.
        (void)co_await service_.ResolveInterrupt(by_timeout, run_id, std::move(timeout));
        co_return;
      }
      case Decision::Kind::kWaitChild: {
        const Node& n = *d.node;
        auto child = co_await service_.GetRecord(ctx->call_context(), d.child_run_id);
        if (!child) co_return;
        if (!child.value()) {
          tasks::StartRunRequest req;
          req.skill_id = std::string(Str(n.config, "workflowId"));
          req.run_id = d.child_run_id;
          req.transport = "subworkflow";
          req.parent_run_id = run_id;
          req.parent_node_id = n.id;
          const json::object& vars = ObjOr(rec->run, "variables");
          for (const auto& kv : ObjOr(n.config, "inputMapping"))
            if (const json::value* v = vars.if_contains(kv.value().get_string()))
              req.inputs[kv.key()] = *v;
          auto started = co_await service_.StartRun(ctx->call_context(), std::move(req));
          if (!started) {
            std::vector<EventDraft> fail;
            FailNode(fail, n, ErrorObj("unknown_child_workflow", started.error().message));
            (void)co_await ctx->Apply(std::move(fail));
            co_return;
          }
        }
        auto terminal = [](const storage::TaskRecord& r) { return tasks::IsTerminalRun(r.run); };
        // While the child waits at a gate the parent's status mirrors it (DIGEST §5.2).
        auto mirror_of = [](const storage::TaskRecord& r) {
          std::string_view st = Str(r.run, "status");
          return std::string(st.starts_with("waiting-") ? st : "running");
        };
        std::string mirrored(Str(rec->run, "status"));
        if (!mirrored.starts_with("waiting-")) mirrored = "running";
        std::shared_ptr<const storage::TaskRecord> done;
        while (!ctx->cancel_requested()) {
          auto seen = co_await service_.WaitForRecord(
              ctx->call_context(), d.child_run_id,
              [&](const storage::TaskRecord& r) { return terminal(r) || mirror_of(r) != mirrored; },
              std::chrono::milliseconds(1000));
          if (!seen) continue;
          if (terminal(*seen)) {
            done = seen;
            break;
          }
          if (mirror_of(*seen) == mirrored) continue;
          mirrored = mirror_of(*seen);
          auto step = ChildStatusStep(n, d.child_run_id, mirrored, seen->run);
          auto applied = co_await ctx->Apply(std::move(step));
          if (!applied) co_return;
          rec = std::move(applied).value();
        }
        if (!done) co_return;  // cancelled: the cascade cancels the child
        d.events = FinishChild(*workflow_, n, rec->run, d.child_run_id, done->run);
        break;
      }
    }
    auto next = co_await ctx->Apply(std::move(d.events));
    if (!next) {
      // Cancelled meanwhile, or the store is closing: stop here. Anything else is a bug.
      if (next.error().code != ErrorCode::kUnsupportedOperation &&
          next.error().code != ErrorCode::kUnavailable)
        core::LogError("run " + run_id + ": step refused: " + next.error().message);
      co_return;
    }
    rec = std::move(next).value();
  }
  core::LogError("run " + run_id + ": the engine took 100000 steps; stopping");
}

// ---- answers -----------------------------------------------------------------------------------

namespace {

Error Reason(ErrorCode code, std::string reason, std::string message) {
  return Error(code, std::move(message), {{"reason", std::move(reason)}});
}

// The resume value an A2A reply carries: its first data part, else its text.
std::optional<json::value> FromMessage(const protocol::Message& m) {
  for (const auto& p : m.parts)
    if (p.kind == protocol::Part::Kind::kData) return p.data;
  std::string text;
  for (const auto& p : m.parts)
    if (p.kind == protocol::Part::Kind::kText) text += (text.empty() ? "" : "\n") + p.text;
  if (text.empty()) return std::nullopt;
  return json::value(text);
}

}  // namespace

core::Result<tasks::Resolution> WorkflowExecutor::Resolve(const storage::TaskRecord& current,
                                                          const tasks::ResolveRequest& req) {
  const json::object& run = current.run;
  const std::string run_id = current.task.id;
  const json::value* open = run.if_contains("interrupt");
  const std::string_view status = Str(run, "status");
  if (!open || !open->is_object() || !status.starts_with("waiting-")) {
    if (status == "cancelled")
      return Reason(ErrorCode::kUnsupportedOperation, "interrupt_gone",
                    "run " + run_id + " was cancelled; its interrupts are gone");
    // A node whose interrupt was answered already: the second answer loses.
    if (!req.node_id.empty()) {
      const json::object& st = ObjOr(ObjOr(run, "nodeStates"), req.node_id);
      if (IntOr(ObjOr(run, "interruptCounts"), req.node_id, 0) > 0 && !st.empty())
        return Reason(ErrorCode::kConflict, "interrupt_already_resolved",
                      "the interrupt of node '" + req.node_id + "' was already resolved");
    }
    if (const json::value* w = run.if_contains("waitingOn"); w && w->is_object())
      return Reason(ErrorCode::kTaskNotFound, "interrupt_not_found",
                    "run " + run_id + " waits for its child run " +
                        std::string(Str(w->get_object(), "childRunId")) +
                        "; answer that run's interrupt");
    if (req.via == "token" || req.via == "timeout")
      return Reason(ErrorCode::kConflict, "interrupt_already_resolved",
                    "the interrupt was already resolved");
    return Reason(ErrorCode::kTaskNotFound, "interrupt_not_found",
                  "run " + run_id + " has no open interrupt" +
                      (req.node_id.empty() ? "" : " at node '" + req.node_id + "'"));
  }
  const json::object& interrupt = open->get_object();
  const std::string node_id(Str(interrupt, "nodeId"));
  const std::string interrupt_id(Str(interrupt, "interruptId"));
  if (!req.node_id.empty() && req.node_id != node_id)
    return Reason(ErrorCode::kTaskNotFound, "interrupt_not_found",
                  "node '" + req.node_id + "' of run " + run_id +
                      " has no open interrupt (the open one is at node '" + node_id + "')");
  const Node* n = workflow_->FindNode(node_id);
  if (!n) return Error(ErrorCode::kInternal, "run " + run_id + " waits at unknown node " + node_id);
  const std::string kind(Str(interrupt, "kind"));
  const std::string key(Str(interrupt, "key"));
  const json::object& data = ObjOr(interrupt, "data");
  const std::string now = core::FormatTimestamp(clock_.NowMs());

  std::optional<json::value> value = req.resume_value;
  if (!value && req.message) value = FromMessage(*req.message);
  if (!value)
    return Error(ErrorCode::kInvalidParams,
                 "message.parts: the reply carries no answer for the open " + kind +
                     " interrupt at node '" + node_id + "': send a data part (or text)",
                 {{"field", "message.parts"}, {"reason", "validation_error"}});

  tasks::Resolution res;
  res.explicit_resume = true;
  // interrupt.resolved (+ `extra` fields) and node.resumed carrying the normalized answer.
  auto resolved = [&](json::value normalized, json::object extra = {}) {
    json::object payload{{"interruptId", interrupt_id},
                         {"key", key},
                         {"kind", kind},
                         {"resumeValue", normalized},
                         {"resolvedBy", req.caller},
                         {"resolvedAt", now}};
    for (auto& kv : extra) payload[kv.key()] = std::move(kv.value());
    res.events.push_back(Ev(protocol::kEvInterruptResolved, node_id, std::move(payload)));
    res.events.push_back(
        Ev(protocol::kEvNodeResumed, node_id,
           json::object{{"interruptId", interrupt_id}, {"resumeValue", normalized}}));
  };

  if (req.via == "timeout") {
    const json::value* id =
        value->is_object() ? value->get_object().if_contains("interruptId") : nullptr;
    if (!id || *id != json::value(interrupt_id))
      return Reason(ErrorCode::kConflict, "interrupt_already_resolved", "answered meanwhile");
    if (kind == "approval")
      res.events.push_back(Ev(
          protocol::kEvApprovalReceived, node_id,
          json::object{{"action", "timeout"}, {"decidedAt", now}, {"interruptId", interrupt_id}}));
    resolved(json::object{{"outcome", "timeout"}},
             json::object{{"outcome", "rejected"}, {"reason", "timeout"}});
    return res;
  }

  if (kind == "approval") {
    auto checked = CheckApprovalAnswer(*value, data, node_id);
    if (!checked) return std::move(checked).error();
    ApprovalAnswer& answer = checked.value();
    if (answer.action == "ask") {
      res.resumes = false;
      res.explicit_resume = false;
      res.events.push_back(Ev(protocol::kEvApprovalAsked, node_id,
                              json::object{{"question", std::move(answer.question)},
                                           {"askedBy", req.caller},
                                           {"interruptId", interrupt_id}}));
      return res;
    }
    json::object normalized{
        {"action", answer.action}, {"decidedBy", req.caller}, {"decidedAt", now}};
    if (answer.feedback) normalized["feedback"] = std::move(*answer.feedback);
    if (answer.refine_feedback) normalized["refineFeedback"] = std::move(*answer.refine_feedback);
    if (answer.edited_artifact_data)
      normalized["editedArtifactData"] = std::move(*answer.edited_artifact_data);
    json::object received = normalized;
    received["interruptId"] = interrupt_id;
    res.events.push_back(Ev(protocol::kEvApprovalReceived, node_id, std::move(received)));
    resolved(std::move(normalized));
    return res;
  }

  if (kind == "clarification") {
    auto answers = CheckClarificationAnswer(*value, data, node_id);
    if (!answers) return std::move(answers).error();
    res.events.push_back(Ev(protocol::kEvClarificationResolved, node_id,
                            json::object{{"answers", answers.value()},
                                         {"answeredBy", req.caller},
                                         {"interruptId", interrupt_id}}));
    resolved(json::object{{"answers", std::move(answers).value()}});
    return res;
  }

  if (kind == "external-event") {
    json::object body;
    if (value->is_object()) {
      body = value->get_object();
      if (auto* ep = body.if_contains("eventPayload"); ep && ep->is_object() && body.size() == 1)
        body = ep->get_object();
    }
    for (const auto& kv : ObjOr(data, "correlation")) {
      const json::value* got = body.if_contains(kv.key());
      if (!got || *got != kv.value())
        return Reason(ErrorCode::kInvalidParams, "correlation_mismatch",
                      "the event does not match the awaited correlation: " + std::string(kv.key()) +
                          " must be " + protocol::SerializeJson(kv.value()));
    }
    resolved(std::move(body));
    return res;
  }
  resolved(*value);  // custom
  return res;
}

}  // namespace a2ad::workflow
