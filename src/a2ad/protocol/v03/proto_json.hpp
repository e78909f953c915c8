#pragma once
// A2A v0.3 ProtoJSON: the JSON of the v0.3 proto (proto/a2a/v1/a2a.proto, package a2a.v1),
// which the v0.3 HTTP+JSON (REST) and gRPC bindings carry (WIRE.md §8.2, §9) <-> the internal
// model (its encoding is protocol/encode.hpp's Wire::kV03Proto). Not the v0.3 JSON-RPC shapes
// (v03/codec.hpp): no `kind`; a Message's parts are under `content`; enums are proto names
// (`ROLE_USER`, `TASK_STATE_CANCELLED` with two Ls); file parts are {"file": {"fileWithUri" |
// "fileWithBytes", "mimeType", "name"}}, data parts
// {"data": {"data": {...}}}; tasks and push configs are named by resource names
// (`tasks/{id}`, `tasks/{id}/pushNotificationConfigs/{configId}`).
//
// TaskPushConfigToJson writes canonical ProtoJSON: lowerCamelCase names, default values left
// out; a push config's credentials are never sent back on any binding.
//
// Decoders take what a ProtoJSON parser takes: lowerCamelCase or the proto's snake_case
// names (and `request` for SendMessageRequest's `message`), enum names or numbers, unknown
// members ignored. They report the first offending field by its JSON path (kInvalidParams
// with a `field` detail, json_util.hpp): "message.content[0].file". Proto3 semantics hold:
// `historyLength` 0 or absent is no limit (as in all of v0.3); a request without
// `configuration` blocks (the v0.3 default), one with it blocks only when `blocking` is true
// (the proto's default is false, as the v0.3 SDK servers read it). Push configs decode with
// wire_version "0.3" and the checks of push_config_codec.hpp.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/push_config_codec.hpp"

namespace a2ad::protocol::v03::proto_json {

/// TaskPushNotificationConfig {name: "tasks/{taskId}/pushNotificationConfigs/{id}",
/// pushNotificationConfig {id, url, token?, authentication? {schemes: [scheme]}}}.
boost::json::object TaskPushConfigToJson(const PushNotificationConfig& c);

core::Result<Part> PartFromJson(const boost::json::value& v, std::string_view path);
core::Result<Message> MessageFromJson(const boost::json::value& v, std::string_view path);

/// SendMessageRequest {message, configuration?, metadata?}.
core::Result<SendMessageRequest> SendMessageRequestFromJson(const boost::json::value& request);
/// GetTaskRequest {name: "tasks/{id}", historyLength?}.
core::Result<GetTaskRequest> GetTaskRequestFromJson(const boost::json::value& request);
/// CancelTaskRequest {name}.
core::Result<CancelTaskRequest> CancelTaskRequestFromJson(const boost::json::value& request);
/// The task id of TaskSubscriptionRequest {name}.
core::Result<std::string> TaskSubscriptionFromJson(const boost::json::value& request);
/// CreateTaskPushNotificationConfigRequest {parent: "tasks/{id}" (or
/// "tasks/{id}/pushNotificationConfigs", as the proto's REST route binds it), configId?,
/// config: TaskPushNotificationConfig}, or (a REST body some clients send) the
/// TaskPushNotificationConfig itself beside `parent`. The config id is
/// pushNotificationConfig.id, else configId, else the last segment of config.name, else ""
/// (the push service then uses the task id).
core::Result<PushNotificationConfig> CreatePushConfigFromJson(const boost::json::value& request);
/// Get / Delete {name: "tasks/{id}/pushNotificationConfigs/{configId}"}.
core::Result<PushConfigRef> PushConfigNameFromJson(const boost::json::value& request);
/// List {parent: "tasks/{id}", pageSize?, pageToken?} (paging is not used: one page).
core::Result<PushConfigRef> PushConfigParentFromJson(const boost::json::value& request);

}  // namespace a2ad::protocol::v03::proto_json
