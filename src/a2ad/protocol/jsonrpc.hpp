#pragma once
// JSON-RPC 2.0 envelope (WIRE.md §5, §12.2, §19.2). Pure functions over text and JSON.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

enum class WireVersion { kV03, kV10 };

struct JsonRpcRequest {
  boost::json::value id;  // string, integer or null; echoed with its JSON type
  std::string method;
  boost::json::value params;  // null when absent
  /// No "id" member: a notification. A2A has none; the endpoint still checks its method and
  /// params (so a caller learns what is wrong with it) and then refuses it.
  bool notification = false;
};

/// Parses one JSON-RPC request. On error returns kParseError (not JSON), kInvalidRequest
/// (bad envelope, or a batch: batches are refused) or kInvalidParams (a value in params that
/// cannot be represented); `id_out` receives the request id when
/// it could be read (else null), so the error response can echo it.
core::Result<JsonRpcRequest> ParseJsonRpcRequest(std::string_view body, boost::json::value& id_out);

/// {"jsonrpc":"2.0","id":id,"result":result}
boost::json::object MakeJsonRpcResult(const boost::json::value& id, boost::json::value result);

/// {"jsonrpc":"2.0","id":id,"error":{code,message,data}}. v1.0: `data` is an array whose
/// first item is a google.rpc.ErrorInfo (plus google.rpc.BadRequest for a field error);
/// v0.3: `data` is an object of the error's details (omitted when there are none).
boost::json::object MakeJsonRpcError(const boost::json::value& id, const core::Error& error,
                                     WireVersion version);

/// The A2A 1.0 error details of `error` (JSON-RPC `data`, REST `details`, gRPC status
/// details): a google.rpc.ErrorInfo {reason: the code's UPPER_SNAKE name, domain
/// "a2a-protocol.org", metadata: the error's details}, plus a google.rpc.BadRequest whose
/// violation is `message` when a detail names a "field".
boost::json::array ErrorDetailsJson(const core::Error& error, std::string_view message);

/// Which wire version a method name belongs to ("message/send" -> v0.3, "SendMessage" -> v1.0).
WireVersion MethodVersion(std::string_view method);

}  // namespace a2ad::protocol
