// The engine's own work for a run (child runs, interrupt timeouts, answers) goes through
// TaskService with the run's context (tasks::ExecutionContext::call_context): a run of tenant
// "acme" starts its children in "acme", owned by the same principal, and its timeouts find
// it there; nothing lands in the default tenant by accident.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <thread>

#include "harness.hpp"
#include "run_on.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;
using protocol::CallContext;

CallContext Acme(const std::string& principal) {
  CallContext c = CallContext::Anonymous(protocol::Binding::kRest, protocol::WireVersion::kV10);
  c.principal.tenant = "acme";
  c.principal.id = principal;
  return c;
}

std::shared_ptr<const Workflow> Named(json::object doc, const std::string& id) {
  doc["id"] = id;
  return Parse(doc);
}

class EngineTenantTest : public ::testing::Test {
 protected:
  void Register(std::shared_ptr<const Workflow> wf) {
    ASSERT_NE(wf, nullptr);
    tasks::SkillInfo info;
    info.id = wf->id;
    info.definition = wf->definition;
    service_.RegisterSkill(std::move(info), std::make_shared<WorkflowExecutor>(
                                                wf, service_, tokens_, clock_, EngineOptions{}));
  }
  template <class T>
  T Run(asio::awaitable<T> aw) {
    return a2ad::testing::RunOn(io_, std::move(aw));
  }
  // Runs the loop until the run's status is `status` (timers fire in real time).
  storage::TaskRecord WaitStatus(const CallContext& ctx, const std::string& id,
                                 const std::string& status) {
    for (int i = 0; i < 500; ++i) {
      auto rec = Run(service_.GetRecord(ctx, id));
      if (rec.ok() && rec.value() && rec.value()->run.status == status) return *rec.value();
      io_.restart();
      io_.run_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << "run " << id << " never became " << status;
    return {};
  }

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore store_;
  asio::io_context io_;
  InterruptTokens tokens_{"test-secret"};
  tasks::TaskService service_{store_, clock_, *ids_, io_.get_executor(),
                              tasks::TaskServiceOptions{}};
};

TEST_F(EngineTenantTest, ChildRunsAndTimeoutsStayInTheRunsTenant) {
  // The child waits for an event that never comes; its interrupt times out, failing it.
  Register(Named(Doc(json::array{NodeDoc("wait", "core.interrupt",
                                         json::object{{"kind", "external-event"},
                                                      {"data", json::object{{"eventType", "x"}}},
                                                      {"timeoutMs", 30}})}),
                 "child"));
  Register(Named(Doc(json::array{NodeDoc("call", "core.subWorkflow",
                                         json::object{{"workflowId", "child"},
                                                      {"waitForCompletion", true},
                                                      {"onChildFailure", "absorb"}})}),
                 "parent"));
  const CallContext alice = Acme("alice");
  tasks::StartRunRequest req;
  req.skill_id = "parent";
  auto started = Run(service_.StartRun(alice, std::move(req)));
  ASSERT_TRUE(started.ok()) << started.error().message;
  const std::string parent_id = started->record->task.id;
  const storage::TaskRecord parent = WaitStatus(alice, parent_id, "completed");

  ASSERT_FALSE(parent.run.child_runs.empty());
  const std::string child_id = parent.run.child_runs[0].run_id;
  auto child = Run(service_.GetRecord(alice, child_id));
  ASSERT_TRUE(child.ok() && child.value());
  EXPECT_EQ(child.value()->tenant, "acme");
  EXPECT_EQ(child.value()->owner, "alice");
  EXPECT_EQ(child.value()->run.status, "failed");
  EXPECT_EQ(StrOf(protocol::OrEmpty(child.value()->run.error), "code"), "interrupt_timeout");
  // The timeout answered as the server, in the child's tenant.
  auto events = Run(service_.ReadEvents(alice, child_id, -1, 1000));
  ASSERT_TRUE(events.ok());
  std::string resolved_by;
  for (const auto& e : *events)
    if (e.type == protocol::kEvInterruptResolved) resolved_by = StrOf(e.payload, "resolvedBy");
  EXPECT_EQ(resolved_by, "system:timeout");
  // Nothing of it is visible from the default tenant.
  const auto anonymous =
      CallContext::Anonymous(protocol::Binding::kRest, protocol::WireVersion::kV10);
  EXPECT_FALSE(Run(service_.GetRecord(anonymous, child_id)).value().has_value());
  EXPECT_FALSE(Run(service_.GetRecord(anonymous, parent_id)).value().has_value());
}

TEST_F(EngineTenantTest, AnApprovalIsDecidedByTheAnsweringPrincipal) {
  Register(Named(
      Doc(json::array{NodeDoc("gate", "core.approvalGate", json::object{{"title", "Ship it?"}})}),
      "approve"));
  tasks::StartRunRequest req;
  req.skill_id = "approve";
  auto started = Run(service_.StartRun(Acme("alice"), std::move(req)));
  ASSERT_TRUE(started.ok());
  const std::string id = started->record->task.id;
  WaitStatus(Acme("alice"), id, "waiting-approval");
  tasks::ResolveRequest answer;
  answer.resume_value = json::value(json::object{{"action", "accept"}});
  answer.via = "rest";
  const auto anonymous =
      CallContext::Anonymous(protocol::Binding::kRest, protocol::WireVersion::kV10);
  auto refused = Run(service_.ResolveInterrupt(anonymous, id, answer));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kTaskNotFound);
  auto done = Run(service_.ResolveInterrupt(Acme("bob"), id, answer));
  ASSERT_TRUE(done.ok()) << done.error().message;
  WaitStatus(Acme("alice"), id, "completed");
  std::string decided_by;
  auto events = Run(service_.ReadEvents(Acme("alice"), id, -1, 1000));
  ASSERT_TRUE(events.ok());
  for (const auto& e : events.value())
    if (e.type == protocol::kEvApprovalReceived) decided_by = StrOf(e.payload, "decidedBy");
  EXPECT_EQ(decided_by, "bob");
}

}  // namespace
}  // namespace a2ad::workflow
