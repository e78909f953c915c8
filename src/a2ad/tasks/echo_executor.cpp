#include "a2ad/tasks/echo_executor.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::tasks {
namespace json = boost::json;

boost::asio::awaitable<void> EchoExecutor::Execute(std::shared_ptr<ExecutionContext> ctx) {
  const protocol::Task& task = ctx->task();
  if (protocol::IsTerminal(task.status.state) || ctx->cancel_requested()) co_return;
  protocol::Artifact artifact;
  artifact.artifact_id = task.id + "-echo";
  artifact.name = "echo";
  artifact.parts = ctx->message().parts;
  std::vector<EventDraft> step;
  if (task.status.state == protocol::TaskState::kSubmitted)
    step.push_back({protocol::kEvRunStarted, "",
                    json::object{{"workflowId", ctx->skill_id()}, {"transport", "a2a"}}});
  if (delay_.count() > 0) {
    if (!step.empty() && !(co_await ctx->Commit(std::move(step))).ok()) co_return;
    step.clear();
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, delay_);
    co_await timer.async_wait(boost::asio::use_awaitable);
    if (ctx->cancel_requested()) co_return;
  }
  step.push_back({protocol::kEvArtifactCreated, "echo",
                  json::object{{"artifactId", artifact.artifact_id},
                               {"artifactType", "a2a.artifact"},
                               {"artifact", protocol::v10::ArtifactToJson(artifact)},
                               {"lastChunk", true}}});
  step.push_back({protocol::kEvRunCompleted, "", json::object{{"outputs", json::object{}}}});
  // A failed commit (task canceled meanwhile, store closed) simply ends this execution.
  (void)co_await ctx->Commit(std::move(step));
}

}  // namespace a2ad::tasks
