// The push-config operations of both wire versions (WIRE.md §5, §11.2, §16):
// tasks/pushNotificationConfig/{set,get,list,delete} and
// {Create,Get,List,Delete}TaskPushNotificationConfig, in each protocol::Wire (0.3 JSON-RPC, the
// 0.3 proto's ProtoJSON on its REST and gRPC bindings, 1.0), decoded, served by
// push::PushService, encoded. Unknown task: -32001; unknown config: -32001 too (A2A §3.1.8),
// naming the config id; a refused URL: -32602 with the guard's reason. A task of another tenant than the
// caller's is an unknown task (OpenWOP RFC 0152 §E: no enumeration).
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/push_config_codec.hpp"
#include "a2ad/protocol/v03/proto_json.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Result;

namespace {

using Awaitable = asio::awaitable<Result<OperationResult>>;

json::value ConfigJson(const protocol::PushNotificationConfig& c, protocol::Wire shape) {
  switch (shape) {
    case protocol::Wire::kV03:
      return protocol::v03::TaskPushConfigToJson(c);
    case protocol::Wire::kV03Proto:
      return protocol::v03::proto_json::TaskPushConfigToJson(c);
    case protocol::Wire::kV10:
      break;
  }
  return protocol::v10::TaskPushConfigToJson(c);
}

OperationResult Json(const json::value& result) {
  OperationResult r;
  r.result_json = protocol::SerializeJson(result);
  return r;
}

/// Get and Delete name one config, List a task (`id_required` false): in the 0.3 proto by
/// resource name, elsewhere by members.
Result<protocol::PushConfigRef> Ref(const OperationCall& call, bool id_required) {
  switch (WireOf(call.ctx)) {
    case protocol::Wire::kV03:
      return protocol::v03::PushConfigRefFromJson(call.params, id_required);
    case protocol::Wire::kV03Proto:
      return id_required ? protocol::v03::proto_json::PushConfigNameFromJson(call.params)
                         : protocol::v03::proto_json::PushConfigParentFromJson(call.params);
    case protocol::Wire::kV10:
      break;
  }
  return protocol::v10::PushConfigRefFromJson(call.params, id_required);
}

Result<protocol::PushNotificationConfig> DecodeCreate(const OperationCall& call) {
  switch (WireOf(call.ctx)) {
    case protocol::Wire::kV03:
      return protocol::v03::SetPushConfigParamsFromJson(call.params);
    case protocol::Wire::kV03Proto:
      return protocol::v03::proto_json::CreatePushConfigFromJson(call.params);
    case protocol::Wire::kV10:
      break;
  }
  return protocol::v10::PushConfigFromJson(call.params, "params", true);
}

struct Services {
  push::PushService* push;
  tasks::TaskService* tasks;
};

// Outside coroutines (GCC 12 and braced initializers in coroutines).
core::Error UnknownTask(const std::string& id) {
  return core::Error(core::ErrorCode::kTaskNotFound, "task " + id + " not found", {{"taskId", id}});
}

/// Why the caller may not touch the configs of task `id`: it is not its tenant's (or does
/// not exist); nullopt when it may.
asio::awaitable<std::optional<core::Error>> Invisible(const Services& s, const OperationCall& call,
                                                      const std::string& id) {
  auto rec = co_await s.tasks->GetRecord(call.ctx, id);
  if (!rec) co_return std::move(rec).error();
  if (!rec.value()) co_return UnknownTask(id);
  co_return std::nullopt;
}

Awaitable Create(Services s, const OperationCall& call) {
  push::PushService* push = s.push;
  auto cfg = DecodeCreate(call);
  if (!cfg) co_return std::move(cfg).error();
  if (auto e = co_await Invisible(s, call, cfg->task_id)) co_return std::move(*e);
  auto stored = co_await push->SetConfig(std::move(cfg).value());
  if (!stored) co_return std::move(stored).error();
  co_return Json(ConfigJson(stored.value(), WireOf(call.ctx)));
}

// v0.3 JSON-RPC get may omit the config id (the config whose id is the task id); the others
// name it.
Awaitable Get(Services s, const OperationCall& call) {
  push::PushService* push = s.push;
  auto ref = Ref(call, WireOf(call.ctx) != protocol::Wire::kV03);
  if (!ref) co_return std::move(ref).error();
  if (auto e = co_await Invisible(s, call, ref->task_id)) co_return std::move(*e);
  auto got = push->GetConfig(ref->task_id, ref->config_id);
  if (!got) co_return std::move(got).error();
  co_return Json(ConfigJson(got.value(), WireOf(call.ctx)));
}

Awaitable Delete(Services s, const OperationCall& call) {
  push::PushService* push = s.push;
  auto ref = Ref(call, true);
  if (!ref) co_return std::move(ref).error();
  if (auto e = co_await Invisible(s, call, ref->task_id)) co_return std::move(*e);
  auto deleted = push->DeleteConfig(ref->task_id, ref->config_id);
  if (!deleted) co_return std::move(deleted).error();
  co_return Json(nullptr);
}

Awaitable List(Services s, const OperationCall& call) {
  push::PushService* push = s.push;
  auto ref = Ref(call, false);
  if (!ref) co_return std::move(ref).error();
  if (auto e = co_await Invisible(s, call, ref->task_id)) co_return std::move(*e);
  auto list = push->ListConfigs(ref->task_id);
  if (!list) co_return std::move(list).error();
  const protocol::Wire shape = WireOf(call.ctx);
  json::array configs;
  for (const auto& c : list.value()) configs.push_back(ConfigJson(c, shape));
  if (shape == protocol::Wire::kV03) co_return Json(configs);  // a bare array (§5)
  if (shape == protocol::Wire::kV03Proto)  // ListTaskPushNotificationConfigResponse, one page
    co_return Json(json::object{{"configs", std::move(configs)}});
  co_return Json(json::object{{"configs", std::move(configs)}, {"nextPageToken", ""}});
}

}  // namespace

void AddPushOperations(OperationTable& table, push::PushService& service,
                       tasks::TaskService& tasks) {
  const Services push{&service, &tasks};
  table.Replace("CreateTaskPushNotificationConfig", ParamsRule::kObject,
                [push](const OperationCall& c) { return Create(push, c); });
  table.Replace("GetTaskPushNotificationConfig", ParamsRule::kObject,
                [push](const OperationCall& c) { return Get(push, c); });
  table.Replace("ListTaskPushNotificationConfigs", ParamsRule::kObject,
                [push](const OperationCall& c) { return List(push, c); });
  table.Replace("DeleteTaskPushNotificationConfig", ParamsRule::kObject,
                [push](const OperationCall& c) { return Delete(push, c); });
}

}  // namespace a2ad::transport
