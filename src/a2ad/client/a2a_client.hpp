#pragma once
// A2aClient: a2ad as a client of other A2A agents (issue 16), on the server's own event loop
// and its one egress guard (net/http_client.hpp): every URL, the card's and the endpoint's,
// is vetted at the moment of the call. The binding and version the peer's card chose
// (peer_card.hpp): JSON-RPC of A2A 1.0 (SendMessage, GetTask, CancelTask with
// `A2A-Version: 1.0`) or 0.3 (message/send, tasks/get, tasks/cancel), the REST binding
// of 1.0 (POST /message:send, GET /tasks/{id}, POST /tasks/{id}:cancel, POST
// /message:stream and /tasks/{id}:subscribe as SSE of StreamResponse; an error is a
// google.rpc.Status body, its `status` kept as peerCode), or gRPC of 1.0 through the
// PeerTransport it was given (client/grpc/grpc_peer.hpp). Each call retries as retry.hpp
// says; an error the peer answers is an answer, not retried.
//
// Errors: the HttpClient's (egress detail) after the retries; an HTTP status that is not 2xx
// with no JSON-RPC body, kUnavailable with detail {"status": "503"}; a JSON-RPC error,
// kInvalidAgentResponse with details {"peerCode", "peerMessage"} (the peer's message cut to
// 200 characters); an answer that is not JSON-RPC, kInvalidAgentResponse. Every error also
// carries {"attempts": N}.
//
// Thread safety: immutable; calls may run concurrently from any thread.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <functional>
#include <string>

#include "a2ad/client/peer_card.hpp"
#include "a2ad/client/peer_transport.hpp"
#include "a2ad/client/retry.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/net/http_client.hpp"

namespace a2ad::client {

struct CallOptions {
  net::HeaderList headers;  // credentials for this peer (never logged)
  /// FetchCard: refuse a card unless its signature is verified (else an unsigned card, or
  /// one whose signature cannot be checked, is accepted: the caller may warn).
  bool require_verified_card = false;
  RetryPolicy retry;
  Sleeper sleep;                             // empty: a steady timer
  std::chrono::milliseconds timeout{10000};  // per attempt
};

/// What message/send answered: a task, or (an agent may) a message. Normalized.
struct SendResult {
  bool is_task = true;
  boost::json::object task;
  boost::json::object message;
};

/// One event of a peer's stream (either version's shape), normalized:
///   {kind: "task", task} | {kind: "message", message} |
///   {kind: "status", taskId, state, status, final} | {kind: "artifact", taskId, artifact}
/// and eventId when the peer numbered its events (the SSE id). {kind: "unknown"} otherwise.
boost::json::object NormalizeStreamEvent(const boost::json::value& result);

/// A streaming call's event handler: false stops reading.
using StreamHandler = std::function<bool(const boost::json::object& event)>;

class A2aClient {
 public:
  /// `http` (and `grpc`, the transport of peers chosen with binding GRPC; null: such peers
  /// are refused with kUnsupportedOperation) must outlive the client.
  explicit A2aClient(const net::HttpClient& http, const PeerTransport* grpc = nullptr)
      : http_(http), grpc_(grpc) {}

  /// Fetches and reads the card at `card_url` (asking for the 1.0 form). A signed card is
  /// verified (protocol/card_signature.hpp, the SDKs' canonical form): the key is the JWKS
  /// entry named by the protected header's `kid` at its `jku`, which must be on the card's
  /// origin (scheme, host, port), fetched through the same guard. A signature that does not
  /// verify refuses the card (kInvalidAgentResponse, "...signature..."): a tampered card.
  boost::asio::awaitable<core::Result<PeerCard>> FetchCard(const std::string& card_url,
                                                           const CallOptions& options) const;

  /// `message` in the neutral shape of peer_card.hpp ({messageId, role, parts: [{text} |
  /// {data}], taskId?, contextId?, metadata?}), written in the card's version.
  /// `push` (when not empty: {url, token}) asks the peer to push the task's changes there
  /// (1.0 configuration.taskPushNotificationConfig, 0.3 configuration.pushNotificationConfig).
  boost::asio::awaitable<core::Result<SendResult>> Send(const PeerCard& peer,
                                                        const boost::json::object& message,
                                                        const CallOptions& options,
                                                        boost::json::object push = {}) const;
  boost::asio::awaitable<core::Result<boost::json::object>> GetTask(
      const PeerCard& peer, const std::string& task_id, const CallOptions& options) const;
  boost::asio::awaitable<core::Result<boost::json::object>> CancelTask(
      const PeerCard& peer, const std::string& task_id, const CallOptions& options) const;

  /// A streaming call (SendStreamingMessage, SubscribeToTask; in 0.3 message/stream,
  /// tasks/resubscribe): each event normalized (NormalizeStreamEvent) to `on_event` until
  /// the stream ends, `on_event` answers false, or `window` passes (net::StreamEnd says
  /// which). `last_event_id` (when not empty) is sent as Last-Event-ID: a peer that keeps
  /// its stream (a2ad) resumes after it. Not retried: the caller re-attaches. Errors as for
  /// Call (a JSON-RPC error answered instead of a stream, or as an event); an event that is
  /// not JSON-RPC, or one over 4 MiB, kInvalidAgentResponse.
  boost::asio::awaitable<core::Result<net::StreamEnd>> Stream(
      const PeerCard& peer, std::string_view method10, boost::json::object params,
      const CallOptions& options, std::chrono::milliseconds window, StreamHandler on_event,
      std::string last_event_id = {}) const;
  /// SubscribeToTask (0.3 tasks/resubscribe) of `task_id`.
  boost::asio::awaitable<core::Result<net::StreamEnd>> Subscribe(
      const PeerCard& peer, const std::string& task_id, const CallOptions& options,
      std::chrono::milliseconds window, StreamHandler on_event,
      std::string last_event_id = {}) const;
  /// SendStreamingMessage (0.3 message/stream) of `message` (the neutral shape of Send).
  boost::asio::awaitable<core::Result<net::StreamEnd>> SendStreaming(
      const PeerCard& peer, const boost::json::object& message, const CallOptions& options,
      std::chrono::milliseconds window, StreamHandler on_event) const;

  /// One JSON-RPC call: `method10` is the 1.0 name; the 0.3 name is derived. The result.
  boost::asio::awaitable<core::Result<boost::json::value>> Call(const PeerCard& peer,
                                                                std::string_view method10,
                                                                boost::json::object params,
                                                                const CallOptions& options) const;

 private:
  // Call over a 1.0 REST interface (peer.binding "HTTP+JSON").
  boost::asio::awaitable<core::Result<boost::json::value>> CallRest(
      const PeerCard& peer, std::string_view method10, boost::json::object params,
      const CallOptions& options) const;
  boost::asio::awaitable<core::Result<void>> VerifyCard(const std::string& card_url, PeerCard& card,
                                                        const CallOptions& options) const;
  const net::HttpClient& http_;
  const PeerTransport* grpc_;
};

}  // namespace a2ad::client
