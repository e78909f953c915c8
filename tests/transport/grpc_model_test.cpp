// The gRPC binding's A2A 1.0 messages written from the model (grpc_model.hpp) against what the
// binding sent before they were: the encoder's v1.0 JSON text (protocol/encode.hpp) read by
// protobuf's ProtoJSON reader. Equal for generated tasks and every stream event they make,
// strings that are not UTF-8, numbers and nested data included; a raw part that is not base64
// is refused by both. And a request's params (RequestToJson) against protobuf's ProtoJSON text
// of it, parsed as the binding parses it.
#include "a2ad/transport/a2a/grpc/grpc_model.hpp"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <string>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "model_gen.hpp"

namespace a2ad::transport {
namespace {
namespace v1 = lf::a2a::v1;
namespace json = boost::json;
using google::protobuf::util::MessageDifferencer;
using protocol::Part;

// What the binding sent before: the v1.0 text, parsed by protobuf (strictly: every member
// the encoder writes is a field).
template <class Proto>
bool ViaJson(const std::string& text, Proto* out) {
  return google::protobuf::util::JsonStringToMessage(text, out).ok();
}

// Raw parts hold base64 text (what a client sent); the generator's strings are not.
void RawPartsAsBase64(std::vector<Part>& parts, int salt) {
  static constexpr const char* kB64[] = {"", "AA==", "/+8=", "aGVsbG8", "3q2+7w==", "-_8"};
  for (auto& p : parts)
    if (p.kind == Part::Kind::kRaw) p.text = kB64[static_cast<size_t>(salt++) % 6];
}
void RawPartsAsBase64(protocol::Task& t) {
  int salt = 0;
  for (auto& a : t.artifacts) RawPartsAsBase64(a.parts, ++salt);
  for (auto& m : t.history) RawPartsAsBase64(m.parts, ++salt);
  if (t.status.message) RawPartsAsBase64(t.status.message->parts, ++salt);
}

TEST(GrpcModel, GeneratedTasksAndTheirEventsAreWhatProtoJsonReadsFromTheText) {
  testing::ModelGen gen(20261129);
  for (int i = 0; i < 300; ++i) {
    protocol::Task t = gen.MakeTask();
    RawPartsAsBase64(t);
    std::string text;
    protocol::AppendTask(text, t, protocol::Wire::kV10);
    v1::Task expected, actual;
    ASSERT_TRUE(ViaJson(text, &expected)) << "task " << i << ": " << text;
    ASSERT_EQ(grpc_model::ToProto(t, &actual), std::nullopt) << "task " << i;
    EXPECT_TRUE(MessageDifferencer::Equals(expected, actual))
        << "task " << i << "\nexpected " << expected.DebugString() << "\nactual "
        << actual.DebugString();
    for (const protocol::StreamEvent& e : testing::EventsOf(t)) {
      std::string ev;
      protocol::AppendStreamEvent(ev, e, protocol::Wire::kV10, protocol::Final::kAsProjected);
      v1::StreamResponse want, got;
      ASSERT_TRUE(ViaJson(ev, &want)) << ev;
      ASSERT_EQ(grpc_model::ToProto(e, &got), std::nullopt);
      EXPECT_TRUE(MessageDifferencer::Equals(want, got))
          << "task " << i << ", event " << static_cast<int>(e.kind) << "\nexpected "
          << want.DebugString() << "\nactual " << got.DebugString();
    }
    if (t.status.message) {  // a Message result (SendMessage's direct reply)
      v1::Message want, got;
      std::string m;
      protocol::AppendMessage(m, *t.status.message, protocol::Wire::kV10);
      ASSERT_TRUE(ViaJson(m, &want));
      ASSERT_EQ(grpc_model::ToProto(*t.status.message, &got), std::nullopt);
      EXPECT_TRUE(MessageDifferencer::Equals(want, got)) << "task " << i;
    }
  }
}

TEST(GrpcModel, ValuesOfEveryKindAndTextThatIsNotUtf8) {
  protocol::Task t;
  t.id = "t-\xff-\xc3";  // ill-formed: each subpart becomes U+FFFD
  t.context_id = "c";
  t.status.state = protocol::TaskState::kInputRequired;
  t.status.timestamp_ms = -1;  // 1969-12-31T23:59:59.999Z
  t.metadata = json::object{{"n", nullptr},
                            {"b", false},
                            {"i", -7},
                            {"u", json::value(std::numeric_limits<uint64_t>::max())},
                            {"d", 0.1},
                            {"s", "\xe2\x82"},
                            {"a", json::array{1, "x", json::array{}, json::object{}}},
                            {"\xc0k", json::object{{"deep", json::object{{"er", true}}}}}};
  Part data = Part::Data(json::array{1, 2});
  data.metadata = json::object{{"m", 1}};
  protocol::Artifact a;
  a.artifact_id = "a";
  a.parts = {Part::Text("é"), data};
  t.artifacts.push_back(a);
  std::string text;
  protocol::AppendTask(text, t, protocol::Wire::kV10);
  v1::Task want, got;
  ASSERT_TRUE(ViaJson(text, &want)) << text;
  ASSERT_EQ(grpc_model::ToProto(t, &got), std::nullopt);
  EXPECT_TRUE(MessageDifferencer::Equals(want, got)) << got.DebugString();
  EXPECT_EQ(got.id(), "t-\xEF\xBF\xBD-\xEF\xBF\xBD");
  EXPECT_EQ(got.status().timestamp().seconds(), -1);
  EXPECT_EQ(got.status().timestamp().nanos(), 999000000);
  EXPECT_TRUE(got.metadata().fields().contains("\xEF\xBF\xBDk"));
}

TEST(GrpcModel, ARawPartThatIsNotBase64DoesNotFitEitherWay) {
  protocol::Message m;
  m.message_id = "m";
  m.role = protocol::Role::kAgent;
  Part raw;
  raw.kind = Part::Kind::kRaw;
  raw.text = "not base64!";
  m.parts.push_back(raw);
  std::string text;
  protocol::AppendMessage(text, m, protocol::Wire::kV10);
  v1::Message via_json, direct;
  EXPECT_FALSE(ViaJson(text, &via_json));
  EXPECT_NE(grpc_model::ToProto(m, &direct), std::nullopt);
  m.parts[0].text = "aGk=";
  ASSERT_EQ(grpc_model::ToProto(m, &direct), std::nullopt);
  EXPECT_EQ(direct.parts(0).raw(), "hi");
}

// ---- requests ------------------------------------------------------------------------------

// What the binding made of a request before RequestToJson: protobuf's text, parsed.
json::value Printed(const google::protobuf::Message& m) {
  std::string text;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(m, &text).ok());
  auto v = protocol::ParseJson(text);
  EXPECT_TRUE(v.ok()) << text;
  return v.ok() ? v.value() : json::value();
}

void ExpectSameParams(const google::protobuf::Message& m, const std::string& label) {
  auto direct = grpc_model::RequestToJson(m);
  ASSERT_TRUE(direct.has_value()) << label;
  EXPECT_EQ(*direct, Printed(m)) << label << "\n" << m.DebugString();
}

TEST(GrpcModel, GeneratedSendRequestsGiveTheParamsProtoJsonGives) {
  testing::ModelGen gen(7);
  for (int i = 0; i < 300; ++i) {
    protocol::Task t = gen.MakeTask();
    RawPartsAsBase64(t);
    v1::Task as_proto;
    ASSERT_EQ(grpc_model::ToProto(t, &as_proto), std::nullopt);
    v1::SendMessageRequest req;
    if (!t.history.empty()) *req.mutable_message() = as_proto.history(0);
    if (gen.Coin()) req.set_tenant("tenant-" + std::to_string(i));
    if (gen.Coin()) {
      auto* c = req.mutable_configuration();
      for (int k = gen.Int(0, 2); k > 0; --k) c->add_accepted_output_modes("text/plain");
      if (gen.Coin()) c->set_history_length(gen.Int(0, 3));  // 0 too: it has presence
      c->set_return_immediately(gen.Coin());
      if (gen.Coin()) {
        auto* push = c->mutable_task_push_notification_config();
        push->set_url("https://hooks.example/" + std::to_string(i));
        if (gen.Coin()) push->mutable_authentication()->set_scheme("Bearer");
      }
    }
    *req.mutable_metadata() = as_proto.metadata();
    ExpectSameParams(req, "request " + std::to_string(i));
  }
}

TEST(GrpcModel, OtherRequestsNumbersAndWhatFallsBack) {
  v1::GetTaskRequest get;
  get.set_id("t");
  get.set_history_length(0);
  ExpectSameParams(get, "GetTask");
  v1::ListTasksRequest list;
  list.set_status(v1::TASK_STATE_WORKING);
  list.set_page_size(5);
  list.set_include_artifacts(false);
  ExpectSameParams(list, "ListTasks");
  list.mutable_status_timestamp_after()->set_seconds(1);  // a Timestamp: protobuf's printer
  EXPECT_EQ(grpc_model::RequestToJson(list), std::nullopt);
  list.clear_status_timestamp_after();
  list.GetReflection()->SetEnumValue(&list, list.GetDescriptor()->FindFieldByName("status"), 42);
  ExpectSameParams(list, "an enum number without a name");

  v1::SendMessageRequest send;
  auto& fields = *send.mutable_metadata()->mutable_fields();
  int k = 0;
  for (double d : {0.0, -0.0, 1.0, -1.0, 1.5, 0.1, 1e15, 1e15 - 1, 1234567890123456.0, 1e16,
                   9007199254740993.0, 1e300, 5e-324, -2.5e-7, 123456789.125})
    fields["n" + std::to_string(k++)].set_number_value(d);
  ExpectSameParams(send, "numbers");
  fields["inf"].set_number_value(std::numeric_limits<double>::infinity());
  EXPECT_EQ(grpc_model::RequestToJson(send), std::nullopt);  // the printer's to refuse
  fields.erase("inf");
  fields["unset"];  // a Value without a kind
  EXPECT_EQ(grpc_model::RequestToJson(send), std::nullopt);
}

// As deep as the JSON reader accepts (32 levels), the params are made here; one deeper, the
// fallback's parse refuses the request, as it did before RequestToJson.
TEST(GrpcModel, NestingUpToTheReadersLimitAndNoFurther) {
  auto nested = [](int levels) {  // SendMessageRequest{metadata: {"a": {"a": ... }}}
    v1::SendMessageRequest req;
    google::protobuf::Struct* s = req.mutable_metadata();
    for (int i = 2; i < levels; ++i) s = (*s->mutable_fields())["a"].mutable_struct_value();
    (*s->mutable_fields())["leaf"].set_bool_value(true);
    return req;
  };
  ExpectSameParams(nested(32), "32 levels");
  const v1::SendMessageRequest deep = nested(33);
  EXPECT_EQ(grpc_model::RequestToJson(deep), std::nullopt);
  std::string text;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(deep, &text).ok());
  EXPECT_FALSE(protocol::ParseJson(text).ok());
}

}  // namespace
}  // namespace a2ad::transport
