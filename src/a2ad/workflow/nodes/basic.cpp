// One-step kinds (DIGEST §5.2): core.noop and core.identity complete at once (identity's
// outputs are its inputs), core.fail fails the node and the run. In flight (a crash between
// node.started and the rest) they complete, as every one-step kind does (NodeKind::Continue).
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow::nodes {
namespace json = boost::json;
using protocol::Str;
using tasks::EventDraft;

namespace {

// core.noop (no outputs) and core.identity (outputs = inputs).
class Complete final : public NodeKind {
 public:
  explicit Complete(bool outputs_are_inputs) : outputs_are_inputs_(outputs_are_inputs) {}

  std::vector<EventDraft> Start(const NodeStep& step, const json::object& inputs) const override {
    std::vector<EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, step.node.id, StartedPayload(step.node)));
    CompleteNode(out, step.run_id, step.node, outputs_are_inputs_ ? inputs : json::object());
    return out;
  }

 private:
  bool outputs_are_inputs_;
};

// core.fail: config {code?, message?}.
class Fail final : public NodeKind {
 public:
  std::vector<EventDraft> Start(const NodeStep& step, const json::object&) const override {
    const Node& n = step.node;
    std::vector<EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, n.id, StartedPayload(n)));
    std::string code(Str(n.config, "code")), message(Str(n.config, "message"));
    FailNode(out, n,
             ErrorObj(code.empty() ? "conformance_test_failure" : code,
                      message.empty() ? "Intentional conformance failure" : message));
    return out;
  }
};

}  // namespace

std::unique_ptr<const NodeKind> MakeNoopKind() { return std::make_unique<Complete>(false); }
std::unique_ptr<const NodeKind> MakeIdentityKind() { return std::make_unique<Complete>(true); }
std::unique_ptr<const NodeKind> MakeFailKind() { return std::make_unique<Fail>(); }

}  // namespace a2ad::workflow::nodes
