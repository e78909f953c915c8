// grpc_request_fuzz: the gRPC binding's reading of a request (grpc_model.hpp RequestToJson),
// which walks whatever message protobuf parsed from a client's bytes. The first byte picks the
// message (SendMessageRequest, GetTaskRequest, ListTasksRequest, TaskPushNotificationConfig),
// the rest is its wire form. Invariants, for every input protobuf parses:
//  - RequestToJson either leaves the message to protobuf's printer (nullopt) or gives exactly
//    the document that printer's ProtoJSON text parses to (protocol::ParseJson), which the
//    binding used before: the printer then succeeds and its text parses;
//  - an A2A 1.0 Message written from the model (ToProto) after the send request's params are
//    decoded (v10::SendMessageRequestFromJson) is accepted by protobuf's serializer.
#include <google/protobuf/util/json_util.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/transport/a2a/grpc/grpc_model.hpp"
#include "fuzz_check.hpp"

namespace a2ad::fuzz {
namespace {
namespace v1 = lf::a2a::v1;

std::unique_ptr<google::protobuf::Message> Pick(uint8_t which) {
  switch (which % 4) {
    case 0:
      return std::make_unique<v1::SendMessageRequest>();
    case 1:
      return std::make_unique<v1::GetTaskRequest>();
    case 2:
      return std::make_unique<v1::ListTasksRequest>();
    default:
      return std::make_unique<v1::TaskPushNotificationConfig>();
  }
}

void Check(const uint8_t* data, size_t size) {
  if (size < 1) return;
  auto req = Pick(data[0]);
  if (!req->ParseFromArray(data + 1, static_cast<int>(size - 1))) return;
  auto direct = transport::grpc_model::RequestToJson(*req);
  if (!direct) return;
  std::string text;
  const auto printed = google::protobuf::util::MessageToJsonString(*req, &text);
  FUZZ_CHECK(printed.ok(), "the printer refuses what RequestToJson wrote: " + printed.ToString());
  auto parsed = protocol::ParseJson(text);
  FUZZ_CHECK(parsed.ok(), "the printer's text does not parse: " + text);
  FUZZ_CHECK(parsed.value() == *direct,
             "RequestToJson " + protocol::SerializeJson(*direct) + "\n     printer " + text);
  if (data[0] % 4 != 0) return;
  auto send = protocol::v10::SendMessageRequestFromJson(*direct);
  if (!send) return;
  v1::Message back;
  if (transport::grpc_model::ToProto(send->message, &back)) return;  // a raw part not base64
  std::string bytes;
  FUZZ_CHECK(back.SerializeToString(&bytes), "a Message written from the model does not serialize");
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  a2ad::fuzz::Check(data, size);
  return 0;
}
