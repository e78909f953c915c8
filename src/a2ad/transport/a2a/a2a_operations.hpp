#pragma once
// The one table of A2A operations (WIRE.md §5, §11): what each binding serves, named once.
//
// An Operation is transport-neutral: its names on each wire (the A2A 1.0 name, which is also
// the gRPC method; the A2A 0.3 JSON-RPC name; the REST routes of 1.0 and 0.3), whether it
// streams, the scope a caller needs, the extension that adds it, and a handler that takes the
// decoded call (CallContext + params in the JSON shape of the call, protocol::Wire) and returns the
// result as JSON text in that shape, or a stream to pump. A binding only frames: JSON-RPC
// (jsonrpc_handler.cpp) looks a method up by name, checks the version and params, calls the
// handler and wraps the result in its envelope; the REST bindings (a2a_rest.hpp, 1.0 and 0.3)
// and the gRPC services (grpc/grpc_binding.hpp, lf.a2a.v1 and a2a.v1) map their routes and
// messages onto the same entries.
//
// Adding an A2A method: one Operation in a2a_operations.cpp (core A2A) or in an extension's
// list (extensions.hpp), with a test in tests/transport/. Nothing else names a method but the
// gRPC services, whose protos fix their RPCs (an RPC names the operation it runs).
//
// Thread safety: a table is built before serving and immutable afterwards; Find* may be
// called from any thread. Handlers run on the calling connection's executor.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/protocol/jsonrpc.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::push {
class PushService;
}

namespace a2ad::transport {

/// The JSON a call's params and result are in (protocol/encode.hpp). A2A 1.0 has one
/// (ProtoJSON of lf.a2a.v1, on every binding); A2A 0.3 has two: the JSON-RPC shapes of its
/// types.ts (decoded by protocol/v03/codec.hpp) and, on its REST and gRPC bindings, the
/// ProtoJSON of its proto a2a.v1 (protocol/v03/proto_json.hpp; a 0.3 call on any binding but
/// JSON-RPC). Semantics follow the version either way (v0.3: historyLength 0 is unlimited, a
/// canceled task is not cancelable again, tasks/resubscribe of a finished task replays it).
inline protocol::Wire WireOf(const protocol::CallContext& ctx) {
  if (ctx.version == protocol::WireVersion::kV10) return protocol::Wire::kV10;
  return ctx.binding == protocol::Binding::kJsonRpc ? protocol::Wire::kV03
                                                    : protocol::Wire::kV03Proto;
}

/// A Task or Message result is handed over as the model (OperationResult::task, message), not
/// as text: the gRPC binding of A2A 1.0, which writes its response messages from the model.
inline bool WritesModel(const protocol::CallContext& ctx) {
  return ctx.binding == protocol::Binding::kGrpc && ctx.version == protocol::WireVersion::kV10;
}

/// What a handler is given.
struct OperationCall {
  const protocol::CallContext& ctx;  // WireOf(ctx): the JSON of params and result
  const boost::json::value& params;  // an object, or null when the operation allows none
  /// The request's headers (gRPC: its metadata under the same names): Last-Event-ID and the
  /// A2A-*-Generation headers; nullptr for none.
  const HttpRequest* http = nullptr;
};

/// What a handler returns on success.
struct OperationResult {
  std::string result_json;  // the result, as JSON text (unary operations)
  /// A Task or Message result as the model instead, for a binding that writes it itself (gRPC
  /// A2A 1.0, WritesModel): result_json is then empty. Held by pointer: every result passes
  /// through several coroutine frames, and a Task in place would triple their size.
  std::shared_ptr<const protocol::Task> task;
  std::shared_ptr<const protocol::Message> message;
  std::vector<std::pair<std::string, std::string>> headers;  // extra response headers
  std::optional<tasks::StreamStart> stream;                  // streaming operations
  /// A stream that ends at input-required / auth-required too (message/stream: one cycle),
  /// not only at a terminal state (resubscribe).
  bool stream_closes_on_interrupt = false;
  /// The task the call was about, for the access log ("" : none, or not known here).
  std::string task_id;
};

using OperationHandler =
    std::function<boost::asio::awaitable<core::Result<OperationResult>>(const OperationCall&)>;

/// What the binding checks of `params` before the handler runs.
enum class ParamsRule {
  kObject,          // an object; else kInvalidParams naming "params"
  kObjectOrAbsent,  // an object or absent (null)
  kUnchecked,       // the handler decides (an operation that is refused whatever it gets)
};

struct Operation {
  std::string name;         // A2A 1.0 JSON-RPC and gRPC name: "SendMessage"
  std::string v03_name;     // A2A 0.3 JSON-RPC name: "message/send"; "" when 0.3 lacks it
  std::string http_method;  // REST binding: "POST"
  std::string rest_path;    // REST binding, {id} for path parameters: "/tasks/{id}:cancel"
  /// The A2A 0.3 REST route (WIRE.md §8.1), as the 0.3 proto's google.api.http annotation
  /// binds it: a path parameter names the request field it fills and the resource pattern it
  /// matches, "/v1/{name=tasks/*}:cancel"; "" when 0.3 lacks the operation.
  std::string v03_rest_path;
  bool streaming = false;  // answers with a stream (SSE; gRPC server streaming)
  std::string scope;       // the scope a caller needs (the auth layer enforces it)
  std::string extension;   // URI of the extension that adds it; "" for core A2A
  ParamsRule params = ParamsRule::kObject;
  OperationHandler handler;
  /// Decodes params without acting on them (for a request that will not be executed: a
  /// JSON-RPC notification); unset: nothing beyond the params rule is checked.
  std::function<std::optional<core::Error>(const OperationCall&)> check;
  /// An extension's JSON-RPC method of one name in both versions (`name`; `v03_name` empty):
  /// the request's A2A-Version says which (none: 0.3), as for no other method.
  bool any_version = false;
};

class OperationTable {
 public:
  /// Adds `op`. A name (either version's) already taken is a programming error:
  /// std::logic_error, at startup.
  void Add(Operation op);
  /// Replaces the handler and params rule of the operation named `name` (EnablePush).
  void Replace(std::string_view name, ParamsRule params, OperationHandler handler);
  /// Sets the `check` of the operation named `name`.
  void SetCheck(std::string_view name,
                std::function<std::optional<core::Error>(const OperationCall&)> check);

  struct Match {
    const Operation* op;
    protocol::WireVersion version;  // the version the name belongs to
  };
  /// The operation a JSON-RPC method names (a 1.0 or a 0.3 name); nullopt when none does.
  std::optional<Match> FindJsonRpc(std::string_view method) const;
  /// By A2A 1.0 name; nullptr when none.
  const Operation* Find(std::string_view name) const;
  const std::vector<Operation>& operations() const { return ops_; }

 private:
  std::vector<Operation> ops_;
  std::map<std::string, std::pair<size_t, protocol::WireVersion>, std::less<>> by_rpc_name_;
};

/// The core A2A operations (WIRE.md §5): message send and stream, tasks get, list, cancel and
/// subscribe, the four push-config methods (answering PushNotificationNotSupported until
/// AddPushOperations) and the extended card (ExtendedAgentCardNotConfigured until
/// ServeExtendedCard).
OperationTable CoreA2aOperations(tasks::TaskService& service, size_t stream_queue_limit);

/// Serves the push-config operations of `table` with `push` (push_operations.cpp). The task a
/// config names must be visible to the caller (`service`: its tenant's), else TaskNotFound.
void AddPushOperations(OperationTable& table, push::PushService& push, tasks::TaskService& service);

/// The authenticated extended agent card (agent_card.hpp CardAudience::kExtended) that
/// GetExtendedAgentCard / agent/getAuthenticatedExtendedCard answer. Set once the card is
/// final (after the gRPC listener has its port); until then the operation answers
/// ExtendedAgentCardNotConfigured. Thread safety: Set and Body from any thread.
class ExtendedCard {
 public:
  /// `v03` (agent_card.hpp CardForm::kV03) answers A2A 0.3 JSON-RPC calls, `v10` A2A 1.0
  /// ones; 0.3 REST and gRPC calls get the 0.3 card with `security` in the 0.3 proto's shape
  /// ({"schemes": {name: {"list": [...]}}}), which their SDKs read.
  void Set(const boost::json::object& v03, const boost::json::object& v10);
  /// The card (JSON text) for a call of `shape`; "" until Set.
  std::string Body(protocol::Wire shape) const;

 private:
  mutable std::mutex mu_;
  std::string v03_;
  std::string proto03_;
  std::string v10_;
};

/// Replaces the streaming operations of `table` (SendStreamingMessage, SubscribeToTask) by an
/// UnsupportedOperation refusal (A2A: capabilities.streaming false).
void DisableStreaming(OperationTable& table);

/// Serves GetExtendedAgentCard of `table` from `card` to authenticated callers (no particular
/// scope); the anonymous development caller gets UnsupportedOperation.
void ServeExtendedCard(OperationTable& table, std::shared_ptr<const ExtendedCard> card);

/// Binding helpers. The major version of an A2A-Version value ("1.0" -> 1, "0.3" -> 0, a
/// missing minor is 0), its minor in `minor`; -1 when malformed.
int A2aVersionMajor(std::string_view version, int& minor);
/// The version check of a binding that serves A2A 1.0 only (REST, gRPC): `version` (the
/// A2A-Version header, the a2a-version metadata) absent or 1.x; else VersionNotSupported.
std::optional<core::Error> RequireV10(std::string_view version);
/// The same for a binding that serves A2A 0.3 only (its REST routes, a2a.v1 on gRPC):
/// `version` absent (0.3 clients send none) or 0.3 (what 1.x SDKs send in 0.3 mode).
std::optional<core::Error> RequireV03(std::string_view version);
/// True when an A2A stream ends after `item`: a terminal state, or (close_on_interrupt: a
/// message/stream cycle) input-required / auth-required. Log entries with no A2A projection
/// never end one.
inline bool EndsA2aStream(const tasks::StreamItem& item, bool close_on_interrupt) {
  return item.a2a && (item.terminal || (item.interrupted && close_on_interrupt));
}
/// How a v0.3 stream writes `item`'s `final`: false on a status update the stream goes on
/// after (an interrupt seen by a subscribe), else as projected.
inline protocol::Final StreamFinal(const tasks::StreamItem& item, bool stream_ends) {
  return item.event.kind == protocol::StreamEvent::Kind::kStatusUpdate && !stream_ends
             ? protocol::Final::kNotFinal
             : protocol::Final::kAsProjected;
}
/// True for a JSON request Content-Type (application/json, application/a2a+json, any
/// parameters) or none (curl without -H).
bool IsJsonContentType(std::string_view content_type);

/// Scopes of the core operations, enforced by every binding (auth.hpp): tasks:read for get,
/// list and subscribe, tasks:write for send and cancel, push:manage for push configs.
inline constexpr const char* kScopeTasksRead = "tasks:read";
inline constexpr const char* kScopeTasksWrite = "tasks:write";
inline constexpr const char* kScopePushManage = "push:manage";

}  // namespace a2ad::transport
