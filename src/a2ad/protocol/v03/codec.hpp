#pragma once
// A2A v0.3 JSON-RPC JSON (types.ts shapes, WIRE.md §4-§7) <-> the internal model.
// Every object carries its `kind`; enums are lowercase-hyphen; `historyLength: 0` means
// unlimited (decoded as nullopt); `blocking` defaults to true.
// Decoders report the first offending field by its JSON path (kInvalidParams with a `field`
// detail, json_util.hpp); encoders do not fail.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol::v03 {

std::string_view TaskStateName(TaskState s);  // "input-required"; kUnspecified -> "unknown"

boost::json::object PartToJson(const Part& p);
boost::json::object MessageToJson(const Message& m);
boost::json::object ArtifactToJson(const Artifact& a);
boost::json::object TaskToJson(const Task& t);
/// Appends the JSON text of `t` to `out` (which it does not clear): byte-identical to
/// protocol::SerializeJson(TaskToJson(t)), without building the DOM.
void AppendTaskJson(std::string& out, const Task& t);
/// Kind-tagged stream result (task / message / status-update / artifact-update).
boost::json::object StreamEventToJson(const StreamEvent& e);

core::Result<Part> PartFromJson(const boost::json::value& v, std::string_view path);
core::Result<Message> MessageFromJson(const boost::json::value& v, std::string_view path);

/// MessageSendParams.
core::Result<SendMessageRequest> SendMessageRequestFromJson(const boost::json::value& params);
/// TaskQueryParams.
core::Result<GetTaskRequest> GetTaskRequestFromJson(const boost::json::value& params);
/// TaskIdParams.
core::Result<CancelTaskRequest> CancelTaskRequestFromJson(const boost::json::value& params);

}  // namespace a2ad::protocol::v03
