#pragma once
// The HTTP+JSON (REST) bindings of A2A, one per wire version, over the routes of the operation
// table (a2a_operations.hpp) under one base path each (the card's HTTP+JSON interface URLs):
//
// A2A 1.0 (WIRE.md §11, §12.2, §13), `/a2a/rest` by default: Operation::rest_path, bodies in
// the same ProtoJSON as the JSON-RPC params and results, streams as SSE whose events are bare
// StreamResponses. A request becomes the operation's params: the JSON body (POST), plus the
// path parameters (`{id}` -> "id", or "taskId" for the push-config routes whose `{configId}`
// is "id") and, for GET and DELETE, the query parameters (camelCase, integers and booleans as
// such, other values as strings). Errors are google.rpc.Status JSON: {"error":{"code":<http>,
// "status":"<GRPC_CODE>","message":..,"details":[ErrorInfo{reason,domain,metadata}]}}, with
// the status of protocol/error_table. A2A-Version must be absent or 1.x.
//
// A2A 0.3 (WIRE.md §8), `/a2a/rest03` by default (its routes start with /v1, which would
// collide with the OpenWOP surface at the server's root): Operation::v03_rest_path, bodies in
// the ProtoJSON of the 0.3 proto (protocol/v03/proto_json.hpp: `content`, not `parts`;
// `TASK_STATE_CANCELLED`). A request becomes the 0.3 proto's request message, as its
// google.api.http annotations transcode it: the body (POST; empty or `null` is {}), the
// resource names the path binds (`/v1/tasks/t1:cancel` -> "name": "tasks/t1"; they win over
// the body) and, for GET and DELETE, the query (`historyLength`, `history_length`). The
// create-push-config body may be the whole CreateTaskPushNotificationConfigRequest or only its
// TaskPushNotificationConfig (SDKs send either; WIRE.md §8.3). Send and stream answer
// SendMessageResponse / StreamResponse; delete answers {}. Errors are {"code":<JSON-RPC
// code>,"message":..,"data"?:{details}} with the HTTP status of protocol/error_table (the
// 0.3 SDKs agree on neither; their clients read the code or only the status, §8.4), in a
// stream `event: error` with the same body. A2A-Version must be absent or 0.3; with
// StreamOptions::serve_v03 false (`--a2a-versions 1.0`) every route answers
// VersionNotSupported. X-A2A-Extensions (or A2A-Extensions) activates extensions; the
// activated ones are echoed in X-A2A-Extensions.
//
// Both: a path under the base that names no route: 404; a route with another method: 405 +
// Allow; a body that is not a JSON object: 400; a Content-Type other than JSON: 415.
// Subscribe takes GET and POST. Unknown body members and query parameters are ignored. SSE
// events carry `id: <log sequence>`, and the Last-Event-ID header resumes a subscribe.
//
// Thread safety: immutable after construction; Handle may run concurrently on any thread.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "a2ad/protocol/jsonrpc.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/a2a/extensions.hpp"
#include "a2ad/transport/http/http_types.hpp"
#include "a2ad/transport/a2a/jsonrpc/jsonrpc_handler.hpp"
#include "a2ad/transport/http/sse_pump.hpp"

namespace a2ad::transport {

/// The default base paths of the REST bindings: A2A 1.0 and A2A 0.3.
inline constexpr const char* kA2aRestPath = "/a2a/rest";
inline constexpr const char* kA2aRest03Path = "/a2a/rest03";

class A2aRestBinding {
 public:
  /// `operations` and `extensions` (may be null) must outlive the binding. `version` chooses
  /// the binding: kV10 or kV03 (see the file comment).
  A2aRestBinding(const OperationTable& operations, std::string base_path,
                 StreamOptions stream_options, const ExtensionRegistry* extensions,
                 protocol::WireVersion version = protocol::WireVersion::kV10);

  /// True when `path` is the base path or under it.
  bool Owns(std::string_view path) const;
  /// Serves a request whose path Owns().
  boost::asio::awaitable<HttpResponse> Handle(const HttpRequest& request) const;

 private:
  HttpResponse ErrorResponse(const core::Error& e) const;

  const OperationTable& operations_;
  std::string base_;
  StreamOptions stream_options_;
  const ExtensionRegistry* extensions_;
  protocol::WireVersion version_;
};

/// A2A 1.0: the google.rpc.Status answer to `e` (after ClientFacing).
HttpResponse A2aRestErrorResponse(const core::Error& e);
/// Its JSON text (for SSE `event: error`).
std::string A2aRestErrorText(const core::Error& e);

/// An error the HTTP server answers itself (http_server.hpp: 400, 408, 413, 431, 500, 503)
/// for a request on a REST binding's path, in that binding's error shape with HTTP status
/// `status` (router.hpp SurfaceTransportErrors): google.rpc.Status for 1.0, {code, message}
/// for 0.3. The error-table row of 413 is PayloadTooLarge, of 500 Internal, of 503
/// Unavailable, of the others InvalidRequest (408 is DEADLINE_EXCEEDED, 431
/// RESOURCE_EXHAUSTED in the 1.0 body's `status`). `message` is the server's own.
HttpResponse A2aRestTransportError(int status, std::string message, protocol::WireVersion version);

/// A2A 0.3 (a2a_rest_v03.cpp): the {"code","message","data"?} answer to `e` (after
/// ClientFacing), with the HTTP status of the error table.
HttpResponse A2aRest03ErrorResponse(const core::Error& e);
/// Its JSON text (for SSE `event: error`).
std::string A2aRest03ErrorText(const core::Error& e);
/// The SSE frames of a 0.3 REST stream: `id: <sequence>` and a 0.3 ProtoJSON StreamResponse
/// per event, `final` on the status update the stream ends with (a terminal state, or with
/// `close_on_interrupt` an interrupted one) and only there; the error that cuts a stream short
/// as `event: error`.
SsePumpSpec A2aRest03StreamSpec(bool close_on_interrupt, std::chrono::milliseconds heartbeat);

}  // namespace a2ad::transport
