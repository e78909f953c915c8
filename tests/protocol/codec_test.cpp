// Codec behaviour that the conformance fixtures do not pin down: round trips through both
// wire versions, v0.3 <-> v1.0 part mapping, and the RunEventDoc envelope.
#include "a2ad/protocol/v03/codec.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/jsonrpc.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

Message Sample() {
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
  m.reference_task_ids = {"t0"};
  m.extensions = {"https://example.com/ext/v1"};
  return m;
}

TEST(Codec, V10MessageRoundTrips) {
  Message m = Sample();
  auto back = v10::MessageFromJson(MessageToJson(m), "m");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), m);
}

TEST(Codec, TheDomEncoderGrowsContainersByDoublingFromFour) {
  // MessageToJson builds its objects a member at a time: room for 4, then doubled, rather
  // than Boost.JSON's reallocation at 1, 2, 3, 4, 6 and 9 members.
  const json::object o = MessageToJson(Sample());
  // messageId, contextId, taskId, role, parts, metadata, extensions, referenceTaskIds
  EXPECT_EQ(o.size(), 8u);
  EXPECT_EQ(o.capacity(), 8u);  // Boost.JSON's own growth would leave 9
  EXPECT_EQ(o.at("parts").as_array()[0].as_object().capacity(), 4u);  // {"text"}: 1
}

TEST(Codec, V03MessageRoundTrips) {
  Message m = Sample();
  auto back = v03::MessageFromJson(MessageToJson(m, Wire::kV03), "m");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), m);
}

TEST(Codec, V10TaskRoundTripsThroughStorageForm) {
  Task t;
  t.id = "t1";
  t.context_id = "c1";
  t.status.state = TaskState::kInputRequired;
  t.status.timestamp_ms = 1767261600123;
  t.status.message = Sample();
  t.history = {Sample(), Sample()};
  Artifact a;
  a.artifact_id = "a1";
  a.name = "n";
  a.description = "d";
  a.parts = Sample().parts;
  a.metadata["k"] = 1;
  t.artifacts = {a};
  t.metadata["openwop"] = json::object{{"runId", "t1"}};
  auto back = v10::TaskFromJson(TaskToJson(t), "t");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back.value(), t);
}

// The v1.0 decoders read a document without spelling out paths, and only when that fails read
// it again to name the field at fault: the name is the same as ever, however deep.
TEST(Codec, V10DecodersNameTheFieldAtFaultAtAnyDepth) {
  Task t;
  t.id = "t1";
  t.status.state = TaskState::kCompleted;
  t.status.message = Sample();
  t.artifacts.resize(2);
  t.artifacts[0].artifact_id = "a0";
  t.artifacts[1].artifact_id = "a1";
  t.artifacts[1].parts = Sample().parts;
  t.history = {Sample(), Sample()};
  const json::value good = TaskToJson(t);
  ASSERT_TRUE(v10::TaskFromJson(good, "snapshot"));

  auto broken = [&](auto change) {
    json::value v = good;
    change(v.as_object());
    auto r = v10::TaskFromJson(v, "snapshot");
    return r ? std::string("<decoded>") : r.error().message;
  };
  EXPECT_EQ(broken([](json::object& o) {
              auto& part = o["artifacts"].as_array()[1].as_object()["parts"].as_array()[2];
              part.as_object()["url"] = 7;
            }),
            "snapshot.artifacts[1].parts[2].url: expected a string");
  EXPECT_EQ(broken([](json::object& o) {
              auto& part = o["history"].as_array()[1].as_object()["parts"].as_array()[3];
              part.as_object()["metadata"] = json::array{};
            }),
            "snapshot.history[1].parts[3].metadata: expected an object");
  EXPECT_EQ(broken([](json::object& o) {
              o["status"].as_object()["message"].as_object()["role"] = "ROLE_NOBODY";
            }),
            R"(snapshot.status.message.role: expected "ROLE_USER" or "ROLE_AGENT")");
  EXPECT_EQ(broken([](json::object& o) { o["history"].as_array()[0].as_object().erase("parts"); }),
            "snapshot.history[0].parts: required field is missing (at least one part)");
  auto message = v10::MessageFromJson(
      json::object{
          {"messageId", "m"}, {"role", "ROLE_USER"}, {"parts", json::array{json::object{}}}},
      "params.message");
  ASSERT_FALSE(message);
  EXPECT_EQ(message.error().message,
            "params.message.parts[0]: a part needs one of text, raw, url or data");
}

// A decoded task owns its JSON members on the default resource, whatever resource the document
// was read into (a stored task's is an arena on the stack that ends with the read).
TEST(Codec, V10DecodedMembersLeaveTheDocumentsResource) {
  Task t;
  t.id = "t1";
  t.status.state = TaskState::kWorking;
  t.metadata["openwop"] = json::object{{"runId", "t1"}};
  t.history = {Sample()};
  json::monotonic_resource arena;
  const json::value doc(TaskToJson(t), &arena);
  auto back = v10::TaskFromJson(doc, "snapshot");
  ASSERT_TRUE(back) << back.error().message;
  const json::memory_resource* fallback = json::storage_ptr().get();
  EXPECT_EQ(back->metadata.storage().get(), fallback);
  EXPECT_EQ(back->history[0].metadata.storage().get(), fallback);
  EXPECT_EQ(back->history[0].parts[3].data.storage().get(), fallback);
  EXPECT_EQ(back->history[0].parts[3].metadata.storage().get(), fallback);
  EXPECT_EQ(*back, t);
}

TEST(Codec, NonObjectDataIsWrappedForV03) {
  Part p = Part::Data(json::array{1, "two"});
  json::object o = PartToJson(p, Wire::kV03);
  EXPECT_EQ(o.at("kind"), "data");
  EXPECT_EQ(o.at("data"), (json::object{{"value", json::array{1, "two"}}}));
}

TEST(Codec, StateNamesPerVersion) {
  EXPECT_EQ(TaskStateLabel(TaskState::kInputRequired), "input-required");
  EXPECT_EQ(TaskStateLabel(TaskState::kCanceled), "canceled");
  EXPECT_EQ(TaskStateLabel(TaskState::kUnspecified), "unknown");
  EXPECT_EQ(TaskStateName(TaskState::kAuthRequired, Wire::kV10), "TASK_STATE_AUTH_REQUIRED");
  TaskState s;
  ASSERT_TRUE(v10::ParseTaskState(json::value(6), s));
  EXPECT_EQ(s, TaskState::kInputRequired);
  EXPECT_FALSE(v10::ParseTaskState(json::value(9), s));
  EXPECT_FALSE(v10::ParseTaskState(json::value("working"), s));
}

TEST(Codec, V03StreamEventsCarryKindAndFinal) {
  StreamEvent e;
  e.kind = StreamEvent::Kind::kStatusUpdate;
  e.status_update.task_id = "t";
  e.status_update.context_id = "c";
  e.status_update.status.state = TaskState::kCompleted;
  e.status_update.final = true;
  json::object o = StreamEventToJson(e, Wire::kV03);
  EXPECT_EQ(o.at("kind"), "status-update");
  EXPECT_EQ(o.at("final"), true);
  json::object w = StreamEventToJson(e);
  EXPECT_TRUE(w.contains("statusUpdate"));
  EXPECT_FALSE(w.at("statusUpdate").as_object().contains("final"));
}

TEST(RunEventDoc, RoundTripsAndHasTheEnvelopeFields) {
  RunEvent e;
  e.event_id = "e1";
  e.run_id = "r1";
  e.type = "node.started";
  e.node_id = "n1";
  e.payload = {{"nodeId", "n1"}, {"typeId", "core.noop"}, {"attempt", 0}};
  e.timestamp_ms = 1767261600000;
  e.sequence = 3;
  json::object o = RunEventToJson(e);
  for (const char* k : {"eventId", "runId", "type", "payload", "timestamp", "sequence", "nodeId"})
    EXPECT_TRUE(o.contains(k)) << k;
  EXPECT_EQ(o.at("timestamp"), "2026-01-01T10:00:00.000Z");
  RunEvent back;
  ASSERT_TRUE(RunEventFromJson(o, back));
  EXPECT_EQ(back, e);
  o.erase("sequence");
  EXPECT_FALSE(RunEventFromJson(o, back));
}

TEST(JsonRpc, IdKeepsItsJsonType) {
  json::value id;
  auto r =
      ParseJsonRpcRequest(R"({"jsonrpc":"2.0","id":"7","method":"tasks/get","params":{}})", id);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->id.is_string());
  auto n = ParseJsonRpcRequest(R"({"jsonrpc":"2.0","id":7,"method":"tasks/get"})", id);
  ASSERT_TRUE(n.ok());
  EXPECT_TRUE(n->id.is_int64());
  EXPECT_TRUE(n->params.is_null());
  EXPECT_EQ(MakeJsonRpcResult(n->id, json::object{}).at("id"), 7);
}

// Found by tests/fuzz/jsonrpc_fuzz: an integer field given as a double beyond int64
// (historyLength 1e300) was converted before its range was checked (undefined behaviour).
TEST(Codec, IntegerFieldsGivenAsHugeDoublesAreRefused) {
  for (double d : {1e300, -1e300, 9.3e18, 6.6e59}) {
    const json::value params = json::object{{"id", "t1"}, {"historyLength", d}};
    auto r = v10::GetTaskRequestFromJson(params);
    ASSERT_FALSE(r) << d;
    EXPECT_EQ(r.error().message, "params.historyLength: expected an integer") << d;
  }
  auto ok = v10::GetTaskRequestFromJson(json::object{{"id", "t1"}, {"historyLength", 3.0}});
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->history_length, 3);
}

TEST(JsonRpc, MethodVersionByName) {
  EXPECT_EQ(MethodVersion("message/send"), WireVersion::kV03);
  EXPECT_EQ(MethodVersion("tasks/pushNotificationConfig/set"), WireVersion::kV03);
  EXPECT_EQ(MethodVersion("SendMessage"), WireVersion::kV10);
}

}  // namespace
}  // namespace a2ad::protocol
