#include "a2ad/tasks/builtin/tck_executor.hpp"

#include <algorithm>
#include <cctype>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/tasks/builtin/tck_client_parse.hpp"

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

// ACTS §11.2's names (and the interop kit's tck-client-parse), matched whole.
constexpr Prefix kActsNames[] = {
    {"tck-complete-task", B::kCompleteTask},
    {"tck-input-required", B::kInputRequired},
    {"tck-reject-task", B::kRejectTask},
    {"tck-message-response", B::kMessageResponse},
    {"tck-artifact-text", B::kArtifactText},
    {"tck-artifact-file", B::kArtifactFile},
    {"tck-artifact-file-url", B::kArtifactFileUrl},
    {"tck-artifact-data", B::kArtifactData},
    {"tck-long-running", B::kActsLongRunning},
    {"tck-multi-turn", B::kMultiTurn},
    {"tck-cancel", B::kCancel},
    {"tck-stream-basic", B::kStreamBasic},
    {"tck-stream-chunked", B::kStreamChunked},
    {"tck-task-failure", B::kTaskFailure},
    {"tck-auth-required", B::kAuthRequired},
    {"tck-client-parse", B::kClientParse},
};

// How long tck-cancel stays working when no cancel comes, so that it does not run for ever.
constexpr int64_t kCancelWaitMs = 120'000;

// The word that ends ACTS's multi-turn conversation.
constexpr std::string_view kMultiTurnDone = "done";

std::string_view FirstText(const protocol::Message& m) {
  for (const auto& p : m.parts)
    if (p.kind == protocol::Part::Kind::kText) return p.text;
  return {};
}

// The behaviour name that opens `text` (after blanks): "tck-" and hyphen-joined lowercase
// words, as long as it goes ("tck-artifact-file-url doc" names tck-artifact-file-url).
std::string_view ActsName(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  if (!text.starts_with("tck-")) return {};
  size_t end = 4;
  auto word = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  while (end < text.size()) {
    size_t w = end;
    while (w < text.size() && word(text[w])) ++w;
    if (w == end) break;  // "tck-" then no word, or a hyphen not followed by one
    end = w;
    if (end < text.size() && text[end] == '-' && end + 1 < text.size() && word(text[end + 1]))
      ++end;
    else
      break;
  }
  return end > 4 ? text.substr(0, end) : std::string_view{};
}

// Whether the TCK's messageId convention names `id`'s behaviour.
bool TckNamed(std::string_view id) {
  return id.starts_with("tck-") || id.starts_with("test-resubscribe-message-id");
}

// An ACTS task: its first message names its behaviour by text, not by messageId.
bool IsActsTask(const protocol::Task& task) {
  return !task.history.empty() && !TckNamed(task.history.front().message_id) &&
         TckExecutor::ActsBehaviourOf(task.history.front()).has_value();
}

// What `message` asks of `task` (the task's first message included): for an ACTS task, the
// behaviour the message names, else the task's (a continuation carries no name); otherwise
// the TCK's, by messageId.
B ForMessage(const protocol::Task& task, const protocol::Message& message) {
  if (IsActsTask(task)) {
    if (auto named = TckExecutor::ActsBehaviourOf(message)) return *named;
    return *TckExecutor::ActsBehaviourOf(task.history.front());
  }
  return TckExecutor::BehaviourOf(message.message_id);
}

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
    case B::kActsLongRunning:
    case B::kCancel:
    case B::kStreamBasic:
    case B::kStreamChunked:
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
                       {"artifact", protocol::ArtifactToJson(a)},
                       {"append", append},
                       {"lastChunk", last_chunk}}};
}

json::object AgentMessage(const protocol::Task& task, std::string text) {
  protocol::Message m;
  m.message_id = task.id + "-tck-reply";
  m.role = protocol::Role::kAgent;
  m.parts.push_back(protocol::Part::Text(std::move(text)));
  return protocol::MessageToJson(m);
}

// run.completed, with an agent status message when `text` is not empty.
EventDraft Completed(const protocol::Task& task, std::string text = {}) {
  json::object payload{{"outputs", json::object{}}};
  if (!text.empty()) payload["message"] = AgentMessage(task, std::move(text));
  return {protocol::kEvRunCompleted, "", std::move(payload)};
}

EventDraft Failed(std::string code, std::string message) {
  return {protocol::kEvRunFailed, "",
          json::object{{"error", json::object{{"code", std::move(code)},
                                              {"message", std::move(message)}}}}};
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
    case B::kStreamBasic:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("streamed content")));
      step.push_back(Completed(task, "tck-stream-basic ok"));
      break;
    case B::kStreamChunked:
      step.push_back(ArtifactEvent(task, protocol::Part::Text("chunk one "), false, false));
      step.push_back(ArtifactEvent(task, protocol::Part::Text("chunk two "), true, false));
      step.push_back(ArtifactEvent(task, protocol::Part::Text("chunk three"), true, true));
      step.push_back(Completed(task, "tck-stream-chunked ok"));
      break;
    case B::kTaskFailure:
      step.push_back(Failed("tck-task-failure", "tck-task-failure ok"));
      break;
    case B::kAuthRequired:
      step.push_back({protocol::kEvInputRequired, kNode,
                      json::object{{"kind", "auth"},
                                   {"message", AgentMessage(task, "tck-auth-required ok")}}});
      break;
    case B::kMultiTurn:
      if (started)
        step.push_back(Completed(task, "multi-turn complete"));
      else
        step.push_back({protocol::kEvInputRequired, kNode,
                        json::object{{"kind", "clarification"},
                                     {"message", AgentMessage(task, "more input please")}}});
      break;
    case B::kClientParse:
      if (auto parsed = TckClientParse(message); parsed) {
        step.push_back(ArtifactEvent(task, protocol::Part::Data(std::move(*parsed))));
        step.push_back(Completed(task, "parsed"));
      } else {
        step.push_back(Failed("tck-client-parse", parsed.error().message));
      }
      break;
    case B::kActsUnknown:
      step.push_back(Failed("unimplemented", "unimplemented ACTS behaviour '" +
                                                 std::string(ActsName(FirstText(message))) +
                                                 "'"));
      break;
    case B::kLongRunning:
    case B::kActsLongRunning:
    case B::kCancel:
      break;  // the wait and what follows are Execute's
    case B::kUnhandled:
      step.push_back(Completed(task, "Unhandled messageId prefix: " + message.message_id));
      break;
  }
  return step;
}

}  // namespace

std::optional<protocol::Message> TckExecutor::DirectReply(const protocol::Message& message) const {
  const B b = TckNamed(message.message_id) ? BehaviourOf(message.message_id)
                                           : ActsBehaviourOf(message).value_or(B::kLongRunning);
  if (b != B::kMessageResponse) return std::nullopt;
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

std::optional<TckExecutor::Behaviour> TckExecutor::ActsBehaviourOf(
    const protocol::Message& message) {
  const std::string_view name = ActsName(FirstText(message));
  if (name.empty()) return std::nullopt;
  for (const auto& p : kActsNames)
    if (p.text == name) return p.behaviour;
  return B::kActsUnknown;
}

std::vector<EventDraft> TckExecutor::FirstSteps(const storage::TaskRecord& created) const {
  if (created.task.history.empty() || created.task.status.state != protocol::TaskState::kSubmitted)
    return {};
  const protocol::Message& message = created.task.history.front();
  return Steps(ForMessage(created.task, message), created.task, message, created.skill_id, false);
}

core::Result<Resolution> TckExecutor::Resolve(const storage::TaskRecord& current,
                                              const ResolveRequest& request) {
  if (!request.message)
    return core::Error(core::ErrorCode::kUnsupportedOperation,
                       "the tck skill takes answers only as A2A messages");
  Resolution r;
  const B b = ForMessage(current.task, *request.message);
  bool waits = b == B::kInputRequired;
  if (IsActsTask(current.task)) {
    // ACTS: the waiting behaviours keep waiting; a multi-turn ends on "done".
    std::string said(FirstText(*request.message));
    said.erase(0, std::min(said.size(), said.find_first_not_of(" \t\r\n")));
    std::transform(said.begin(), said.end(), said.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    waits = b == B::kInputRequired || b == B::kAuthRequired ||
            (b == B::kMultiTurn && !said.starts_with(kMultiTurnDone));
  }
  if (waits) {
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
  const B b = ForMessage(task, ctx->message());
  const bool started = state != protocol::TaskState::kSubmitted;
  if (b != B::kLongRunning && b != B::kActsLongRunning && b != B::kCancel) {
    // A failed commit (task canceled meanwhile, store closed) simply ends this execution.
    (void)co_await ctx->Commit(Steps(b, task, ctx->message(), ctx->skill_id(), started));
    co_return;
  }
  // Working since `since`; ends later (a restart waits only what is left; a cancel ends the
  // wait and the task is canceled).
  int64_t since = task.status.timestamp_ms;
  if (!started) {
    std::vector<EventDraft> start;  // (no braced list here: GCC miscompiles it in coroutines)
    start.push_back(RunStarted(ctx->skill_id()));
    auto working = co_await ctx->Commit(std::move(start));
    if (!working.ok()) co_return;
    since = working->status.timestamp_ms;
  }
  const int64_t wait = b == B::kCancel ? kCancelWaitMs : long_task_.count();
  if (!co_await ctx->SleepUntil(since + wait)) co_return;
  std::vector<EventDraft> done;
  if (b == B::kCancel) {
    done.push_back(Failed("tck-cancel", "tck-cancel: no cancel came within 120 s"));
  } else if (b == B::kActsLongRunning) {
    // ACTS polls to completion, then checks that the work left an artifact.
    done.push_back(ArtifactEvent(task, protocol::Part::Text("long running result")));
    done.push_back(Completed(task, "long running work finished"));
  } else {
    done.push_back(Completed(task));
  }
  (void)co_await ctx->Commit(std::move(done));
}

}  // namespace a2ad::tasks
