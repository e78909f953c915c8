// Gates (DIGEST §4.3-4.5, §5.2): core.approvalGate (an approval interrupt),
// core.clarificationGate (a clarification interrupt) and core.interrupt (config.kind:
// approval | clarification | external-event | custom, config.data its data).
//
// Start raises the interrupt in one step: node.started, interrupt.requested,
// approval/clarification.requested, node.suspended (the run waits; the A2A task is
// input-required). Resolve checks an answer (answers.hpp) and logs interrupt.resolved +
// node.resumed with the normalized answer under the deterministic key runId:nodeId:n. In
// flight, Continue finishes the node from that logged answer (a re-driven node re-asks
// nothing), or raises the interrupt again when none was logged.
//
// Approvals check who answers before what is answered (approval_policy.hpp): a gate naming
// approversList / approverGroupRefs / approverRoleRefs takes answers from those principals
// only, and a quorum gate (requiredApprovals N > 1) counts one vote per authenticated
// principal. A vote that leaves the quorum open is logged as a2ad.approval.vote (the run stays
// waiting-approval, the task input-required with the tally in its status message and in
// metadata.openwop.interrupt.quorum); the vote that closes it is logged as approval.received
// (decidedBy = the closing approver, `quorum` = every vote) + interrupt.resolved +
// node.resumed, like a single approval. The tally is the fold of those entries
// (run.interrupt.quorum, tasks/run_projection.hpp), so a restart loses no acknowledged vote.
#include <algorithm>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/workflow/answers.hpp"
#include "a2ad/workflow/approval_policy.hpp"
#include "a2ad/workflow/interrupt_token.hpp"
#include "a2ad/workflow/nodes/interrupts.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow::nodes {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using protocol::IntOr;
using protocol::ObjOr;
using protocol::Str;
using tasks::EventDraft;

namespace {

Error Reason(ErrorCode code, std::string reason, std::string message) {
  return Error(code, std::move(message), {{"reason", std::move(reason)}});
}

json::array ActionsOf(const json::object& data) {
  if (const json::value* a = data.if_contains("actions"); a && a->is_array()) return a->get_array();
  return json::array{"accept", "reject"};
}

// The approval policy of an open interrupt's data (checked when the workflow loaded).
core::Result<ApprovalPolicy> PolicyOf(const json::object& data) {
  auto p = ParseApprovalPolicy(data, "data", ActionsOf(data));
  if (!p)
    return Error(ErrorCode::kInternal,
                 "the approval's data does not read as a policy: " + p.error().message);
  return p;
}

// The tally's starting point, kept in the open interrupt (run.interrupt.quorum) and in the
// A2A task's metadata.openwop.interrupt.quorum; votes are folded into it.
json::object OpenQuorum(const ApprovalPolicy& p) {
  return json::object{{"required", p.required},
                      {"rejectionPolicy", p.RejectionPolicyName()},
                      {"accepts", 0},
                      {"rejects", 0},
                      {"votes", json::array()}};
}

// ---- raising -----------------------------------------------------------------------------------

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
    if (auto policy = PolicyOf(data)) {
      if (policy->Quorum())
        text += "\nThis gate needs " + std::to_string(policy->required) +
                " approvals from distinct approvers (rejection policy " +
                std::string(policy->RejectionPolicyName()) + ").";
      if (policy->Restricted())
        text += "\nOnly these may answer: " + DescribeApprovers(*policy) + ".";
    }
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

// What the three gate kinds share; they differ in the interrupt's kind, its data, and the
// config they accept.
class Gate : public NodeKind {
 public:
  std::vector<EventDraft> Start(const NodeStep& step, const json::object&) const override {
    return RaiseInterrupt(step, false);
  }

  Decision Continue(const NodeStep& step) const override {
    const Node& n = step.node;
    const int64_t ordinal = step.run.InterruptCount(n.id) - 1;
    const std::string key = step.run_id + ":" + n.id + ":" + std::to_string(ordinal);
    Decision d;
    d.kind = Decision::Kind::kCommit;
    if (const json::value* rv = step.run.resume_values.if_contains(key); rv && ordinal >= 0)
      d.events = FinishGate(step.run_id, n, *rv);
    else
      d.events = RaiseInterrupt(step, true);
    return d;
  }

  core::Result<tasks::Resolution> Resolve(const InterruptAnswer& answer) const override;

 protected:
  // The interrupt's kind: approval | clarification | external-event | custom.
  virtual std::string InterruptKind(const Node& n) const = 0;
  // The interrupt's data (InterruptPayload.data, DIGEST §4.3-4.5).
  virtual json::object InterruptData(const std::string& run_id, const Node& n,
                                     const std::string& kind) const = 0;

 private:
  std::vector<EventDraft> RaiseInterrupt(const NodeStep& step, bool started) const;
  std::vector<EventDraft> FinishGate(const std::string& run_id, const Node& n,
                                     const json::value& resume) const;
};

std::vector<EventDraft> Gate::RaiseInterrupt(const NodeStep& step, bool started) const {
  const std::string kind = InterruptKind(step.node);
  return nodes::RaiseInterrupt(step, started, kind, InterruptData(step.run_id, step.node, kind));
}

}  // namespace

std::vector<EventDraft> RaiseInterrupt(const NodeStep& step, bool started, const std::string& kind,
                                       json::object data) {
  const std::string& run_id = step.run_id;
  const Node& n = step.node;
  const PlanEnv& env = step.env;
  std::vector<EventDraft> out;
  const int64_t ordinal = step.run.InterruptCount(n.id);
  const std::string key = run_id + ":" + n.id + ":" + std::to_string(ordinal);
  const std::string interrupt_id = n.id + "-" + std::to_string(ordinal);
  const int64_t timeout_ms = IntOr(n.config, "timeoutMs", 0);
  const std::string requested_at = core::FormatTimestamp(env.now_ms);

  if (!started) out.push_back(Ev(protocol::kEvNodeStarted, n.id, StartedPayload(n)));
  json::object requested{{"kind", kind},
                         {"key", key},
                         {"data", data},
                         {"runId", run_id},
                         {"interruptId", interrupt_id},
                         {"requestedAt", requested_at}};
  if (timeout_ms > 0) requested["timeoutMs"] = timeout_ms;
  out.push_back(Ev(protocol::kEvInterruptRequested, n.id, requested));
  json::object quorum;  // an approval quorum's open tally; empty otherwise
  if (kind == "approval") {
    json::object a{{"interruptId", interrupt_id}};
    for (const char* k :
         {"artifactId", "artifactType", "title", "actions", "requiredApprovals", "approversList"})
      if (const json::value* v = data.if_contains(k)) a[k] = *v;
    out.push_back(Ev(protocol::kEvApprovalRequested, n.id, std::move(a)));
    if (auto policy = PolicyOf(data); policy && policy->Quorum()) quorum = OpenQuorum(*policy);
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
  if (!quorum.empty()) interrupt["quorum"] = quorum;
  // The A2A view: the interrupt's identity and the shape a client needs to render it.
  json::object flat{{"kind", kind}, {"nodeId", n.id}, {"interruptId", interrupt_id}};
  for (const auto& kv : data) flat[kv.key()] = kv.value();
  if (!quorum.empty()) flat["quorum"] = std::move(quorum);
  json::object suspended{{"interruptId", interrupt_id},
                         {"kind", kind},
                         {"key", key},
                         {"interrupt", flat},
                         {"run", interrupt},
                         {"message", protocol::MessageToJson(PromptMessage(kind, data, flat))}};
  if (!token.empty()) suspended["interruptToken"] = token;
  out.push_back(Ev(protocol::kEvInputRequired, n.id, std::move(suspended)));
  return out;
}

namespace {

// ---- finishing ---------------------------------------------------------------------------------

// The node's completion once its interrupt has a resume value (normalized by Resolve).
std::vector<EventDraft> Gate::FinishGate(const std::string& run_id, const Node& n,
                                         const json::value& resume) const {
  std::vector<EventDraft> out;
  const std::string kind = InterruptKind(n);
  const json::object empty;
  const json::object& rv = resume.is_object() ? resume.get_object() : empty;
  if (std::string_view(Str(rv, "outcome")) == "timeout") {
    // A timeout never grants a gate (OpenWOP RFC 0093, RFC 0223): the node fails, and is not
    // retried. v1 keeps its code approval_timeout (RFC 0223's approval_rejected is v2's).
    json::object error = ErrorObj(kind == "approval" ? "approval_timeout" : "interrupt_timeout",
                                  "the interrupt of node '" + n.id + "' timed out");
    error["retryable"] = false;
    FailNode(out, n, std::move(error));
    return out;
  }
  if (kind == "approval") {
    std::string_view action = Str(rv, "action");
    if (action == "reject") {
      std::string message = "rejected by " + std::string(Str(rv, "decidedBy"));
      if (std::string_view summary = Str(ObjOr(rv, "quorum"), "summary"); !summary.empty())
        message += " (" + std::string(summary) + ")";
      if (!Str(rv, "feedback").empty()) message += ": " + std::string(Str(rv, "feedback"));
      // RFC 0223: a rejected gate fails its node and the run with approval_rejected, not
      // retried (failedNodeId names the gate).
      json::object error = ErrorObj("approval_rejected", message);
      error["retryable"] = false;
      FailNode(out, n, std::move(error));
      return out;
    }
    json::object outputs = rv;
    if (action == "edit-accept" && rv.contains("editedArtifactData"))
      NodeArtifact(out, run_id, n, protocol::Part::Data(rv.at("editedArtifactData")),
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

// ---- resolving, per interrupt kind -------------------------------------------------------------

// One answer being resolved: the open interrupt's identity, and the events written so far.
struct Resolving {
  explicit Resolving(const InterruptAnswer& a)
      : answer(a),
        node_id(Str(a.interrupt, "nodeId")),
        interrupt_id(Str(a.interrupt, "interruptId")),
        kind(Str(a.interrupt, "kind")),
        key(Str(a.interrupt, "key")),
        data(ObjOr(a.interrupt, "data")),
        now(core::FormatTimestamp(a.now_ms)) {
    res.explicit_resume = true;
  }

  // interrupt.resolved (+ `extra` fields) and node.resumed carrying the normalized answer.
  void Resolved(json::value normalized, json::object extra = {}) {
    json::object payload{{"interruptId", interrupt_id},
                         {"key", key},
                         {"kind", kind},
                         {"resumeValue", normalized},
                         {"resolvedBy", answer.request.caller},
                         {"resolvedAt", now}};
    // RFC 0223: an approval's interrupt.resolved records its decision.
    if (kind == "approval" && normalized.is_object()) {
      const std::string_view action = Str(normalized.get_object(), "action");
      if (action == "reject") payload["decision"] = "rejected";
      if (action == "accept" || action == "edit-accept") payload["decision"] = "approved";
      if (!action.empty()) payload["action"] = action;
    }
    for (auto& kv : extra) payload[kv.key()] = std::move(kv.value());
    res.events.push_back(Ev(protocol::kEvInterruptResolved, node_id, std::move(payload)));
    res.events.push_back(
        Ev(protocol::kEvNodeResumed, node_id,
           json::object{{"interruptId", interrupt_id}, {"resumeValue", normalized}}));
  }

  const InterruptAnswer& answer;
  const std::string node_id;
  const std::string interrupt_id;
  const std::string kind;
  const std::string key;
  const json::object& data;
  const std::string now;
  tasks::Resolution res;
};

// The engine's own answer when the interrupt's timeoutMs passed: {interruptId} of the
// interrupt it was armed for (else it was answered meanwhile).
core::Result<tasks::Resolution> ResolveTimeout(Resolving& r) {
  const json::value& value = r.answer.value;
  const json::value* id =
      value.is_object() ? value.get_object().if_contains("interruptId") : nullptr;
  if (!id || *id != json::value(r.interrupt_id))
    return Reason(ErrorCode::kConflict, "interrupt_already_resolved", "answered meanwhile");
  if (r.kind == "approval")
    r.res.events.push_back(
        Ev(protocol::kEvApprovalReceived, r.node_id,
           json::object{
               {"action", "timeout"}, {"decidedAt", r.now}, {"interruptId", r.interrupt_id}}));
  r.Resolved(json::object{{"outcome", "timeout"}},
             json::object{{"outcome", "rejected"},
                          {"reason", "timeout"},
                          {"action", "timeout"},
                          {"decision", "rejected"}});
  return std::move(r.res);
}

// One approver's accept or reject at a quorum gate: counted once per principal; a vote that
// leaves the quorum open is a2ad.approval.vote (the run stays waiting), the closing one
// resolves the gate with every vote in approval.received.quorum.
core::Result<tasks::Resolution> ResolveVote(Resolving& r, const ApprovalPolicy& policy,
                                            ApprovalAnswer& answer) {
  const std::string& caller = r.answer.request.caller;
  auto cast = CastVote(policy, VotesOf(r.answer.interrupt), Vote{caller, answer.action});
  if (!cast) return std::move(cast).error();
  r.res.resumes = false;
  r.res.explicit_resume = false;
  if (cast->duplicate) {  // counted already: nothing to write
    r.res.changes_nothing = true;
    return std::move(r.res);
  }
  const QuorumTally& t = cast->tally;
  json::object vote{{"principal", caller}, {"action", answer.action}, {"votedAt", r.now}};
  if (answer.feedback) vote["feedback"] = *answer.feedback;
  const std::string summary = DescribeTally(policy, t);
  if (t.outcome == QuorumTally::Outcome::kOpen) {
    json::object payload = vote;
    payload["interruptId"] = r.interrupt_id;
    payload["accepts"] = t.accepts;
    payload["rejects"] = t.rejects;
    payload["required"] = policy.required;
    // The A2A task's new status message: the tally, in words and as data.
    protocol::Message m;
    m.role = protocol::Role::kAgent;
    m.message_id = r.interrupt_id + "-vote-" + std::to_string(t.accepts + t.rejects);
    m.parts.push_back(
        protocol::Part::Text("Vote recorded: " + answer.action + " by " + caller + ". " + summary));
    m.parts.push_back(protocol::Part::Data(json::object{{"kind", "approval.vote"},
                                                        {"nodeId", r.node_id},
                                                        {"interruptId", r.interrupt_id},
                                                        {"accepts", t.accepts},
                                                        {"rejects", t.rejects},
                                                        {"required", policy.required}}));
    payload["message"] = protocol::MessageToJson(m);
    r.res.events.push_back(Ev(protocol::kEvApprovalVote, r.node_id, std::move(payload)));
    return std::move(r.res);
  }
  json::array votes;
  if (const json::value* v = ObjOr(r.answer.interrupt, "quorum").if_contains("votes");
      v && v->is_array())
    votes = v->get_array();
  votes.push_back(std::move(vote));
  const bool accepted = t.outcome == QuorumTally::Outcome::kAccepted;
  json::object normalized{{"action", accepted ? "accept" : "reject"},
                          {"decidedBy", caller},
                          {"decidedAt", r.now},
                          {"quorum", json::object{{"required", policy.required},
                                                  {"rejectionPolicy", policy.RejectionPolicyName()},
                                                  {"accepts", t.accepts},
                                                  {"rejects", t.rejects},
                                                  {"outcome", accepted ? "accepted" : "rejected"},
                                                  {"reason", t.reason},
                                                  {"summary", summary},
                                                  {"votes", std::move(votes)}}}};
  if (answer.feedback) normalized["feedback"] = std::move(*answer.feedback);
  json::object received = normalized;
  received["interruptId"] = r.interrupt_id;
  r.res.resumes = true;
  r.res.explicit_resume = true;
  r.res.events.push_back(Ev(protocol::kEvApprovalReceived, r.node_id, std::move(received)));
  r.Resolved(std::move(normalized));
  return std::move(r.res);
}

core::Result<tasks::Resolution> ResolveApproval(Resolving& r) {
  // Who answers first (approval_policy.hpp), whatever the answer says.
  auto policy = PolicyOf(r.data);
  if (!policy) return std::move(policy).error();
  if (auto refused =
          CheckApprover(*policy, r.answer.request.principal, r.answer.request.via, r.node_id))
    return std::move(*refused);
  auto checked = CheckApprovalAnswer(r.answer.value, r.data, r.node_id);
  if (!checked) return std::move(checked).error();
  ApprovalAnswer& answer = checked.value();
  const std::string& caller = r.answer.request.caller;
  if (answer.action == "ask") {
    r.res.resumes = false;
    r.res.explicit_resume = false;
    r.res.events.push_back(Ev(protocol::kEvApprovalAsked, r.node_id,
                              json::object{{"question", std::move(answer.question)},
                                           {"askedBy", caller},
                                           {"interruptId", r.interrupt_id}}));
    return std::move(r.res);
  }
  if (policy->Quorum()) return ResolveVote(r, *policy, answer);
  json::object normalized{{"action", answer.action}, {"decidedBy", caller}, {"decidedAt", r.now}};
  if (answer.feedback) normalized["feedback"] = std::move(*answer.feedback);
  if (answer.refine_feedback) normalized["refineFeedback"] = std::move(*answer.refine_feedback);
  if (answer.edited_artifact_data)
    normalized["editedArtifactData"] = std::move(*answer.edited_artifact_data);
  json::object received = normalized;
  received["interruptId"] = r.interrupt_id;
  r.res.events.push_back(Ev(protocol::kEvApprovalReceived, r.node_id, std::move(received)));
  r.Resolved(std::move(normalized));
  return std::move(r.res);
}

core::Result<tasks::Resolution> ResolveClarification(Resolving& r) {
  auto answers = CheckClarificationAnswer(r.answer.value, r.data, r.node_id);
  if (!answers) return std::move(answers).error();
  r.res.events.push_back(Ev(protocol::kEvClarificationResolved, r.node_id,
                            json::object{{"answers", answers.value()},
                                         {"answeredBy", r.answer.request.caller},
                                         {"interruptId", r.interrupt_id}}));
  r.Resolved(json::object{{"answers", std::move(answers).value()}});
  return std::move(r.res);
}

// The event's body (or the `eventPayload` of an envelope) must carry every correlation
// member of the interrupt's data.
core::Result<tasks::Resolution> ResolveExternalEvent(Resolving& r) {
  const json::value& value = r.answer.value;
  json::object body;
  if (value.is_object()) {
    body = value.get_object();
    if (auto* ep = body.if_contains("eventPayload"); ep && ep->is_object() && body.size() == 1)
      body = ep->get_object();
  }
  for (const auto& kv : ObjOr(r.data, "correlation")) {
    const json::value* got = body.if_contains(kv.key());
    if (!got || *got != kv.value())
      return Reason(ErrorCode::kInvalidParams, "correlation_mismatch",
                    "the event does not match the awaited correlation: " + std::string(kv.key()) +
                        " must be " + protocol::SerializeJson(kv.value()));
  }
  r.Resolved(std::move(body));
  return std::move(r.res);
}

core::Result<tasks::Resolution> ResolveCustom(Resolving& r) {
  r.Resolved(r.answer.value);
  return std::move(r.res);
}

core::Result<tasks::Resolution> Gate::Resolve(const InterruptAnswer& answer) const {
  return ResolveAnswer(answer);
}

}  // namespace

core::Result<tasks::Resolution> ResolveAnswer(const InterruptAnswer& answer) {
  Resolving r(answer);
  if (answer.request.via == "timeout") return ResolveTimeout(r);
  if (r.kind == "approval") return ResolveApproval(r);
  if (r.kind == "clarification") return ResolveClarification(r);
  if (r.kind == "external-event") return ResolveExternalEvent(r);
  return ResolveCustom(r);
}

namespace {

// ---- the three kinds ---------------------------------------------------------------------------

json::array ApprovalActions(const Node& n) { return ActionsOf(n.config); }

// An approval's policy fields (approval_policy.hpp) at `path`, refused naming the node.
core::Result<void> CheckPolicy(const json::object& fields, const std::string& path, const Node& n) {
  auto policy = ParseApprovalPolicy(fields, path, ActionsOf(fields));
  if (!policy) {
    Error e = std::move(policy).error();
    e.details.emplace_back("nodeId", n.id);
    return e;
  }
  return core::Ok{};
}

// core.approvalGate: config {title?, description?, actions?, artifactData?, timeoutMs?,
// requiredApprovals?, rejectionPolicy?, approversList?, approverGroupRefs?, approverRoleRefs?,
// audience?, overrideBypassesQuorum? (false only)}: approval_policy.hpp.
class ApprovalGate final : public Gate {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    auto actions = CheckActions(n.config.if_contains("actions"), path + ".config.actions");
    if (!actions) return std::move(actions).error();
    return CheckPolicy(n.config, path + ".config", n);
  }

 protected:
  std::string InterruptKind(const Node&) const override { return "approval"; }
  json::object InterruptData(const std::string& run_id, const Node& n,
                             const std::string&) const override {
    json::object data{
        {"artifactId", run_id + ":" + n.id},
        {"artifactType", n.artifact_type.empty() ? "approval" : n.artifact_type},
        {"title", Str(n.config, "title").empty() ? json::value(n.name.empty() ? n.id : n.name)
                                                 : n.config.at("title")},
        {"actions", ApprovalActions(n)},
        {"requiredApprovals", 1}};
    for (const char* k :
         {"description", "artifactData", "requiredApprovals", "approversList", "rejectionPolicy",
          "approverGroupRefs", "approverRoleRefs", "audience", "overrideBypassesQuorum"})
      if (const json::value* v = n.config.if_contains(k)) data[k] = *v;
    return data;
  }
};

// core.clarificationGate: config {questions: [{id, question, schema?}], timeoutMs?}.
class ClarificationGate final : public Gate {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    return CheckQuestions(n.config.if_contains("questions"), path + ".config.questions", n.id);
  }

 protected:
  std::string InterruptKind(const Node&) const override { return "clarification"; }
  json::object InterruptData(const std::string&, const Node& n, const std::string&) const override {
    return json::object{{"questions", n.config.at("questions")}};
  }
};

// core.interrupt: config {kind, data?, timeoutMs?}; an approval's data gets the defaults an
// approval gate would have, and its quorum and approver fields follow the same rules
// (approval_policy.hpp).
class Interrupt final : public Gate {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    std::string kind(Str(n.config, "kind"));
    if (kind != "approval" && kind != "clarification" && kind != "external-event" &&
        kind != "custom")
      return protocol::FieldError(path + ".config.kind",
                                  "expected approval, clarification, external-event or custom");
    const json::value* data = n.config.if_contains("data");
    if (data && !data->is_object())
      return protocol::FieldError(path + ".config.data", "expected an object");
    // What an approval or clarification answer is checked against (answers.hpp).
    if (kind == "approval") {
      auto actions = CheckActions(data ? data->get_object().if_contains("actions") : nullptr,
                                  path + ".config.data.actions");
      if (!actions) return std::move(actions).error();
      if (data) {
        auto policy = CheckPolicy(data->get_object(), path + ".config.data", n);
        if (!policy) return policy;
      }
    } else if (kind == "clarification") {
      auto questions = CheckQuestions(data ? data->get_object().if_contains("questions") : nullptr,
                                      path + ".config.data.questions", n.id);
      if (!questions) return std::move(questions).error();
    }
    return core::Ok{};
  }

 protected:
  std::string InterruptKind(const Node& n) const override {
    return std::string(Str(n.config, "kind"));
  }
  json::object InterruptData(const std::string& run_id, const Node& n,
                             const std::string& kind) const override {
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
};

}  // namespace

std::unique_ptr<const NodeKind> MakeApprovalGateKind() { return std::make_unique<ApprovalGate>(); }
std::unique_ptr<const NodeKind> MakeClarificationGateKind() {
  return std::make_unique<ClarificationGate>();
}
std::unique_ptr<const NodeKind> MakeInterruptKind() { return std::make_unique<Interrupt>(); }

}  // namespace a2ad::workflow::nodes
