#include "a2ad/tasks/run_projection.hpp"

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/tasks/accepted_messages.hpp"

namespace a2ad::tasks {
namespace json = boost::json;
using protocol::RunEvent;
using protocol::Str;

namespace {

json::object& Obj(json::object& o, std::string_view key) {
  json::value& v = o[key];
  if (!v.is_object()) v = json::object();
  return v.get_object();
}

// The node an event is about: the envelope's nodeId, else the payload's.
std::string NodeOf(const RunEvent& e) {
  if (!e.node_id.empty()) return e.node_id;
  return std::string(Str(e.payload, "nodeId"));
}

void SetStatus(json::object& run, std::string_view status) {
  if (IsTerminalRunStatus(Str(run, "status"))) return;  // terminal is final
  if (IsTerminalRunStatus(status)) run.erase("pause");
  run["status"] = status;
}

void EndInterrupt(json::object& run) {
  run.erase("interrupt");
  run.erase("currentNodeId");
  run.erase("waitingOn");
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

std::string_view RunStatus(const json::object& run) { return Str(run, "status"); }

bool IsTerminalRun(const json::object& run) { return IsTerminalRunStatus(RunStatus(run)); }

void ApplyRunEvent(json::object& run, const RunEvent& e) {
  const std::string when = core::FormatTimestamp(e.timestamp_ms);
  const json::object& p = e.payload;
  if (e.type == protocol::kEvTaskSubmitted) {
    run = json::object();
    run["runId"] = e.run_id;
    std::string_view workflow = Str(p, "workflowId");
    run["workflowId"] = workflow.empty() ? Str(p, "skillId") : workflow;
    run["status"] = "pending";
    run["createdAt"] = when;
    run["variables"] = json::object();
    run["nodeStates"] = json::object();
    if (auto* tags = p.if_contains("tags"); tags && tags->is_array()) run["tags"] = *tags;
    if (auto* in = p.if_contains("inputs"); in && in->is_object()) run["inputs"] = *in;
    if (!Str(p, "requestDigest").empty()) run["requestDigest"] = Str(p, "requestDigest");
    if (auto* md = p.if_contains("runMetadata"); md && md->is_object()) run["metadata"] = *md;
    for (const char* link : {"parentRunId", "parentNodeId"})
      if (!Str(p, link).empty()) run[link] = Str(p, link);
    run["engineVersion"] = "1";
    run["eventLogSchemaVersion"] = 2;
    RecordAcceptedMessage(run, p);
    return;
  }
  if (run.empty()) return;  // not a run (a log folded without its first event)
  const std::string node = NodeOf(e);
  if (e.type == protocol::kEvMessageReceived) {
    RecordAcceptedMessage(run, p);
  } else if (e.type == protocol::kEvSkillChosen) {
    // The run is the chosen skill's from here, and has not started yet (skill_chooser.hpp).
    run["workflowId"] = Str(p, "skillId");
    run["status"] = "pending";
    for (const char* k : {"interrupt", "currentNodeId", "interruptCounts"}) run.erase(k);
  } else if (e.type == protocol::kEvRunStarted) {
    SetStatus(run, "running");
    run["startedAt"] = when;
    if (auto* v = p.if_contains("variables"); v && v->is_object()) run["variables"] = *v;
  } else if (e.type == protocol::kEvNodeStarted) {
    json::object st;
    st["status"] = "running";
    st["typeId"] = Str(p, "typeId");
    st["attempt"] = p.contains("attempt") ? p.at("attempt") : json::value(0);
    st["startedAt"] = when;
    for (const char* extra : {"wakeAt", "startedAtMs", "childRunId", "childWorkflowId"})
      if (auto* v = p.if_contains(extra)) st[extra] = *v;
    if (auto* child = p.if_contains("childRunId"); child && child->is_string()) {
      json::value& list = run["childRuns"];
      if (!list.is_array()) list = json::array();
      list.get_array().push_back(json::object{{"runId", *child}, {"status", "pending"}});
    }
    Obj(run, "nodeStates")[node] = std::move(st);
    run["nodeExecutions"] = (run.contains("nodeExecutions") && run.at("nodeExecutions").is_int64()
                                 ? run.at("nodeExecutions").as_int64()
                                 : 0) +
                            1;
  } else if (e.type == protocol::kEvNodeCompleted) {
    json::object& st = Obj(Obj(run, "nodeStates"), node);
    st["status"] = "completed";
    st["completedAt"] = when;
    st["outputs"] = p.contains("outputs") ? p.at("outputs") : json::value(json::object());
    if (auto* child = st.if_contains("childRunId"); child && child->is_string()) {
      if (auto* list = run.if_contains("childRuns"); list && list->is_array())
        for (auto& c : list->get_array())
          if (c.is_object() && c.get_object().at("runId") == *child)
            if (auto* out = p.if_contains("outputs"); out && out->is_object())
              if (auto* cs = out->get_object().if_contains("childStatus"))
                c.get_object()["status"] = *cs;
    }
  } else if (e.type == protocol::kEvNodeFailed) {
    json::object& st = Obj(Obj(run, "nodeStates"), node);
    st["status"] = "failed";
    if (auto* er = p.if_contains("error")) st["error"] = *er;
  } else if (e.type == protocol::kEvNodeSkipped) {
    json::object& st = Obj(Obj(run, "nodeStates"), node);
    st["status"] = "skipped";
    if (auto* r = p.if_contains("reason")) st["reason"] = *r;
  } else if (e.type == protocol::kEvVariableChanged) {
    std::string_view name = Str(p, "name");
    if (!name.empty()) {
      if (auto* next = p.if_contains("next"))
        Obj(run, "variables")[name] = *next;
      else
        Obj(run, "variables").erase(name);
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
      run["currentNodeId"] = node;
      json::object& counts = Obj(run, "interruptCounts");
      const json::value* n = counts.if_contains(node);
      counts[node] = (n && n->is_int64() ? n->as_int64() : 0) + 1;
    }
    if (auto* token = p.if_contains("interruptToken")) interrupt["interruptToken"] = *token;
    if (!kind.empty()) interrupt["kind"] = kind;
    run["interrupt"] = std::move(interrupt);
  } else if (e.type == protocol::kEvInterruptResolved) {
    std::string_view key = Str(p, "key");
    if (!key.empty())
      Obj(run, "resumeValues")[key] = p.contains("resumeValue") ? p.at("resumeValue") : nullptr;
  } else if (e.type == protocol::kEvApprovalAsked) {
    json::value& asks = Obj(Obj(run, "variables"), "_askExchanges")[node];
    if (!asks.is_array()) asks = json::array();
    asks.get_array().push_back(
        json::object{{"question", p.contains("question") ? p.at("question") : json::value()},
                     {"askedBy", Str(p, "askedBy")},
                     {"askedAt", when}});
  } else if (e.type == protocol::kEvApprovalVote) {
    // A vote on the open quorum interrupt it names: appended, and the counts recomputed
    // from the votes (so the tally is whatever the log holds, replayed or not).
    json::value* open = run.if_contains("interrupt");
    if (open && open->is_object() &&
        Str(open->get_object(), "interruptId") == Str(p, "interruptId")) {
      json::object& quorum = Obj(open->get_object(), "quorum");
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
      run["currentNodeId"] = node;
      json::object waiting{{"childRunId", Str(p, "childRunId")}, {"nodeId", node}};
      if (auto* i = p.if_contains("interrupt")) waiting["interrupt"] = *i;
      run["waitingOn"] = std::move(waiting);
    } else {
      if (Str(run, "status") != "paused") SetStatus(run, "running");  // a paused run stays so
      run.erase("waitingOn");
      run.erase("currentNodeId");
    }
  } else if (e.type == protocol::kEvNodeEffect) {
    json::object& effect = Obj(Obj(Obj(run, "nodeStates"), node), "effect");
    if (auto* r = p.if_contains("result"); r && r->is_object())
      for (const auto& kv : r->get_object()) effect[kv.key()] = kv.value();
  } else if (e.type == protocol::kEvRunPaused) {
    // tasks/pause.hpp: the open pause; an abandoned node starts again on resume.
    SetStatus(run, "paused");
    json::object pause = p;
    pause.erase("caller");
    if (std::string_view n = Str(p, "abandonNode"); !n.empty())
      if (auto* states = run.if_contains("nodeStates"); states && states->is_object())
        states->get_object().erase(n);
    run["pause"] = std::move(pause);
  } else if (e.type == protocol::kEvRunResumed) {
    std::string_view before = Str(protocol::ObjOr(run, "pause"), "previousStatus");
    SetStatus(run, before.empty() ? "running" : std::string(before));
    json::object last{{"cause", Str(p, "cause")}, {"resumedAt", Str(p, "resumedAt")}};
    if (auto* in = p.if_contains("input")) last["input"] = *in;
    run["lastResume"] = std::move(last);
    run.erase("pause");
  } else if (e.type == protocol::kEvNodeResumed) {
    SetStatus(run, "running");
    EndInterrupt(run);
  } else if (e.type == protocol::kEvRunCompleted) {
    run.erase("waitingOn");
    SetStatus(run, "completed");
    run["completedAt"] = when;
    if (auto* out = p.if_contains("outputs")) run["outputs"] = *out;
    EndInterrupt(run);
  } else if (e.type == protocol::kEvRunFailed || e.type == protocol::kEvRunRejected) {
    SetStatus(run, "failed");
    run["completedAt"] = when;
    json::object error;
    if (auto* er = p.if_contains("error"); er && er->is_object()) error = er->get_object();
    if (e.type == protocol::kEvRunRejected) {
      error["code"] = "rejected";
      error["message"] = Str(p, "reason").empty() ? "the task was rejected" : Str(p, "reason");
    }
    if (!error.contains("code")) error["code"] = "run_failed";
    if (!error.contains("message")) error["message"] = "the run failed";
    run["error"] = std::move(error);
    if (!Str(p, "failedNodeId").empty()) run["failedNodeId"] = Str(p, "failedNodeId");
    EndInterrupt(run);
  } else if (e.type == protocol::kEvRunCancelled) {
    SetStatus(run, "cancelled");
    run["completedAt"] = when;
    EndInterrupt(run);
  }
}

json::object A2ATaskStateOf(const protocol::Task& task, const json::object& run) {
  json::object s;
  s["taskId"] = task.id;
  s["runId"] = task.id;
  if (!task.context_id.empty()) s["contextId"] = task.context_id;
  s["state"] = protocol::TaskStateLabel(task.status.state);
  if (task.status.state == protocol::TaskState::kInputRequired) {
    // The schema knows two kinds; an external event or custom interrupt waits for input too.
    std::string_view kind;
    if (auto* i = run.if_contains("interrupt"); i && i->is_object())
      kind = Str(i->get_object(), "kind");
    if (kind.empty())
      if (auto* ow = task.metadata.if_contains("openwop"); ow && ow->is_object())
        if (auto* i = ow->get_object().if_contains("interrupt"); i && i->is_object())
          kind = Str(i->get_object(), "kind");
    s["interruptKind"] = kind == "approval" ? "approval" : "clarification";
  }
  s["updatedAt"] = core::FormatTimestamp(task.status.timestamp_ms);
  return s;
}

}  // namespace a2ad::tasks
