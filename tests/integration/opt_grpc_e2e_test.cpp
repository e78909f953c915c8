// The OPT extension on gRPC (a2ad.opt.v1.OptService, proto/opt/v1/opt.proto) through the real
// binary: every RPC, a plan executed with its objective followed on SubscribeObjective (a
// server stream ending after the final event), the errors as gRPC statuses with their
// ErrorInfo reason, and a call without the extension activated refused saying how.
#include <grpcpp/grpcpp.h>

#include <set>

#include "opt/v1/opt.grpc.pb.h"
#include "opt_fixture.hpp"

namespace a2ad {
namespace {
namespace ov1 = a2ad::opt::v1;
namespace json = boost::json;
using testing::kOpt;

class OptGrpc : public testing::OptFixture {
 protected:
  OptGrpc() { extra_args_ = {"--grpc-listen", "127.0.0.1:0"}; }
  void SetUp() override {
    OptFixture::SetUp();
    const json::value card =
        json::parse(client_->Request("GET", "/.well-known/agent-card.json").body);
    std::string address;
    for (const auto& i : card.at("additionalInterfaces").as_array())
      if (i.at("transport") == "GRPC") address = std::string(i.at("url").as_string());
    stub_ = ov1::OptService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  // A context with the extension activated (unless `activate` is false).
  static std::unique_ptr<grpc::ClientContext> Ctx(bool activate = true) {
    auto c = std::make_unique<grpc::ClientContext>();
    if (activate) c->AddMetadata("a2a-extensions", kOpt);
    return c;
  }
  std::unique_ptr<ov1::OptService::Stub> stub_;
};

TEST_F(OptGrpc, EveryRpcAndAPlanFollowedOnItsStream) {
  ov1::CreateObjectiveRequest create;
  create.set_name("over grpc");
  ov1::ObjectiveResponse made;
  ASSERT_TRUE(stub_->CreateObjective(Ctx().get(), create, &made).ok());
  const std::string id = made.objective().id();
  EXPECT_EQ(made.objective().status(), "submitted");
  EXPECT_GT(made.objective().created_at().seconds(), 0);
  // Follow it from its first event.
  auto stream_ctx = Ctx();
  ov1::SubscribeObjectiveRequest sub;
  sub.set_id(id);
  sub.set_after_sequence(-1);
  auto reader = stub_->SubscribeObjective(stream_ctx.get(), sub);
  // A plan of two runs, the second behind a gate.
  ov1::CreatePlanRequest plan;
  plan.set_objective_id(id);
  plan.set_name("p");
  plan.set_execute(true);
  auto* first = plan.add_tasks();
  first->set_name("work");
  first->set_skill("work");
  (*first->mutable_inputs()->mutable_fields())["delayMs"].set_number_value(20);
  auto* second = plan.add_tasks();
  second->set_name("approve");
  second->set_skill("gate");
  second->add_dependencies("task-0");
  ov1::PlanResponse planned;
  ASSERT_TRUE(stub_->CreatePlan(Ctx().get(), plan, &planned).ok());
  ASSERT_EQ(planned.plan().tasks_size(), 2);
  EXPECT_TRUE(planned.plan().execute());
  std::vector<int64_t> seqs;
  std::string gate_run;
  ov1::ObjectiveEvent e;
  while (gate_run.empty() && reader->Read(&e)) {
    seqs.push_back(e.sequence());
    if (e.kind() == "task" && e.status() == "input-required") gate_run = e.task().a2a_task_id();
  }
  ASSERT_FALSE(gate_run.empty());
  Answer(gate_run, id, "accept");
  bool last = false;
  while (reader->Read(&e)) {
    seqs.push_back(e.sequence());
    last = e.last();
  }
  EXPECT_TRUE(last);
  EXPECT_TRUE(reader->Finish().ok());
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], static_cast<int64_t>(i));
  // Get, list, plans.
  ov1::GetObjectiveRequest get;
  get.set_id(id);
  ov1::ObjectiveResponse got;
  ASSERT_TRUE(stub_->GetObjective(Ctx().get(), get, &got).ok());
  EXPECT_EQ(got.objective().status(), "completed");
  EXPECT_EQ(got.objective().plans(0).tasks(1).status(), "completed");
  ov1::ListObjectivesRequest list;
  list.set_status("completed");
  ov1::ListObjectivesResponse listed;
  ASSERT_TRUE(stub_->ListObjectives(Ctx().get(), list, &listed).ok());
  ASSERT_EQ(listed.objectives_size(), 1);
  EXPECT_EQ(listed.total_size(), 1);
  EXPECT_EQ(listed.objectives(0).id(), id);
  ov1::GetPlanRequest get_plan;
  get_plan.set_id(planned.plan().id());
  get_plan.set_include_tasks(false);
  ov1::PlanResponse plan_got;
  ASSERT_TRUE(stub_->GetPlan(Ctx().get(), get_plan, &plan_got).ok());
  EXPECT_EQ(plan_got.plan().status(), "completed");
  EXPECT_EQ(plan_got.plan().tasks_size(), 0);
}

TEST_F(OptGrpc, TrackingByHandAndTheErrors) {
  ov1::CreateObjectiveRequest create;
  create.set_name("by hand");
  ov1::ObjectiveResponse made;
  ASSERT_TRUE(stub_->CreateObjective(Ctx().get(), create, &made).ok());
  const std::string id = made.objective().id();
  ov1::CreatePlanRequest plan;
  plan.set_objective_id(id);
  plan.set_name("p");
  plan.add_tasks()->set_name("a");
  plan.add_tasks()->set_name("b");
  ov1::PlanResponse planned;
  ASSERT_TRUE(stub_->CreatePlan(Ctx().get(), plan, &planned).ok());
  ov1::LinkTaskRequest link;
  link.set_plan_task_id(planned.plan().tasks(0).id());
  link.set_a2a_task_id("remote-1");
  ov1::PlanTaskResponse linked;
  ASSERT_TRUE(stub_->LinkTask(Ctx().get(), link, &linked).ok());
  EXPECT_EQ(linked.task().a2a_task_id(), "remote-1");
  ov1::UpdateTaskStatusRequest report;
  report.set_plan_task_id(planned.plan().tasks(0).id());
  report.set_status("TASK_STATE_INPUT_REQUIRED");
  ov1::PlanTaskResponse reported;
  ASSERT_TRUE(stub_->UpdateTaskStatus(Ctx().get(), report, &reported).ok());
  EXPECT_EQ(reported.task().status(), "input-required");
  ov1::UpdatePlanRequest skip;
  skip.set_id(planned.plan().id());
  skip.set_status("skipped");
  ov1::PlanResponse skipped;
  ASSERT_TRUE(stub_->UpdatePlan(Ctx().get(), skip, &skipped).ok());
  EXPECT_EQ(skipped.plan().status(), "skipped");
  ov1::UpdateObjectiveRequest rename;
  rename.set_id(id);
  rename.set_name("renamed");
  ov1::ObjectiveResponse renamed;
  ASSERT_TRUE(stub_->UpdateObjective(Ctx().get(), rename, &renamed).ok());
  EXPECT_EQ(renamed.objective().name(), "renamed");
  EXPECT_EQ(renamed.objective().status(), "completed");  // its one plan was skipped
  // Errors: a status change of something finished, an unknown id, bad params, no activation.
  ov1::UpdateObjectiveRequest cancel;
  cancel.set_id(id);
  cancel.set_status("canceled");
  ov1::ObjectiveResponse out;
  grpc::Status st = stub_->UpdateObjective(Ctx().get(), cancel, &out);
  EXPECT_EQ(st.error_code(), grpc::FAILED_PRECONDITION);
  EXPECT_NE(st.error_details().find("OPT_INVALID_STATUS_TRANSITION"), std::string::npos);
  ov1::GetObjectiveRequest missing;
  missing.set_id("obj-nope");
  st = stub_->GetObjective(Ctx().get(), missing, &out);
  EXPECT_EQ(st.error_code(), grpc::NOT_FOUND);
  EXPECT_NE(st.error_details().find("OPT_NOT_FOUND"), std::string::npos);
  ov1::CreateObjectiveRequest nameless;
  st = stub_->CreateObjective(Ctx().get(), nameless, &out);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_NE(st.error_message().find("params.name"), std::string::npos);
  st = stub_->CreateObjective(Ctx(false).get(), create, &out);
  EXPECT_NE(st.error_code(), grpc::OK);
  EXPECT_NE(st.error_message().find("a2a-opt"), std::string::npos) << st.error_message();
}

}  // namespace
}  // namespace a2ad
