#include "a2ad/workflow/nodes/node_kind.hpp"

#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using tasks::EventDraft;

core::Result<void> NodeKind::Validate(const Node&, const std::string&) const { return core::Ok{}; }

std::optional<std::string> NodeKind::CalledWorkflow(const Node&) const { return std::nullopt; }

Decision NodeKind::Continue(const NodeStep& step) const {
  Decision d;
  d.kind = Decision::Kind::kCommit;  // one-step kinds: finish what a crash cut short
  CompleteNode(d.events, step.run_id, step.node, json::object());
  return d;
}

std::vector<EventDraft> NodeKind::FinishChild(const Node& node, const protocol::RunSnapshot&,
                                              const std::string& child_run_id,
                                              const protocol::RunSnapshot&) const {
  std::vector<EventDraft> out;
  FailNode(out, node,
           ErrorObj("internal_error", "node '" + node.id + "' (" + node.type_id +
                                          ") started no child run, yet " + child_run_id +
                                          " ended for it"));
  return out;
}

json::object NodeKind::CancelEffect(const NodeStep&) const { return {}; }

core::Result<tasks::Resolution> NodeKind::Resolve(const InterruptAnswer& answer) const {
  return core::Error(
      core::ErrorCode::kInternal,
      "node '" + answer.node.id + "' (" + answer.node.type_id + ") raises no interrupt to answer");
}

}  // namespace a2ad::workflow
