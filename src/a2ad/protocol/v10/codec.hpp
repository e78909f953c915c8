#pragma once
// A2A v1.0 JSON (ProtoJSON of a2a.proto, WIRE.md §10-§13) <-> the internal model.
// Also the storage form of snapshots. Decoders accept camelCase and proto snake_case
// names and integer enums; they report the first offending field by its JSON path.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol::v10 {

std::string_view TaskStateName(TaskState s);                       // "TASK_STATE_WORKING"
bool ParseTaskState(const boost::json::value& v, TaskState& out);  // name or integer

boost::json::object PartToJson(const Part& p);
boost::json::object MessageToJson(const Message& m);
boost::json::object ArtifactToJson(const Artifact& a);
boost::json::object TaskStatusToJson(const TaskStatus& s);
boost::json::object TaskToJson(const Task& t);
/// Appends the JSON text of `t` to `out` (which it does not clear): byte-identical to
/// protocol::SerializeJson(TaskToJson(t)), without building the DOM.
void AppendTaskJson(std::string& out, const Task& t);
boost::json::object StreamEventToJson(const StreamEvent& e);  // StreamResponse wrapper
boost::json::object ListTasksResponseToJson(const ListTasksResponse& r);

/// `path` prefixes field names in error messages, e.g. "params.message".
core::Result<Part> PartFromJson(const boost::json::value& v, std::string_view path);
core::Result<Message> MessageFromJson(const boost::json::value& v, std::string_view path);
core::Result<Artifact> ArtifactFromJson(const boost::json::value& v, std::string_view path);
core::Result<Task> TaskFromJson(const boost::json::value& v, std::string_view path);

core::Result<SendMessageRequest> SendMessageRequestFromJson(const boost::json::value& params);
core::Result<GetTaskRequest> GetTaskRequestFromJson(const boost::json::value& params);
core::Result<ListTasksRequest> ListTasksRequestFromJson(const boost::json::value& params);
core::Result<CancelTaskRequest> CancelTaskRequestFromJson(const boost::json::value& params);

}  // namespace a2ad::protocol::v10
