#pragma once
// The OpenWOP run engine behind the executor port (ARCHITECTURE.md: workflow/ implements
// tasks/executor.hpp). One WorkflowExecutor per loaded workflow; it is stateless between
// steps: every decision is taken from the run snapshot (TaskRecord::run, the fold of the
// log), so a restart re-drives a run from its last committed step and never repeats one.
//
// A step is load -> decide (Plan, a pure function) -> commit. Node kinds (DIGEST §5.2):
//   core.noop, core.identity   one step: node.started + node.completed
//   core.fail                  node.failed + run.failed
//   core.delay                 node.started{wakeAt} (the durable timer), then node.completed
//   core.approvalGate, core.clarificationGate, core.interrupt
//                              node.started + interrupt.requested + approval/clarification
//                              .requested + node.suspended (one step); resolved through
//                              Resolve(); the resume value is logged under a deterministic
//                              key runId:nodeId:n, so a re-driven node re-asks nothing
//   core.subWorkflow           node.started{childRunId} (the id derives from run and node, so
//                              creating the child is idempotent), wait, node.completed
#include <memory>

#include "a2ad/core/clock.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/interrupt_token.hpp"

namespace a2ad::workflow {

struct EngineOptions {
  int64_t token_ttl_ms = 24LL * 3600 * 1000;  // interrupt tokens (capped at timeoutMs)
  int64_t max_node_executions = 100;          // limits.maxNodeExecutions
  std::string public_url;                     // for interrupt callbackUrl
};

struct PlanEnv;

class WorkflowExecutor final : public tasks::Executor {
 public:
  WorkflowExecutor(std::shared_ptr<const Workflow> workflow, tasks::TaskService& service,
                   const InterruptTokens& tokens, const core::Clock& clock, EngineOptions options);

  boost::asio::awaitable<void> Execute(std::shared_ptr<tasks::ExecutionContext> ctx) override;
  core::Result<tasks::Resolution> Resolve(const storage::TaskRecord& current,
                                          const tasks::ResolveRequest& request) override;
  std::optional<core::Error> CheckInputs(const boost::json::object& inputs) const override;
  bool RecoversParked() const override { return true; }
  /// The steps Plan decides at once from the new run (up to the first sleep, gate or child),
  /// committed with its creation: an instant workflow is one transaction.
  std::vector<tasks::EventDraft> FirstSteps(const storage::TaskRecord& current) const override;

  const Workflow& workflow() const { return *workflow_; }

 private:
  PlanEnv Env() const;

  std::shared_ptr<const Workflow> workflow_;
  tasks::TaskService& service_;
  const InterruptTokens& tokens_;
  const core::Clock& clock_;
  EngineOptions options_;
};

/// What the engine does next for a run (exposed for tests).
struct Decision {
  enum class Kind {
    kCommit,     // commit `events`, then decide again
    kSleep,      // sleep until `wake_at`, then commit `events` (a durable timer)
    kParked,     // waiting for an answer; `wake_at` > 0: the interrupt times out then
    kWaitChild,  // start (idempotently) and wait for child run `child_run_id` of `node`
    kDone,       // terminal: nothing more to do
  };
  Kind kind = Kind::kDone;
  std::vector<tasks::EventDraft> events;
  int64_t wake_at = 0;
  std::string child_run_id;
  const Node* node = nullptr;
};

struct PlanEnv {
  const InterruptTokens* tokens = nullptr;
  int64_t now_ms = 0;
  int64_t token_ttl_ms = 24LL * 3600 * 1000;
  int64_t max_node_executions = 100;
  std::string public_url;
};

/// The next step of `run` (a RunSnapshot) of `workflow`. Pure.
Decision Plan(const Workflow& workflow, const std::string& run_id, const boost::json::object& run,
              const PlanEnv& env);

/// The events that finish a sub-workflow node once its child run is terminal. Pure.
std::vector<tasks::EventDraft> FinishChild(const Workflow& workflow, const Node& node,
                                           const boost::json::object& parent_run,
                                           const std::string& child_run_id,
                                           const boost::json::object& child_run);

}  // namespace a2ad::workflow
