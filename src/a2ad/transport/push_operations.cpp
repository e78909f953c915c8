#include "a2ad/transport/push_rpc.hpp"

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/push_config_codec.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/transport/error_body.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using protocol::WireVersion;

namespace {
HttpResponse Reply(const json::object& envelope) {
  return JsonResponse(200, protocol::SerializeJson(envelope));
}

json::value ConfigJson(const protocol::PushNotificationConfig& c, WireVersion v) {
  return v == WireVersion::kV03 ? protocol::v03::TaskPushConfigToJson(c)
                                : protocol::v10::TaskPushConfigToJson(c);
}
}  // namespace

asio::awaitable<HttpResponse> HandlePushConfigRpc(push::PushService* push,
                                                  const protocol::JsonRpcRequest& rpc,
                                                  WireVersion v) {
  const std::string& m = rpc.method;
  auto fail = [&](const Error& e) { return JsonRpcErrorResponse(rpc.id, e, v); };
  auto ok = [&](json::value result) {
    return Reply(protocol::MakeJsonRpcResult(rpc.id, std::move(result)));
  };
  if (!push)
    co_return fail(Error(ErrorCode::kPushNotificationNotSupported,
                         m + ": push notifications are not enabled on this server"));
  const json::value& params = rpc.params;
  if (!params.is_object())
    co_return fail(
        Error(ErrorCode::kInvalidParams, "params: expected an object", {{"field", "params"}}));

  if (m == "tasks/pushNotificationConfig/set" || m == "CreateTaskPushNotificationConfig") {
    auto cfg = v == WireVersion::kV03 ? protocol::v03::SetPushConfigParamsFromJson(params)
                                      : protocol::v10::PushConfigFromJson(params, "params", true);
    if (!cfg) co_return fail(cfg.error());
    auto stored = co_await push->SetConfig(std::move(cfg).value());
    if (!stored) co_return fail(stored.error());
    co_return ok(ConfigJson(stored.value(), v));
  }
  const bool is_get =
      m == "tasks/pushNotificationConfig/get" || m == "GetTaskPushNotificationConfig";
  const bool is_delete =
      m == "tasks/pushNotificationConfig/delete" || m == "DeleteTaskPushNotificationConfig";
  // v0.3 get may omit the config id (the config whose id is the task id); delete needs it.
  const bool id_required = v == WireVersion::kV10 ? (is_get || is_delete) : is_delete;
  auto ref = v == WireVersion::kV03 ? protocol::v03::PushConfigRefFromJson(params, id_required)
                                    : protocol::v10::PushConfigRefFromJson(params, id_required);
  if (!ref) co_return fail(ref.error());
  if (is_get) {
    auto got = push->GetConfig(ref->task_id, ref->config_id);
    if (!got) co_return fail(got.error());
    co_return ok(ConfigJson(got.value(), v));
  }
  if (is_delete) {
    auto deleted = push->DeleteConfig(ref->task_id, ref->config_id);
    if (!deleted) co_return fail(deleted.error());
    co_return ok(nullptr);
  }
  // list
  auto list = push->ListConfigs(ref->task_id);
  if (!list) co_return fail(list.error());
  json::array configs;
  for (const auto& c : list.value()) configs.push_back(ConfigJson(c, v));
  if (v == WireVersion::kV03) co_return ok(std::move(configs));  // a bare array (WIRE.md §5)
  co_return ok(json::object{{"configs", std::move(configs)}, {"nextPageToken", ""}});
}

}  // namespace a2ad::transport
