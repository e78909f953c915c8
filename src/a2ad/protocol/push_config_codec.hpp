#pragma once
// Push notification config JSON for both wire versions (WIRE.md §4, §5, §8.2, §10, §11.2,
// §16.1) <-> protocol::PushNotificationConfig. Decoders set wire_version ("0.3"/"1.0")
// and report the first offending field by its JSON path; encoders never emit credentials.
//
// v0.3 PushNotificationConfig {url, id?, token?, authentication?{schemes[], credentials?}},
//      wrapped as TaskPushNotificationConfig {taskId, pushNotificationConfig}.
// v1.0 TaskPushNotificationConfig, flattened: {tenant?, id?, taskId, url, token?,
//      authentication?{scheme, credentials?}}.
//
// Decoders refuse, with kInvalidParams naming the field (json_util.hpp), a missing or
// mistyped member, an empty v0.3 `schemes`, a url over 2048 characters, a token over 4096,
// an id over 256, an authentication scheme that is not an HTTP token (at most 64
// characters), and a token or credentials holding a line break. They do not vet the URL
// (push::PushService does).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol {

/// Get/Delete/List params of both versions, decoded.
struct PushConfigRef {
  std::string task_id;
  std::string config_id;  // "" = not given (v0.3 get/delete default to the task id)
};

namespace v03 {
/// A PushNotificationConfig object (inline in message/send or inside set params).
core::Result<PushNotificationConfig> PushConfigFromJson(const boost::json::value& v,
                                                        std::string_view path);
/// tasks/pushNotificationConfig/set params: TaskPushNotificationConfig.
core::Result<PushNotificationConfig> SetPushConfigParamsFromJson(const boost::json::value& params);
/// get: {id, pushNotificationConfigId?}; list: {id}; delete: {id, pushNotificationConfigId}.
core::Result<PushConfigRef> PushConfigRefFromJson(const boost::json::value& params,
                                                  bool config_id_required);
boost::json::object TaskPushConfigToJson(const PushNotificationConfig& c);
}  // namespace v03

namespace v10 {
/// A (Task)PushNotificationConfig object; `task_id_required` for CreateTaskPushNotificationConfig.
core::Result<PushNotificationConfig> PushConfigFromJson(const boost::json::value& v,
                                                        std::string_view path,
                                                        bool task_id_required);
/// Get/Delete: {taskId, id}; List: {taskId, pageSize?, pageToken?}.
core::Result<PushConfigRef> PushConfigRefFromJson(const boost::json::value& params,
                                                  bool config_id_required);
boost::json::object TaskPushConfigToJson(const PushNotificationConfig& c);
}  // namespace v10

}  // namespace a2ad::protocol
