#pragma once
// GrpcPeerTransport: A2aClient's calls to peers over gRPC (A2A 1.0: lf.a2a.v1.A2AService; and
// the services of the extensions a2ad serves, a2ad.pause.v1 and a2ad.opt.v1, for the `a2a`
// CLI). Generic over the service descriptors linked in (proto/): a call finds the method by
// its name, reads the JSON params into the method's request message (ProtoJSON, unknown
// members ignored), makes the call, and answers the response message as JSON; a
// server-streaming method answers each message. So every method of those services is
// served by the same few lines.
//
// Where it connects: the card's gRPC interface URL is `host:port` (A2A 1.0), or carries a
// scheme: grpcs:// or https:// (TLS), grpc:// or http:// (plaintext). A bare `host:port` is
// dialed with TLS when the card was fetched over https and in plaintext when it was fetched
// over http (an agent serves both the same way). Every call vets the address with the egress
// guard (url_guard.hpp: plaintext only with allow_http, public addresses only unless
// allow-listed), and the channel connects to the vetted address only, with the URL's host
// as its authority and TLS name: no second resolution between the check and the connect.
// Channels are kept per (vetted address, host, TLS) and reused; TLS trusts the egress CA file
// when one is set (else the system's roots).
//
// Credentials (CallOptions::headers) go as metadata (lower-cased names: authorization,
// x-api-key), with a2a-version 1.0. Deadlines: options.timeout per attempt, the window for a
// stream. Retries: UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED are transient (kUnavailable,
// retried as retry.hpp says); any other status is the peer's refusal, peerCode its name
// (NOT_FOUND...), peerReason the ErrorInfo reason when it sent one.
//
// Thread safety: Call and Stream may run concurrently on any thread; completions are posted
// to the awaiting coroutine's executor.
#include <memory>

#include "a2ad/client/a2a_client.hpp"
#include "a2ad/client/peer_transport.hpp"
#include "a2ad/net/url_guard.hpp"

namespace a2ad::client {

class GrpcPeerTransport final : public PeerTransport {
 public:
  /// `guard` outlives the transport. kInvalidParams when the guard's CA file cannot be read.
  static core::Result<std::unique_ptr<GrpcPeerTransport>> Create(const net::UrlGuard& guard);
  ~GrpcPeerTransport() override;

  boost::asio::awaitable<core::Result<boost::json::value>> Call(
      const PeerCard& peer, std::string_view method10, boost::json::object params,
      const CallOptions& options) const override;
  boost::asio::awaitable<core::Result<net::StreamEnd>> Stream(
      const PeerCard& peer, std::string_view method10, boost::json::object params,
      const CallOptions& options, std::chrono::milliseconds window,
      std::function<bool(const boost::json::value& response)> on_response,
      std::string last_event_id) const override;

 private:
  struct Impl;
  explicit GrpcPeerTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace a2ad::client
