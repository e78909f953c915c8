// The A2A 0.3 gRPC service (a2a.v1.A2AService, grpc_service_v03.cpp) over real HTTP/2 on
// loopback, driven by the generated a2a.v1 client stub: every RPC, answers compared as
// ProtoJSON goldens (sequential ids, a clock that stands still), every error as its status
// code, its "<0.3 error class>: " message and its google.rpc.ErrorInfo; version and extension
// metadata; the 1.0 service on the same port; and every 0.3 ProtoJSON encoding parsed by
// protobuf itself with unknown fields refused.
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "a2a/v1/a2a.grpc.pb.h"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/v03/proto_json.hpp"
#include "grpc_test_server.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"

namespace a2ad::transport {
namespace {
namespace v03 = ::a2a::v1;
namespace json = boost::json;

constexpr const char* kGeo = testing::kGeoExtension;

std::string Json(const google::protobuf::Message& m) {
  std::string out;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &out).ok());
  return out;
}

/// ProtoJSON text as a value: protobuf prints a Struct's members (metadata) in no fixed
/// order, and json::object equality does not depend on it.
json::value Value(std::string_view text) {
  auto v = protocol::ParseJson(text);
  EXPECT_TRUE(v) << text;
  return v ? *v : json::value();
}

class GrpcV03Test : public ::testing::Test {
 protected:
  void Start(bool serve_v03 = true, bool serve_push = true) {
    server_ = std::make_unique<testing::GrpcTestServer>(
        testing::ServerOptions{.serve_v03 = serve_v03, .serve_push = serve_push});
    stub_ = v03::A2AService::NewStub(server_->channel);
    v10_stub_ = lf::a2a::v1::A2AService::NewStub(server_->channel);
  }

  static v03::SendMessageRequest Send(const std::string& id, const std::string& text,
                                      const std::string& skill = "") {
    v03::SendMessageRequest req;
    v03::Message* m = req.mutable_request();
    m->set_message_id(id);
    m->set_role(v03::ROLE_USER);
    m->add_content()->set_text(text);
    if (!skill.empty())
      (*m->mutable_metadata()->mutable_fields())["skillId"].set_string_value(skill);
    return req;
  }

  v03::SendMessageResponse SendOk(const v03::SendMessageRequest& req) {
    grpc::ClientContext c;
    v03::SendMessageResponse resp;
    const grpc::Status st = stub_->SendMessage(&c, req, &resp);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return resp;
  }

  /// The status's code, message and ErrorInfo reason, as one line.
  static std::string Describe(const grpc::Status& st) {
    const google::rpc::ErrorInfo info = testing::ErrorInfoOf(st);
    return std::to_string(st.error_code()) + " " + info.reason() + " " + st.error_message();
  }

  template <class Call>
  std::vector<v03::StreamResponse> Drain(Call&& open, grpc::Status* status) {
    grpc::ClientContext c;
    auto reader = open(&c);
    std::vector<v03::StreamResponse> events;
    v03::StreamResponse ev;
    while (reader->Read(&ev)) events.push_back(ev);
    *status = reader->Finish();
    return events;
  }

  std::unique_ptr<testing::GrpcTestServer> server_;
  std::unique_ptr<v03::A2AService::Stub> stub_;
  std::unique_ptr<lf::a2a::v1::A2AService::Stub> v10_stub_;
};

TEST_F(GrpcV03Test, SendGetAndCancel) {
  Start();
  EXPECT_EQ(Value(Json(SendOk(Send("m1", "hello grpc")))),
            Value(R"({"task":{"id":"id-0001","contextId":"id-0002","status":{"state":)"
                  R"("TASK_STATE_COMPLETED","timestamp":"2026-01-01T10:00:00Z"},"artifacts":[{)"
                  R"("artifactId":"id-0001-echo","name":"echo","parts":[{"text":"hello grpc"}]}],)"
                  R"("history":[{"messageId":"m1","contextId":"id-0002","taskId":"id-0001",)"
                  R"("role":"ROLE_USER","content":[{"text":"hello grpc"}]}],"metadata":{)"
                  R"("generation":4,"openwop":{"runId":"id-0001","skillId":"echo"}}}})"));

  grpc::ClientContext c1;
  v03::GetTaskRequest get;
  get.set_name("tasks/id-0001");
  get.set_history_length(1);
  v03::Task task;
  ASSERT_TRUE(stub_->GetTask(&c1, get, &task).ok());
  EXPECT_EQ(task.id(), "id-0001");
  EXPECT_EQ(task.history_size(), 1);

  // A direct reply is SendMessageResponse.msg.
  EXPECT_EQ(Json(SendOk(Send("tck-message-response-1", "hi", "tck"))),
            R"({"message":{"messageId":"id-0007","contextId":"id-0008","role":"ROLE_AGENT",)"
            R"("content":[{"text":"Direct message response"}]}})");

  // A parked task cancels to TASK_STATE_CANCELLED, and then is not cancelable (0.3).
  const v03::SendMessageResponse parked = SendOk(Send("m2", "start", "gate"));
  EXPECT_EQ(parked.task().status().state(), v03::TASK_STATE_INPUT_REQUIRED);
  EXPECT_EQ(parked.task().status().update().content(0).text(), "Which colour?");
  grpc::ClientContext c2;
  v03::CancelTaskRequest cancel;
  cancel.set_name("tasks/" + parked.task().id());
  ASSERT_TRUE(stub_->CancelTask(&c2, cancel, &task).ok());
  EXPECT_EQ(task.status().state(), v03::TASK_STATE_CANCELLED);
  grpc::ClientContext c3;
  EXPECT_EQ(Describe(stub_->CancelTask(&c3, cancel, &task)),
            "9 TASK_NOT_CANCELABLE TaskNotCancelableError: task " + parked.task().id() +
                " is canceled and can no longer be canceled");
}

TEST_F(GrpcV03Test, ErrorsAreStatusesNamedByTheirZeroThreeClass) {
  Start();
  v03::Task task;
  grpc::ClientContext c1;
  v03::GetTaskRequest get;
  get.set_name("tasks/nope");
  EXPECT_EQ(Describe(stub_->GetTask(&c1, get, &task)),
            "5 TASK_NOT_FOUND TaskNotFoundError: task nope not found");
  grpc::ClientContext c2;
  get.set_name("nope");
  EXPECT_EQ(Describe(stub_->GetTask(&c2, get, &task)),
            "3 INVALID_PARAMS InvalidParamsError: name: expected \"tasks/{id}\"");
  grpc::ClientContext c3;
  v03::SendMessageRequest empty = Send("m1", "x");
  empty.mutable_request()->clear_content();
  v03::SendMessageResponse resp;
  EXPECT_EQ(Describe(stub_->SendMessage(&c3, empty, &resp)),
            "3 INVALID_PARAMS InvalidParamsError: message.content: required field is missing (at "
            "least one part)");
  grpc::ClientContext c4;
  const v03::SendMessageResponse done = SendOk(Send("m2", "done"));
  v03::CancelTaskRequest cancel;
  cancel.set_name("tasks/" + done.task().id());
  EXPECT_EQ(Describe(stub_->CancelTask(&c4, cancel, &task)),
            "9 TASK_NOT_CANCELABLE TaskNotCancelableError: task " + done.task().id() +
                " is completed and can no longer be canceled");
  grpc::ClientContext c5;
  v03::SendMessageRequest more = Send("m3", "more");
  more.mutable_request()->set_task_id(done.task().id());
  EXPECT_EQ(Describe(stub_->SendMessage(&c5, more, &resp)),
            "12 UNSUPPORTED_OPERATION UnsupportedOperationError: task " + done.task().id() +
                " is completed and accepts no more messages; start a new task in the same "
                "context");
  grpc::ClientContext c6;
  v03::AgentCard card;
  EXPECT_EQ(Describe(stub_->GetAgentCard(&c6, v03::GetAgentCardRequest(), &card)),
            "12 UNSUPPORTED_OPERATION UnsupportedOperationError: "
            "agent/getAuthenticatedExtendedCard: the extended agent card is served to "
            "authenticated callers only, and this server has no credential configured "
            "(development mode)");
}

TEST_F(GrpcV03Test, StreamsEndWithFinalAndSubscribeReplaysAFinishedTask) {
  Start();
  grpc::Status st;
  auto events = Drain(
      [&](grpc::ClientContext* c) { return stub_->SendStreamingMessage(c, Send("m1", "s")); }, &st);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].task().status().state(), v03::TASK_STATE_SUBMITTED);
  EXPECT_EQ(Value(Json(events[1])),
            Value(R"({"statusUpdate":{"taskId":"id-0001","contextId":"id-0002","status":{)"
                  R"("state":"TASK_STATE_WORKING","timestamp":"2026-01-01T10:00:00Z"},)"
                  R"("metadata":{"openwop":{"runId":"id-0001","skillId":"echo"},"generation":2}}})"));
  EXPECT_EQ(Value(Json(events[2])),
            Value(R"({"artifactUpdate":{"taskId":"id-0001","contextId":"id-0002","artifact":{)"
                  R"("artifactId":"id-0001-echo","name":"echo","parts":[{"text":"s"}]},)"
                  R"("lastChunk":true,"metadata":{"generation":3}}})"));
  EXPECT_TRUE(events[3].status_update().final());
  EXPECT_EQ(events[3].status_update().status().state(), v03::TASK_STATE_COMPLETED);

  // A stream that parks ends at input-required, final.
  events = Drain(
      [&](grpc::ClientContext* c) {
        return stub_->SendStreamingMessage(c, Send("m2", "go", "gate"));
      },
      &st);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().status_update().status().state(), v03::TASK_STATE_INPUT_REQUIRED);
  EXPECT_TRUE(events.back().status_update().final());

  // TaskSubscription of a finished task gives the task and ends (0.3; 1.0 refuses it).
  v03::TaskSubscriptionRequest sub;
  sub.set_name("tasks/id-0001");
  events = Drain([&](grpc::ClientContext* c) { return stub_->TaskSubscription(c, sub); }, &st);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].task().status().state(), v03::TASK_STATE_COMPLETED);

  sub.set_name("tasks/nope");
  events = Drain([&](grpc::ClientContext* c) { return stub_->TaskSubscription(c, sub); }, &st);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(Describe(st), "5 TASK_NOT_FOUND TaskNotFoundError: task nope not found");
}

TEST_F(GrpcV03Test, PushConfigCrud) {
  Start();
  const std::string task = SendOk(Send("m1", "x")).task().id();
  grpc::ClientContext c1;
  v03::CreateTaskPushNotificationConfigRequest create;
  create.set_parent("tasks/" + task);
  create.set_config_id("c1");
  v03::PushNotificationConfig* pc = create.mutable_config()->mutable_push_notification_config();
  pc->set_url("https://example.com/hook");
  pc->set_token("tok");
  pc->mutable_authentication()->add_schemes("Bearer");
  pc->mutable_authentication()->set_credentials("secret");
  v03::TaskPushNotificationConfig made;
  ASSERT_TRUE(stub_->CreateTaskPushNotificationConfig(&c1, create, &made).ok());
  EXPECT_EQ(Json(made),
            R"({"name":"tasks/id-0001/pushNotificationConfigs/c1","pushNotificationConfig":{)"
            R"("id":"c1","url":"https://example.com/hook","token":"tok","authentication":{)"
            R"("schemes":["Bearer"]}}})");

  grpc::ClientContext c2;
  v03::GetTaskPushNotificationConfigRequest get;
  get.set_name("tasks/" + task + "/pushNotificationConfigs/c1");
  v03::TaskPushNotificationConfig got;
  ASSERT_TRUE(stub_->GetTaskPushNotificationConfig(&c2, get, &got).ok());
  EXPECT_EQ(Json(got), Json(made));

  grpc::ClientContext c3;
  v03::ListTaskPushNotificationConfigRequest list;
  list.set_parent("tasks/" + task);
  v03::ListTaskPushNotificationConfigResponse page;
  ASSERT_TRUE(stub_->ListTaskPushNotificationConfig(&c3, list, &page).ok());
  ASSERT_EQ(page.configs_size(), 1);
  EXPECT_EQ(Json(page.configs(0)), Json(made));

  grpc::ClientContext c4;
  v03::DeleteTaskPushNotificationConfigRequest del;
  del.set_name(get.name());
  google::protobuf::Empty empty;
  ASSERT_TRUE(stub_->DeleteTaskPushNotificationConfig(&c4, del, &empty).ok());
  grpc::ClientContext c5;
  EXPECT_EQ(Describe(stub_->GetTaskPushNotificationConfig(&c5, get, &got)),
            "5 TASK_NOT_FOUND TaskNotFoundError: task " + task +
                " has no push notification config 'c1'");
  grpc::ClientContext c6;
  create.set_parent("tasks/nope");
  EXPECT_EQ(Describe(stub_->CreateTaskPushNotificationConfig(&c6, create, &made)),
            "5 TASK_NOT_FOUND TaskNotFoundError: task nope not found");
  grpc::ClientContext c7;
  create.set_parent("tasks/" + task);
  pc->set_url("http://127.0.0.1:9/hook");
  const grpc::Status refused = stub_->CreateTaskPushNotificationConfig(&c7, create, &made);
  EXPECT_EQ(refused.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_TRUE(refused.error_message().starts_with("InvalidParamsError: ")) << Describe(refused);
}

TEST_F(GrpcV03Test, VersionAndExtensionMetadata) {
  Start();
  grpc::ClientContext c1;
  c1.AddMetadata("a2a-version", "1.0");
  v03::SendMessageResponse resp;
  EXPECT_EQ(Describe(stub_->SendMessage(&c1, Send("m1", "x"), &resp)),
            "12 VERSION_NOT_SUPPORTED VersionNotSupportedError: A2A-Version '1.0' is not "
            "supported on this binding; it serves 0.3 (send no A2A-Version, or 0.3)");
  grpc::ClientContext c2;
  c2.AddMetadata("a2a-version", "0.3");
  c2.AddMetadata("x-a2a-extensions", std::string(kGeo) + ", https://other.example/x");
  ASSERT_TRUE(stub_->SendMessage(&c2, Send("m2", "x"), &resp).ok());
  const auto& md = c2.GetServerInitialMetadata();
  auto it = md.find("x-a2a-extensions");
  ASSERT_NE(it, md.end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), kGeo);
  // The 1.0 service answers on the same port.
  grpc::ClientContext c3;
  lf::a2a::v1::GetTaskRequest get;
  get.set_id(resp.task().id());
  lf::a2a::v1::Task task;
  ASSERT_TRUE(v10_stub_->GetTask(&c3, get, &task).ok());
  EXPECT_EQ(task.status().state(), lf::a2a::v1::TASK_STATE_COMPLETED);
}

TEST_F(GrpcV03Test, WithoutPushThePushRpcsAreUnimplemented) {
  Start(true, false);
  grpc::ClientContext c1;
  v03::CreateTaskPushNotificationConfigRequest create;
  create.set_parent("tasks/t1");
  create.mutable_config()->mutable_push_notification_config()->set_url("https://example.com/h");
  v03::TaskPushNotificationConfig made;
  EXPECT_EQ(Describe(stub_->CreateTaskPushNotificationConfig(&c1, create, &made)),
            "12 PUSH_NOTIFICATION_NOT_SUPPORTED PushNotificationNotSupportedError: "
            "tasks/pushNotificationConfig/set: push notifications are not enabled on this server");
  grpc::ClientContext c2;
  v03::ListTaskPushNotificationConfigRequest list;
  list.set_parent("tasks/t1");
  v03::ListTaskPushNotificationConfigResponse page;
  EXPECT_EQ(stub_->ListTaskPushNotificationConfig(&c2, list, &page).error_code(),
            grpc::UNIMPLEMENTED);
}

TEST_F(GrpcV03Test, AOneZeroOnlyServerRefusesTheZeroThreeService) {
  Start(false);
  grpc::ClientContext c;
  v03::SendMessageResponse resp;
  const grpc::Status st = stub_->SendMessage(&c, Send("m1", "x"), &resp);
  EXPECT_EQ(st.error_code(), grpc::UNIMPLEMENTED);
  EXPECT_TRUE(st.error_message().starts_with("VersionNotSupportedError: ")) << st.error_message();
}

// Every encoding of protocol/v03/proto_json.hpp is ProtoJSON of the 0.3 proto: protobuf's own
// parser takes it with unknown fields refused.
TEST(ProtoJsonFitsTheProto, EveryEncodingParsesStrictly) {
  namespace pj = protocol::v03::proto_json;
  using protocol::Part;
  protocol::Message m;
  m.message_id = "m1";
  m.context_id = "c1";
  m.task_id = "t1";
  m.role = protocol::Role::kAgent;
  m.parts.push_back(Part::Text("t"));
  Part raw;
  raw.kind = Part::Kind::kRaw;
  raw.text = "aGk=";
  raw.filename = "hi.txt";
  raw.media_type = "text/plain";
  m.parts.push_back(raw);
  Part url;
  url.kind = Part::Kind::kUrl;
  url.text = "https://example.com/x";
  m.parts.push_back(url);
  Part data = Part::Data(json::object{{"k", 1}});
  data.metadata["n"] = "x";
  m.parts.push_back(data);
  m.parts.push_back(Part::Data(json::array{1}));
  m.metadata["k"] = "v";
  m.extensions = {"https://example.com/e"};
  protocol::Task t;
  t.id = "t1";
  t.context_id = "c1";
  t.status.state = protocol::TaskState::kCanceled;
  t.status.message = m;
  t.status.timestamp_ms = 1767261600000;
  protocol::Artifact a;
  a.artifact_id = "a1";
  a.name = "n";
  a.description = "d";
  a.parts = m.parts;
  a.metadata["k"] = "v";
  a.extensions = {"https://example.com/e"};
  t.artifacts.push_back(a);
  t.history.push_back(m);
  t.metadata["k"] = "v";
  google::protobuf::util::JsonParseOptions strict;  // ignore_unknown_fields is false
  auto fits = [&](google::protobuf::Message&& into, const json::object& o) {
    const std::string text = protocol::SerializeJson(o);
    const auto st = google::protobuf::util::JsonStringToMessage(text, &into, strict);
    EXPECT_TRUE(st.ok()) << into.GetTypeName() << ": " << st.ToString() << "\n" << text;
  };
  fits(v03::Message(), protocol::MessageToJson(m, protocol::Wire::kV03Proto));
  fits(v03::Task(), protocol::TaskToJson(t, protocol::Wire::kV03Proto));
  protocol::StreamEvent e;
  for (auto kind :
       {protocol::StreamEvent::Kind::kTask, protocol::StreamEvent::Kind::kMessage,
        protocol::StreamEvent::Kind::kStatusUpdate, protocol::StreamEvent::Kind::kArtifactUpdate}) {
    e.kind = kind;
    e.task = t;
    e.message = m;
    e.status_update = {"t1", "c1", t.status, json::object{{"k", "v"}}, true};
    e.artifact_update = {"t1", "c1", a, true, true, json::object{{"k", "v"}}};
    fits(v03::StreamResponse(), protocol::StreamEventToJson(e, protocol::Wire::kV03Proto));
  }
  protocol::PushNotificationConfig c;
  c.id = "c1";
  c.task_id = "t1";
  c.url = "https://example.com/h";
  c.token = "tok";
  c.authentication = protocol::AuthenticationInfo{"Bearer", "secret"};
  fits(v03::TaskPushNotificationConfig(), pj::TaskPushConfigToJson(c));
}

}  // namespace
}  // namespace a2ad::transport
