// The A2A 0.3 ProtoJSON codec (protocol/v03/proto_json.hpp): golden encodings, round trips,
// what the decoders take (snake_case names, enum numbers, both create-push-config bodies,
// resource names) and what they refuse, naming the field. That every encoding parses as the
// 0.3 proto strictly is checked where the proto is linked (grpc_binding_v03_test.cpp).
#include "a2ad/protocol/v03/proto_json.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::protocol::v03::proto_json {
namespace {
namespace json = boost::json;

json::value J(std::string_view text) {
  auto v = ParseJson(text);
  EXPECT_TRUE(v) << text;
  return v ? *v : json::value();
}

std::string FieldOf(const core::Error& e) {
  for (const auto& [k, v] : e.details)
    if (k == "field") return v;
  return "";
}

Message SampleMessage() {
  Message m;
  m.message_id = "m1";
  m.context_id = "c1";
  m.task_id = "t1";
  m.role = Role::kUser;
  m.parts.push_back(Part::Text("hello"));
  Part raw;
  raw.kind = Part::Kind::kRaw;
  raw.text = "aGk=";
  raw.filename = "hi.txt";
  raw.media_type = "text/plain";
  m.parts.push_back(raw);
  Part url;
  url.kind = Part::Kind::kUrl;
  url.text = "https://example.com/doc.pdf";
  m.parts.push_back(url);
  Part data = Part::Data(json::object{{"k", json::array{1, 2}}});
  data.metadata["note"] = "x";
  m.parts.push_back(data);
  m.metadata["skillId"] = "echo";
  m.extensions = {"https://example.com/ext/v1"};
  return m;
}

TEST(ProtoJson, MessageEncodesAsTheProtoSpellsIt) {
  EXPECT_EQ(SerializeJson(protocol::MessageToJson(SampleMessage(), Wire::kV03Proto)),
            R"({"messageId":"m1","contextId":"c1","taskId":"t1","role":"ROLE_USER","content":[)"
            R"({"text":"hello"},{"file":{"fileWithBytes":"aGk=","name":"hi.txt",)"
            R"("mimeType":"text/plain"}},{"file":{"fileWithUri":"https://example.com/doc.pdf"}},)"
            R"({"data":{"data":{"k":[1,2]}},"metadata":{"note":"x"}}],)"
            R"("metadata":{"skillId":"echo"},"extensions":["https://example.com/ext/v1"]})");
}

TEST(ProtoJson, MessageRoundTripsButForWhatTheProtoLacks) {
  Message m = SampleMessage();
  auto back = MessageFromJson(protocol::MessageToJson(m, Wire::kV03Proto), "message");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value(), m);
  m.reference_task_ids = {"t0"};  // no field in the 0.3 proto: dropped
  EXPECT_FALSE(protocol::MessageToJson(m, Wire::kV03Proto).contains("referenceTaskIds"));
}

TEST(ProtoJson, TaskStatesAndEventsAreCanonical) {
  Task t;
  t.id = "t1";
  t.context_id = "c1";
  t.status.state = TaskState::kCanceled;
  t.status.timestamp_ms = 1767225600000;  // 2026-01-01T00:00:00Z
  Artifact a;
  a.artifact_id = "a1";
  a.parts.push_back(Part::Data(json::value(7)));  // not an object: wrapped
  t.artifacts.push_back(a);
  EXPECT_EQ(SerializeJson(protocol::TaskToJson(t, Wire::kV03Proto)),
            R"({"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_CANCELLED",)"
            R"("timestamp":"2026-01-01T00:00:00.000Z"},"artifacts":[{"artifactId":"a1",)"
            R"("parts":[{"data":{"data":{"value":7}}}]}]})");

  StreamEvent e;
  e.kind = StreamEvent::Kind::kStatusUpdate;
  e.status_update.task_id = "t1";
  e.status_update.context_id = "c1";
  e.status_update.status.state = TaskState::kWorking;
  EXPECT_EQ(SerializeJson(protocol::StreamEventToJson(e, Wire::kV03Proto)),
            R"({"statusUpdate":{"taskId":"t1","contextId":"c1",)"
            R"("status":{"state":"TASK_STATE_WORKING"}}})")
      << "final=false is the proto default: left out";
  e.status_update.final = true;
  EXPECT_TRUE(protocol::StreamEventToJson(e, Wire::kV03Proto)
                  .at("statusUpdate")
                  .as_object()
                  .at("final")
                  .as_bool());
  e.kind = StreamEvent::Kind::kArtifactUpdate;
  e.artifact_update.task_id = "t1";
  e.artifact_update.context_id = "c1";
  e.artifact_update.artifact = a;
  e.artifact_update.last_chunk = true;
  EXPECT_EQ(SerializeJson(protocol::StreamEventToJson(e, Wire::kV03Proto)),
            R"({"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1",)"
            R"("parts":[{"data":{"data":{"value":7}}}]},"lastChunk":true}})");
  e.kind = StreamEvent::Kind::kMessage;
  e.message = SampleMessage();
  EXPECT_TRUE(protocol::StreamEventToJson(e, Wire::kV03Proto).contains("message"));
  for (int s = 0; s <= 8; ++s)
    EXPECT_TRUE(protocol::TaskStateName(static_cast<TaskState>(s), Wire::kV03Proto)
                    .starts_with("TASK_STATE_"));
}

TEST(ProtoJson, PushConfigIsNamedAndNeverCarriesCredentials) {
  PushNotificationConfig c;
  c.id = "c1";
  c.task_id = "t1";
  c.url = "https://example.com/h";
  c.token = "tok";
  c.authentication = AuthenticationInfo{"Bearer", "secret"};
  EXPECT_EQ(SerializeJson(TaskPushConfigToJson(c)),
            R"({"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":)"
            R"({"id":"c1","url":"https://example.com/h","token":"tok",)"
            R"("authentication":{"schemes":["Bearer"]}}})");
}

TEST(ProtoJson, SendMessageRequestTakesWhatAProtoJsonParserTakes) {
  auto r = SendMessageRequestFromJson(J(R"({"request":{"message_id":"m","context_id":"c",
      "role":1,"content":[{"file":{"file_with_uri":"https://x/y","mime_type":"a/b"}}]},
      "configuration":{"accepted_output_modes":["text/plain"],"history_length":3,"blocking":true,
      "push_notification":{"url":"https://x/hook","authentication":{"schemes":["Bearer"]}}},
      "metadata":{"k":"v"}})"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->message.message_id, "m");
  EXPECT_EQ(r->message.role, Role::kUser);
  EXPECT_EQ(r->message.parts.at(0).kind, Part::Kind::kUrl);
  EXPECT_EQ(r->message.parts.at(0).media_type, "a/b");
  EXPECT_EQ(r->configuration.history_length, 3);
  EXPECT_FALSE(r->configuration.return_immediately);
  ASSERT_TRUE(r->configuration.push_notification_config);
  EXPECT_EQ(r->configuration.push_notification_config->wire_version, "0.3");
  EXPECT_EQ(r->configuration.push_notification_config->authentication->scheme, "Bearer");
  EXPECT_EQ(r->metadata.at("k"), "v");
}

TEST(ProtoJson, BlockingFollowsProto3Defaults) {
  const char* msg = R"("message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]})";
  auto none = SendMessageRequestFromJson(J(std::string("{") + msg + "}"));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->configuration.return_immediately) << "no configuration: blocking";
  auto empty = SendMessageRequestFromJson(J(std::string("{") + msg + R"(,"configuration":{}})"));
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->configuration.return_immediately) << "blocking absent is false";
  auto zero = SendMessageRequestFromJson(
      J(std::string("{") + msg + R"(,"configuration":{"historyLength":0,"blocking":true}})"));
  ASSERT_TRUE(zero);
  EXPECT_FALSE(zero->configuration.history_length) << "0 is no limit in 0.3";
}

TEST(ProtoJson, DecodersNameTheOffendingField) {
  struct Case {
    const char* body;
    const char* field;
  };
  for (const Case& c : {
           Case{R"({})", "message"},
           Case{R"({"message":{"role":"ROLE_USER","content":[{"text":"x"}]}})",
                "message.messageId"},
           Case{R"({"message":{"messageId":"m","role":"user","content":[{"text":"x"}]}})",
                "message.role"},
           Case{R"({"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}})",
                "message.content"},
           Case{R"({"message":{"messageId":"m","role":"ROLE_USER","content":[]}})",
                "message.content"},
           Case{R"({"message":{"messageId":"m","role":"ROLE_USER","content":[{"kind":"text"}]}})",
                "message.content[0]"},
           Case{R"({"message":{"messageId":"m","role":"ROLE_USER","content":[{"file":{}}]}})",
                "message.content[0].file"},
           Case{R"({"message":{"messageId":"m","role":"ROLE_USER","content":[{"data":{"k":1}}]}})",
                "message.content[0].data"},
           Case{R"({"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},
                   "configuration":{"historyLength":-1}})",
                "configuration.historyLength"},
           Case{R"({"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},
                   "configuration":{"pushNotification":{"token":"t"}}})",
                "configuration.pushNotification.url"},
       }) {
    auto r = SendMessageRequestFromJson(J(c.body));
    ASSERT_FALSE(r) << c.body;
    EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
    EXPECT_EQ(FieldOf(r.error()), c.field) << r.error().message;
  }
}

TEST(ProtoJson, ResourceNamesAreParsed) {
  auto get = GetTaskRequestFromJson(J(R"({"name":"tasks/t1","historyLength":"2"})"));
  ASSERT_TRUE(get) << get.error().message;
  EXPECT_EQ(get->id, "t1");
  EXPECT_EQ(get->history_length, 2) << "int32 may come as a string in ProtoJSON";
  EXPECT_EQ(CancelTaskRequestFromJson(J(R"({"name":"tasks/t2"})"))->id, "t2");
  EXPECT_EQ(TaskSubscriptionFromJson(J(R"({"name":"tasks/t3"})")).value(), "t3");
  for (const char* bad :
       {R"({"name":"t1"})", R"({"name":"tasks/"})", R"({"name":"tasks/a/b"})", R"({})"}) {
    auto r = GetTaskRequestFromJson(J(bad));
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(FieldOf(r.error()), "name") << bad;
  }
  auto ref = PushConfigNameFromJson(J(R"({"name":"tasks/t1/pushNotificationConfigs/c1"})"));
  ASSERT_TRUE(ref);
  EXPECT_EQ(ref->task_id, "t1");
  EXPECT_EQ(ref->config_id, "c1");
  EXPECT_FALSE(PushConfigNameFromJson(J(R"({"name":"tasks/t1/pushNotificationConfigs/"})")));
  EXPECT_FALSE(PushConfigNameFromJson(J(R"({"name":"tasks/t1"})")));
  EXPECT_EQ(PushConfigParentFromJson(J(R"({"parent":"tasks/t1"})"))->task_id, "t1");
  EXPECT_EQ(
      PushConfigParentFromJson(J(R"({"parent":"tasks/t1/pushNotificationConfigs"})"))->task_id,
      "t1");
}

TEST(ProtoJson, CreatePushConfigTakesBothBodies) {
  // The whole CreateTaskPushNotificationConfigRequest (the 0.3 Python client, gRPC).
  auto whole = CreatePushConfigFromJson(J(R"({"parent":"tasks/t1","configId":"c1",
      "config":{"name":"tasks/t1/pushNotificationConfigs/c1",
                "pushNotificationConfig":{"url":"https://x/h","token":"tok"}}})"));
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_EQ(whole->task_id, "t1");
  EXPECT_EQ(whole->id, "c1");
  EXPECT_EQ(whole->token, "tok");
  EXPECT_EQ(whole->wire_version, "0.3");
  // Only the TaskPushNotificationConfig (the 0.3 JavaScript client), the parent from the path;
  // the id from the config, else from its name.
  auto bare = CreatePushConfigFromJson(J(R"({"parent":"tasks/t1",
      "name":"tasks/t1/pushNotificationConfigs/c2",
      "pushNotificationConfig":{"url":"https://x/h"}})"));
  ASSERT_TRUE(bare) << bare.error().message;
  EXPECT_EQ(bare->id, "c2");
  auto unnamed = CreatePushConfigFromJson(J(R"({"parent":"tasks/t1",
      "name":"tasks/t1/pushNotificationConfigs/",
      "pushNotificationConfig":{"id":"","url":"https://x/h"}})"));
  ASSERT_TRUE(unnamed) << unnamed.error().message;
  EXPECT_EQ(unnamed->id, "") << "the push service gives it the task id";
  auto missing = CreatePushConfigFromJson(J(R"({"parent":"tasks/t1","config":{}})"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(FieldOf(missing.error()), "config.pushNotificationConfig");
  auto no_parent = CreatePushConfigFromJson(J(R"({"pushNotificationConfig":{"url":"https://x"}})"));
  ASSERT_FALSE(no_parent);
  EXPECT_EQ(FieldOf(no_parent.error()), "parent");
}

}  // namespace
}  // namespace a2ad::protocol::v03::proto_json
