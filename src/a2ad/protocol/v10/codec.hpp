#pragma once
// A2A v1.0 JSON (ProtoJSON of a2a.proto, WIRE.md §10-§13) -> the internal model (encoding is
// protocol/encode.hpp's Wire::kV10, also the storage form of snapshots). Decoders accept camelCase
// and proto snake_case names and integer enums; they report the first offending field by its JSON
// path.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol::v10 {

bool ParseTaskState(const boost::json::value& v, TaskState& out);  // name or integer

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
