#pragma once
// The built-in `echo` skill: submitted -> working -> completed with one artifact whose parts
// echo the triggering message's parts. One step after creation, so a restart re-drives it
// from `submitted` with nothing repeated.
#include "a2ad/tasks/executor.hpp"

namespace a2ad::tasks {

class EchoExecutor final : public Executor {
 public:
  boost::asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override;
};

}  // namespace a2ad::tasks
