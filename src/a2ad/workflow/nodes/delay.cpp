// core.delay (DIGEST §5.2): a durable timer. Start logs node.started{wakeAt, startedAtMs};
// in flight the node sleeps until wakeAt (a restart sleeps to the same instant, read from the
// log) and then completes with no outputs. A run deadline (settings.timeout) earlier than
// wakeAt wakes the run first, and the next Plan fails it.
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow::nodes {
namespace json = boost::json;
using tasks::EventDraft;

namespace {

// The delay: the delayMs input, else config delayMs | ms | durationMs; 0 when none. -1 and
// `error` set when it is not a number of milliseconds between 0 and 30 days.
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

class Delay final : public NodeKind {
 public:
  bool RestartsWhenInterrupted() const override { return true; }

  std::vector<EventDraft> Start(const NodeStep& step, const json::object& inputs) const override {
    const Node& n = step.node;
    std::vector<EventDraft> out;
    std::string error;
    const int64_t ms = DelayMs(n, inputs, error);
    out.push_back(Ev(protocol::kEvNodeStarted, n.id, StartedPayload(n)));
    if (ms < 0) {
      FailNode(out, n, ErrorObj("validation_error", "node '" + n.id + "': " + error));
    } else {
      out.back().payload["wakeAt"] = step.env.now_ms + ms;
      out.back().payload["startedAtMs"] = step.env.now_ms;
    }
    return out;
  }

  Decision Continue(const NodeStep& step) const override {
    Decision d;
    d.kind = Decision::Kind::kSleep;
    d.wake_at = step.state.wake_at.value_or(step.env.now_ms);
    if (step.deadline_ms > 0 && step.deadline_ms < d.wake_at) {
      d.wake_at = step.deadline_ms;  // wake for the run's deadline; the next Plan fails the run
      return d;
    }
    CompleteNode(d.events, step.run_id, step.node, json::object(),
                 d.wake_at - step.state.started_at_ms.value_or(d.wake_at));
    return d;
  }
};

}  // namespace

std::unique_ptr<const NodeKind> MakeDelayKind() { return std::make_unique<Delay>(); }

}  // namespace a2ad::workflow::nodes
