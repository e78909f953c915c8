#include "a2ad/workflow/workflow_executor.hpp"

#include "a2ad/workflow/approval_policy.hpp"

#include "a2ad/core/log.hpp"
#include "a2ad/core/trace.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/workflow/nodes/registry.hpp"
#include "a2ad/workflow/plan.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using protocol::ObjOr;
using protocol::Str;
using tasks::EventDraft;

WorkflowExecutor::WorkflowExecutor(std::shared_ptr<const Workflow> workflow,
                                   tasks::TaskService& service, const InterruptTokens& tokens,
                                   const core::Clock& clock, EngineOptions options,
                                   EffectRunner* effects)
    : workflow_(std::move(workflow)),
      service_(service),
      tokens_(tokens),
      clock_(clock),
      options_(std::move(options)),
      effects_(effects) {}

std::optional<Error> WorkflowExecutor::CheckInputs(const json::object& inputs) const {
  std::string missing;
  for (const auto& v : workflow_->variables)
    if (v.required && !v.default_value && !inputs.contains(v.name))
      missing += (missing.empty() ? "" : ", ") + v.name;
  if (missing.empty()) return std::nullopt;
  return Error(ErrorCode::kInvalidParams,
               "inputs: workflow '" + workflow_->id + "' needs the variable(s) " + missing +
                   " (send them as fields of a data part, or in POST /v1/runs inputs)",
               {{"field", "inputs"}, {"reason", "validation_error"}, {"missing", missing}});
}

PlanEnv WorkflowExecutor::Env() const {
  PlanEnv env;
  env.tokens = &tokens_;
  env.now_ms = clock_.NowMs();
  env.token_ttl_ms = options_.token_ttl_ms;
  env.max_node_executions = options_.max_node_executions;
  env.public_url = options_.public_url;
  return env;
}

core::Result<tasks::PausePlan> WorkflowExecutor::PlanPause(const storage::TaskRecord& current,
                                                           std::string_view mode) const {
  tasks::PausePlan plan;
  for (const auto& n : workflow_->nodes) {
    const protocol::NodeState* st = current.run.Node(n.id);
    if (!st || st->status != "running") continue;
    if (!st->child_run_id.empty()) {
      plan.child_run_id = st->child_run_id;
      plan.cascade = mode != tasks::kWaitForCompletion;
      plan.in_flight_node = n.id;
    } else if (mode == tasks::kInterruptImmediate) {
      if (NodeKindRegistry::Get().KindOf(n).RestartsWhenInterrupted()) plan.abandon_node = n.id;
    } else {
      plan.in_flight_node = n.id;
    }
    break;  // one node is in flight at a time
  }
  return plan;
}

std::vector<EventDraft> WorkflowExecutor::FirstSteps(const storage::TaskRecord& current) const {
  Decision d = Plan(*workflow_, current.task.id, current.run, Env());
  if (d.kind != Decision::Kind::kCommit) return {};
  return std::move(d.events);
}

// ---- Execute: the engine's I/O, and every TaskService call it makes --------------------------

namespace {
// a2ad.node.effect: what the call returned, under the effect's kind.
EventDraft EffectEvent(const Node& n, const json::object& effect, json::object result) {
  return Ev(protocol::kEvNodeEffect, n.id,
            json::object{{"effect", Str(effect, "kind")}, {"result", std::move(result)}});
}

bool IsPausedRefusal(const Error& e) {
  return e.code == ErrorCode::kUnsupportedOperation && e.Detail("reason") == "paused";
}
}  // namespace

asio::awaitable<void> WorkflowExecutor::Execute(std::shared_ptr<tasks::ExecutionContext> ctx) {
  auto rec = std::make_shared<const storage::TaskRecord>(ctx->record());
  const std::string run_id = rec->task.id;
  // Each step is a span of the run's trace (its node's work, then the commit of its events).
  const std::string& run_trace = ctx->call_context().traceparent;
  std::optional<core::Span> step;
  auto begin_step = [&](const Node* n, std::string_view node_id) {
    step.emplace(node_id.empty() ? std::string("step") : "node " + std::string(node_id),
                 core::SpanKind::kInternal, run_trace);
    step->Set("openwop.run.id", run_id);
    step->Set("openwop.workflow.id", workflow_->id);
    if (!node_id.empty()) step->Set("openwop.node.id", std::string(node_id));
    if (n) step->Set("openwop.node.type", n->type_id);
  };
  for (int guard = 0; guard < 100000; ++guard) {
    step.reset();  // ends the last step's span
    if (ctx->cancel_requested()) co_return;
    Decision d = Plan(*workflow_, run_id, rec->run, Env());
    switch (d.kind) {
      case Decision::Kind::kDone:
        co_return;
      case Decision::Kind::kCommit:
        break;
      case Decision::Kind::kSleep:
        if (!co_await ctx->SleepUntil(d.wake_at)) co_return;
        if (d.events.empty()) {  // woke for the run deadline: decide again
          auto fresh = co_await service_.GetRecord(ctx->call_context(), run_id);
          if (!fresh || !fresh.value()) co_return;
          rec = std::make_shared<const storage::TaskRecord>(std::move(*fresh.value()));
          continue;
        }
        break;
      case Decision::Kind::kParked: {
        // Nothing to time out (the answer starts a new execution), or the service's wake
        // timer starts one at the time: nothing is held while the run waits.
        if (d.wake_at <= 0 || ctx->WakeLater(d.wake_at)) co_return;
        if (tasks::RunStatus(rec->run) == "paused") {
          // A pause's timer (trigger, timeout): the service decides what fired, under the
          // run's lock; a resume meanwhile wins (the handle no longer matches).
          const std::string handle(Str(protocol::OrEmpty(rec->run.pause), "resumeToken"));
          if (!co_await ctx->SleepUntil(d.wake_at)) co_return;
          tasks::ResumeTaskRequest timer;
          timer.task_id = run_id;
          timer.handle = handle;
          timer.timer = true;
          auto fired = co_await service_.ResumeTask(ctx->call_context(), std::move(timer));
          if (!fired && fired.error().code == ErrorCode::kConflict) continue;  // woke early
          co_return;  // resumed (a new execution drives it), failed, or resumed by another
        }
        const std::string interrupt_id(Str(protocol::OrEmpty(rec->run.interrupt), "interruptId"));
        if (!co_await ctx->SleepUntil(d.wake_at)) co_return;
        tasks::ResolveRequest timeout;
        timeout.via = "timeout";
        timeout.resume_value = json::value(json::object{{"interruptId", interrupt_id}});
        // The server answers, in the run's tenant (decidedBy "system:timeout").
        protocol::CallContext by_timeout = ctx->call_context();
        by_timeout.principal.id = "system:timeout";
        // Refused when answered meanwhile (the interrupt id no longer matches): fine.
        (void)co_await service_.ResolveInterrupt(by_timeout, run_id, std::move(timeout));
        co_return;
      }
      case Decision::Kind::kEffect: {
        const Node& n = *d.node;
        if (!effects_) {
          FailNode(d.events, n,
                   ErrorObj("capability_required", "node '" + n.id + "' (" + n.type_id +
                                                       ") calls out, and this host has no runner"));
          break;
        }
        begin_step(&n, n.id);
        json::object spec = d.effect;  // the call's parent span rides along (not logged)
        spec["traceparent"] = step->Context();
        // Several replicas: a run taken over meanwhile is called out for by its new holder.
        const bool held = co_await ctx->HoldsRun();
        if (!held) co_return;
        json::object result = co_await effects_->Run(*ctx, n.id, spec);
        if (result.contains("interrupted")) {  // cancelled or superseded: decide again
          auto fresh = co_await service_.GetRecord(ctx->call_context(), run_id);
          if (!fresh || !fresh.value()) co_return;
          rec = std::make_shared<const storage::TaskRecord>(std::move(*fresh.value()));
          continue;
        }
        d.events.push_back(EffectEvent(n, d.effect, std::move(result)));
        break;
      }
      case Decision::Kind::kWaitChild: {
        const Node& n = *d.node;
        begin_step(&n, n.id);
        auto child = co_await service_.GetRecord(ctx->call_context(), d.child_run_id);
        if (!child) co_return;
        if (!child.value()) {
          tasks::StartRunRequest req;
          req.skill_id = d.child_workflow_id;
          req.run_id = d.child_run_id;
          req.transport = "subworkflow";
          req.parent_run_id = run_id;
          req.parent_node_id = n.id;
          req.inputs = std::move(d.child_inputs);
          protocol::CallContext as_parent = ctx->call_context();
          as_parent.traceparent = step->Context();  // the child run: a span of this step
          auto started = co_await service_.StartRun(as_parent, std::move(req));
          if (!started) {
            std::vector<EventDraft> fail;
            FailNode(fail, n, ErrorObj("unknown_child_workflow", started.error().message));
            (void)co_await ctx->Apply(std::move(fail));
            co_return;
          }
        }
        auto terminal = [](const storage::TaskRecord& r) { return tasks::IsTerminalRun(r.run); };
        // While the child waits at a gate the parent's status mirrors it (DIGEST §5.2).
        auto mirror_of = [](const storage::TaskRecord& r) {
          std::string_view st = r.run.status;
          return std::string(st.starts_with("waiting-") ? st : "running");
        };
        std::string mirrored = rec->run.status;
        if (!mirrored.starts_with("waiting-")) mirrored = "running";
        std::shared_ptr<const storage::TaskRecord> done;
        while (!ctx->cancel_requested()) {
          auto seen = co_await service_.WaitForRecord(
              ctx->call_context(), d.child_run_id,
              [&](const storage::TaskRecord& r) { return terminal(r) || mirror_of(r) != mirrored; },
              std::chrono::milliseconds(1000));
          if (!seen) continue;
          if (terminal(*seen)) {
            done = seen;
            break;
          }
          if (mirror_of(*seen) == mirrored) continue;
          mirrored = mirror_of(*seen);
          auto mirror_step = ChildStatusStep(n, d.child_run_id, mirrored, seen->run);
          auto applied = co_await ctx->Apply(std::move(mirror_step));
          if (!applied) co_return;
          rec = std::move(applied).value();
        }
        if (!done) co_return;  // cancelled: the cascade cancels the child
        d.events = FinishChild(*workflow_, n, rec->run, d.child_run_id, done->run);
        break;
      }
    }
    if (!step) begin_step(d.node, d.events.empty() ? std::string_view() : d.events.front().node_id);
    core::Span commit("commit", core::SpanKind::kInternal, step->Context());
    commit.Set("openwop.run.id", run_id);
    commit.Set("a2ad.events", static_cast<int64_t>(d.events.size()));
    auto next = co_await ctx->Apply(std::move(d.events));
    if (!next) commit.Fail(next.error().message);
    commit.End();
    if (!next && IsPausedRefusal(next.error())) {
      // Paused meanwhile and the step was not the one in flight: park where the log is.
      auto fresh = co_await service_.GetRecord(ctx->call_context(), run_id);
      if (!fresh || !fresh.value()) co_return;
      rec = std::make_shared<const storage::TaskRecord>(std::move(*fresh.value()));
      continue;
    }
    if (!next) {
      // Cancelled meanwhile, the store is closing, or another replica executes the run now
      // (fenced: storage/cluster.hpp): stop here. Anything else is a bug.
      if (next.error().Detail("reason") == "fenced")
        core::LogInfo("run " + run_id + ": " + next.error().message + "; stopped here");
      else if (next.error().code != ErrorCode::kUnsupportedOperation &&
               next.error().code != ErrorCode::kUnavailable)
        core::LogError("run " + run_id + ": step refused: " + next.error().message);
      co_return;
    }
    rec = std::move(next).value();
  }
  core::LogError("run " + run_id + ": the engine took 100000 steps; stopping");
}

asio::awaitable<void> WorkflowExecutor::AfterCancel(
    std::shared_ptr<const storage::TaskRecord> rec) {
  if (!effects_) co_return;
  const PlanEnv env = Env();
  for (const auto& n : workflow_->nodes) {
    const protocol::NodeState* st = rec->run.Node(n.id);
    if (!st || st->status != "running") continue;
    const std::string& run_id = rec->task.id;
    json::object spec = NodeKindRegistry::Get().KindOf(n).CancelEffect(
        NodeStep{*workflow_, n, run_id, rec->run, *st, env});
    if (!spec.empty()) co_await effects_->Cancel(tasks::RunCallContext(*rec), spec);
  }
}

// ---- Resolve: which interrupt an answer is for; the node's kind checks the answer ------------

namespace {

Error Reason(ErrorCode code, std::string reason, std::string message) {
  return Error(code, std::move(message), {{"reason", std::move(reason)}});
}

// The resume value an A2A reply carries: its first data part, else its text.
std::optional<json::value> FromMessage(const protocol::Message& m) {
  for (const auto& p : m.parts)
    if (p.kind == protocol::Part::Kind::kData) return p.data;
  std::string text;
  for (const auto& p : m.parts)
    if (p.kind == protocol::Part::Kind::kText) text += (text.empty() ? "" : "\n") + p.text;
  if (text.empty()) return std::nullopt;
  return json::value(text);
}

}  // namespace

bool WorkflowExecutor::MayAnswer(const storage::TaskRecord& current,
                                 const protocol::Principal& who) const {
  const json::object& interrupt = protocol::OrEmpty(current.run.interrupt);
  if (Str(interrupt, "kind") != "approval") return true;
  const json::object& data = ObjOr(interrupt, "data");
  json::array actions{"accept", "reject"};
  if (const json::value* a = data.if_contains("actions"); a && a->is_array())
    actions = a->get_array();
  auto policy = ParseApprovalPolicy(data, "data", actions);
  return !policy || !CheckApprover(*policy, who, "a2a", std::string(Str(interrupt, "nodeId")));
}

core::Result<tasks::Resolution> WorkflowExecutor::Resolve(const storage::TaskRecord& current,
                                                          const tasks::ResolveRequest& req) {
  const protocol::RunSnapshot& run = current.run;
  const std::string run_id = current.task.id;
  const std::string_view status = run.status;
  if (!run.interrupt || !status.starts_with("waiting-")) {
    if (status == "cancelled")
      return Reason(ErrorCode::kUnsupportedOperation, "interrupt_gone",
                    "run " + run_id + " was cancelled; its interrupts are gone");
    // A node whose interrupt was answered already: the second answer loses.
    if (!req.node_id.empty()) {
      if (run.InterruptCount(req.node_id) > 0 && run.Node(req.node_id))
        return Reason(ErrorCode::kConflict, "interrupt_already_resolved",
                      "the interrupt of node '" + req.node_id + "' was already resolved");
    }
    if (run.waiting_on)
      return Reason(ErrorCode::kTaskNotFound, "interrupt_not_found",
                    "run " + run_id + " waits for its child run " +
                        std::string(Str(*run.waiting_on, "childRunId")) +
                        "; answer that run's interrupt");
    if (req.via == "token" || req.via == "timeout")
      return Reason(ErrorCode::kConflict, "interrupt_already_resolved",
                    "the interrupt was already resolved");
    return Reason(ErrorCode::kTaskNotFound, "interrupt_not_found",
                  "run " + run_id + " has no open interrupt" +
                      (req.node_id.empty() ? "" : " at node '" + req.node_id + "'"));
  }
  const json::object& interrupt = *run.interrupt;
  const std::string node_id(Str(interrupt, "nodeId"));
  if (!req.node_id.empty() && req.node_id != node_id)
    return Reason(ErrorCode::kTaskNotFound, "interrupt_not_found",
                  "node '" + req.node_id + "' of run " + run_id +
                      " has no open interrupt (the open one is at node '" + node_id + "')");
  const Node* n = workflow_->FindNode(node_id);
  if (!n) return Error(ErrorCode::kInternal, "run " + run_id + " waits at unknown node " + node_id);

  std::optional<json::value> value = req.resume_value;
  if (!value && req.message) value = FromMessage(*req.message);
  if (!value)
    return Error(ErrorCode::kInvalidParams,
                 "message.parts: the reply carries no answer for the open " +
                     std::string(Str(interrupt, "kind")) + " interrupt at node '" + node_id +
                     "': send a data part (or text)",
                 {{"field", "message.parts"}, {"reason", "validation_error"}});
  return NodeKindRegistry::Get().KindOf(*n).Resolve(
      InterruptAnswer{run_id, *n, interrupt, *value, req, clock_.NowMs()});
}

}  // namespace a2ad::workflow
