#include "a2ad/workflow/nodes/registry.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "a2ad/core/log.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow {
namespace json = boost::json;

// ---- the built-in kinds: each factory is defined in the file of its kind -------------------

namespace nodes {
std::unique_ptr<const NodeKind> MakeNoopKind();               // basic.cpp
std::unique_ptr<const NodeKind> MakeIdentityKind();           // basic.cpp
std::unique_ptr<const NodeKind> MakeFailKind();               // basic.cpp
std::unique_ptr<const NodeKind> MakeFormatKind();             // basic.cpp
std::unique_ptr<const NodeKind> MakeDelayKind();              // delay.cpp
std::unique_ptr<const NodeKind> MakeApprovalGateKind();       // gates.cpp
std::unique_ptr<const NodeKind> MakeClarificationGateKind();  // gates.cpp
std::unique_ptr<const NodeKind> MakeInterruptKind();          // gates.cpp
std::unique_ptr<const NodeKind> MakeSubWorkflowKind();        // sub_workflow.cpp
std::unique_ptr<const NodeKind> MakeAwaitResumptionKind();    // await_resumption.cpp
std::unique_ptr<const NodeKind> MakeHttpCallKind();           // http_call.cpp
std::unique_ptr<const NodeKind> MakeA2aInvokeKind();          // a2a_invoke.cpp
}  // namespace nodes

NodeKindRegistry::NodeKindRegistry() {
  Add("core.noop", nodes::MakeNoopKind());
  Add("core.identity", nodes::MakeIdentityKind());
  Add("core.fail", nodes::MakeFailKind());
  Add("a2ad.format", nodes::MakeFormatKind());
  Add("core.delay", nodes::MakeDelayKind());
  Add("core.approvalGate", nodes::MakeApprovalGateKind());
  Add("core.clarificationGate", nodes::MakeClarificationGateKind());
  Add("core.interrupt", nodes::MakeInterruptKind());
  Add("core.subWorkflow", nodes::MakeSubWorkflowKind());
  Add("core.awaitResumption", nodes::MakeAwaitResumptionKind());
  Add("core.http", nodes::MakeHttpCallKind());
  Add("core.a2a.invoke", nodes::MakeA2aInvokeKind());
  Add("core.conformance.a2a-invoke", nodes::MakeA2aInvokeKind());
}

// ---- the registry ----------------------------------------------------------------------------

namespace {

// What a node without a registered kind does: it fails (ParseWorkflow lets none through).
class Unimplemented final : public NodeKind {
 public:
  std::vector<tasks::EventDraft> Start(const NodeStep& step, const json::object&) const override {
    return Fail(step.node);
  }
  Decision Continue(const NodeStep& step) const override {
    Decision d;
    d.kind = Decision::Kind::kCommit;
    d.events = Fail(step.node);
    return d;
  }

 private:
  static std::vector<tasks::EventDraft> Fail(const Node& n) {
    std::vector<tasks::EventDraft> out;
    FailNode(out, n,
             ErrorObj("capability_required", "node kind '" + n.type_id + "' (node '" + n.id +
                                                 "') is not implemented by this host"));
    return out;
  }
};

}  // namespace

namespace {
std::mutex registering;
std::atomic<bool> sealed{false};
}  // namespace

NodeKindRegistry& NodeKindRegistry::Instance() {
  static NodeKindRegistry kinds;
  return kinds;
}

const NodeKindRegistry& NodeKindRegistry::Get() {
  NodeKindRegistry& kinds = Instance();
  // A registration under way finishes before the first reader reads; later readers take no
  // lock.
  if (!sealed.load(std::memory_order_acquire)) {
    std::lock_guard lock(registering);
    sealed.store(true, std::memory_order_release);
  }
  return kinds;
}

core::Result<void> NodeKindRegistry::Register(std::string type_id,
                                             std::unique_ptr<const NodeKind> kind) {
  using core::ErrorCode;
  const size_t dot = type_id.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 1 == type_id.size())
    return core::Error(ErrorCode::kInvalidParams,
                       "node kind '" + type_id + "': a type id is <namespace>.<kind>");
  if (type_id.starts_with("core."))
    return core::Error(ErrorCode::kInvalidParams,
                       "node kind '" + type_id + "': the core. namespace is the host's");
  if (!kind)
    return core::Error(ErrorCode::kInvalidParams, "node kind '" + type_id + "': no kind");
  std::lock_guard lock(registering);
  if (sealed.load(std::memory_order_relaxed))
    return core::Error(ErrorCode::kConflict,
                       "node kind '" + type_id +
                           "': registered after the first workflow was read (register before "
                           "serving)");
  NodeKindRegistry& kinds = Instance();
  if (!kinds.kinds_.emplace(type_id, std::move(kind)).second)
    return core::Error(ErrorCode::kInvalidParams,
                       "node kind '" + type_id + "' is registered already");
  return core::Ok{};
}

void NodeKindRegistry::Add(std::string type_id, std::unique_ptr<const NodeKind> kind) {
  if (!kind || !kinds_.emplace(type_id, std::move(kind)).second) {
    core::LogError("node kind '" + type_id + "' registered twice, or without a kind");
    std::abort();  // a programming error in the table above
  }
}

const NodeKind* NodeKindRegistry::Find(std::string_view type_id) const {
  auto it = kinds_.find(type_id);
  return it == kinds_.end() ? nullptr : it->second.get();
}

const NodeKind& NodeKindRegistry::KindOf(const Node& node) const {
  static const Unimplemented kUnimplemented;
  const NodeKind* kind = Find(node.type_id);
  return kind ? *kind : kUnimplemented;
}

}  // namespace a2ad::workflow
