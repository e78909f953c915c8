#pragma once
// Every error body a2ad sends is written here, one function per surface (STYLE.md #3):
// - A2A JSON-RPC: {"jsonrpc":"2.0","id":..,"error":{code,message,data}} (protocol/jsonrpc.hpp),
//   HTTP 200;
// - the REST surface (OpenWOP routes, webhooks, push routes, errors raised before routing on
//   them): OpenWOP's closed envelope {"error":"<snake_code>","message":"...","details"?:{..}}
//   (DIGEST §2.3) with the status of protocol/error_table.hpp.
//
// Nothing internal reaches a client: an internal failure (kInternal) or an unreadable stored
// record (kDataCorrupt) is logged in full under a fresh error id, and the client gets a plain
// message carrying that id (details: errorId, and taskId for an unreadable record). Other
// errors describe the caller's own request and pass through unchanged.
//
// Thread safety: free functions; safe from any thread (they log through core/log.hpp).
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/error.hpp"
#include "a2ad/protocol/jsonrpc.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

/// `e` as a client may see it (see the file comment). Logs internal ones.
core::Error ClientFacing(core::Error e);

/// The JSON-RPC error answer (HTTP 200) to request `id`.
HttpResponse JsonRpcErrorResponse(const boost::json::value& id, const core::Error& e,
                                  protocol::WireVersion version);
/// Its JSON text (for SSE `event: error` frames).
std::string JsonRpcErrorText(const boost::json::value& id, const core::Error& e,
                             protocol::WireVersion version);

/// The REST answer to `e`: status and code from protocol::MapRestError, details from e's
/// details (but `reason`, which is the code).
HttpResponse RestErrorResponse(const core::Error& e);
/// A REST error the route decides itself.
HttpResponse RestErrorResponse(int status, std::string_view code, std::string message,
                               const std::vector<core::ErrorDetail>& details = {});
/// 405 method_not_allowed with `Allow: <allow>`; the message says what to use ("use <allow>"
/// when none is given).
HttpResponse MethodNotAllowed(std::string_view allow, std::string message = "");

}  // namespace a2ad::transport
