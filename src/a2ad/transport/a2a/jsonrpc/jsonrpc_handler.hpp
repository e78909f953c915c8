#pragma once
// The JSON-RPC binding of A2A v0.3 and v1.0 (WIRE.md §1.3, §5, §11, §19.2): one endpoint,
// dispatching over the operation table (a2a_operations.hpp). Per request: Content-Type,
// envelope (protocol/jsonrpc.hpp), method -> operation (-32601 when none), the wire version
// from the method name (the `A2A-Version` header must agree, absent = 0.3, else -32009),
// extensions activated once (extensions.hpp), params checked by the operation's rule, the
// handler, and its result wrapped in the envelope or pumped as SSE (sse_pump.hpp). Every
// error is a JSON-RPC error with HTTP 200.
//
// Thread safety: built and configured (EnablePush, extensions) before serving; Handle may
// then run concurrently on any I/O thread.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>

#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/a2a/extensions.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::push {
class PushService;
}

namespace a2ad::transport {

struct StreamOptions {
  /// A `: keep-alive` comment is sent on a stream idle this long (proxies keep it open).
  std::chrono::milliseconds heartbeat{15000};
  /// Events queued for one stream before it is closed as too slow (the client resumes
  /// with Last-Event-ID). Each queued event is a pointer to an item shared by all streams.
  size_t queue_limit = 1024;
  /// false: A2A 0.3 method names, and the routes of the 0.3 REST binding (a2a_rest.hpp),
  /// answer VersionNotSupported (`--a2a-versions 1.0`).
  bool serve_v03 = true;
};

/// Streams (WIRE.md §7, §13; issue "Streaming that never loses an event"): every SSE event
/// carries `id: <log sequence>`. message/stream and SendStreamingMessage close after a
/// terminal or interrupted state (v0.3 `final: true` on that event). tasks/resubscribe and
/// SubscribeToTask are read-only observers that stay through interrupts and close at a
/// terminal state; the `Last-Event-ID` header (or params.metadata.lastEventId) replays what
/// the client missed first. A stream too slow to keep up ends with an `event: error`.
class JsonRpcHandler {
 public:
  /// `extensions` (may be null: none) must outlive the handler; their operations join the
  /// table here.
  explicit JsonRpcHandler(tasks::TaskService& service, StreamOptions stream_options = {},
                          const ExtensionRegistry* extensions = nullptr);
  boost::asio::awaitable<HttpResponse> Handle(HttpRequest request);
  /// Serves the push-config methods (push_operations.cpp); without it they answer -32003.
  void EnablePush(push::PushService& push) { AddPushOperations(operations_, push, service_); }
  /// The agent does not stream (--no-streaming; the card says so): the streaming operations
  /// answer UnsupportedOperation on every binding.
  void DisableStreaming() { transport::DisableStreaming(operations_); }
  /// Serves GetExtendedAgentCard from `card` (a2a_operations.hpp). Call before serving.
  void ServeExtendedCard(std::shared_ptr<const ExtendedCard> card) {
    transport::ServeExtendedCard(operations_, std::move(card));
  }
  const OperationTable& operations() const { return operations_; }

 private:
  tasks::TaskService& service_;
  StreamOptions stream_options_;
  const ExtensionRegistry* extensions_;
  OperationTable operations_;
};

}  // namespace a2ad::transport
