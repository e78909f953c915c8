#pragma once
// PeerTransport: a binding A2aClient speaks to a peer other than over HTTP (JSON-RPC and REST
// are A2aClient's own): gRPC (client/grpc/grpc_peer.hpp), kept in a module of its own so that
// only what calls gRPC peers links gRPC. A2aClient hands it the calls of a peer whose card it
// chose with that binding, with the params in the JSON of A2A 1.0 (ProtoJSON of lf.a2a.v1,
// what the REST binding sends as its body); the transport answers the result in that JSON,
// and a stream as StreamResponse objects, one per event.
//
// Errors as A2aClient's (a2a_client.hpp): the peer's refusal is kInvalidAgentResponse with
// details {peerCode, peerMessage}; what may pass when tried again is kUnavailable; every
// error carries {"attempts": N}.
//
// Thread safety: implementations are safe to call concurrently from any thread.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "a2ad/client/peer_card.hpp"
#include "a2ad/client/retry.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/net/http_client.hpp"

namespace a2ad::client {

struct CallOptions;

class PeerTransport {
 public:
  virtual ~PeerTransport() = default;
  /// One call of `method10` (an A2A 1.0 method, or an extension's a2ad serves) to `peer`,
  /// retried as options.retry says.
  virtual boost::asio::awaitable<core::Result<boost::json::value>> Call(
      const PeerCard& peer, std::string_view method10, boost::json::object params,
      const CallOptions& options) const = 0;
  /// A streaming call: each StreamResponse to `on_response` until the stream ends,
  /// `on_response` answers false, or `window` passes. Not retried.
  virtual boost::asio::awaitable<core::Result<net::StreamEnd>> Stream(
      const PeerCard& peer, std::string_view method10, boost::json::object params,
      const CallOptions& options, std::chrono::milliseconds window,
      std::function<bool(const boost::json::value& response)> on_response,
      std::string last_event_id) const = 0;
};

}  // namespace a2ad::client
