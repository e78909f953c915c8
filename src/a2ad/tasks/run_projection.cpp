#include "a2ad/tasks/run_projection.hpp"

#include <algorithm>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/tasks/accepted_messages.hpp"

namespace a2ad::tasks {
namespace json = boost::json;
using protocol::RunEvent;
using protocol::Str;

namespace {

using protocol::NodeState;
using protocol::RunSnapshot;

// The node an event is about: the envelope's nodeId, else the payload's.
std::string NodeOf(const RunEvent& e) {
  if (!e.node_id.empty()) return e.node_id;
  return std::string(Str(e.payload, "nodeId"));
}

void SetStatus(RunSnapshot& run, std::string_view status) {
  if (IsTerminalRunStatus(run.status)) return;  // terminal is final
  if (IsTerminalRunStatus(status)) run.pause.reset();
  run.status = status;
}

void EndInterrupt(RunSnapshot& run) {
  run.interrupt.reset();
  run.current_node_id.clear();
  run.waiting_on.reset();
}

std::optional<json::value> MemberOf(const json::object& o, std::string_view key) {
  if (const json::value* v = o.if_contains(key)) return *v;
  return std::nullopt;
}

std::optional<int64_t> IntMember(const json::object& o, std::string_view key) {
  if (const json::value* v = o.if_contains(key); v && v->is_int64()) return v->get_int64();
  return std::nullopt;
}

}  // namespace

std::string_view WaitingStatusFor(std::string_view kind) {
  if (kind == "approval") return "waiting-approval";
  if (kind == "external-event") return "waiting-external";
  return "waiting-input";
}

bool IsTerminalRunStatus(std::string_view s) {
  return s == "completed" || s == "failed" || s == "cancelled";
}

std::string_view RunStatus(const RunSnapshot& run) { return run.status; }

bool IsTerminalRun(const RunSnapshot& run) { return IsTerminalRunStatus(run.status); }

void ApplyRunEvent(RunSnapshot& run, const RunEvent& e) {
  const std::string when = core::FormatTimestamp(e.timestamp_ms);
  const json::object& p = e.payload;
  if (e.type == protocol::kEvTaskSubmitted) {
    run = RunSnapshot();
    run.run_id = e.run_id;
    std::string_view workflow = Str(p, "workflowId");
    run.workflow_id = workflow.empty() ? Str(p, "skillId") : workflow;
    run.status = "pending";
    run.created_at = when;
    if (auto* tags = p.if_contains("tags"); tags && tags->is_array()) run.tags = tags->get_array();
    if (auto* in = p.if_contains("inputs"); in && in->is_object()) run.inputs = in->get_object();
    run.request_digest = Str(p, "requestDigest");
    if (auto* md = p.if_contains("runMetadata"); md && md->is_object())
      run.metadata = md->get_object();
    run.parent_run_id = Str(p, "parentRunId");
    run.parent_node_id = Str(p, "parentNodeId");
    run.engine_version = "1";
    run.event_log_schema_version = 2;
    RecordAcceptedMessage(run, p);
    return;
  }
  if (run.empty()) return;  // not a run (a log folded without its first event)
  const std::string node = NodeOf(e);
  if (e.type == protocol::kEvMessageReceived) {
    RecordAcceptedMessage(run, p);
  } else if (e.type == protocol::kEvSkillChosen) {
    // The run is the chosen skill's from here, and has not started yet (skill_chooser.hpp).
    run.workflow_id = Str(p, "skillId");
    run.status = "pending";
    run.interrupt.reset();
    run.current_node_id.clear();
    run.interrupt_counts.clear();
  } else if (e.type == protocol::kEvRunStarted) {
    SetStatus(run, "running");
    run.started_at = when;
    if (auto* v = p.if_contains("variables"); v && v->is_object()) run.variables = v->get_object();
  } else if (e.type == protocol::kEvNodeStarted) {
    NodeState st;
    st.id = node;
    st.status = "running";
    st.type_id = Str(p, "typeId");
    st.attempt = IntMember(p, "attempt").value_or(0);
    st.started_at = when;
    st.wake_at = IntMember(p, "wakeAt");
    st.started_at_ms = IntMember(p, "startedAtMs");
    st.child_run_id = Str(p, "childRunId");
    st.child_workflow_id = Str(p, "childWorkflowId");
    if (!st.child_run_id.empty())
      run.child_runs.push_back(protocol::ChildRun{st.child_run_id, "pending"});
    run.NodeOrNew(node) = std::move(st);
    ++run.node_executions;
  } else if (e.type == protocol::kEvNodeCompleted) {
    NodeState& st = run.NodeOrNew(node);
    st.status = "completed";
    st.completed_at = when;
    st.outputs = MemberOf(p, "outputs").value_or(json::object());
    if (!st.child_run_id.empty()) {
      const json::object& out = protocol::ObjOr(p, "outputs");
      if (const json::value* cs = out.if_contains("childStatus"))
        for (auto& c : run.child_runs)
          if (c.run_id == st.child_run_id) c.status = *cs;
    }
  } else if (e.type == protocol::kEvNodeFailed) {
    NodeState& st = run.NodeOrNew(node);
    st.status = "failed";
    if (auto er = MemberOf(p, "error")) st.error = std::move(er);
  } else if (e.type == protocol::kEvNodeSkipped) {
    NodeState& st = run.NodeOrNew(node);
    st.status = "skipped";
    if (auto r = MemberOf(p, "reason")) st.reason = std::move(r);
  } else if (e.type == protocol::kEvVariableChanged) {
    std::string_view name = Str(p, "name");
    if (!name.empty()) {
      if (auto* next = p.if_contains("next"))
        run.variables[name] = *next;
      else
        run.variables.erase(name);
    }
  } else if (e.type == protocol::kEvInputRequired) {
    json::object interrupt;
    if (auto* i = p.if_contains("run"); i && i->is_object())  // the engine's full record
      interrupt = i->get_object();
    else if (auto* i2 = p.if_contains("interrupt"); i2 && i2->is_object())
      interrupt = i2->get_object();
    std::string_view kind = Str(p, "kind");
    if (kind.empty()) kind = Str(interrupt, "kind");
    SetStatus(run, WaitingStatusFor(kind));
    if (!node.empty()) {
      run.current_node_id = node;
      auto it = std::find_if(run.interrupt_counts.begin(), run.interrupt_counts.end(),
                             [&](const auto& c) { return c.first == node; });
      if (it == run.interrupt_counts.end())
        run.interrupt_counts.emplace_back(node, 1);
      else
        ++it->second;
    }
    if (auto* token = p.if_contains("interruptToken")) interrupt["interruptToken"] = *token;
    if (!kind.empty()) interrupt["kind"] = kind;
    run.interrupt = std::move(interrupt);
  } else if (e.type == protocol::kEvInterruptResolved) {
    std::string_view key = Str(p, "key");
    if (!key.empty())
      run.resume_values[key] = p.contains("resumeValue") ? p.at("resumeValue") : nullptr;
  } else if (e.type == protocol::kEvApprovalAsked) {
    json::value& exchanges = run.variables["_askExchanges"];
    if (!exchanges.is_object()) exchanges = json::object();
    json::value& asks = exchanges.get_object()[node];
    if (!asks.is_array()) asks = json::array();
    asks.get_array().push_back(
        json::object{{"question", p.contains("question") ? p.at("question") : json::value()},
                     {"askedBy", Str(p, "askedBy")},
                     {"askedAt", when}});
  } else if (e.type == protocol::kEvApprovalVote) {
    // A vote on the open quorum interrupt it names: appended, and the counts recomputed
    // from the votes (so the tally is whatever the log holds, replayed or not).
    if (run.interrupt && Str(*run.interrupt, "interruptId") == Str(p, "interruptId")) {
      json::value& q = (*run.interrupt)["quorum"];
      if (!q.is_object()) q = json::object();
      json::object& quorum = q.get_object();
      json::value& votes = quorum["votes"];
      if (!votes.is_array()) votes = json::array();
      json::object vote{
          {"principal", Str(p, "principal")}, {"action", Str(p, "action")}, {"votedAt", when}};
      if (auto* f = p.if_contains("feedback")) vote["feedback"] = *f;
      votes.get_array().push_back(std::move(vote));
      int64_t accepts = 0, rejects = 0;
      for (const auto& v : votes.get_array()) {
        if (!v.is_object()) continue;
        accepts += Str(v.get_object(), "action") == "accept";
        rejects += Str(v.get_object(), "action") == "reject";
      }
      quorum["accepts"] = accepts;
      quorum["rejects"] = rejects;
    }
  } else if (e.type == protocol::kEvChildStatus) {
    std::string_view child_status = Str(p, "status");
    if (child_status.starts_with("waiting-")) {
      SetStatus(run, child_status);
      run.current_node_id = node;
      json::object waiting{{"childRunId", Str(p, "childRunId")}, {"nodeId", node}};
      if (auto* i = p.if_contains("interrupt")) waiting["interrupt"] = *i;
      run.waiting_on = std::move(waiting);
    } else {
      if (run.status != "paused") SetStatus(run, "running");  // a paused run stays so
      run.waiting_on.reset();
      run.current_node_id.clear();
    }
  } else if (e.type == protocol::kEvNodeEffect) {
    std::optional<json::object>& effect = run.NodeOrNew(node).effect;
    if (!effect) effect.emplace();
    if (auto* r = p.if_contains("result"); r && r->is_object())
      for (const auto& kv : r->get_object()) (*effect)[kv.key()] = kv.value();
  } else if (e.type == protocol::kEvRunPaused) {
    // tasks/pause.hpp: the open pause; an abandoned node starts again on resume.
    SetStatus(run, "paused");
    json::object pause = p;
    pause.erase("caller");
    if (std::string_view n = Str(p, "abandonNode"); !n.empty())
      std::erase_if(run.node_states, [n](const NodeState& s) { return s.id == n; });
    run.pause = std::move(pause);
  } else if (e.type == protocol::kEvRunResumed) {
    const std::string before(run.pause ? Str(*run.pause, "previousStatus") : "");
    SetStatus(run, before.empty() ? "running" : before);
    json::object last{{"cause", Str(p, "cause")}, {"resumedAt", Str(p, "resumedAt")}};
    if (auto* in = p.if_contains("input")) last["input"] = *in;
    run.last_resume = std::move(last);
    run.pause.reset();
  } else if (e.type == protocol::kEvNodeResumed) {
    SetStatus(run, "running");
    EndInterrupt(run);
  } else if (e.type == protocol::kEvRunCompleted) {
    run.waiting_on.reset();
    SetStatus(run, "completed");
    run.completed_at = when;
    if (auto out = MemberOf(p, "outputs")) run.outputs = std::move(out);
    EndInterrupt(run);
  } else if (e.type == protocol::kEvRunFailed || e.type == protocol::kEvRunRejected) {
    SetStatus(run, "failed");
    run.completed_at = when;
    json::object error;
    if (auto* er = p.if_contains("error"); er && er->is_object()) error = er->get_object();
    if (e.type == protocol::kEvRunRejected) {
      error["code"] = "rejected";
      error["message"] = Str(p, "reason").empty() ? "the task was rejected" : Str(p, "reason");
    }
    if (!error.contains("code")) error["code"] = "run_failed";
    if (!error.contains("message")) error["message"] = "the run failed";
    run.error = std::move(error);
    if (std::string_view failed = Str(p, "failedNodeId"); !failed.empty())
      run.failed_node_id = failed;
    EndInterrupt(run);
  } else if (e.type == protocol::kEvRunCancelled) {
    SetStatus(run, "cancelled");
    run.completed_at = when;
    EndInterrupt(run);
  }
}

}  // namespace a2ad::tasks
