#include "a2ad/tasks/builtin/ticker_executor.hpp"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/run_event.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {
int64_t IntField(const protocol::Message& m, const char* key, int64_t fallback, int64_t lo,
                 int64_t hi) {
  for (const auto& p : m.parts) {
    if (p.kind != protocol::Part::Kind::kData || !p.data.is_object()) continue;
    if (auto* v = p.data.get_object().if_contains(key); v && v->is_int64())
      return std::clamp(v->get_int64(), lo, hi);
  }
  return fallback;
}
}  // namespace

asio::awaitable<void> TickerExecutor::Execute(std::shared_ptr<ExecutionContext> ctx) {
  const protocol::Task& task = ctx->task();
  if (protocol::IsTerminal(task.status.state)) co_return;
  const int64_t ticks = IntField(ctx->message(), "ticks", 10, 1, 100000);
  const int64_t interval = IntField(ctx->message(), "intervalMs", 1000, 0, 3600000);
  int64_t done = 0;  // ticks already committed (a restart resumes after them)
  for (const auto& a : task.artifacts)
    if (a.artifact_id == task.id + "-ticks") done = static_cast<int64_t>(a.parts.size());
  if (task.status.state == protocol::TaskState::kSubmitted) {
    std::vector<EventDraft> start;
    start.push_back(
        {protocol::kEvRunStarted, "", {{"workflowId", ctx->skill_id()}, {"transport", "a2a"}}});
    if (!(co_await ctx->Commit(std::move(start))).ok()) co_return;
  }
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (int64_t i = done; i < ticks; ++i) {
    if (interval > 0) {
      timer.expires_after(std::chrono::milliseconds(interval));
      co_await timer.async_wait(asio::use_awaitable);
    }
    if (ctx->cancel_requested()) co_return;
    const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    protocol::Artifact a;
    a.artifact_id = task.id + "-ticks";
    a.name = "ticks";
    a.parts.push_back(protocol::Part::Data(json::object{{"tick", i}, {"emittedAtUs", now_us}}));
    std::vector<EventDraft> step;
    step.push_back({protocol::kEvArtifactCreated,
                    "tick",
                    {{"artifactId", a.artifact_id},
                     {"artifactType", "a2a.artifact"},
                     {"artifact", protocol::ArtifactToJson(a)},
                     {"append", i > 0},
                     {"lastChunk", i + 1 == ticks}}});
    if (i + 1 == ticks)
      step.push_back(
          {protocol::kEvRunCompleted, "", {{"outputs", json::object{{"ticks", ticks}}}}});
    if (!(co_await ctx->Commit(std::move(step))).ok()) co_return;
  }
}

}  // namespace a2ad::tasks
