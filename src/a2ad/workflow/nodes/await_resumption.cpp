// core.awaitResumption (the pause extension's agent-initiated pause, tasks/pause.hpp): the node
// parks its run as paused-by-agent until its conditions hold. Start logs node.started and
// run.paused {initiatedBy: agent, conditions, resumeToken, nodeId} in one step; the run is
// parked (Plan) until a resume: tasks/resume with the handle, POST /v1/events naming
// conditions.onEvent (cause external_event), the trigger time (condition_fired), or the timeout
// (onTimeout resume: cause timeout; fail: the run fails with pause_timeout). Timers are
// absolute instants in the log, so a restart wakes at the same instant. Resumed, the node
// completes with outputs {input, cause}: the resume's input (null without one).
//
// Config: reason (string), summary (string), conditions {onEvent, trigger, timeout
// {durationMinutes, onTimeout}} (checked at load, as tasks/await_resumption checks them).
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/tasks/pause.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow::nodes {
namespace json = boost::json;
using protocol::Str;
using tasks::EventDraft;

namespace {

const json::value& ConditionsOf(const Node& n) {
  static const json::value kNone;
  const json::value* c = n.config.if_contains("conditions");
  return c ? *c : kNone;
}

class AwaitResumption final : public NodeKind {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    for (const char* k : {"reason", "summary"})
      if (auto* v = n.config.if_contains(k); v && !v->is_string())
        return core::Error(core::ErrorCode::kInvalidParams,
                           path + ".config." + k + ": expected a string");
    auto c = tasks::NormalizeConditions(ConditionsOf(n), 0, path + ".config.conditions");
    if (!c) return std::move(c).error();
    return core::Ok{};
  }

  std::vector<EventDraft> Start(const NodeStep& step, const json::object&) const override {
    const Node& n = step.node;
    std::vector<EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, n.id, StartedPayload(n)));
    auto c = tasks::NormalizeConditions(ConditionsOf(n), step.env.now_ms, "config.conditions");
    if (!c) {  // refused at load; kept for a workflow loaded by an older version
      FailNode(out, n, ErrorObj("validation_error", c.error().message));
      return out;
    }
    tasks::PauseTaskRequest req;
    req.initiated_by = "agent";
    req.reason = std::string(Str(n.config, "reason"));
    if (req.reason.empty()) req.reason = "node '" + n.id + "' awaits resumption";
    req.summary = std::string(Str(n.config, "summary"));
    req.conditions = std::move(c->normalized);
    req.trigger_at_ms = c->trigger_at_ms;
    req.timeout_at_ms = c->timeout_at_ms;
    // Deterministic: a restart that re-decides this step names the same handle.
    const std::string handle =
        "suspend-" + tasks::NameBasedId("await-resumption\n" + step.run_id + "\n" + n.id + "\n" +
                                        std::to_string(step.run.node_executions));
    tasks::PauseEntryFields f{req,  handle, step.env.now_ms, "running", "working", nullptr,
                              n.id, {}};
    out.push_back(Ev(protocol::kEvRunPaused, "", tasks::PauseEntry(f)));
    return out;
  }

  // Running and no longer paused: resumed; the resume's input is the node's output.
  Decision Continue(const NodeStep& step) const override {
    Decision d;
    d.kind = Decision::Kind::kCommit;
    const json::object& last = protocol::OrEmpty(step.run.last_resume);
    json::object outputs{{"input", nullptr}, {"cause", Str(last, "cause")}};
    if (auto* in = last.if_contains("input")) outputs["input"] = *in;
    CompleteNode(d.events, step.run_id, step.node, std::move(outputs));
    return d;
  }
};

}  // namespace

std::unique_ptr<const NodeKind> MakeAwaitResumptionKind() {
  return std::make_unique<AwaitResumption>();
}

}  // namespace a2ad::workflow::nodes
