#include "a2ad/tasks/builtin/echo_executor.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/run_event.hpp"

namespace a2ad::tasks {
namespace json = boost::json;

namespace {
// The echo: [run.started,] the artifact echoing `message`'s parts, run.completed.
std::vector<EventDraft> EchoSteps(const protocol::Task& task, const protocol::Message& message,
                                  const std::string& skill_id, bool started) {
  protocol::Artifact artifact;
  artifact.artifact_id = task.id + "-echo";
  artifact.name = "echo";
  artifact.parts = message.parts;
  std::vector<EventDraft> step;
  if (!started)
    step.push_back({protocol::kEvRunStarted, "",
                    json::object{{"workflowId", skill_id}, {"transport", "a2a"}}});
  step.push_back({protocol::kEvArtifactCreated, "echo",
                  json::object{{"artifactId", artifact.artifact_id},
                               {"artifactType", "a2a.artifact"},
                               {"artifact", protocol::ArtifactToJson(artifact)},
                               {"lastChunk", true}}});
  step.push_back({protocol::kEvRunCompleted, "", json::object{{"outputs", json::object{}}}});
  return step;
}

std::vector<EventDraft> RunStarted(const std::string& skill_id) {
  std::vector<EventDraft> start(1);
  start[0].type = protocol::kEvRunStarted;
  start[0].payload = json::object{{"workflowId", skill_id}, {"transport", "a2a"}};
  return start;
}
}  // namespace

std::vector<EventDraft> EchoExecutor::FirstSteps(const storage::TaskRecord& created) const {
  if (delay_.count() > 0 || created.task.history.empty() ||
      created.task.status.state != protocol::TaskState::kSubmitted)
    return {};
  return EchoSteps(created.task, created.task.history.front(), created.skill_id, false);
}

boost::asio::awaitable<void> EchoExecutor::Execute(std::shared_ptr<ExecutionContext> ctx) {
  const protocol::Task& task = ctx->task();
  if (protocol::IsTerminal(task.status.state) || ctx->cancel_requested()) co_return;
  bool started = task.status.state != protocol::TaskState::kSubmitted;
  if (delay_.count() > 0) {
    if (!started) {
      if (!(co_await ctx->Commit(RunStarted(ctx->skill_id()))).ok()) co_return;
      started = true;
    }
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, delay_);
    co_await timer.async_wait(boost::asio::use_awaitable);
    if (ctx->cancel_requested()) co_return;
  }
  // A failed commit (task canceled meanwhile, store closed) simply ends this execution.
  (void)co_await ctx->Commit(EchoSteps(task, ctx->message(), ctx->skill_id(), started));
}

}  // namespace a2ad::tasks
