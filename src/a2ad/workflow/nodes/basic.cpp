// One-step kinds (DIGEST §5.2): core.noop and core.identity complete at once (identity's
// outputs are its inputs), core.fail fails the node and the run; a2ad.format (a2ad's own)
// writes its inputs into a text. In flight (a crash between node.started and the rest) they
// complete, as every one-step kind does (NodeKind::Continue).
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

// a2ad.format: config {template, outputKey? (default "text")}; every "{{name}}" in the
// template is replaced by the input `name` (a string as it is, anything else as compact
// JSON, a missing optional input as nothing). Its artifact, with an artifactType, is the
// text as a text part (what A2A clients show as text). Refused at load: a template that is
// not a string, and a placeholder naming no input of the node.
class Format final : public NodeKind {
 public:
  core::Result<void> Validate(const Node& n, const std::string& path) const override {
    const json::value* t = n.config.if_contains("template");
    if (!t || !t->is_string())
      return protocol::FieldError(path + ".config.template", "expected a string");
    const json::value* k = n.config.if_contains("outputKey");
    if (k && (!k->is_string() || k->get_string().empty()))
      return protocol::FieldError(path + ".config.outputKey", "expected a non-empty string");
    std::string bad;
    Render(std::string(t->get_string()), n.inputs, &bad);
    if (!bad.empty())
      return protocol::FieldError(path + ".config.template",
                                  "{{" + bad + "}} names no input of the node");
    return core::Ok{};
  }

  std::vector<EventDraft> Start(const NodeStep& step, const json::object& inputs) const override {
    const Node& n = step.node;
    std::vector<EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, n.id, StartedPayload(n)));
    std::string key(Str(n.config, "outputKey"));
    std::string text = Render(std::string(Str(n.config, "template")), inputs);
    if (!n.artifact_type.empty())
      NodeArtifact(out, step.run_id, n, protocol::Part::Text(text), n.artifact_type);
    json::object outputs;
    outputs[key.empty() ? "text" : key] = text;
    out.push_back(Ev(protocol::kEvNodeCompleted, n.id,
                     json::object{{"outputs", std::move(outputs)}, {"durationMs", 0}}));
    return out;
  }

 private:
  // `values` by name; with `unknown`, the first name absent from `values` is put there.
  static std::string Render(const std::string& tpl, const json::object& values,
                            std::string* unknown = nullptr) {
    std::string out;
    size_t at = 0;
    while (true) {
      const size_t open = tpl.find("{{", at);
      const size_t close = open == std::string::npos ? open : tpl.find("}}", open + 2);
      if (close == std::string::npos) break;
      out.append(tpl, at, open - at);
      const std::string name = tpl.substr(open + 2, close - open - 2);
      if (const json::value* v = values.if_contains(name))
        out += AsText(*v);
      else if (unknown && unknown->empty())
        *unknown = name;
      at = close + 2;
    }
    out.append(tpl, at);
    return out;
  }
};

}  // namespace

std::unique_ptr<const NodeKind> MakeFormatKind() { return std::make_unique<Format>(); }
std::unique_ptr<const NodeKind> MakeNoopKind() { return std::make_unique<Complete>(false); }
std::unique_ptr<const NodeKind> MakeIdentityKind() { return std::make_unique<Complete>(true); }
std::unique_ptr<const NodeKind> MakeFailKind() { return std::make_unique<Fail>(); }

}  // namespace a2ad::workflow::nodes
