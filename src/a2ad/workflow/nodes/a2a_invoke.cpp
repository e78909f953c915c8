// core.a2a.invoke (also core.conformance.a2a-invoke): a node that hands its work to another
// A2A agent and follows the peer's task to its end (issue 16; seed 003's reverse projection;
// DIGEST §5.4, §7). The kind decides, the executor's EffectRunner talks to the peer
// (effects.hpp); every peer answer is logged (a2ad.node.effect, folded into
// nodeStates[node].effect) before the node acts on it, so a re-drive after a crash
// re-attaches to the same peer task and a replay never calls the peer.
//
// Start logs node.started and the request: the peer (config.peer, a host-config name; or
// config.agentCardUrl; neither: the peer named "default"), the message built from the node's
// inputs (strings -> text parts, objects and the rest -> one data part), with a message id
// derived from run, node and the node's execution ordinal (the peer sees one message per
// execution, however often a2ad sends it), metadata.openwop {callerAgentId, runId, nodeId}
// and, when config.skill is set, metadata.skillId; and the node's deadline.
//
// In flight, by the peer task's last logged state (the reverse projection):
//   (none yet)                  a2a.send
//   submitted, unknown, working a2a.wait: follow (poll, stream, push) until the state
//                               changes or the deadline
//   input-required              a clarification interrupt in this run carrying the peer's
//   auth-required               message (auth: data.subkind "auth"); its answer is sent on to
//                               the peer's task (a2a.reply), and the peer's answer logged
//   completed                   the node completes: {peerTaskId, state, artifacts, message?,
//                               text, data?, peer, contentTrust: "untrusted"}
//   failed                      node.failed {code: remote_failed}
//   rejected                    node.failed {code: rejected_by_remote, reason: ...}
//   canceled                    node.failed {code: cancelled_by_remote}, then run.cancelled
// A peer that answers the message with a message (no task) completes the node with it.
// Transport failures and 5xx/429 after the retries, and the deadline, fail the node with
// external_call_failed (and a deadline cancels the peer's task). Cancelling this run cancels
// the peer's task (CancelEffect; reason cross_protocol_cancel).
//
// Trust: peer content is data in this run, tagged contentTrust "untrusted"; nothing the peer
// says resolves an interrupt or grants anything (only answers through the host's own
// endpoints do, WorkflowExecutor::Resolve).
//
// config: {agentCardUrl? | peer?, skill?, text?, timeoutMs? (1..7 days, default 10 min),
//          pollMs? (10..60000, default 500), retry? {maxAttempts 1..10 (3), backoffMs
//          0..60000 (500)}, requireSignedCard? (bool: refuse a peer whose card signature is
//          not verified; a signed card that fails verification is always refused), mode?
//          ("poll" | "stream" | "push": how the runner follows the peer's task, HostEffects;
//          in push mode pollMs defaults to 30 s: how long to wait for a push before looking),
//          outputs? {name: JSON Pointer (RFC 6901) into the completed node's outputs above,
//          e.g. "/data/brief": each becomes one more output; a pointer that finds nothing
//          fails the node with peer_output_missing}, binding? ("jsonrpc" | "rest" | "grpc":
//          which of the card's interfaces to speak; default the card's first, HostEffects)}
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/workflow/nodes/config_checks.hpp"
#include "a2ad/workflow/nodes/interrupts.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow::nodes {
namespace json = boost::json;
using protocol::FieldError;
using protocol::IntOr;
using protocol::ObjOr;
using protocol::Str;
using tasks::EventDraft;

namespace {

constexpr int64_t kDefaultTimeoutMs = 10LL * 60 * 1000;

// The outputs a completed node always has (Outputs below); config.outputs may not rename them.
constexpr std::string_view kOwnOutputs[] = {"peerTaskId",   "state",     "peer",
                                            "contentTrust", "artifacts", "text",
                                            "data",         "message",   "peerCreatedAt"};

core::Result<void> CheckOutputs(const json::object& c, const std::string& cfg) {
  const json::value* o = c.if_contains("outputs");
  if (!o) return core::Ok{};
  if (!o->is_object()) return FieldError(cfg + ".outputs", "expected {name: JSON Pointer}");
  for (const auto& kv : o->get_object()) {
    const std::string at = cfg + ".outputs." + std::string(kv.key());
    for (std::string_view own : kOwnOutputs)
      if (kv.key() == own) return FieldError(at, "is one of the node's own outputs");
    if (!kv.value().is_string() || !kv.value().get_string().starts_with("/"))
      return FieldError(at, "expected a JSON Pointer (\"/data/brief\")");
    const std::string_view p = kv.value().get_string();
    for (size_t i = p.find('~'); i != std::string_view::npos; i = p.find('~', i + 1))
      if (i + 1 == p.size() || (p[i + 1] != '0' && p[i + 1] != '1'))
        return FieldError(at, "not a JSON Pointer: '~' must be followed by 0 or 1");
  }
  return core::Ok{};
}
constexpr int64_t kMaxTimeoutMs = 7LL * 24 * 3600 * 1000;
constexpr int64_t kPushLookMs = 30000;  // push mode: look anyway when no push came this long

// The peer fields every spec carries (the runner resolves the peer from them).
json::object PeerFields(const json::object& request) {
  json::object p;
  for (const char* k : {"peer", "agentCardUrl", "retry", "deadlineMs", "requireSignedCard", "mode",
                        "pollMs", "binding"})
    if (const json::value* v = request.if_contains(k)) p[k] = *v;
  return p;
}

// A part of the outbound message (A2A 1.0 shape; the runner writes the peer's version).
json::object PartOf(const json::value& v) {
  if (v.is_string()) return json::object{{"text", v}};
  return json::object{{"data", v}};
}

// The text of a peer message's text parts (1.0 {text} or 0.3 {kind: text, text}).
std::string TextOf(const json::object& message) {
  std::string text;
  if (const json::value* parts = message.if_contains("parts"); parts && parts->is_array())
    for (const auto& p : parts->get_array())
      if (p.is_object() && p.get_object().contains("text"))
        text += (text.empty() ? "" : "\n") + AsText(p.get_object().at("text"));
  return text;
}

class A2aInvoke final : public NodeKind {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    const std::string cfg = path + ".config";
    const json::object& c = n.config;
    if (const json::value* u = c.if_contains("agentCardUrl");
        u && (!u->is_string() ||
              !(u->get_string().starts_with("https://") || u->get_string().starts_with("http://"))))
      return FieldError(cfg + ".agentCardUrl", "expected an http(s) URL of the peer's agent card");
    if (c.contains("agentCardUrl") && c.contains("peer"))
      return FieldError(cfg + ".peer", "give agentCardUrl or peer, not both");
    for (const char* k : {"peer", "skill", "text"})
      if (const json::value* v = c.if_contains(k); v && !v->is_string())
        return FieldError(cfg + "." + k, "expected a string");
    if (const json::value* m = c.if_contains("mode");
        m && *m != json::value("poll") && *m != json::value("stream") && *m != json::value("push"))
      return FieldError(cfg + ".mode", "expected \"poll\", \"stream\" or \"push\"");
    if (const json::value* b = c.if_contains("binding");
        b && *b != json::value("jsonrpc") && *b != json::value("rest") && *b != json::value("grpc"))
      return FieldError(cfg + ".binding", "expected \"jsonrpc\", \"rest\" or \"grpc\"");
    if (const json::value* s = c.if_contains("requireSignedCard"); s && !s->is_bool())
      return FieldError(cfg + ".requireSignedCard", "expected a boolean");
    if (auto r = CheckIntIn(c, "timeoutMs", 1, kMaxTimeoutMs, cfg); !r) return r;
    if (auto r = CheckIntIn(c, "pollMs", 10, 60000, cfg); !r) return r;
    if (auto r = CheckRetry(c, cfg); !r) return r;
    return CheckOutputs(c, cfg);
  }

  std::vector<EventDraft> Start(const NodeStep& step, const json::object& inputs) const override {
    const Node& n = step.node;
    const json::object& c = n.config;
    std::vector<EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, n.id, StartedPayload(n)));
    const int64_t ordinal = step.run.node_executions;
    json::array parts;
    if (!Str(c, "text").empty()) parts.push_back(PartOf(c.at("text")));
    json::object data;
    for (const auto& kv : inputs) {
      if (kv.value().is_string())
        parts.push_back(PartOf(kv.value()));
      else
        data[kv.key()] = kv.value();
    }
    if (!data.empty()) parts.push_back(PartOf(data));
    if (parts.empty()) parts.push_back(PartOf(json::value(n.name.empty() ? n.id : n.name)));
    json::object metadata{
        {"openwop",
         json::object{{"callerAgentId", "a2ad"}, {"runId", step.run_id}, {"nodeId", n.id}}}};
    if (!Str(c, "skill").empty()) metadata["skillId"] = c.at("skill");
    json::object message{
        {"messageId", "a2ad-" + step.run_id + "-" + n.id + "-" + std::to_string(ordinal)},
        {"role", "user"},
        {"parts", std::move(parts)},
        {"metadata", std::move(metadata)}};
    json::object req;
    req["kind"] = "a2a.send";
    if (c.contains("agentCardUrl"))
      req["agentCardUrl"] = c.at("agentCardUrl");
    else
      req["peer"] = Str(c, "peer").empty() ? json::value("default") : c.at("peer");
    req["retry"] = RetrySpec(c);
    const std::string mode = Str(c, "mode").empty() ? "poll" : std::string(Str(c, "mode"));
    req["mode"] = mode;
    if (c.contains("binding")) req["binding"] = c.at("binding");
    req["pollMs"] = IntOr(c, "pollMs", mode == "push" ? kPushLookMs : 500);
    if (const json::value* sc = c.if_contains("requireSignedCard"); sc && sc->is_bool())
      req["requireSignedCard"] = *sc;
    req["deadlineMs"] = step.env.now_ms + IntOr(c, "timeoutMs", kDefaultTimeoutMs);
    req["message"] = std::move(message);
    out.push_back(
        Ev(protocol::kEvNodeEffect, n.id,
           json::object{{"effect", "a2a.send"}, {"result", json::object{{"request", req}}}}));
    return out;
  }

  Decision Continue(const NodeStep& step) const override;
  json::object CancelEffect(const NodeStep& step) const override;
  core::Result<tasks::Resolution> Resolve(const InterruptAnswer& answer) const override {
    return ResolveAnswer(answer);
  }
};

bool Terminal(std::string_view s) {
  return s == "completed" || s == "failed" || s == "canceled" || s == "rejected";
}

json::object Outputs(const json::object& effect) {
  json::object out{{"peerTaskId", Str(effect, "taskId")},
                   {"state", "completed"},
                   {"peer", ObjOr(effect, "peer")},
                   {"contentTrust", "untrusted"}};
  const json::object& task = ObjOr(effect, "task");
  json::array artifacts;
  if (const json::value* a = task.if_contains("artifacts"); a && a->is_array())
    artifacts = a->get_array();
  std::string text;
  json::value data;
  for (const auto& a : artifacts)
    if (a.is_object())
      if (const json::value* parts = a.get_object().if_contains("parts");
          parts && parts->is_array())
        for (const auto& p : parts->get_array()) {
          if (!p.is_object()) continue;
          if (const json::value* t = p.get_object().if_contains("text"))
            text += (text.empty() ? "" : "\n") + AsText(*t);
          else if (const json::value* d = p.get_object().if_contains("data"); d && data.is_null())
            data = *d;
        }
  const json::object& message = ObjOr(ObjOr(task, "status"), "message");
  const json::object& direct = ObjOr(effect, "directMessage");
  for (const json::object* m : {&message, &direct})
    if (!m->empty()) {
      out["message"] = *m;
      if (text.empty()) text = TextOf(*m);
      if (data.is_null())
        if (const json::value* parts = m->if_contains("parts"); parts && parts->is_array())
          for (const auto& p : parts->get_array())
            if (p.is_object() && p.get_object().contains("data") && data.is_null())
              data = p.get_object().at("data");
    }
  out["artifacts"] = std::move(artifacts);
  out["text"] = text;
  if (!data.is_null()) out["data"] = std::move(data);
  if (!Str(task, "createdAt").empty()) out["peerCreatedAt"] = Str(task, "createdAt");
  return out;
}

// Completes the node with `out` and the outputs config.outputs picks from it.
void Complete(std::vector<EventDraft>& events, const std::string& run_id, const Node& n,
              json::object out) {
  const json::object& wanted = ObjOr(n.config, "outputs");
  if (wanted.empty()) {
    CompleteNode(events, run_id, n, std::move(out));
    return;
  }
  json::object picked;
  const json::value whole = out;  // find_pointer reads a value
  for (const auto& kv : wanted) {
    const std::string pointer(kv.value().is_string() ? kv.value().get_string() : "");
    boost::system::error_code ec;
    const json::value* v = whole.find_pointer(pointer, ec);
    if (!v) {
      FailNode(
          events, n,
          ErrorObj("peer_output_missing", "the peer's result has nothing at " + pointer +
                                              " (config.outputs." + std::string(kv.key()) + ")"));
      return;
    }
    picked[kv.key()] = *v;
  }
  for (auto& kv : picked) out[kv.key()] = std::move(kv.value());
  CompleteNode(events, run_id, n, std::move(out));
}

Decision A2aInvoke::Continue(const NodeStep& step) const {
  const Node& n = step.node;
  const json::object& effect = step.state.EffectObject();
  const json::object& request = ObjOr(effect, "request");
  Decision d;
  d.kind = Decision::Kind::kCommit;
  if (const json::value* e = effect.if_contains("error"); e && e->is_object()) {
    FailNode(d.events, n, e->get_object());
    return d;
  }
  if (request.empty()) {
    FailNode(d.events, n, ErrorObj("internal_error", "node '" + n.id + "': no request logged"));
    return d;
  }
  if (effect.contains("directMessage")) {
    Complete(d.events, step.run_id, n, Outputs(effect));
    return d;
  }
  const std::string task_id(Str(effect, "taskId"));
  if (task_id.empty()) {
    d.kind = Decision::Kind::kEffect;
    d.effect = request;
    return d;
  }
  const std::string state(Str(effect, "state"));
  const std::string peer_text = TextOf(ObjOr(ObjOr(ObjOr(effect, "task"), "status"), "message"));
  if (state == "completed") {
    Complete(d.events, step.run_id, n, Outputs(effect));
  } else if (state == "failed") {
    FailNode(
        d.events, n,
        ErrorObj("remote_failed", "the peer's task " + task_id + " failed" +
                                      (peer_text.empty() ? "" : ": " + peer_text.substr(0, 200))));
  } else if (state == "rejected") {
    json::object error = ErrorObj("rejected_by_remote", "the peer rejected the task " + task_id);
    error["reason"] = "rejected_by_remote";
    FailNode(d.events, n, std::move(error));
  } else if (state == "canceled") {
    d.events.push_back(Ev(protocol::kEvNodeFailed, n.id,
                          json::object{{"error", ErrorObj("cancelled_by_remote",
                                                          "the peer canceled its task " + task_id)},
                                       {"attempts", 1}}));
    d.events.push_back(
        Ev(protocol::kEvRunCancelled, "",
           json::object{{"reason", "cancelled_by_remote"}, {"cancelledBy", "peer"}}));
  } else if ((state == "input-required" || state == "auth-required") &&
             effect.contains("awaitingPeer") && effect.at("awaitingPeer") == json::value(true)) {
    // The answer to our reply still shows the question: follow the task until the peer's
    // status changes (it read the reply, or asks again).
    d.kind = Decision::Kind::kEffect;
    d.effect = PeerFields(request);
    d.effect["kind"] = "a2a.wait";
    d.effect["taskId"] = task_id;
    d.effect["state"] = state;
    d.effect["statusStamp"] = Str(effect, "statusStamp");
  } else if (state == "input-required" || state == "auth-required") {
    const int64_t raised = step.run.InterruptCount(n.id);
    const int64_t replies = IntOr(effect, "replies", 0);
    if (raised > replies) {  // answered: send the answer on to the peer's task
      const std::string key = step.run_id + ":" + n.id + ":" + std::to_string(raised - 1);
      const json::value* rv = step.run.resume_values.if_contains(key);
      if (!rv) {
        d.kind = Decision::Kind::kParked;
        return d;
      }
      const json::object& answers =
          rv->is_object() ? ObjOr(rv->get_object(), "answers") : json::object();
      const json::value* reply = answers.if_contains("reply");
      json::object message{{"messageId", "a2ad-" + step.run_id + "-" + n.id + "-reply-" +
                                             std::to_string(raised - 1)},
                           {"role", "user"},
                           {"taskId", task_id},
                           {"parts", json::array{PartOf(reply ? *reply : *rv)}},
                           {"metadata", ObjOr(ObjOr(request, "message"), "metadata")}};
      if (!Str(effect, "contextId").empty()) message["contextId"] = Str(effect, "contextId");
      d.kind = Decision::Kind::kEffect;
      d.effect = PeerFields(request);
      d.effect["kind"] = "a2a.reply";
      d.effect["taskId"] = task_id;
      d.effect["replies"] = raised;
      d.effect["message"] = std::move(message);
      return d;
    }
    json::object data{
        {"questions",
         json::array{json::object{
             {"id", "reply"},
             {"question", peer_text.empty()
                              ? "The agent working on this step asks for input."
                              : "The agent working on this step asks: " + peer_text}}}},
        {"peer", ObjOr(effect, "peer")},
        {"peerTaskId", task_id},
        {"peerMessage", ObjOr(ObjOr(ObjOr(effect, "task"), "status"), "message")},
        {"contentTrust", "untrusted"}};
    if (state == "auth-required") {
      data["subkind"] = "auth";
      data["metadata"] = json::object{{"subkind", "auth"}};
    }
    d.events = RaiseInterrupt(step, true, "clarification", std::move(data));
  } else {  // submitted, working, unknown: follow the task
    d.kind = Decision::Kind::kEffect;
    d.effect = PeerFields(request);
    d.effect["kind"] = "a2a.wait";
    d.effect["taskId"] = task_id;
    d.effect["state"] = state;
  }
  return d;
}

json::object A2aInvoke::CancelEffect(const NodeStep& step) const {
  const json::object& effect = step.state.EffectObject();
  const std::string_view task_id = Str(effect, "taskId");
  if (task_id.empty() || Terminal(Str(effect, "state"))) return {};
  json::object spec = PeerFields(ObjOr(effect, "request"));
  spec["kind"] = "a2a.cancel";
  spec["taskId"] = task_id;
  spec["reason"] = "cross_protocol_cancel";
  return spec;
}

}  // namespace

std::unique_ptr<const NodeKind> MakeA2aInvokeKind() { return std::make_unique<A2aInvoke>(); }

}  // namespace a2ad::workflow::nodes
