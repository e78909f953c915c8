// Replies into a task are idempotent by messageId (tasks/accepted_messages.hpp): a retry of
// an accepted reply appends nothing and is answered with the task as it is now, whatever its
// state (even terminal); a reused messageId with other parts is refused; two identical
// replies racing apply once, including when the first one's commit is still in flight.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <set>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/forwarding_task_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/accepted_messages.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "gate_executor.hpp"
#include "run_on.hpp"

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using core::ErrorCode;
using S = protocol::TaskState;

using testing::GateExecutor;
using testing::TextOf;

// Holds commits until Release() while `hold` is set (everything else forwards).
class HoldingStore final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;
  void Commit(storage::TaskCommit c, CommitCallback done) override {
    if (!hold) return inner().Commit(std::move(c), std::move(done));
    held_.emplace_back(std::move(c), std::move(done));
  }
  void Release() {
    hold = false;
    for (auto& [c, done] : std::exchange(held_, {})) inner().Commit(std::move(c), std::move(done));
  }
  size_t held() const { return held_.size(); }
  bool hold = false;

 private:
  std::vector<std::pair<storage::TaskCommit, CommitCallback>> held_;
};

class ReplyRetryTest : public ::testing::Test {
 protected:
  void Make(TaskServiceOptions opts = {}) {
    service_ = std::make_unique<TaskService>(store_, clock_, *ids_, io_.get_executor(), opts);
    service_->RegisterSkill({"gate"}, gate_);
  }

  template <class T>
  T Run(asio::awaitable<T> aw) {
    return a2ad::testing::RunOn(io_, std::move(aw));
  }
  void Drain() {
    io_.restart();
    io_.run();
  }

  static protocol::SendMessageRequest Message(const std::string& id, const std::string& text,
                                              const std::string& task_id = "") {
    protocol::SendMessageRequest r;
    r.message.message_id = id;
    r.message.role = protocol::Role::kUser;
    r.message.task_id = task_id;
    r.message.parts.push_back(protocol::Part::Text(text));
    if (task_id.empty()) r.message.metadata["skillId"] = "gate";
    return r;
  }

  // A task parked at its gate.
  std::string Parked() {
    auto t = Run(service_->SendMessage(ctx_, Message("start", "go")));
    EXPECT_TRUE(t.ok());
    EXPECT_EQ(t->status.state, S::kInputRequired);
    return t->id;
  }

  std::vector<protocol::RunEvent> Events(const std::string& id) {
    return inner_.ReadEvents(id, -1, 10000).value();
  }
  size_t Count(const std::string& id, std::string_view type) {
    auto evs = Events(id);
    return std::count_if(evs.begin(), evs.end(), [&](const auto& e) { return e.type == type; });
  }
  void ExpectLogFoldsToSnapshot(const std::string& id) {
    storage::TaskRecord folded;
    for (const auto& e : Events(id)) ASSERT_TRUE(ApplyEvent(folded, e).ok()) << e.type;
    EXPECT_EQ(folded, *inner_.Get(id).value());
  }

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore inner_;
  HoldingStore store_{inner_};
  asio::io_context io_;
  std::shared_ptr<GateExecutor> gate_ = std::make_shared<GateExecutor>();
  std::unique_ptr<TaskService> service_;
  // The caller of every request: the anonymous caller of the default tenant.
  const protocol::CallContext ctx_ =
      protocol::CallContext::Anonymous(protocol::Binding::kInternal, protocol::WireVersion::kV10);
};

// The issue's repro: {"action": "ask"} sent three times with one messageId.
TEST_F(ReplyRetryTest, ARetriedReplyAppendsNothingAndReturnsTheTask) {
  Make();
  const std::string id = Parked();
  const int64_t after_start = inner_.Get(id).value()->last_sequence;
  auto first = Run(service_->SendMessage(ctx_, Message("r-ask", "ask", id)));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->status.state, S::kInputRequired);
  const int64_t after_reply = inner_.Get(id).value()->last_sequence;
  EXPECT_EQ(after_reply, after_start + 2);  // a2a.message.received + a2ad.approval.asked
  for (int i = 0; i < 2; ++i) {
    auto again = Run(service_->SendMessage(ctx_, Message("r-ask", "ask", id)));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->id, id);
    EXPECT_EQ(again->status.state, S::kInputRequired);
    EXPECT_EQ(again->history.size(), first->history.size());
  }
  EXPECT_EQ(inner_.Get(id).value()->last_sequence, after_reply);
  EXPECT_EQ(Count(id, protocol::kEvApprovalAsked), 1u);
  EXPECT_EQ(Count(id, protocol::kEvMessageReceived), 1u);
  Drain();
  EXPECT_EQ(gate_->executions.load(), 1);  // nothing was resumed
  ExpectLogFoldsToSnapshot(id);
}

TEST_F(ReplyRetryTest, ARetryAfterTheGateClosedReturnsTheTaskItProduced) {
  Make();
  const std::string id = Parked();
  auto first = Run(service_->SendMessage(ctx_, Message("r-ok", "accept", id)));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->status.state, S::kCompleted);
  const int64_t last = inner_.Get(id).value()->last_sequence;

  auto blocking = Run(service_->SendMessage(ctx_, Message("r-ok", "accept", id)));
  ASSERT_TRUE(blocking.ok()) << blocking.error().message;  // not -32004
  EXPECT_EQ(blocking->status.state, S::kCompleted);
  EXPECT_EQ(blocking->artifacts.size(), first->artifacts.size());
  auto immediate = Message("r-ok", "accept", id);
  immediate.configuration.return_immediately = true;
  immediate.configuration.history_length = 1;
  auto shaped = Run(service_->SendMessage(ctx_, std::move(immediate)));
  ASSERT_TRUE(shaped.ok());
  EXPECT_EQ(shaped->status.state, S::kCompleted);
  EXPECT_EQ(shaped->history.size(), 1u);
  // Streaming: a stream of the task, already final.
  auto stream = Run(service_->SendStreamingMessage(ctx_, Message("r-ok", "accept", id), 16));
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  ASSERT_EQ(stream->backlog.size(), 1u);
  EXPECT_EQ(stream->backlog[0]->event.kind, protocol::StreamEvent::Kind::kTask);
  EXPECT_EQ(stream->backlog[0]->event.task.status.state, S::kCompleted);
  EXPECT_TRUE(stream->backlog[0]->terminal);

  EXPECT_EQ(inner_.Get(id).value()->last_sequence, last);
  EXPECT_EQ(Count(id, protocol::kEvApprovalReceived), 1u);
  // A new reply to the finished task is still refused as before.
  auto late = Run(service_->SendMessage(ctx_, Message("r-late", "accept", id)));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kUnsupportedOperation);
  ExpectLogFoldsToSnapshot(id);
}

// A first message is idempotent by (caller, contextId, messageId) for the retention window
// (accepted_messages.hpp, A2aDedupKey), whatever happens to the task meanwhile: the same send
// after the gate was answered, after the task ended, after a cancel is a retry that returns
// the first task and starts nothing (the regression of issue 29: a late retry started a
// second run once the sender had answered the gate).
TEST_F(ReplyRetryTest, AFirstMessageIsARetryWhateverHappenedToItsTask) {
  Make();
  const std::string id = Parked();
  auto retried = Run(service_->SendMessage(ctx_, Message("start", "go")));
  ASSERT_TRUE(retried.ok()) << retried.error().message;
  EXPECT_EQ(retried->id, id);

  // Another principal's answer, then the sender's own: still the first task.
  protocol::CallContext approver = ctx_;
  approver.principal.id = "approver";
  ASSERT_TRUE(Run(service_->SendMessage(approver, Message("r-ask", "ask", id))).ok());
  EXPECT_EQ(Run(service_->SendMessage(ctx_, Message("start", "go")))->id, id);
  auto done = Run(service_->SendMessage(ctx_, Message("r-ok", "accept", id)));
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_EQ(done->status.state, S::kCompleted);
  EXPECT_EQ(inner_.Get(id).value()->dedup_key, A2aDedupKey("anonymous", "", "start"));
  ExpectLogFoldsToSnapshot(id);
  auto late = Run(service_->SendMessage(ctx_, Message("start", "go")));
  ASSERT_TRUE(late.ok()) << late.error().message;
  EXPECT_EQ(late->id, id);
  EXPECT_EQ(late->status.state, S::kCompleted);
  Drain();
  EXPECT_EQ(gate_->executions.load(), 2);  // start + resume: no second run

  // A cancel by the sender keeps the key too.
  auto other = Run(service_->SendMessage(ctx_, Message("start-2", "go")));
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(Run(service_->CancelTask(ctx_, {"", other->id, {}})).ok());
  auto after_cancel = Run(service_->SendMessage(ctx_, Message("start-2", "go")));
  ASSERT_TRUE(after_cancel.ok());
  EXPECT_EQ(after_cancel->id, other->id);
  EXPECT_EQ(after_cancel->status.state, S::kCanceled);
  ExpectLogFoldsToSnapshot(other->id);
}

// The key is kept for the retention window (TaskServiceOptions::idempotency_retention) and
// then taken over by the next task that uses it: the same send after the window starts a new
// task, and a retry of that one returns the new task. The old task keeps its state.
TEST_F(ReplyRetryTest, AFirstMessagesKeyIsTakenOverAfterTheRetentionWindow) {
  core::ManualClock manual;
  TaskServiceOptions opts;
  opts.idempotency_retention = std::chrono::hours(24);
  service_ = std::make_unique<TaskService>(store_, manual, *ids_, io_.get_executor(), opts);
  service_->RegisterSkill({"gate"}, gate_);
  const std::string id = Parked();
  manual.Advance(24LL * 3600 * 1000 - 1);
  EXPECT_EQ(Run(service_->SendMessage(ctx_, Message("start", "go")))->id, id);
  manual.Advance(2);
  auto fresh = Run(service_->SendMessage(ctx_, Message("start", "go")));
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_NE(fresh->id, id);
  EXPECT_EQ(Run(service_->SendMessage(ctx_, Message("start", "go")))->id, fresh->id);
  EXPECT_EQ(inner_.Get(id).value()->dedup_key, "");
  EXPECT_EQ(inner_.Get(id).value()->task.status.state, S::kInputRequired);
  EXPECT_EQ(inner_.Get(fresh->id).value()->dedup_key, A2aDedupKey("anonymous", "", "start"));
}

// The built-in conformance agent (Executor::ReusesFirstMessageIds) alone gives its key back
// when the creator addresses the task: the A2A conformance kit reuses one messageId for every
// task of a session. Another principal's message does not; the creator's reply or cancel
// does, durably, and the messageId then starts a new task.
TEST_F(ReplyRetryTest, OnlyTheConformanceAgentReusesAFirstMessageIdOnceTheTaskWasAddressed) {
  class KitGate final : public Executor {
   public:
    explicit KitGate(std::shared_ptr<GateExecutor> g) : g_(std::move(g)) {}
    core::Result<Resolution> Resolve(const storage::TaskRecord& r,
                                     const ResolveRequest& req) override {
      return g_->Resolve(r, req);
    }
    asio::awaitable<void> Execute(std::shared_ptr<ExecutionContext> ctx) override {
      co_await g_->Execute(std::move(ctx));
    }
    bool ReusesFirstMessageIds() const override { return true; }

   private:
    std::shared_ptr<GateExecutor> g_;
  };
  Make();
  service_->RegisterSkill({"kit"}, std::make_shared<KitGate>(gate_));
  auto kit_message = [](const std::string& mid, const std::string& text) {
    auto r = Message(mid, text);
    r.message.metadata["skillId"] = "kit";
    return r;
  };
  auto first = Run(service_->SendMessage(ctx_, kit_message("start", "go")));
  ASSERT_TRUE(first.ok()) << first.error().message;
  const std::string id = first->id;
  EXPECT_EQ(Run(service_->SendMessage(ctx_, kit_message("start", "go")))->id, id);
  protocol::CallContext approver = ctx_;
  approver.principal.id = "approver";
  ASSERT_TRUE(Run(service_->SendMessage(approver, Message("r-ask", "ask", id))).ok());
  EXPECT_EQ(Run(service_->SendMessage(ctx_, kit_message("start", "go")))->id, id);
  EXPECT_EQ(inner_.Get(id).value()->dedup_key,
            A2aDedupKey("anonymous", "", "start", DedupRelease::kWhenAddressed));

  ASSERT_TRUE(Run(service_->SendMessage(ctx_, Message("r-ok", "accept", id))).ok());
  EXPECT_EQ(inner_.Get(id).value()->dedup_key, "");
  ExpectLogFoldsToSnapshot(id);
  auto fresh = Run(service_->SendMessage(ctx_, kit_message("start", "go")));
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_NE(fresh->id, id);
  EXPECT_EQ(Run(service_->SendMessage(ctx_, kit_message("start", "go")))->id, fresh->id);
  ASSERT_TRUE(Run(service_->CancelTask(ctx_, {"", fresh->id, {}})).ok());
  EXPECT_EQ(inner_.Get(fresh->id).value()->dedup_key, "");
  auto third = Run(service_->SendMessage(ctx_, kit_message("start", "go")));
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->id, fresh->id);
  // The same messageId for the gate skill is another key (its own skill's), kept.
  const std::string gated = Parked();
  ASSERT_TRUE(Run(service_->SendMessage(ctx_, Message("r-ok2", "accept", gated))).ok());
  EXPECT_EQ(Run(service_->SendMessage(ctx_, Message("start", "go")))->id, gated);
}

// A retried first message that carries a push config ensures it on the task the first
// attempt started (upserted: once, whatever the number of retries); a config without an id
// gets that task's id.
TEST_F(ReplyRetryTest, ARetriedFirstMessageEnsuresItsPushConfigOnTheTask) {
  TaskServiceOptions opts;
  opts.vet_push_config = [](protocol::PushNotificationConfig& c,
                            const std::string& task_id) -> asio::awaitable<core::Result<void>> {
    if (c.id.empty()) c.id = task_id;
    c.task_id = task_id;
    co_return core::Ok{};
  };
  Make(opts);
  const std::string id = Parked();  // "start", no push config
  EXPECT_TRUE(inner_.ListConfigs(id).value().empty());
  auto with_push = [](const std::string& config_id) {
    auto r = Message("start", "go");
    protocol::PushNotificationConfig c;
    c.id = config_id;
    c.url = "https://hooks.example/a2a";
    r.configuration.push_notification_config = c;
    return r;
  };
  const int64_t last = inner_.Get(id).value()->last_sequence;
  for (int i = 0; i < 2; ++i) {
    auto again = Run(service_->SendMessage(ctx_, with_push("")));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->id, id);
  }
  ASSERT_TRUE(Run(service_->SendMessage(ctx_, with_push("named"))).ok());
  auto configs = inner_.ListConfigs(id).value();
  ASSERT_EQ(configs.size(), 2u);
  std::set<std::string> ids;
  for (const auto& c : configs) {
    ids.insert(c.config.id);
    EXPECT_EQ(c.task_id, id);
    EXPECT_EQ(c.config.task_id, id);
  }
  EXPECT_EQ(ids, (std::set<std::string>{id, "named"}));
  EXPECT_EQ(inner_.Get(id).value()->last_sequence, last);  // no event: only the configs
}

TEST(AcceptedMessages, OnlyTheConformanceAgentsKeysNameACallerToReleaseThem) {
  EXPECT_EQ(ReleasableDedupKeyCaller(
                A2aDedupKey("alice", "ctx", "m-1", DedupRelease::kWhenAddressed)),
            "alice");
  EXPECT_EQ(ReleasableDedupKeyCaller(A2aDedupKey("alice", "ctx", "m-1")), "");
  EXPECT_EQ(ReleasableDedupKeyCaller(A2aDedupKey("", "", "", DedupRelease::kWhenAddressed)), "");
  EXPECT_EQ(ReleasableDedupKeyCaller("rest\nalice\nPOST /v1/runs\nk"), "");
  EXPECT_EQ(ReleasableDedupKeyCaller(""), "");
  EXPECT_EQ(ReleasableDedupKeyCaller("a2a-kit\nalice"), "");
  EXPECT_NE(A2aDedupKey("alice", "ctx", "m-1"),
            A2aDedupKey("alice", "ctx", "m-1", DedupRelease::kWhenAddressed));
}

// A2A asks for unique messageIds, but the A2A conformance kit sends several messages of one
// task under one messageId: the same messageId with other parts is another message (taken);
// each of them, sent again unchanged, is a retry.
TEST_F(ReplyRetryTest, AReusedMessageIdWithOtherPartsIsAnotherMessage) {
  Make();
  const std::string id = Parked();
  ASSERT_TRUE(Run(service_->SendMessage(ctx_, Message("r-1", "ask", id))).ok());
  auto retry = Run(service_->SendMessage(ctx_, Message("r-1", "ask", id)));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(Count(id, protocol::kEvMessageReceived), 1u);
  // The first message's id, with other parts, is another message too: it answers the gate.
  auto other = Run(service_->SendMessage(ctx_, Message("start", "accept", id)));
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->status.state, S::kCompleted);
  EXPECT_EQ(Count(id, protocol::kEvMessageReceived), 2u);
  // Every one of them is a retry now, even after the end (not -32004); nothing is written.
  const int64_t last = inner_.Get(id).value()->last_sequence;
  for (const auto& [mid, text] :
       {std::pair<const char*, const char*>{"r-1", "ask"}, {"start", "accept"}, {"start", "go"}}) {
    auto again = Run(service_->SendMessage(ctx_, Message(mid, text, id)));
    ASSERT_TRUE(again.ok()) << mid << " " << text << ": " << again.error().message;
    EXPECT_EQ(again->status.state, S::kCompleted);
  }
  EXPECT_EQ(inner_.Get(id).value()->last_sequence, last);
  // A new message into the finished task is refused as before.
  auto late = Run(service_->SendMessage(ctx_, Message("r-1", "reject", id)));
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, ErrorCode::kUnsupportedOperation);
  ExpectLogFoldsToSnapshot(id);
}

TEST_F(ReplyRetryTest, ARefusedReplyIsNotRememberedAndItsPushConfigIsNotWritten) {
  TaskServiceOptions opts;
  int made = 0;
  opts.vet_push_config = [&made](protocol::PushNotificationConfig& c,
                                 const std::string&) -> asio::awaitable<core::Result<void>> {
    if (c.id.empty()) c.id = "cfg-" + std::to_string(++made);
    co_return core::Ok{};
  };
  Make(opts);
  const std::string id = Parked();
  auto with_push = [&](const std::string& mid, const std::string& text) {
    auto r = Message(mid, text, id);
    protocol::PushNotificationConfig c;
    c.url = "https://hooks.example/a2a";
    r.configuration.push_notification_config = c;
    return r;
  };
  const int64_t last = inner_.Get(id).value()->last_sequence;
  for (int i = 0; i < 2; ++i) {
    auto bad = Run(service_->SendMessage(ctx_, with_push("r-bad", "bad")));
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(bad.error().details[0], (core::ErrorDetail{"field", "action"}));
  }
  EXPECT_EQ(inner_.Get(id).value()->last_sequence, last);
  EXPECT_TRUE(inner_.ListConfigs(id).value().empty());
  // The accepted reply writes its config once; its retry writes none.
  ASSERT_TRUE(Run(service_->SendMessage(ctx_, with_push("r-ask", "ask"))).ok());
  ASSERT_TRUE(Run(service_->SendMessage(ctx_, with_push("r-ask", "ask"))).ok());
  EXPECT_EQ(inner_.ListConfigs(id).value().size(), 1u);
  // The refused one, sent right, is accepted: refusals are not remembered.
  ASSERT_TRUE(Run(service_->SendMessage(ctx_, Message("r-bad", "accept", id))).ok());
}

TEST_F(ReplyRetryTest, TwoConcurrentIdenticalRepliesApplyOnce) {
  Make();
  const std::string id = Parked();
  std::optional<core::Result<protocol::Task>> a, b;
  asio::co_spawn(io_, service_->SendMessage(ctx_, Message("r-same", "accept", id)),
                 [&](std::exception_ptr, auto r) { a = r; });
  asio::co_spawn(io_, service_->SendMessage(ctx_, Message("r-same", "accept", id)),
                 [&](std::exception_ptr, auto r) { b = r; });
  Drain();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->ok()) << a->error().message;
  ASSERT_TRUE(b->ok()) << b->error().message;
  EXPECT_EQ((*a)->id, id);
  EXPECT_EQ((*b)->id, id);
  EXPECT_EQ((*a)->status.state, S::kCompleted);
  EXPECT_EQ((*b)->status.state, S::kCompleted);
  EXPECT_EQ(Count(id, protocol::kEvMessageReceived), 1u);
  EXPECT_EQ(Count(id, protocol::kEvApprovalReceived), 1u);
  EXPECT_EQ(Count(id, protocol::kEvRunCompleted), 1u);
  EXPECT_EQ(gate_->executions.load(), 2);  // the start and the one accepted reply
  ExpectLogFoldsToSnapshot(id);
}

// The retry sees the first reply before it is durable: it answers once that commit is.
TEST_F(ReplyRetryTest, ARetryRacingTheFirstRepliesCommitWaitsForIt) {
  Make();
  const std::string id = Parked();
  store_.hold = true;
  std::optional<core::Result<protocol::Task>> a, b;
  auto first = Message("r-fly", "ask", id);
  asio::co_spawn(io_, service_->SendMessage(ctx_, first),
                 [&](std::exception_ptr, auto r) { a = r; });
  io_.restart();
  for (int i = 0; i < 1000 && store_.held() == 0; ++i) io_.run_one();
  ASSERT_EQ(store_.held(), 1u) << "the first reply's commit is in flight";
  asio::co_spawn(io_, service_->SendMessage(ctx_, first),
                 [&](std::exception_ptr, auto r) { b = r; });
  for (int i = 0; i < 1000 && store_.held() < 2; ++i) io_.run_one();
  EXPECT_EQ(store_.held(), 2u) << "the retry waits behind it (an empty commit)";
  EXPECT_FALSE(b) << "answered before the reply it repeats was durable";
  store_.Release();
  Drain();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->ok() && b->ok());
  EXPECT_EQ((*b)->status.state, S::kInputRequired);
  EXPECT_EQ(Count(id, protocol::kEvApprovalAsked), 1u);
  ExpectLogFoldsToSnapshot(id);
}

// Snapshots written before run.acceptedMessages existed: the history answers.
TEST_F(ReplyRetryTest, ASnapshotWithoutTheLedgerIsAnsweredFromTheHistory) {
  Make();
  const std::string id = Parked();
  ASSERT_TRUE(Run(service_->SendMessage(ctx_, Message("r-old", "ask", id))).ok());
  storage::TaskCommit legacy;
  legacy.record = *inner_.Get(id).value();
  ASSERT_TRUE(legacy.record.run.accepted_messages);
  legacy.record.run.accepted_messages.reset();
  legacy.expected_last_sequence = legacy.record.last_sequence;
  bool ok = false;
  inner_.Commit(legacy, [&](core::Result<void> r) { ok = r.ok(); });
  ASSERT_TRUE(ok);
  Make();  // a new process: the service reads the snapshot from the store
  const int64_t last = inner_.Get(id).value()->last_sequence;
  auto again = Run(service_->SendMessage(ctx_, Message("r-old", "ask", id)));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(inner_.Get(id).value()->last_sequence, last);
  // Other parts under the same messageId: another message, taken.
  auto other = Run(service_->SendMessage(ctx_, Message("r-old", "accept", id)));
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->status.state, S::kCompleted);
}

TEST(AcceptedMessages, TheDigestIsOfThePartsInEitherWireVersionAndMemberOrder) {
  protocol::Message a;
  a.message_id = "m";
  a.role = protocol::Role::kUser;
  a.parts.push_back(
      protocol::Part::Data(json::parse(R"({"action": "accept", "n": {"x": 1, "y": 2}})")));
  protocol::Message b = a;
  b.parts[0].data = json::parse(R"({"n": {"y": 2, "x": 1}, "action": "accept"})");
  b.context_id = "other";  // not content
  b.metadata["trace"] = "t";
  EXPECT_EQ(MessageContentDigest(a), MessageContentDigest(b));
  auto v03 = protocol::v03::MessageFromJson(protocol::MessageToJson(a, protocol::Wire::kV03), "m");
  ASSERT_TRUE(v03.ok());
  EXPECT_EQ(MessageContentDigest(*v03), MessageContentDigest(a));
  protocol::Message c = a;
  c.parts[0].data = json::parse(R"({"action": "reject"})");
  EXPECT_NE(MessageContentDigest(c), MessageContentDigest(a));
  protocol::Message d = a;
  d.parts.push_back(protocol::Part::Text("and a note"));
  EXPECT_NE(MessageContentDigest(d), MessageContentDigest(a));
}

TEST(AcceptedMessages, TheDigestIsStableAcrossReleases) {
  // Snapshots keep these digests: a retry of a message accepted by an earlier release must
  // still read as the same content. The value is the one that release computed.
  protocol::Message m;
  m.message_id = "m";
  m.role = protocol::Role::kUser;
  m.parts.push_back(protocol::Part::Text("hello \"world\"\n"));
  m.parts.push_back(protocol::Part::Data(
      json::parse(R"({"z": [3, {"b": true, "a": null}], "a": 1.5, "m": "\u00e9"})")));
  protocol::Part file;
  file.kind = protocol::Part::Kind::kUrl;
  file.text = "https://example.com/a.pdf";
  file.media_type = "application/pdf";
  m.parts.push_back(file);
  EXPECT_EQ(MessageContentDigest(m), "YemwL2xmCDl5ykONCgaRtzZKEkN4gqE_WJuAn8JGVd8");
}

}  // namespace
}  // namespace a2ad::tasks
