#pragma once
// The executor port (ARCHITECTURE.md: tasks/ owns it, workflow/ implements it). An executor
// runs a task in steps; each step is a list of run events committed atomically through the
// ExecutionContext. It may stop at an interrupt (node.suspended => input-required) and is
// started again with the client's reply; it may be asked to cancel.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::tasks {

/// An event to append; the service stamps eventId, runId, timestamp and sequence.
struct EventDraft {
  std::string type;
  std::string node_id;
  boost::json::object payload;
};

class ExecutionContext {
 public:
  virtual ~ExecutionContext() = default;
  virtual const std::string& task_id() const = 0;
  virtual const std::string& skill_id() const = 0;
  /// The task as it was when this execution began (after the triggering message was stored).
  virtual const protocol::Task& task() const = 0;
  /// The message that started or resumed this execution.
  virtual const protocol::Message& message() const = 0;
  /// Appends `step` to the task's log and updates its snapshot in one transaction; completes
  /// once durable. Returns the new snapshot. Errors: kUnsupportedOperation when the step's
  /// state change is not allowed (e.g. the task was canceled meanwhile: stop executing),
  /// kInternal/kUnavailable on storage failure.
  virtual boost::asio::awaitable<core::Result<protocol::Task>> Commit(
      std::vector<EventDraft> step) = 0;
  /// True once a cancel was requested; executors check it between steps.
  virtual bool cancel_requested() const = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs the task from wherever its log says it is until it ends or parks at an interrupt.
  /// Called for a new task, for a reply to an interrupted task, and on restart for a task
  /// found unfinished; so it must derive its position from ctx->task() (never repeat a
  /// committed step). Runs on an I/O thread; must not block.
  virtual boost::asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) = 0;
};

}  // namespace a2ad::tasks
