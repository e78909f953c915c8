#pragma once
// The OpenWOP run engine behind the executor port (ARCHITECTURE.md: workflow/ implements
// tasks/executor.hpp). One WorkflowExecutor per loaded workflow; it is stateless between
// steps: every decision is taken by Plan (plan.hpp, pure) from the run snapshot
// (TaskRecord::run, the fold of the log), so a restart re-drives a run from its last committed
// step and never repeats one. A run parked at a gate or a pause holds no execution: its answer
// starts one, and so does the service's wake timer at its timeout (WakesParked).
//
// A step is load -> decide (Plan) -> carry out -> commit. Carrying out is this file's only
// I/O, and its only use of TaskService: calling out through the EffectRunner (effects.hpp),
// sleeping until a durable timer, resolving an
// interrupt whose timeoutMs passed (ResolveInterrupt), creating and watching a child run
// (GetRecord, StartRun, WaitForRecord). What each node kind does is in nodes/ (registry.hpp);
// answers are checked by the kind of the node that raised the interrupt.
//
// Thread safety: immutable after construction; its methods may run for several runs at once
// (Execute as one coroutine per run). Resolve is called under the run's lock (tasks/
// executor.hpp), so racing answers to one run are decided one at a time.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/workflow/decision.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/effects.hpp"
#include "a2ad/workflow/interrupt_token.hpp"

namespace a2ad::workflow {

struct EngineOptions {
  int64_t token_ttl_ms = 24LL * 3600 * 1000;  // interrupt tokens (capped at timeoutMs)
  int64_t max_node_executions = 100;          // limits.maxNodeExecutions
  std::string public_url;                     // for interrupt callbackUrl
};

class WorkflowExecutor final : public tasks::Executor {
 public:
  /// `service`, `tokens`, `clock` and `effects` must outlive the executor. Without `effects`
  /// a node that calls out fails with capability_required when it gets there.
  WorkflowExecutor(std::shared_ptr<const Workflow> workflow, tasks::TaskService& service,
                   const InterruptTokens& tokens, const core::Clock& clock, EngineOptions options,
                   EffectRunner* effects = nullptr);

  /// Drives the run until it parks, ends, is cancelled or the store refuses a step.
  boost::asio::awaitable<void> Execute(std::shared_ptr<tasks::ExecutionContext> ctx) override;
  /// Routes an answer to the run's open interrupt (refusing it when none is open, or not at
  /// `request.node_id`, or the run waits for its child), then lets the node's kind check it.
  /// Errors carry a `reason` detail: interrupt_not_found, interrupt_already_resolved,
  /// interrupt_gone, validation_error, correlation_mismatch.
  core::Result<tasks::Resolution> Resolve(const storage::TaskRecord& current,
                                          const tasks::ResolveRequest& request) override;
  /// kInvalidParams naming the required variables (without default) missing from `inputs`.
  std::optional<core::Error> CheckInputs(const boost::json::object& inputs) const override;
  bool WakesParked() const override { return true; }
  /// The node in flight of a cancelled run: its kind's CancelEffect, through the runner.
  boost::asio::awaitable<void> AfterCancel(std::shared_ptr<const storage::TaskRecord> rec) override;
  /// Pause extension: which node is in flight and what `mode` does to it (tasks/pause.hpp):
  /// a child run is paused with the run (not in wait_for_completion); in interrupt_immediate a
  /// kind that RestartsWhenInterrupted is abandoned; else its step may still commit.
  bool MayAnswer(const storage::TaskRecord& current,
                 const protocol::Principal& who) const override;
  core::Result<tasks::PausePlan> PlanPause(const storage::TaskRecord& current,
                                           std::string_view mode) const override;
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
  EffectRunner* effects_;
};

}  // namespace a2ad::workflow
