// The pause extension on gRPC (a2ad.pause.v1.PauseService, proto/pause/v1/pause.proto),
// through the real binary: PauseTask, ResumeTask and AwaitTaskResumption answer the A2A 1.0
// Task (working, with metadata.pause: the proto has no paused state), and the extension's
// errors come as FAILED_PRECONDITION with their ErrorInfo reason.
#include <grpcpp/grpcpp.h>

#include "pause/v1/pause.grpc.pb.h"
#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "pause_fixture.hpp"

namespace a2ad::pause_test {
namespace {
namespace pv1 = a2ad::pause::v1;
namespace v1 = lf::a2a::v1;

class PauseGrpc : public PauseE2e {
 protected:
  PauseGrpc() { extra_args_ = {"--grpc-listen", "127.0.0.1:0"}; }
  std::unique_ptr<pv1::PauseService::Stub> Stub() {
    const json::value card =
        json::parse(client_->Request("GET", "/.well-known/agent-card.json").body);
    std::string address;
    for (const auto& i : card.at("additionalInterfaces").as_array())
      if (i.at("transport") == "GRPC") address = std::string(i.at("url").as_string());
    return pv1::PauseService::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  static std::string PauseField(const v1::Task& t, const std::string& key) {
    const auto& pause = t.metadata().fields().at("pause").struct_value().fields();
    return pause.at(key).string_value();
  }
};

TEST_F(PauseGrpc, PauseResumeAndAwaitOverGrpc) {
  auto stub = Stub();
  const std::string t = Send("slow", {{"delayMs", 60000}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  pv1::PauseTaskRequest pause;
  pause.set_id(t);
  pause.set_reason("review");
  v1::Task paused;
  {
    grpc::ClientContext c;
    grpc::Status st = stub->PauseTask(&c, pause, &paused);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  EXPECT_EQ(paused.id(), t);
  EXPECT_EQ(paused.status().state(), v1::TASK_STATE_WORKING);
  EXPECT_EQ(PauseField(paused, "state"), "paused-by-client");
  const std::string handle = PauseField(paused, "resumeToken");
  EXPECT_EQ(Status(t), "paused");
  // A wrong handle: FAILED_PRECONDITION, RESUME_HANDLE_MISMATCH.
  pv1::ResumeTaskRequest resume;
  resume.set_id(t);
  resume.set_handle("stale");
  v1::Task out;
  {
    grpc::ClientContext c;
    grpc::Status st = stub->ResumeTask(&c, resume, &out);
    EXPECT_EQ(st.error_code(), grpc::FAILED_PRECONDITION);
    EXPECT_NE(st.error_details().find("RESUME_HANDLE_MISMATCH"), std::string::npos);
  }
  resume.set_handle(handle);
  {
    grpc::ClientContext c;
    grpc::Status st = stub->ResumeTask(&c, resume, &out);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  EXPECT_FALSE(out.metadata().fields().contains("pause"));
  EXPECT_EQ(Status(t), "running");
  // An agent pause with a trigger: it resumes itself.
  pv1::AwaitTaskResumptionRequest await;
  await.set_id(t);
  (*(*await.mutable_conditions()->mutable_fields())["trigger"]
        .mutable_struct_value()
        ->mutable_fields())["afterMs"]
      .set_number_value(300);
  {
    grpc::ClientContext c;
    grpc::Status st = stub->AwaitTaskResumption(&c, await, &out);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  EXPECT_EQ(PauseField(out, "state"), "paused-by-agent");
  EXPECT_TRUE(WaitStatus(t, "running"));
  // A finished task: FAILED_PRECONDITION, TASK_NOT_PAUSABLE; an unknown one NOT_FOUND.
  const std::string done = Send("slow", {{"delayMs", 0}});
  ASSERT_TRUE(WaitStatus(done, "completed"));
  pause.set_id(done);
  {
    grpc::ClientContext c;
    grpc::Status st = stub->PauseTask(&c, pause, &out);
    EXPECT_EQ(st.error_code(), grpc::FAILED_PRECONDITION);
    EXPECT_NE(st.error_details().find("TASK_NOT_PAUSABLE"), std::string::npos);
  }
  pause.set_id("no-such-task");
  {
    grpc::ClientContext c;
    EXPECT_EQ(stub->PauseTask(&c, pause, &out).error_code(), grpc::NOT_FOUND);
  }
}

}  // namespace
}  // namespace a2ad::pause_test
