#pragma once
// What a2ad reads from another agent's card, in either shape (WIRE.md §2): the A2A 1.0
// `supportedInterfaces` [{url, protocolBinding, protocolVersion}], and the 0.3 `url` +
// `preferredTransport` + `additionalInterfaces` [{url, transport}] + `protocolVersion`. The
// newest version the card declares is chosen, and in it JSON-RPC, then HTTP+JSON (REST), then
// gRPC: 1.0 JSON-RPC, else 1.0 REST, else 1.0 gRPC, else 0.3 JSON-RPC (a2ad speaks REST and
// gRPC to peers in 1.0 only). That choice is recorded with every call and never changed
// behind the caller's back (no silent downgrade: a 1.0 peer that fails is a failure); a
// caller may ask for REST or gRPC when the card declares them (PreferRest, PreferGrpc).
// Also normalizes what peers answer (tasks and messages of either version) to one shape the
// workflow engine logs and reads:
//   task    {id, contextId, state, status: {state, message?, timestamp?}, artifacts: [...],
//            createdAt?}   state: submitted | working | input-required | auth-required |
//                          completed | failed | canceled | rejected | unknown
//   message {messageId, role, parts: [{text} | {data} | {file...}], taskId?, contextId?}
// Parts lose their 0.3 `kind` discriminator; anything else the peer sent is kept as sent.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"

namespace a2ad::client {

struct PeerCard {
  std::string name;
  std::string url;                  // the endpoint of `binding`
  std::string version;              // "1.0" | "0.3"
  std::string binding = "JSONRPC";  // "JSONRPC" | "HTTP+JSON" | "GRPC" (the last two 1.0 only)
  std::string rest_url;             // the card's 1.0 HTTP+JSON interface; "" when none
  std::string grpc_url;             // the card's 1.0 GRPC interface (host:port); "" when none
  std::string card_url;             // where the card was fetched (A2aClient::FetchCard)
  bool is_signed = false;
  /// A2aClient::FetchCard: a `signatures` entry verified with a key of the JWKS its `jku`
  /// names on the card's own origin. A signed card whose signature could not be checked (no
  /// jku, or one on another origin) has is_signed and not verified, and says why in
  /// `unverified_reason`.
  bool verified = false;
  std::string unverified_reason;
  boost::json::object card;  // as fetched
};

/// The card URL of an agent URL: itself when it names a .json file, else the well-known
/// card path under it (http://host:8080 -> http://host:8080/.well-known/agent-card.json).
std::string PeerCardUrl(std::string url);

/// kInvalidAgentResponse naming what is missing when the card declares no interface a2ad
/// speaks (1.0 JSON-RPC or REST, 0.3 JSON-RPC).
core::Result<PeerCard> ReadPeerCard(const boost::json::value& card);

/// `card` speaking its 1.0 REST interface when it declares one (binding "HTTP+JSON",
/// version "1.0"); else `card` as it is.
PeerCard PreferRest(PeerCard card);
/// The same for its 1.0 gRPC interface (binding "GRPC").
PeerCard PreferGrpc(PeerCard card);

/// Whether `card`'s signature verifies with the EC P-256 key named `kid` in the JWKS
/// document `jwks` (protocol/card_signature.hpp). kInvalidAgentResponse when the JWKS has no
/// such key or it is not P-256; kInvalidParams (why) when no signature verifies.
core::Result<void> VerifyCardWithJwks(const boost::json::object& card, std::string_view jwks,
                                      const std::string& kid);

/// A task state of either version ("TASK_STATE_INPUT_REQUIRED", "input-required",
/// "TASK_STATE_CANCELLED") as the 0.3 name; "unknown" for anything else.
std::string NormalizeState(const boost::json::value& state);

/// Of a normalized state: the task has ended (completed, failed, canceled, rejected).
bool IsTerminalState(std::string_view state);
/// Of a normalized state: the agent waits for its caller (input-required, auth-required).
bool AsksForInput(std::string_view state);

boost::json::object NormalizeMessage(const boost::json::object& message);
boost::json::object NormalizeTask(const boost::json::object& task);

}  // namespace a2ad::client
