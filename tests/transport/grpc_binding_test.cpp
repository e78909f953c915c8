// The gRPC binding over real HTTP/2 on loopback, driven by the generated lf.a2a.v1 client
// stub: unary calls, server streams, errors as statuses with a google.rpc.ErrorInfo in
// grpc-status-details-bin, version and extension metadata.
#include "a2ad/transport/a2a/grpc/grpc_binding.hpp"

#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "google/rpc/status.pb.h"
#include "grpc_test_server.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"

namespace a2ad::transport {
namespace {
namespace v1 = lf::a2a::v1;

constexpr const char* kGeo = a2ad::testing::kGeoExtension;

class GrpcBindingTest : public ::testing::Test {
 protected:
  static v1::SendMessageRequest Send(const std::string& text) {
    v1::SendMessageRequest req;
    v1::Message* m = req.mutable_message();
    m->set_message_id("m-" + text);
    m->set_role(v1::ROLE_USER);
    m->add_parts()->set_text(text);
    return req;
  }

  static google::rpc::ErrorInfo InfoOf(const grpc::Status& st) {
    return a2ad::testing::ErrorInfoOf(st);
  }

  // Push is not enabled on this server.
  a2ad::testing::GrpcTestServer server_{a2ad::testing::ServerOptions{.serve_push = false}};
  std::unique_ptr<v1::A2AService::Stub> stub_ = v1::A2AService::NewStub(server_.channel);
};

TEST_F(GrpcBindingTest, SendMessageGetTaskAndListTasks) {
  grpc::ClientContext c1;
  v1::SendMessageResponse sent;
  ASSERT_TRUE(stub_->SendMessage(&c1, Send("hello grpc"), &sent).ok());
  ASSERT_TRUE(sent.has_task());
  EXPECT_EQ(sent.task().status().state(), v1::TASK_STATE_COMPLETED);
  ASSERT_EQ(sent.task().artifacts_size(), 1);
  EXPECT_EQ(sent.task().artifacts(0).parts(0).text(), "hello grpc");

  grpc::ClientContext c2;
  v1::GetTaskRequest get;
  get.set_id(sent.task().id());
  v1::Task got;
  ASSERT_TRUE(stub_->GetTask(&c2, get, &got).ok());
  EXPECT_EQ(got.id(), sent.task().id());
  EXPECT_EQ(got.context_id(), sent.task().context_id());

  grpc::ClientContext c3;
  v1::ListTasksRequest list;
  list.set_context_id(sent.task().context_id());
  v1::ListTasksResponse page;
  ASSERT_TRUE(stub_->ListTasks(&c3, list, &page).ok());
  ASSERT_EQ(page.tasks_size(), 1);
  EXPECT_EQ(page.tasks(0).id(), sent.task().id());
}

TEST_F(GrpcBindingTest, ErrorsAreStatusesWithErrorInfo) {
  grpc::ClientContext c1;
  v1::GetTaskRequest get;
  get.set_id("no-such-task");
  v1::Task got;
  grpc::Status st = stub_->GetTask(&c1, get, &got);
  EXPECT_EQ(st.error_code(), grpc::NOT_FOUND) << st.error_message();
  google::rpc::ErrorInfo info = InfoOf(st);
  EXPECT_EQ(info.reason(), "TASK_NOT_FOUND");
  EXPECT_EQ(info.domain(), "a2a-protocol.org");

  // A finished task cannot be canceled.
  grpc::ClientContext c2;
  v1::SendMessageResponse sent;
  ASSERT_TRUE(stub_->SendMessage(&c2, Send("done"), &sent).ok());
  grpc::ClientContext c3;
  v1::CancelTaskRequest cancel;
  cancel.set_id(sent.task().id());
  st = stub_->CancelTask(&c3, cancel, &got);
  EXPECT_EQ(st.error_code(), grpc::FAILED_PRECONDITION) << st.error_message();
  EXPECT_EQ(InfoOf(st).reason(), "TASK_NOT_CANCELABLE");

  // A message without parts is invalid.
  grpc::ClientContext c4;
  v1::SendMessageRequest empty;
  empty.mutable_message()->set_message_id("m-empty");
  empty.mutable_message()->set_role(v1::ROLE_USER);
  st = stub_->SendMessage(&c4, empty, &sent);
  EXPECT_EQ(st.error_code(), grpc::INVALID_ARGUMENT) << st.error_message();

  // Push is not enabled on this server.
  grpc::ClientContext c5;
  v1::TaskPushNotificationConfig cfg;
  cfg.set_task_id(sent.task().id());
  cfg.set_url("https://example.com/h");
  v1::TaskPushNotificationConfig out;
  st = stub_->CreateTaskPushNotificationConfig(&c5, cfg, &out);
  EXPECT_EQ(st.error_code(), grpc::UNIMPLEMENTED) << st.error_message();
  EXPECT_EQ(InfoOf(st).reason(), "PUSH_NOTIFICATION_NOT_SUPPORTED");
}

TEST_F(GrpcBindingTest, AnUnsupportedVersionIsUnimplemented) {
  grpc::ClientContext c;
  c.AddMetadata("a2a-version", "99.0");
  v1::SendMessageResponse sent;
  grpc::Status st = stub_->SendMessage(&c, Send("v99"), &sent);
  EXPECT_EQ(st.error_code(), grpc::UNIMPLEMENTED);
  EXPECT_EQ(InfoOf(st).reason(), "VERSION_NOT_SUPPORTED");
  grpc::ClientContext ok;
  ok.AddMetadata("a2a-version", "1.0");
  EXPECT_TRUE(stub_->SendMessage(&ok, Send("v1"), &sent).ok());
}

TEST_F(GrpcBindingTest, ActivatedExtensionsAreEchoedInTheInitialMetadata) {
  grpc::ClientContext c;
  c.AddMetadata("a2a-extensions", std::string(kGeo) + ", https://other.example/x");
  v1::SendMessageResponse sent;
  ASSERT_TRUE(stub_->SendMessage(&c, Send("ext"), &sent).ok());
  const auto& md = c.GetServerInitialMetadata();
  auto it = md.find("a2a-extensions");
  ASSERT_NE(it, md.end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), kGeo);
}

TEST_F(GrpcBindingTest, SendStreamingMessageStreamsTheTaskToItsEnd) {
  grpc::ClientContext c;
  auto reader = stub_->SendStreamingMessage(&c, Send("streamed"));
  std::vector<v1::StreamResponse> events;
  v1::StreamResponse ev;
  while (reader->Read(&ev)) events.push_back(ev);
  grpc::Status st = reader->Finish();
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_TRUE(events[0].has_task());
  EXPECT_EQ(events[1].status_update().status().state(), v1::TASK_STATE_WORKING);
  EXPECT_EQ(events[2].artifact_update().artifact().parts(0).text(), "streamed");
  EXPECT_EQ(events[3].status_update().status().state(), v1::TASK_STATE_COMPLETED);

  // Subscribing to the finished task is refused, as on the other bindings.
  grpc::ClientContext c2;
  v1::SubscribeToTaskRequest sub;
  sub.set_id(events[0].task().id());
  auto again = stub_->SubscribeToTask(&c2, sub);
  EXPECT_FALSE(again->Read(&ev));
  st = again->Finish();
  EXPECT_EQ(st.error_code(), grpc::UNIMPLEMENTED) << st.error_message();
  EXPECT_EQ(InfoOf(st).reason(), "UNSUPPORTED_OPERATION");
}

// Debian's Abseil is built without NDEBUG: its mutexes check every lock for lock-order cycles
// and abort the process on a suspected one, unless told to ignore them. A server that serves
// gRPC has told it (GrpcBinding::Listen): two mutexes taken in both orders, which Abseil
// reports as a potential deadlock, do not end the process.
TEST_F(GrpcBindingTest, AbseilMayNotAbortTheServer) {
  ASSERT_TRUE(server_.channel);
  const auto lock_both_ways = [] {
    absl::Mutex a;
    absl::Mutex b;
    a.Lock();
    b.Lock();
    b.Unlock();
    a.Unlock();
    b.Lock();
    a.Lock();  // the reverse order: a cycle in Abseil's lock graph
    a.Unlock();
    b.Unlock();
    std::exit(0);
  };
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the server's threads are running
  EXPECT_EXIT(lock_both_ways(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace a2ad::transport
