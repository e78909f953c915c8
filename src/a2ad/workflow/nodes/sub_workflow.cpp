// core.subWorkflow (DIGEST §5.2): runs another loaded workflow as a child run and waits for
// it. config {workflowId, inputMapping?: {childVar: parentVar}, outputMapping?: {parentVar:
// childVar}, onChildFailure?: fail-parent | absorb, waitForCompletion?: true only}.
//
// Start logs node.started{childRunId, childWorkflowId}; the child's id derives from run and
// node, so creating the child (the executor's part, after Continue decided kWaitChild) is
// idempotent across restarts. FinishChild maps the completed child's variables back and
// completes the node, or fails it with the child (unless absorb).
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow::nodes {
namespace json = boost::json;
using protocol::FieldError;
using protocol::ObjOr;
using protocol::Str;
using tasks::EventDraft;

namespace {

class SubWorkflow final : public NodeKind {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    const std::string config = path + ".config.";
    const json::value* id = n.config.if_contains("workflowId");
    if (!id) return FieldError(config + "workflowId", "required");
    if (!id->is_string()) return FieldError(config + "workflowId", "expected a string");
    if (id->get_string().empty()) return FieldError(config + "workflowId", "must not be empty");
    if (const json::value* wfc = n.config.if_contains("waitForCompletion");
        wfc && wfc->is_bool() && !wfc->get_bool())
      return FieldError(config + "waitForCompletion",
                        "false (fire-and-forget children) is not supported by this host");
    for (const char* m : {"inputMapping", "outputMapping"})
      if (const json::value* mv = n.config.if_contains(m)) {
        if (!mv->is_object()) return FieldError(config + m, "expected an object");
        for (const auto& kv : mv->get_object())
          if (!kv.value().is_string())
            return FieldError(config + m + "." + std::string(kv.key()), "expected a variable name");
      }
    std::string policy(Str(n.config, "onChildFailure"));
    if (!policy.empty() && policy != "fail-parent" && policy != "absorb")
      return FieldError(config + "onChildFailure", "expected fail-parent or absorb");
    return core::Ok{};
  }

  std::optional<std::string> CalledWorkflow(const Node& n) const override {
    return std::string(Str(n.config, "workflowId"));
  }

  std::vector<EventDraft> Start(const NodeStep& step, const json::object&) const override {
    const Node& n = step.node;
    json::object started = StartedPayload(n);
    started["childRunId"] = tasks::NameBasedId("child\n" + step.run_id + "\n" + n.id);
    started["childWorkflowId"] = n.config.at("workflowId");
    std::vector<EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, n.id, started));
    return out;
  }

  // Wait for the child named at Start; the executor creates it first if it does not exist.
  Decision Continue(const NodeStep& step) const override {
    const Node& n = step.node;
    Decision d;
    d.kind = Decision::Kind::kWaitChild;
    d.child_run_id = step.state.child_run_id;
    d.child_workflow_id = std::string(Str(n.config, "workflowId"));
    const json::object& vars = step.run.variables;
    for (const auto& kv : ObjOr(n.config, "inputMapping"))
      if (const json::value* v = vars.if_contains(kv.value().get_string()))
        d.child_inputs[kv.key()] = *v;
    return d;
  }

  std::vector<EventDraft> FinishChild(const Node& n, const protocol::RunSnapshot& parent,
                                      const std::string& child_run_id,
                                      const protocol::RunSnapshot& child) const override {
    std::vector<EventDraft> out;
    const std::string& status = child.status;
    const std::string& run_id = parent.run_id;
    if (status == "completed") {
      const json::object& child_vars = child.variables;
      const json::object& parent_vars = parent.variables;
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
      const json::object& err = protocol::OrEmpty(child.error);
      FailNode(out, n,
               ErrorObj("child_run_failed", "child run " + child_run_id +
                                                " failed: " + std::string(Str(err, "message"))));
      return out;
    }
    CompleteNode(out, run_id, n, std::move(outputs));
    return out;
  }
};

}  // namespace

std::unique_ptr<const NodeKind> MakeSubWorkflowKind() { return std::make_unique<SubWorkflow>(); }

}  // namespace a2ad::workflow::nodes
