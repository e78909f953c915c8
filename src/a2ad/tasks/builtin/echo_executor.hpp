#pragma once
// The built-in `echo` skill: submitted -> working -> completed with one artifact whose parts
// echo the triggering message's parts. Without a delay that is one step after creation;
// with a delay (to try cancel, non-blocking sends and restarts by hand) it commits
// run.started, waits, then commits the artifact and completion. Either way a restart
// re-drives it from its last committed state with nothing repeated.
//
// Thread safety: stateless after construction; one instance serves every task concurrently.
#include <chrono>

#include "a2ad/tasks/executor.hpp"

namespace a2ad::tasks {

class EchoExecutor final : public Executor {
 public:
  explicit EchoExecutor(std::chrono::milliseconds delay = std::chrono::milliseconds(0))
      : delay_(delay) {}
  boost::asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override;
  /// Without a delay the whole echo is decided at creation: run.started, the artifact and
  /// run.completed commit with the task (Execute then finds it completed).
  std::vector<EventDraft> FirstSteps(const storage::TaskRecord& created) const override;

 private:
  std::chrono::milliseconds delay_;
};

}  // namespace a2ad::tasks
