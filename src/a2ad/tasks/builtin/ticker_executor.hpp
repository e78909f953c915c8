#pragma once
// The built-in `ticker` skill: streams an artifact in chunks, one per tick, then completes.
// A message data part {"ticks": N, "intervalMs": M} (defaults 10 and 1000; at most 100000
// ticks) sets the pace. Each chunk is a data part {"tick": i, "emittedAtUs": <Unix µs>} so
// a client can see streaming and resumption at work (and benchmarks can measure delivery
// latency). On a restart it resumes after the last committed tick.
//
// Thread safety: stateless; one instance serves every task concurrently.
#include "a2ad/tasks/executor.hpp"

namespace a2ad::tasks {

class TickerExecutor final : public Executor {
 public:
  boost::asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override;
};

}  // namespace a2ad::tasks
