#pragma once
// The HTTP+JSON (REST) binding of A2A 1.0 (WIRE.md §11, §12.2, §13): the routes of the
// operation table (a2a_operations.hpp, Operation::rest_path) under one base path
// (`/a2a/rest` by default; the card's HTTP+JSON interface URL), bodies in the same ProtoJSON
// as the JSON-RPC params and results, streams as SSE whose events are bare StreamResponses.
//
// A request becomes the operation's params: the JSON body (POST), plus the path parameters
// (`{id}` -> "id", or "taskId" for the push-config routes whose `{configId}` is "id") and, for
// GET, the query parameters (camelCase, integers and booleans as such, other values as
// strings). Unknown body fields and query parameters are ignored. Errors are
// google.rpc.Status JSON: {"error":{"code":<http>,"status":"<GRPC_CODE>","message":..,
// "details":[ErrorInfo{reason,domain,metadata}]}}, with the status of protocol/error_table.
// A path under the base that names no route: 404; a route with another method: 405 + Allow;
// a body that is not JSON: 400; a Content-Type other than JSON: 415. A2A-Version must be
// absent or 1.x (this binding has no 0.3 form). A2A-Extensions is read as on JSON-RPC.
//
// Thread safety: immutable after construction; Handle may run concurrently on any thread.
#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>

#include "a2ad/transport/a2a_operations.hpp"
#include "a2ad/transport/extensions.hpp"
#include "a2ad/transport/http_types.hpp"
#include "a2ad/transport/jsonrpc_handler.hpp"

namespace a2ad::transport {

/// The default base path of the REST binding.
inline constexpr const char* kA2aRestPath = "/a2a/rest";

class A2aRestBinding {
 public:
  /// `operations` and `extensions` (may be null) must outlive the binding.
  A2aRestBinding(const OperationTable& operations, std::string base_path,
                 StreamOptions stream_options, const ExtensionRegistry* extensions);

  /// True when `path` is the base path or under it.
  bool Owns(std::string_view path) const;
  /// Serves a request whose path Owns().
  boost::asio::awaitable<HttpResponse> Handle(const HttpRequest& request) const;

 private:
  const OperationTable& operations_;
  std::string base_;
  StreamOptions stream_options_;
  const ExtensionRegistry* extensions_;
};

/// The google.rpc.Status answer to `e` (after ClientFacing).
HttpResponse A2aRestErrorResponse(const core::Error& e);
/// Its JSON text (for SSE `event: error`).
std::string A2aRestErrorText(const core::Error& e);

}  // namespace a2ad::transport
