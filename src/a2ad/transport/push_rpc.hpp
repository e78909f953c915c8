#pragma once
// The push-config JSON-RPC methods of both wire versions (WIRE.md §5, §11.2, §16):
// tasks/pushNotificationConfig/{set,get,list,delete} and
// {Create,Get,List,Delete}TaskPushNotificationConfig, decoded, served by push::PushService,
// encoded. Kept apart from jsonrpc_handler.cpp, which dispatches here.
#include <boost/asio/awaitable.hpp>

#include "a2ad/protocol/jsonrpc.hpp"
#include "a2ad/transport/http_types.hpp"

namespace a2ad::push {
class PushService;
}

namespace a2ad::transport {

/// `push` nullptr: PushNotificationNotSupported (-32003). Unknown task: -32001; unknown
/// config: -32602 naming the config id; a refused URL: -32602 with the guard's reason.
boost::asio::awaitable<HttpResponse> HandlePushConfigRpc(push::PushService* push,
                                                         const protocol::JsonRpcRequest& rpc,
                                                         protocol::WireVersion version);

}  // namespace a2ad::transport
