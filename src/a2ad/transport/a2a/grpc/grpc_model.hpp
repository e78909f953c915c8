#pragma once
// A2A 1.0's objects written straight from the model into lf.a2a.v1 messages, so that a
// gRPC call's Task, Message or stream event is not written as ProtoJSON text and parsed back
// (what protobuf's JSON reader costs was a third of a gRPC send); and a request's params
// made without printing its ProtoJSON text (RequestToJson). Field for field what
// protocol/encode.hpp writes for Wire::kV10, which the ProtoJSON reader turned into these
// messages before; the tests hold the two paths equal. Internal to the module transport_grpc.
//
// Thread safety: pure functions.
#include <google/protobuf/message.h>

#include <boost/json/value.hpp>
#include <optional>
#include <string>

#include "a2ad/protocol/model.hpp"
#include "lf/a2a/v1/a2a.pb.h"

namespace a2ad::transport::grpc_model {

/// Each writes `from` into `to` (cleared first where it is a whole message); nullopt when
/// done, else why it does not fit (a raw part whose text is not base64).
std::optional<std::string> ToProto(const protocol::Task& from, lf::a2a::v1::Task* to);
std::optional<std::string> ToProto(const protocol::Message& from, lf::a2a::v1::Message* to);
std::optional<std::string> ToProto(const protocol::StreamEvent& from,
                                   lf::a2a::v1::StreamResponse* to);

/// A request message as ProtoJSON's DOM: what parsing protobuf's JSON text of it gives
/// (boost::json's reading of its numbers included), built without that text. nullopt when
/// the message holds a field of a kind this does not write (64-bit integers, floating point
/// fields, well-known types other than Struct and Value, maps, a Value without a kind), or
/// fields the schema does not know (the printer reads those its own way): then protobuf's
/// printer is the way.
std::optional<boost::json::value> RequestToJson(const google::protobuf::Message& request);

}  // namespace a2ad::transport::grpc_model
