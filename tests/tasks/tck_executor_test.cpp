// The built-in `tck` skill (tasks/builtin/tck_executor.hpp) through a real TaskService: each
// messageId prefix of the A2A conformance kit gives the task, artifacts, status messages and
// stream events the kit checks; replies to an input-required task are routed by their own
// prefix; the long-running behaviour waits, can be canceled, and every log folds to its
// snapshot.
#include "a2ad/tasks/builtin/tck_executor.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "run_on.hpp"

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using B = TckExecutor::Behaviour;
using K = protocol::StreamEvent::Kind;
using S = protocol::TaskState;

protocol::SendMessageRequest Send(const std::string& message_id, const std::string& task_id = "",
                                  bool immediately = false) {
  protocol::SendMessageRequest r;
  r.message.message_id = message_id;
  r.message.task_id = task_id;
  r.message.role = protocol::Role::kUser;
  r.message.parts.push_back(protocol::Part::Text("TCK test"));
  r.configuration.return_immediately = immediately;
  return r;
}

std::string StatusText(const protocol::Task& t) {
  if (!t.status.message || t.status.message->parts.empty()) return "";
  return t.status.message->parts[0].text;
}

class TckExecutorTest : public ::testing::Test {
 protected:
  TckExecutorTest() {
    TaskServiceOptions opts;
    opts.default_skill = "tck";
    service_ = std::make_unique<TaskService>(store_, clock_, *ids_, io_.get_executor(), opts);
    service_->RegisterSkill({"tck"}, std::make_shared<TckExecutor>(std::chrono::milliseconds(100)));
  }

  template <class T>
  T Run(asio::awaitable<T> aw) {
    return a2ad::testing::RunOn(io_, std::move(aw));
  }
  void Drain() {
    io_.restart();
    io_.run();
  }
  protocol::Task Get(const std::string& id) {
    auto t = Run(service_->GetTask(ctx_, {"", id, {}}));
    EXPECT_TRUE(t.ok());
    return t.ok() ? *t : protocol::Task{};
  }
  protocol::Task SendOk(const std::string& message_id, const std::string& task_id = "") {
    auto t = Run(service_->SendMessage(ctx_, Send(message_id, task_id)));
    EXPECT_TRUE(t.ok()) << message_id << ": " << (t.ok() ? "" : t.error().message);
    return t.ok() ? *t : protocol::Task{};
  }
  // The A2A items a stream sends, once everything ran, as the stream writer picks them: its
  // backlog, then the live items past the backlog's sequence with an A2A projection.
  std::vector<StreamItemPtr> Items(const StreamStart& start) {
    Drain();
    std::vector<StreamItemPtr> items;
    int64_t last = start.last_sequence;
    for (const auto& item : start.backlog) {
      if (item->a2a) items.push_back(item);
      last = std::max(last, item->sequence);
    }
    while (auto item = start.subscription->TryNext())
      if (item->a2a && item->sequence > last) items.push_back(item);
    return items;
  }
  void ExpectLogFoldsToSnapshot(const std::string& task_id) {
    auto events = store_.ReadEvents(task_id, -1, 10000);
    ASSERT_TRUE(events.ok());
    storage::TaskRecord folded;
    for (const auto& e : events.value()) ASSERT_TRUE(ApplyEvent(folded, e).ok()) << e.type;
    auto stored = store_.Get(task_id);
    ASSERT_TRUE(stored.ok() && stored.value().has_value());
    EXPECT_EQ(folded, *stored.value()) << task_id;
  }

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore store_;
  asio::io_context io_;
  std::unique_ptr<TaskService> service_;
  const protocol::CallContext ctx_ =
      protocol::CallContext::Anonymous(protocol::Binding::kInternal, protocol::WireVersion::kV10);
};

TEST(TckBehaviour, TheLongestPrefixWins) {
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-complete-task-1a2b3c4d"), B::kCompleteTask);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-artifact-file-1a2b"), B::kArtifactFile);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-artifact-file-url-1a2b"), B::kArtifactFileUrl);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-stream-artifact-file-x"), B::kStreamArtifactFile);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-stream-artifact-chunked"), B::kStreamArtifactChunked);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-stream-ordering-001-x"), B::kStreamOrdering);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-stream-002-x"), B::kStream002);
  EXPECT_EQ(TckExecutor::BehaviourOf("test-resubscribe-message-id-7"), B::kLongRunning);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-send-003-x"), B::kUnhandled);
  EXPECT_EQ(TckExecutor::BehaviourOf("tck-complete"), B::kUnhandled);
  // The v0.3 kit's ids (not "tck-"): working for a while, like test-resubscribe-message-id.
  EXPECT_EQ(TckExecutor::BehaviourOf("test-message-id-9"), B::kLongRunning);
  EXPECT_EQ(TckExecutor::BehaviourOf("msg-9"), B::kLongRunning);
  EXPECT_EQ(TckExecutor::BehaviourOf(""), B::kLongRunning);
}

TEST_F(TckExecutorTest, CompleteTaskAnswersHelloFromTck) {
  auto t = SendOk("tck-complete-task-s1");
  EXPECT_EQ(t.status.state, S::kCompleted);
  EXPECT_EQ(StatusText(t), "Hello from TCK");
  ASSERT_TRUE(t.status.message);
  EXPECT_EQ(t.status.message->role, protocol::Role::kAgent);
  EXPECT_EQ(t.status.message->task_id, t.id);
  EXPECT_TRUE(t.artifacts.empty());
  ExpectLogFoldsToSnapshot(t.id);
}

TEST_F(TckExecutorTest, ArtifactsHaveTheKitsParts) {
  auto text = SendOk("tck-artifact-text-s1");
  EXPECT_EQ(text.status.state, S::kCompleted);
  ASSERT_EQ(text.artifacts.size(), 1u);
  ASSERT_EQ(text.artifacts[0].parts.size(), 1u);
  EXPECT_FALSE(text.artifacts[0].artifact_id.empty());
  EXPECT_EQ(text.artifacts[0].parts[0].text, "Generated text content");

  auto file = SendOk("tck-artifact-file-s1");
  ASSERT_EQ(file.artifacts.size(), 1u);
  const protocol::Part& raw = file.artifacts[0].parts.at(0);
  EXPECT_EQ(raw.kind, protocol::Part::Kind::kRaw);
  EXPECT_EQ(raw.text, "dGNr");
  EXPECT_EQ(raw.filename, "output.txt");
  EXPECT_EQ(raw.media_type, "text/plain");

  auto url = SendOk("tck-artifact-file-url-s1");
  ASSERT_EQ(url.artifacts.size(), 1u);
  const protocol::Part& link = url.artifacts[0].parts.at(0);
  EXPECT_EQ(link.kind, protocol::Part::Kind::kUrl);
  EXPECT_EQ(link.text, "https://example.com/output.txt");
  EXPECT_EQ(link.filename, "output.txt");
  EXPECT_EQ(link.media_type, "text/plain");

  auto data = SendOk("tck-artifact-data-s1");
  ASSERT_EQ(data.artifacts.size(), 1u);
  const protocol::Part& d = data.artifacts[0].parts.at(0);
  EXPECT_EQ(d.kind, protocol::Part::Kind::kData);
  EXPECT_EQ(d.data, (json::value(json::object{{"key", "value"}, {"count", 42}})));
  for (const auto* t : {&text, &file, &url, &data}) {
    EXPECT_EQ(t->status.state, S::kCompleted);
    ExpectLogFoldsToSnapshot(t->id);
  }
}

TEST_F(TckExecutorTest, RejectMessageResponseAndUnhandledPrefixes) {
  auto rejected = SendOk("tck-reject-task-s1");
  EXPECT_EQ(rejected.status.state, S::kRejected);
  // tck-message-response is answered with a Message and stores nothing.
  protocol::SendMessageRequest direct = Send("tck-message-response-s1");
  auto reply = service_->DirectReply(direct);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->role, protocol::Role::kAgent);
  ASSERT_EQ(reply->parts.size(), 1u);
  EXPECT_EQ(reply->parts[0].text, "Direct message response");
  EXPECT_FALSE(reply->message_id.empty());
  EXPECT_FALSE(reply->context_id.empty());
  EXPECT_TRUE(reply->task_id.empty());
  EXPECT_FALSE(service_->DirectReply(Send("tck-artifact-text-s9")).has_value());
  auto other = SendOk("tck-send-003-s1");
  EXPECT_EQ(other.status.state, S::kCompleted);
  EXPECT_EQ(StatusText(other), "Unhandled messageId prefix: tck-send-003-s1");
  for (const auto* t : {&rejected, &other}) ExpectLogFoldsToSnapshot(t->id);
}

// Non-blocking: the task is answered as submitted and Execute (not FirstSteps) does the work.
TEST_F(TckExecutorTest, ANonBlockingSendIsExecutedToo) {
  auto t = Run(service_->SendMessage(ctx_, Send("tck-artifact-text-nb", "", true)));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status.state, S::kSubmitted);
  Drain();
  auto now = Get(t->id);
  EXPECT_EQ(now.status.state, S::kCompleted);
  ASSERT_EQ(now.artifacts.size(), 1u);
  EXPECT_EQ(now.artifacts[0].parts.at(0).text, "Generated text content");
  ExpectLogFoldsToSnapshot(t->id);
}

// The kit's multi-turn helpers: input-required, two more tck-input-required messages keep it
// there (logged in the history), tck-complete-task completes it.
TEST_F(TckExecutorTest, InputRequiredStaysUntilCompleteTask) {
  auto t = SendOk("tck-input-required-s1");
  ASSERT_EQ(t.status.state, S::kInputRequired);
  auto again = SendOk("tck-input-required-s2", t.id);
  EXPECT_EQ(again.status.state, S::kInputRequired);
  auto more = SendOk("tck-input-required-s3", t.id);
  EXPECT_EQ(more.status.state, S::kInputRequired);
  auto done = SendOk("tck-complete-task-s4", t.id);
  EXPECT_EQ(done.status.state, S::kCompleted);
  EXPECT_EQ(StatusText(done), "Hello from TCK");
  std::vector<std::string> user_ids;
  for (const auto& m : done.history)
    if (m.role == protocol::Role::kUser) user_ids.push_back(m.message_id);
  EXPECT_EQ(user_ids, (std::vector<std::string>{"tck-input-required-s1", "tck-input-required-s2",
                                                "tck-input-required-s3", "tck-complete-task-s4"}));
  // A terminal task takes no more messages.
  auto late = Run(service_->SendMessage(ctx_, Send("tck-complete-task-s5", t.id)));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, core::ErrorCode::kUnsupportedOperation);
  ExpectLogFoldsToSnapshot(t.id);
}

// A reply with another prefix resumes the task (node.resumed, in the reply's own commit: the
// stream's snapshot is working) and then behaves as its prefix does.
TEST_F(TckExecutorTest, AReplyIsRoutedByItsOwnPrefix) {
  auto t = SendOk("tck-input-required-r1");
  ASSERT_EQ(t.status.state, S::kInputRequired);
  auto stream =
      Run(service_->SendStreamingMessage(ctx_, Send("tck-stream-artifact-text-r2", t.id), 16));
  ASSERT_TRUE(stream.ok());
  auto items = Items(*stream);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]->event.task.status.state, S::kWorking);
  items.erase(items.begin());
  EXPECT_EQ(items[0]->event.kind, K::kArtifactUpdate);
  EXPECT_EQ(items[0]->event.artifact_update.artifact.parts.at(0).text, "Streamed text content");
  EXPECT_EQ(items[1]->event.status_update.status.state, S::kCompleted);
  EXPECT_TRUE(items[1]->terminal);
  auto events = store_.ReadEvents(t.id, -1, 100).value();
  std::vector<std::string> types;
  for (const auto& e : events) types.push_back(e.type);
  EXPECT_EQ(types, (std::vector<std::string>{"a2a.task.submitted", "node.suspended",
                                             "a2a.message.received", "node.resumed",
                                             "artifact.created", "run.completed"}));
  ExpectLogFoldsToSnapshot(t.id);
}

TEST_F(TckExecutorTest, StreamsGoWorkingArtifactCompleted) {
  const std::pair<const char*, const char*> cases[] = {
      {"tck-stream-001-s", "Stream hello from TCK"},
      {"tck-stream-003-s", "Stream task lifecycle"},
      {"tck-stream-ordering-001-s", "Ordered output"},
      {"tck-stream-artifact-text-s", "Streamed text content"},
  };
  for (const auto& [id, text] : cases) {
    auto stream = Run(service_->SendStreamingMessage(ctx_, Send(id), 16));
    ASSERT_TRUE(stream.ok()) << id;
    auto items = Items(*stream);
    ASSERT_EQ(items.size(), 4u) << id;
    ASSERT_EQ(items[0]->event.kind, K::kTask);
    EXPECT_EQ(items[0]->event.task.status.state, S::kSubmitted);
    const std::string task_id = items[0]->event.task.id;
    items.erase(items.begin());
    EXPECT_EQ(items[0]->event.status_update.status.state, S::kWorking) << id;
    ASSERT_EQ(items[1]->event.kind, K::kArtifactUpdate) << id;
    EXPECT_EQ(items[1]->event.artifact_update.artifact.parts.at(0).text, text);
    EXPECT_TRUE(items[1]->event.artifact_update.last_chunk);
    EXPECT_EQ(items[2]->event.status_update.status.state, S::kCompleted) << id;
    ExpectLogFoldsToSnapshot(task_id);
  }
}

// A streamed send's first commit (the task and the first steps' events) is the stream's
// backlog: the subscription's queue limit, here 1, applies only to what comes later.
TEST_F(TckExecutorTest, TheFirstCommitOfAStreamIsNotHeldToTheQueueLimit) {
  auto stream =
      Run(service_->SendStreamingMessage(ctx_, Send("tck-stream-artifact-chunked-q1"), 1));
  ASSERT_TRUE(stream.ok());
  EXPECT_GE(stream->backlog.size(), 5u);  // task, working, two chunks, completed (and run events)
  auto items = Items(*stream);
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(items[0]->event.kind, K::kTask);
  EXPECT_EQ(items[4]->event.status_update.status.state, S::kCompleted);
  EXPECT_FALSE(stream->subscription->overflowed());
}

TEST_F(TckExecutorTest, Stream002CompletesAtOnceAndStreamFileHasTheFilePart) {
  auto s2 = Run(service_->SendStreamingMessage(ctx_, Send("tck-stream-002-s"), 16));
  ASSERT_TRUE(s2.ok());
  auto items = Items(*s2);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0]->event.task.status.state, S::kSubmitted);
  EXPECT_EQ(items[1]->event.status_update.status.state, S::kCompleted);

  auto file = Run(service_->SendStreamingMessage(ctx_, Send("tck-stream-artifact-file-s"), 16));
  ASSERT_TRUE(file.ok());
  items = Items(*file);
  ASSERT_EQ(items.size(), 4u);
  const protocol::Part& p = items[2]->event.artifact_update.artifact.parts.at(0);
  EXPECT_EQ(p.kind, protocol::Part::Kind::kRaw);
  EXPECT_EQ(p.filename, "output.txt");
  EXPECT_EQ(p.media_type, "text/plain");
}

TEST_F(TckExecutorTest, ChunkedArtifactAppendsTwoChunksToOneArtifact) {
  auto stream =
      Run(service_->SendStreamingMessage(ctx_, Send("tck-stream-artifact-chunked-s"), 16));
  ASSERT_TRUE(stream.ok());
  auto items = Items(*stream);
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(items[0]->event.kind, K::kTask);
  items.erase(items.begin());
  EXPECT_EQ(items[0]->event.status_update.status.state, S::kWorking);
  const auto& c1 = items[1]->event.artifact_update;
  const auto& c2 = items[2]->event.artifact_update;
  EXPECT_EQ(c1.artifact.parts.at(0).text, "chunk-1 ");
  EXPECT_TRUE(c1.append);
  EXPECT_FALSE(c1.last_chunk);
  EXPECT_EQ(c2.artifact.parts.at(0).text, "chunk-2");
  EXPECT_TRUE(c2.append);
  EXPECT_TRUE(c2.last_chunk);
  EXPECT_EQ(c1.artifact.artifact_id, c2.artifact.artifact_id);
  EXPECT_EQ(items[3]->event.status_update.status.state, S::kCompleted);
  auto t = Get(c1.task_id);
  ASSERT_EQ(t.artifacts.size(), 1u);
  ASSERT_EQ(t.artifacts[0].parts.size(), 2u);
  EXPECT_EQ(t.artifacts[0].parts[1].text, "chunk-2");
}

TEST_F(TckExecutorTest, TheLongRunningTaskWorksThenCompletes) {
  const auto begin = std::chrono::steady_clock::now();
  auto t = Run(service_->SendMessage(ctx_, Send("test-resubscribe-message-id-1", "", true)));
  ASSERT_TRUE(t.ok());
  auto stream = Run(service_->Subscribe(ctx_, t->id, std::nullopt, 16));
  ASSERT_TRUE(stream.ok());
  auto items = Items(*stream);
  EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(100));
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items.back()->event.status_update.status.state, S::kCompleted);
  EXPECT_EQ(Get(t->id).status.state, S::kCompleted);
  ExpectLogFoldsToSnapshot(t->id);
}

TEST_F(TckExecutorTest, TheLongRunningTaskCanBeCanceled) {
  auto t = Run(service_->SendMessage(ctx_, Send("test-resubscribe-message-id-2", "", true)));
  ASSERT_TRUE(t.ok());
  auto c = Run(service_->CancelTask(ctx_, {"", t->id, {}}));
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->status.state, S::kCanceled);
  Drain();
  EXPECT_EQ(Get(t->id).status.state, S::kCanceled);
  EXPECT_EQ(service_->running_executions(), 0u);
  ExpectLogFoldsToSnapshot(t->id);
}

// The v0.3 kit continues and cancels the task a plain message started: a message into the
// working task joins its history and starts nothing; the task goes on and completes.
TEST_F(TckExecutorTest, AMessageIntoAWorkingTaskJoinsTheHistoryAndStartsNothing) {
  auto t = Run(service_->SendMessage(ctx_, Send("test-message-id-1", "", true)));
  ASSERT_TRUE(t.ok());
  auto more = Run(service_->SendMessage(ctx_, Send("test-followup-1", t->id, true)));
  ASSERT_TRUE(more.ok()) << more.error().message;
  EXPECT_EQ(more->id, t->id);
  EXPECT_FALSE(protocol::IsTerminal(more->status.state));
  ASSERT_EQ(more->history.size(), 2u);
  EXPECT_EQ(more->history[1].message_id, "test-followup-1");
  EXPECT_EQ(service_->running_executions(), 1u);
  Drain();
  EXPECT_EQ(Get(t->id).status.state, S::kCompleted);
  ExpectLogFoldsToSnapshot(t->id);
  // ... and once it is over, a message is refused as for any finished task.
  auto late = Run(service_->SendMessage(ctx_, Send("test-followup-2", t->id, true)));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, core::ErrorCode::kUnsupportedOperation);
}

// ---- ACTS (§11): the behaviour named by the first text part -----------------------------------

protocol::SendMessageRequest Acts(const std::string& text, const std::string& task_id = "",
                                  bool immediately = false) {
  static int n = 0;
  protocol::SendMessageRequest r = Send("0193a5b2-acts-" + std::to_string(++n), task_id,
                                        immediately);
  r.message.parts[0].text = text;
  return r;
}

protocol::Message TextMessage(const std::string& id, const std::string& text) {
  protocol::Message m;
  m.message_id = id;
  m.parts.push_back(protocol::Part::Text(text));
  return m;
}

TEST(TckBehaviour, ActsNamesAreReadWholeFromTheFirstTextPart) {
  auto of = [](const std::string& text) {
    return TckExecutor::ActsBehaviourOf(TextMessage("m", text));
  };
  EXPECT_EQ(of("tck-complete-task hello"), B::kCompleteTask);
  EXPECT_EQ(of("  tck-artifact-file-url document"), B::kArtifactFileUrl);
  EXPECT_EQ(of("tck-artifact-file document"), B::kArtifactFile);
  EXPECT_EQ(of("tck-multi-turn"), B::kMultiTurn);
  EXPECT_EQ(of("tck-cancel start work"), B::kCancel);
  EXPECT_EQ(of("tck-stream-chunked x"), B::kStreamChunked);
  EXPECT_EQ(of("tck-task-failure"), B::kTaskFailure);
  EXPECT_EQ(of("tck-auth-required"), B::kAuthRequired);
  EXPECT_EQ(of("tck-client-parse"), B::kClientParse);
  EXPECT_EQ(of("tck-complete-taskx"), B::kActsUnknown);  // whole names only
  EXPECT_EQ(of("tck-nothing-like-it now"), B::kActsUnknown);
  EXPECT_EQ(of("tck-"), std::nullopt);
  EXPECT_EQ(of("hello tck-complete-task"), std::nullopt);
  EXPECT_EQ(of("done"), std::nullopt);
  protocol::Message data_first;
  data_first.parts.push_back(protocol::Part::Data(json::object{{"a", 1}}));
  data_first.parts.push_back(protocol::Part::Text("tck-task-failure"));
  EXPECT_EQ(TckExecutor::ActsBehaviourOf(data_first), B::kTaskFailure);  // the first *text* part
}

TEST_F(TckExecutorTest, ActsTerminalBehavioursEndWhereTheyNameAndTheMessageIdConventionComesFirst) {
  auto failed = Run(service_->SendMessage(ctx_, Acts("tck-task-failure now")));
  ASSERT_TRUE(failed.ok()) << failed.error().message;
  EXPECT_EQ(failed->status.state, S::kFailed);
  EXPECT_EQ(StatusText(*failed), "tck-task-failure ok");
  auto auth = Run(service_->SendMessage(ctx_, Acts("tck-auth-required please")));
  ASSERT_TRUE(auth.ok());
  EXPECT_EQ(auth->status.state, S::kAuthRequired);
  EXPECT_EQ(StatusText(*auth), "tck-auth-required ok");
  auto unknown = Run(service_->SendMessage(ctx_, Acts("tck-teleport me")));
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status.state, S::kFailed);
  EXPECT_EQ(StatusText(*unknown), "unimplemented ACTS behaviour 'tck-teleport'");
  auto done = Run(service_->SendMessage(ctx_, Acts("tck-complete-task hello")));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status.state, S::kCompleted);
  // A TCK messageId names the behaviour, whatever the text says.
  protocol::SendMessageRequest both = Send("tck-complete-task-both");
  both.message.parts[0].text = "tck-task-failure";
  auto tck = Run(service_->SendMessage(ctx_, both));
  ASSERT_TRUE(tck.ok());
  EXPECT_EQ(tck->status.state, S::kCompleted);
  EXPECT_TRUE(service_->DirectReply(Acts("tck-message-response hi")).has_value());
  EXPECT_FALSE(service_->DirectReply(Acts("tck-complete-task hi")).has_value());
  for (const auto* t : {&*failed, &*auth, &*unknown}) ExpectLogFoldsToSnapshot(t->id);
}

TEST_F(TckExecutorTest, ActsMultiTurnWaitsUntilDone) {
  auto t = Run(service_->SendMessage(ctx_, Acts("tck-multi-turn start")));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->status.state, S::kInputRequired);
  EXPECT_EQ(StatusText(*t), "more input please");
  // A continuation names no behaviour: it is the task's, and only "done" ends it.
  auto more = Run(service_->SendMessage(ctx_, Acts("here is more input", t->id)));
  ASSERT_TRUE(more.ok()) << more.error().message;
  EXPECT_EQ(more->status.state, S::kInputRequired);
  auto end = Run(service_->SendMessage(ctx_, Acts("  Done, thanks", t->id)));
  ASSERT_TRUE(end.ok()) << end.error().message;
  Drain();
  auto now = Get(t->id);
  EXPECT_EQ(now.status.state, S::kCompleted);
  EXPECT_EQ(StatusText(now), "multi-turn complete");
  EXPECT_EQ(std::count_if(now.history.begin(), now.history.end(),
                          [](const auto& m) { return m.role == protocol::Role::kUser; }),
            3);
  ExpectLogFoldsToSnapshot(t->id);
}

TEST_F(TckExecutorTest, ActsCancelWorksUntilCanceledAndLongRunningLeavesAnArtifact) {
  auto c = Run(service_->SendMessage(ctx_, Acts("tck-cancel start work", "", true)));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->status.state == S::kSubmitted || c->status.state == S::kWorking);
  auto canceled = Run(service_->CancelTask(ctx_, {"", c->id, {}}));
  ASSERT_TRUE(canceled.ok()) << canceled.error().message;
  EXPECT_EQ(canceled->status.state, S::kCanceled);

  auto l = Run(service_->SendMessage(ctx_, Acts("tck-long-running start", "", true)));
  ASSERT_TRUE(l.ok());
  EXPECT_FALSE(protocol::IsTerminal(l->status.state));
  Drain();  // the long wait is 100 ms here
  auto done = Get(l->id);
  EXPECT_EQ(done.status.state, S::kCompleted);
  ASSERT_EQ(done.artifacts.size(), 1u);
  EXPECT_EQ(done.artifacts[0].parts[0].text, "long running result");
  EXPECT_EQ(Get(c->id).status.state, S::kCanceled);
  ExpectLogFoldsToSnapshot(c->id);
  ExpectLogFoldsToSnapshot(l->id);
}

TEST_F(TckExecutorTest, ActsStreamsGoWorkingThenArtifactsThenCompleted) {
  auto stream = Run(service_->SendStreamingMessage(ctx_, Acts("tck-stream-chunked go"), 16));
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  auto items = Items(*stream);
  ASSERT_EQ(items.size(), 6u);
  EXPECT_EQ(items[0]->event.kind, K::kTask);
  items.erase(items.begin());
  EXPECT_EQ(items[0]->event.status_update.status.state, S::kWorking);
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(items[i]->event.kind, K::kArtifactUpdate) << i;
  EXPECT_FALSE(items[1]->event.artifact_update.append);
  EXPECT_TRUE(items[3]->event.artifact_update.append);
  EXPECT_TRUE(items[3]->event.artifact_update.last_chunk);
  EXPECT_EQ(items[4]->event.status_update.status.state, S::kCompleted);
  auto t = Get(items[0]->event.status_update.task_id);
  ASSERT_EQ(t.artifacts.size(), 1u);
  std::string all;
  for (const auto& p : t.artifacts[0].parts) all += p.text;
  EXPECT_EQ(all, "chunk one chunk two chunk three");

  auto basic = Run(service_->SendStreamingMessage(ctx_, Acts("tck-stream-basic hi"), 16));
  ASSERT_TRUE(basic.ok());
  auto b = Items(*basic);
  ASSERT_EQ(b.size(), 4u);
  b.erase(b.begin());
  EXPECT_EQ(b[1]->event.artifact_update.artifact.parts[0].text, "streamed content");
  EXPECT_EQ(b[2]->event.status_update.status.state, S::kCompleted);
}

TEST_F(TckExecutorTest, ActsClientParseReadsTheWirePayloadWithA2adsDecoder) {
  const json::value golden = json::parse(R"({"jsonrpc": "2.0", "id": "1", "result": {"task": {
      "id": "abc-123", "contextId": "ctx-456",
      "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-01-01T00:00:00Z"},
      "artifacts": [{"artifactId": "art-1", "parts": [{"text": "hello world"}]}]}}})");
  protocol::SendMessageRequest r = Acts("tck-client-parse");
  r.message.parts.push_back(
      protocol::Part::Data(json::object{{"operation", "SendMessage"}, {"wire_payload", golden}}));
  auto t = Run(service_->SendMessage(ctx_, r));
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->status.state, S::kCompleted) << StatusText(*t);
  ASSERT_EQ(t->artifacts.size(), 1u);
  const json::value& parsed = t->artifacts[0].parts[0].data;
  EXPECT_EQ(parsed.at("task").at("id"), "abc-123");
  EXPECT_EQ(parsed.at("task").at("status").at("state"), "TASK_STATE_COMPLETED");
  EXPECT_EQ(parsed.at("task").at("artifacts").at(0).at("parts").at(0).at("text"), "hello world");

  // What the decoder refuses fails the task, saying where.
  json::value bad = golden;
  bad.at("result").at("task").at("status").as_object()["state"] = "TASK_STATE_SLEEPING";
  protocol::SendMessageRequest r2 = Acts("tck-client-parse");
  r2.message.parts.push_back(
      protocol::Part::Data(json::object{{"operation", "SendMessage"}, {"wire_payload", bad}}));
  auto t2 = Run(service_->SendMessage(ctx_, r2));
  ASSERT_TRUE(t2.ok());
  EXPECT_EQ(t2->status.state, S::kFailed);
  EXPECT_NE(StatusText(*t2).find("status.state"), std::string::npos) << StatusText(*t2);
  auto none = Run(service_->SendMessage(ctx_, Acts("tck-client-parse")));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(StatusText(*none), "tck-client-parse needs a data part {operation, wire_payload}");
}

}  // namespace
}  // namespace a2ad::tasks
