// TaskService and the caller's context (task_service.hpp "Callers"): a task belongs to the
// tenant of the context that created it and is owned by its principal; another tenant's task
// is not found by any method and never listed; idempotency is per (tenant, principal);
// answers are recorded as the context's principal; the server's own work for a run acts with
// the run's context.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <mutex>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "gate_executor.hpp"
#include "run_on.hpp"

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using core::ErrorCode;
using protocol::CallContext;
using S = protocol::TaskState;

using testing::GateExecutor;
using testing::TextOf;

CallContext Of(const std::string& tenant, const std::string& principal) {
  CallContext c = CallContext::Anonymous(protocol::Binding::kJsonRpc, protocol::WireVersion::kV10);
  c.principal.tenant = tenant;
  c.principal.id = principal;
  c.principal.authenticated = true;
  return c;
}

class TaskServiceTenantTest : public ::testing::Test {
 protected:
  TaskServiceTenantTest() {
    service_ = std::make_unique<TaskService>(store_, clock_, *ids_, io_.get_executor(),
                                             TaskServiceOptions{});
    service_->RegisterSkill({"echo"}, std::make_shared<EchoExecutor>());
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

  static protocol::SendMessageRequest Send(const std::string& message_id, const std::string& text,
                                           const std::string& skill = "gate",
                                           const std::string& task_id = "") {
    protocol::SendMessageRequest r;
    r.message.message_id = message_id;
    r.message.role = protocol::Role::kUser;
    r.message.task_id = task_id;
    r.message.parts.push_back(protocol::Part::Text(text));
    if (task_id.empty()) r.message.metadata["skillId"] = skill;
    return r;
  }

  // A gate task of `ctx`, parked.
  std::string Parked(const CallContext& ctx, const std::string& message_id = "start") {
    auto t = Run(service_->SendMessage(ctx, Send(message_id, "go")));
    EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
    EXPECT_EQ(t->status.state, S::kInputRequired);
    return t->id;
  }

  static void ExpectNotFound(const core::Error& e) {
    EXPECT_EQ(e.code, ErrorCode::kTaskNotFound) << e.message;
  }

  std::vector<protocol::RunEvent> Log(const std::string& id) {
    return store_.ReadEvents(id, -1, 10000).value();
  }

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore store_;
  asio::io_context io_;
  std::shared_ptr<GateExecutor> gate_ = std::make_shared<GateExecutor>();
  std::unique_ptr<TaskService> service_;
  const CallContext alice_ = Of("acme", "alice");
  const CallContext bob_ = Of("acme", "bob");
  const CallContext carol_ = Of("globex", "carol");
};

TEST_F(TaskServiceTenantTest, ATaskIsItsCreatorsTenantsAndOwnedByItsPrincipal) {
  const std::string id = Parked(alice_);
  auto stored = store_.Get(id).value();
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->tenant, "acme");
  EXPECT_EQ(stored->owner, "alice");
  const auto log = Log(id);
  const protocol::RunEvent& first = log.front();
  EXPECT_EQ(first.payload.at("tenant"), "acme");  // the log says so (the record is its fold)
  EXPECT_EQ(first.payload.at("owner"), "alice");

  auto anonymous = CallContext::Anonymous(protocol::Binding::kRest, protocol::WireVersion::kV10);
  auto plain = Run(service_->SendMessage(anonymous, Send("m-plain", "hi", "echo")));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(store_.Get(plain->id).value()->tenant, "default");
  EXPECT_EQ(store_.Get(plain->id).value()->owner, "anonymous");
}

TEST_F(TaskServiceTenantTest, AnotherTenantsTaskIsNotFoundByAnyMethod) {
  const std::string id = Parked(alice_);
  ASSERT_TRUE(Run(service_->GetTask(alice_, {"", id, {}})).ok());
  ASSERT_TRUE(Run(service_->GetTask(bob_, {"", id, {}})).ok());  // same tenant, other user

  ExpectNotFound(Run(service_->GetTask(carol_, {"", id, {}})).error());
  ExpectNotFound(Run(service_->CancelTask(carol_, {"", id, {}})).error());
  ExpectNotFound(Run(service_->Subscribe(carol_, id, std::nullopt, 16)).error());
  ExpectNotFound(Run(service_->Subscribe(carol_, id, 0, 16)).error());
  ExpectNotFound(Run(service_->SendMessage(carol_, Send("r-1", "accept", "", id))).error());
  ExpectNotFound(
      Run(service_->SendStreamingMessage(carol_, Send("r-2", "accept", "", id), 16)).error());
  ResolveRequest answer;
  answer.resume_value = json::value("accept");
  answer.via = "rest";
  ExpectNotFound(Run(service_->ResolveInterrupt(carol_, id, answer)).error());
  ExpectNotFound(Run(service_->CancelRun(carol_, id, "no")).error());
  ExpectNotFound(Run(service_->SubscribeRunEvents(carol_, id, -1, 16)).error());
  auto record = Run(service_->GetRecord(carol_, id));
  ASSERT_TRUE(record.ok());
  EXPECT_FALSE(record->has_value());
  auto events = Run(service_->ReadEvents(carol_, id, -1, 100));
  ASSERT_TRUE(events.ok());
  EXPECT_TRUE(events->empty());
  EXPECT_EQ(Run(service_->WaitForRecord(
                carol_, id, [](const storage::TaskRecord&) { return true; },
                std::chrono::milliseconds(10))),
            nullptr);

  // Nothing of that touched the task: it is still parked, with its own log only.
  auto now = Run(service_->GetTask(alice_, {"", id, {}}));
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->status.state, S::kInputRequired);
  EXPECT_TRUE(gate_->callers.empty());
  EXPECT_EQ(Run(service_->SubscribeRunEvents(alice_, id, -1, 16))->backlog.size(), Log(id).size());
  EXPECT_EQ(Run(service_->CancelTask(alice_, {"", id, {}}))->status.state, S::kCanceled);
}

TEST_F(TaskServiceTenantTest, ListsAreTheCallersTenantsOnly) {
  const std::string a1 = Parked(alice_, "a1");
  const std::string a2 = Parked(bob_, "a2");
  const std::string g1 = Parked(carol_, "g1");
  auto ids = [](const protocol::ListTasksResponse& page) {
    std::vector<std::string> out;
    for (const auto& t : page.tasks) out.push_back(t.id);
    std::sort(out.begin(), out.end());
    return out;
  };
  auto acme = Run(service_->ListTasks(alice_, {}));
  ASSERT_TRUE(acme.ok());
  std::vector<std::string> want{a1, a2};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(ids(*acme), want);
  EXPECT_EQ(acme->total_size, 2);
  auto globex = Run(service_->ListTasks(carol_, {}));
  ASSERT_TRUE(globex.ok());
  EXPECT_EQ(ids(*globex), std::vector<std::string>{g1});
  // The request's own tenant field is not the caller's to choose.
  protocol::ListTasksRequest asks_for_acme;
  asks_for_acme.tenant = "acme";
  EXPECT_EQ(ids(*Run(service_->ListTasks(carol_, asks_for_acme))), std::vector<std::string>{g1});
  storage::TaskQuery q;
  q.tenant = "acme";  // ListRecords too: the context's tenant wins
  auto records = Run(service_->ListRecords(carol_, q));
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->records.size(), 1u);
  EXPECT_EQ(records->records[0].task.id, g1);
  auto nobody = Run(service_->ListTasks(Of("initech", "dave"), {}));
  ASSERT_TRUE(nobody.ok());
  EXPECT_TRUE(nobody->tasks.empty());
}

TEST_F(TaskServiceTenantTest, TheSameMessageIdIsOneTaskPerTenantAndPrincipal) {
  auto send = [&](const CallContext& ctx) {
    auto t = Run(service_->SendMessage(ctx, Send("m-1", "hello", "echo")));
    EXPECT_TRUE(t.ok());
    return t.ok() ? t->id : std::string();
  };
  const std::string by_alice = send(alice_);
  EXPECT_EQ(send(alice_), by_alice);  // a retry: the same task
  const std::string by_bob = send(bob_);
  const std::string by_carol = send(carol_);
  EXPECT_NE(by_bob, by_alice);
  EXPECT_NE(by_carol, by_alice);
  EXPECT_NE(by_carol, by_bob);
  auto all = store_.List([] {
    storage::TaskQuery q;
    q.all_tenants = true;
    return q;
  }());
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->total_size, 3);
}

TEST_F(TaskServiceTenantTest, IdempotencyKeysOfRunsArePerTenant) {
  auto start = [&](const CallContext& ctx) {
    StartRunRequest req;
    req.skill_id = "echo";
    req.dedup_key = "rest\n" + ctx.caller() + "\nPOST /v1/runs\nkey-1";
    auto r = Run(service_->StartRun(ctx, std::move(req)));
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::make_pair(r->record->task.id, r->replayed)
                  : std::make_pair(std::string(), false);
  };
  const auto first = start(alice_);
  EXPECT_FALSE(first.second);
  const auto again = start(alice_);
  EXPECT_TRUE(again.second);
  EXPECT_EQ(again.first, first.first);
  const auto other = start(Of("globex", "alice"));  // the same principal name elsewhere
  EXPECT_FALSE(other.second);
  EXPECT_NE(other.first, first.first);
  EXPECT_EQ(store_.Get(other.first).value()->tenant, "globex");
}

TEST_F(TaskServiceTenantTest, AnswersAreRecordedAsTheContextsPrincipal) {
  const std::string id = Parked(alice_);
  // An A2A reply by bob (same tenant): the reply event and the executor see bob.
  ASSERT_TRUE(Run(service_->SendMessage(bob_, Send("r-1", "ask", "", id))).ok());
  // A REST answer by alice.
  ResolveRequest answer;
  answer.resume_value = json::value("accept");
  answer.via = "rest";
  answer.caller = "forged";  // not the caller's to say: the context decides
  ASSERT_TRUE(Run(service_->ResolveInterrupt(alice_, id, answer)).ok());
  Drain();
  EXPECT_EQ(gate_->callers, (std::vector<std::string>{"bob", "alice"}));
  std::vector<std::string> decided;
  std::string reply_caller;
  for (const auto& e : Log(id)) {
    if (e.type == protocol::kEvApprovalAsked || e.type == protocol::kEvApprovalReceived)
      decided.push_back(std::string(e.payload.at("decidedBy").as_string()));
    if (e.type == protocol::kEvMessageReceived)
      reply_caller = std::string(e.payload.at("caller").as_string());
  }
  EXPECT_EQ(decided, (std::vector<std::string>{"bob", "alice"}));
  EXPECT_EQ(reply_caller, "bob");
  EXPECT_EQ(Run(service_->GetTask(alice_, {"", id, {}}))->status.state, S::kCompleted);
}

TEST_F(TaskServiceTenantTest, AReplysMessageIdIsIdempotentPerPrincipal) {
  const std::string id = Parked(alice_);
  // alice asks with r-1; her retry writes nothing; bob may use r-1 too (his own message).
  ASSERT_TRUE(Run(service_->SendMessage(alice_, Send("r-1", "ask", "", id))).ok());
  const size_t after_first = Log(id).size();
  ASSERT_TRUE(Run(service_->SendMessage(alice_, Send("r-1", "ask", "", id))).ok());
  EXPECT_EQ(Log(id).size(), after_first) << "a retry appends nothing";
  auto bobs = Run(service_->SendMessage(bob_, Send("r-1", "ask again", "", id)));
  ASSERT_TRUE(bobs.ok()) << bobs.error().message;
  EXPECT_GT(Log(id).size(), after_first) << "bob's r-1 is another message";
  // And each one's retry is still recognized afterwards.
  const size_t now = Log(id).size();
  ASSERT_TRUE(Run(service_->SendMessage(bob_, Send("r-1", "ask again", "", id))).ok());
  ASSERT_TRUE(Run(service_->SendMessage(alice_, Send("r-1", "ask", "", id))).ok());
  EXPECT_EQ(Log(id).size(), now);
}

TEST_F(TaskServiceTenantTest, TheServersOwnWorkActsWithTheRunsContext) {
  // An execution resumed by bob's reply acts for the run (alice's), not for bob.
  const std::string id = Parked(alice_);
  ASSERT_TRUE(Run(service_->SendMessage(bob_, Send("r-1", "accept", "", id))).ok());
  Drain();
  {
    std::lock_guard lock(gate_->mu);
    ASSERT_EQ(gate_->contexts.size(), 2u);
    for (const auto& c : gate_->contexts) {
      EXPECT_EQ(c.tenant(), "acme");
      EXPECT_EQ(c.caller(), "alice");
      EXPECT_EQ(c.binding, protocol::Binding::kInternal);
    }
    gate_->contexts.clear();
  }
  // Recovery after a restart: a task of another tenant, left submitted, is re-driven in
  // its own tenant (never the default one).
  storage::TaskCommit c;
  protocol::RunEvent e;
  e.event_id = "e0";
  e.run_id = "orphan";
  e.type = protocol::kEvTaskSubmitted;
  protocol::Message m;
  m.message_id = "m1";
  m.role = protocol::Role::kUser;
  m.parts.push_back(protocol::Part::Text("go"));
  e.payload["contextId"] = "c";
  e.payload["skillId"] = "gate";
  e.payload["message"] = protocol::MessageToJson(m);
  e.payload["tenant"] = "globex";
  e.payload["owner"] = "carol";
  e.timestamp_ms = 1;
  ASSERT_TRUE(ApplyEvent(c.record, e).ok());
  c.events.push_back(e);
  bool ok = false;
  store_.Commit(c, [&](core::Result<void> r) { ok = r.ok(); });
  ASSERT_TRUE(ok);
  TaskService restarted(store_, clock_, *ids_, io_.get_executor(), TaskServiceOptions{});
  restarted.RegisterSkill({"gate"}, gate_);
  auto n = restarted.RecoverUnfinished();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n.value(), 1u);
  Drain();
  {
    std::lock_guard lock(gate_->mu);
    ASSERT_EQ(gate_->contexts.size(), 1u);
    EXPECT_EQ(gate_->contexts[0].tenant(), "globex");
    EXPECT_EQ(gate_->contexts[0].caller(), "carol");
  }
  EXPECT_EQ(Run(restarted.GetTask(carol_, {"", "orphan", {}}))->status.state, S::kInputRequired);
  ExpectNotFound(Run(restarted.GetTask(alice_, {"", "orphan", {}})).error());
}

}  // namespace
}  // namespace a2ad::tasks
