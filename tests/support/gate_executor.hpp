#pragma once
// A one-gate skill for TaskService tests: a new task parks at an approval gate
// (input-required). An answer "ask" is logged without resuming (the gate asks again), "bad" is
// refused (kInvalidParams naming `action`), any other answer passes the gate and the next
// execution completes the run. It records who answered, the context every execution acts
// with, and how many executions ran. Header-only: the tests that use it link tasks.
//
// Thread safety: Resolve and Execute may run on any thread (one mutex, one atomic).
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "a2ad/protocol/run_event.hpp"
#include "a2ad/tasks/executor.hpp"

namespace a2ad::testing {

/// The text of the first text part of `m`, or "".
inline std::string TextOf(const protocol::Message& m) {
  for (const auto& p : m.parts)
    if (p.kind == protocol::Part::Kind::kText) return p.text;
  return "";
}

class GateExecutor final : public tasks::Executor {
 public:
  core::Result<tasks::Resolution> Resolve(const storage::TaskRecord&,
                                          const tasks::ResolveRequest& req) override {
    const std::string text = req.message ? TextOf(*req.message) : "";
    {
      std::lock_guard lock(mu);
      callers.push_back(req.caller);
    }
    if (text == "bad")
      return core::Error(core::ErrorCode::kInvalidParams, "action: 'bad' is not offered",
                         {{"field", "action"}, {"reason", "validation_error"}});
    tasks::Resolution r;
    boost::json::object payload{{"decidedBy", req.caller}, {"action", text}};
    if (text == "ask") {
      r.resumes = false;
      payload["question"] = "which?";
      r.events.push_back({protocol::kEvApprovalAsked, "gate", std::move(payload)});
    } else {
      r.events.push_back({protocol::kEvApprovalReceived, "gate", std::move(payload)});
    }
    return r;
  }
  boost::asio::awaitable<void> Execute(std::shared_ptr<tasks::ExecutionContext> ctx) override {
    ++executions;
    {
      std::lock_guard lock(mu);
      contexts.push_back(ctx->call_context());
    }
    std::vector<tasks::EventDraft> step;
    if (ctx->task().status.state == protocol::TaskState::kSubmitted) {
      step.push_back({protocol::kEvRunStarted, "", {}});
      step.push_back({protocol::kEvInputRequired, "gate", {{"kind", "approval"}}});
    } else {
      step.push_back({protocol::kEvRunCompleted, "", {}});
    }
    (void)co_await ctx->Commit(std::move(step));
  }

  std::mutex mu;
  std::vector<std::string> callers;
  std::vector<protocol::CallContext> contexts;
  std::atomic<int> executions{0};
};

}  // namespace a2ad::testing
