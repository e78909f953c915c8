#pragma once
// The built-in `tck` skill (registered with `a2ad serve --tck-skill`): the behaviour the A2A
// conformance kit (a2aproject/a2a-tck, scenarios/*.feature and its generated SUT agents)
// expects of the agent under test. The kit picks a behaviour by the prefix of each message's
// messageId (startsWith; longer prefixes are checked first):
//
//   tck-complete-task            completed, status message "Hello from TCK"
//   tck-artifact-text            artifact text "Generated text content", completed
//   tck-artifact-file            artifact file part {raw "dGNr", output.txt, text/plain}, completed
//   tck-artifact-file-url        artifact file part {url https://example.com/output.txt, ...}
//   tck-artifact-data            artifact data part {"key":"value","count":42}, completed
//   tck-message-response         completed, status message "Direct message response" (the kit
//                                wants a Message instead of a Task: the executor port cannot
//                                answer with one: Behaviour::kMessageResponse)
//   tck-input-required           input-required (no message), and stays there
//   tck-reject-task              rejected (reason "rejected")
//   tck-stream-001 / -003        working, artifact "Stream hello from TCK" / "Stream task
//                                lifecycle", completed
//   tck-stream-002               completed
//   tck-stream-ordering-001      working, artifact "Ordered output", completed
//   tck-stream-artifact-text     working, artifact "Streamed text content", completed
//   tck-stream-artifact-file     working, the file artifact above, completed
//   tck-stream-artifact-chunked  working, chunk "chunk-1 " (append), chunk "chunk-2" (append,
//                                lastChunk) of one artifact, completed
//   test-resubscribe-message-id  working, then completed after `long_task` (default 4 s)
//   any id not starting "tck-"   the same (the v0.3 kit's messages, "test-...", "msg-...":
//                                it continues and cancels the task its first message
//                                started, so that task must still be working; run a2ad with
//                                a short --blocking-timeout-ms so blocking sends return it),
//                                unless its text names an ACTS behaviour (below)
//   any other "tck-" id          completed, status message "Unhandled messageId prefix: <id>"
//
// ACTS (the A2A Conformance Test Specification, §11) names the behaviour by the first text
// part of the task's first message instead ("tck-complete-task hello"; the name is matched
// whole: tck- and hyphen-joined lowercase words), with messageIds of the runner's own. The
// §11.2 names behave as above (tck-complete-task, tck-input-required, tck-reject-task,
// tck-message-response, tck-artifact-*), and:
//
//   tck-long-running    working, then after `long_task` artifact "long running result" and
//                       completed
//   tck-multi-turn      input-required ("more input please") until a reply starting "done"
//                       (completed, "multi-turn complete"); other replies keep it waiting
//   tck-cancel          working until canceled (failed after 120 s without a cancel)
//   tck-stream-basic    working, artifact "streamed content", completed
//   tck-stream-chunked  working, three chunks of one artifact (append, lastChunk), completed
//   tck-task-failure    failed, status message "tck-task-failure ok"
//   tck-auth-required   auth-required, status message "tck-auth-required ok"
//   tck-client-parse    the interop kit's: a data artifact of what a2ad's decoder reads from
//                       the wire payload the message carries (tck_client_parse.hpp)
//   any other tck-...   failed, "unimplemented ACTS behaviour '<name>'"
//
// An ACTS task keeps its behaviour: a continuation that names none (a multi-turn's "done")
// is read as the task's, one that names one does that.
//
// A message into a working task is taken (TakesMessagesWhileWorking): it joins the history
// and the task goes on as it was.
//
// A reply to an input-required task of the TCK is routed by its own messageId:
// tck-input-required keeps the task waiting (the reply is logged; nothing runs), any other
// prefix resumes it (node.resumed) and then behaves as that prefix does from working
// (tck-complete-task completes it). Everything that can be decided at once is decided in
// FirstSteps (one commit with the task's creation for a blocking send) or in one commit of
// Execute; only the long-running behaviours and tck-cancel wait (a cancel ends the wait).
// Execute derives its position from the task's state, so a restart never repeats a
// committed step.
//
// Thread safety: stateless after construction; one instance serves every task concurrently.
#include <chrono>
#include <optional>
#include <string_view>

#include "a2ad/tasks/executor.hpp"

namespace a2ad::tasks {

class TckExecutor final : public Executor {
 public:
  /// What a messageId asks for (TckBehaviourOf).
  enum class Behaviour {
    kCompleteTask,
    kArtifactText,
    kArtifactFile,
    kArtifactFileUrl,
    kArtifactData,
    kMessageResponse,
    kInputRequired,
    kRejectTask,
    kStream001,
    kStream002,
    kStream003,
    kStreamOrdering,
    kStreamArtifactText,
    kStreamArtifactFile,
    kStreamArtifactChunked,
    kLongRunning,  // test-resubscribe-message-id, and ids that do not start "tck-"
    kUnhandled,
    // ACTS's (by text)
    kActsLongRunning,
    kMultiTurn,
    kCancel,
    kStreamBasic,
    kStreamChunked,
    kTaskFailure,
    kAuthRequired,
    kClientParse,
    kActsUnknown,  // a tck- name ACTS has and this agent does not
  };
  /// The behaviour a messageId selects (pure; the longest matching prefix wins).
  static Behaviour BehaviourOf(std::string_view message_id);
  /// What the first text part names in ACTS's convention; nullopt when it names nothing.
  static std::optional<Behaviour> ActsBehaviourOf(const protocol::Message& message);

  explicit TckExecutor(std::chrono::milliseconds long_task = std::chrono::milliseconds(4000))
      : long_task_(long_task) {}

  boost::asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override;
  /// The kit reuses one messageId for every task it creates (accepted_messages.hpp).
  bool ReusesFirstMessageIds() const override { return true; }
  /// A new task's whole behaviour, except the long-running one's wait.
  std::vector<EventDraft> FirstSteps(const storage::TaskRecord& created) const override;
  /// tck-message-response: a Message "Direct message response" instead of a task.
  std::optional<protocol::Message> DirectReply(const protocol::Message& message) const override;
  bool TakesMessagesWhileWorking() const override { return true; }
  /// tck-input-required keeps the task waiting (resumes = false); any other A2A reply resumes
  /// it with node.resumed (Execute then runs the reply's behaviour). Refuses non-A2A answers.
  core::Result<Resolution> Resolve(const storage::TaskRecord& current,
                                   const ResolveRequest& request) override;

 private:
  std::chrono::milliseconds long_task_;
};

}  // namespace a2ad::tasks
