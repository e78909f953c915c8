#include "a2ad/tasks/builtin/tck_executor.hpp"

#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;
using B = TckExecutor::Behaviour;

namespace {

struct Prefix {
  std::string_view text;
  B behaviour;
};
// The kit's prefixes (scenarios/*.feature). Some start others (tck-artifact-file and
// tck-artifact-file-url): BehaviourOf takes the longest match, so the order does not matter.
constexpr Prefix kPrefixes[] = {
    {"tck-complete-task", B::kCompleteTask},
    {"tck-artifact-text", B::kArtifactText},
    {"tck-artifact-file", B::kArtifactFile},
    {"tck-artifact-file-url", B::kArtifactFileUrl},
    {"tck-artifact-data", B::kArtifactData},
    {"tck-message-response", B::kMessageResponse},
    {"tck-input-required", B::kInputRequired},
    {"tck-reject-task", B::kRejectTask},
    {"tck-stream-001", B::kStream001},
    {"tck-stream-002", B::kStream002},
    {"tck-stream-003", B::kStream003},
    {"tck-stream-ordering-001", B::kStreamOrdering},
    {"tck-stream-artifact-text", B::kStreamArtifactText},
    {"tck-stream-artifact-file", B::kStreamArtifactFile},
    {"tck-stream-artifact-chunked", B::kStreamArtifactChunked},
    {"test-resubscribe-message-id", B::kLongRunning},
};

// The node every event of this skill is about (node-scoped events need one).
constexpr const char* kNode = "tck";

// The streaming scenarios go through working first ("stream a status update to working").
bool GoesThroughWorking(B b) {
  switch (b) {
    case B::kStream001:
    case B::kStream003:
    case B::kStreamOrdering:
    case B::kStreamArtifactText:
    case B::kStreamArtifactFile:
    case B::kStreamArtifactChunked:
    case B::kLongRunning:
      return true;
    default:
      return false;
  }
}

protocol::Part FilePart() {  // the bytes "tck", as the kit's SUT agents send them
  protocol::Part p;
  p.kind = protocol::Part::Kind::kRaw;
  p.text = "dGNr";
  p.filename = "output.txt";
  p.media_type = "text/plain";
  return p;
}

protocol::Part FileUrlPart() {
  protocol::Part p;
  p.kind = protocol::Part::Kind::kUrl;
  p.text = "https://example.com/output.txt";
  p.filename = "output.txt";
  p.media_type = "text/plain";
  return p;
}

EventDraft ArtifactEvent(const protocol::Task& task, protocol::Part part, bool append = false,
                         bool last_chunk = true) {
  protocol::Artifact a;
  a.artifact_id = task.id + "-tck";
  a.parts.push_back(std::move(part));
  return {protocol::kEvArtifactCreated, kNode,
          json::object{{"artifactId", a.artifact_id},
                       {"artifactType", "a2a.artifact"},
                       {"artifact", protocol::v10::ArtifactToJson(a)},
                       {"append", append},
                       {"lastChunk", last_chunk}}};
}

// run.completed, with an agent status message when `text` is not empty.
EventDraft Completed(const protocol::Task& task, std::string text = {}) {
  json::object payload{{"outputs", json::object{}}};
  if (!text.empty()) {
    protocol::Message m;
    m.message_id = task.id + "-tck-reply";
    m.role = protocol::Role::kAgent;
    m.parts.push_back(protocol::Part::Text(std::move(text)));
    payload["message"] = protocol::v10::MessageToJson(m);
  }
  return {protocol::kEvRunCompleted, "", std::move(payload)};
}

EventDraft RunStarted(const std::string& skill_id) {
  return {protocol::kEvRunStarted, "",
          json::object{{"workflowId", skill_id}, {"transport", "a2a"}}};
}

// Every behaviour but the long-running one's wait, as one step from `task`'s state (`started`:
// the task is working already, so no run.started).
std::vector<EventDraft> Steps(B b, const protocol::Task& task, const protocol::Message& message,
                              const std::string& skill_id, bool started) {
  std::vector<EventDraft> step;
  if (GoesThroughWorking(b) && !started) step.push_back(RunStarted(skill_id));
  switch (b) {
    case B::kCompleteTask:
      step.push_back(Completed(task, "Hello from TCK"));
      break;
    case B::kArtifactText:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("Generated text content")));
      step.push_back(Completed(task));
      break;
    case B::kArtifactFile:
    case B::kStreamArtifactFile:
      step.push_back(ArtifactEvent(task, FilePart()));
      step.push_back(Completed(task));
      break;
    case B::kArtifactFileUrl:
      step.push_back(ArtifactEvent(task, FileUrlPart()));
      step.push_back(Completed(task));
      break;
    case B::kArtifactData:
      step.push_back(
          ArtifactEvent(task, protocol::Part::Data(json::object{{"key", "value"}, {"count", 42}})));
      step.push_back(Completed(task));
      break;
    case B::kMessageResponse:  // answered by DirectReply; a follow-up completes the task
      step.push_back(Completed(task, "Direct message response"));
      break;
    case B::kInputRequired:
      step.push_back({protocol::kEvInputRequired, kNode, json::object{{"kind", "clarification"}}});
      break;
    case B::kRejectTask:
      step.push_back({protocol::kEvRunRejected, "", json::object{{"reason", "rejected"}}});
      break;
    case B::kStream001:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("Stream hello from TCK")));
      step.push_back(Completed(task));
      break;
    case B::kStream002:
      step.push_back(Completed(task));
      break;
    case B::kStream003:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("Stream task lifecycle")));
      step.push_back(Completed(task));
      break;
    case B::kStreamOrdering:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("Ordered output")));
      step.push_back(Completed(task));
      break;
    case B::kStreamArtifactText:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("Streamed text content")));
      step.push_back(Completed(task));
      break;
    case B::kStreamArtifactChunked:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("chunk-1 "), true, false));
      step.push_back(ArtifactEvent(task, protocol::Part::Text("chunk-2"), true, true));
      step.push_back(Completed(task));
      break;
    case B::kLongRunning:
      break;  // the wait and the completion are Execute's
    case B::kUnhandled:
      step.push_back(Completed(task, "Unhandled messageId prefix: " + message.message_id));
      break;
  }
  return step;
}

}  // namespace

std::optional<protocol::Message> TckExecutor::DirectReply(const protocol::Message& message) const {
  if (BehaviourOf(message.message_id) != B::kMessageResponse) return std::nullopt;
  protocol::Message reply;
  reply.parts.push_back(protocol::Part::Text("Direct message response"));
  return reply;
}

TckExecutor::Behaviour TckExecutor::BehaviourOf(std::string_view message_id) {
  B found = message_id.starts_with("tck-") ? B::kUnhandled : B::kLongRunning;
  size_t longest = 0;
  for (const auto& p : kPrefixes)
    if (p.text.size() > longest && message_id.starts_with(p.text)) {
      found = p.behaviour;
      longest = p.text.size();
    }
  return found;
}

std::vector<EventDraft> TckExecutor::FirstSteps(const storage::TaskRecord& created) const {
  if (created.task.history.empty() || created.task.status.state != protocol::TaskState::kSubmitted)
    return {};
  const protocol::Message& message = created.task.history.front();
  return Steps(BehaviourOf(message.message_id), created.task, message, created.skill_id, false);
}

core::Result<Resolution> TckExecutor::Resolve(const storage::TaskRecord& current,
                                              const ResolveRequest& request) {
  (void)current;
  if (!request.message)
    return core::Error(core::ErrorCode::kUnsupportedOperation,
                       "the tck skill takes answers only as A2A messages");
  Resolution r;
  if (BehaviourOf(request.message->message_id) == B::kInputRequired) {
    r.resumes = false;  // logged; the task keeps waiting
    return r;
  }
  r.explicit_resume = true;  // node.resumed moves it to working (and tells streams)
  r.events.push_back({protocol::kEvNodeResumed, kNode, json::object{}});
  return r;
}

asio::awaitable<void> TckExecutor::Execute(std::shared_ptr<ExecutionContext> ctx) {
  const protocol::Task& task = ctx->task();
  const protocol::TaskState state = task.status.state;
  // Parked (input-required) tasks wait for a reply; Resolve decides what it does.
  if (protocol::IsTerminal(state) || protocol::IsInterrupted(state) || ctx->cancel_requested())
    co_return;
  const B b = BehaviourOf(ctx->message().message_id);
  const bool started = state != protocol::TaskState::kSubmitted;
  if (b != B::kLongRunning) {
    // A failed commit (task canceled meanwhile, store closed) simply ends this execution.
    (void)co_await ctx->Commit(Steps(b, task, ctx->message(), ctx->skill_id(), started));
    co_return;
  }
  // Working since `since`; completes long_task_ later (a restart waits only what is left).
  int64_t since = task.status.timestamp_ms;
  if (!started) {
    std::vector<EventDraft> start;  // (no braced list here: GCC miscompiles it in coroutines)
    start.push_back(RunStarted(ctx->skill_id()));
    auto working = co_await ctx->Commit(std::move(start));
    if (!working.ok()) co_return;
    since = working->status.timestamp_ms;
  }
  if (!co_await ctx->SleepUntil(since + long_task_.count())) co_return;
  std::vector<EventDraft> done;
  done.push_back(Completed(task));
  (void)co_await ctx->Commit(std::move(done));
}

}  // namespace a2ad::tasks
