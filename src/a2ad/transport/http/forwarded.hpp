#pragma once
// Who the client is when a2ad runs behind a reverse proxy or a load balancer
// (`--trusted-proxies CIDR,...`). Every client of a proxy arrives from the proxy's address,
// so without this the per-address connection cap (HttpServerOptions::
// max_connections_per_address) would count the proxy as one client and refuse everyone past
// the cap. A connection from a trusted proxy is therefore not capped by address; each of its
// requests is counted, while it is in flight (a stream until it ends), against the address
// the proxy forwards for it, with the same cap.
//
// The forwarded address is read only from a trusted peer, never from anyone else (a client
// could name any address). It is the nearest address in the forwarding chain that is not a
// trusted proxy itself, read right to left: RFC 7239 `Forwarded: for=...` when the request
// has that header, else `X-Forwarded-For`. Several header lines are one list, in order.
// A trusted peer that forwards nothing usable ("unknown", an obfuscated `_name`, no header,
// garbage) is answered as it would be without a forwarded address: its requests are not
// counted by address.
//
// Thread safety: pure functions.
#include <boost/asio/ip/address.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/net/cidr.hpp"

namespace a2ad::transport {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// Which header the trusted proxies set (--forwarded-header). kAuto: Forwarded when the
/// request has it, else X-Forwarded-For. A proxy that only appends to X-Forwarded-For (HAProxy's
/// `option forwardfor`, nginx's `$proxy_add_x_forwarded_for`) passes a client's own
/// Forwarded header through, so with kAuto such a client chooses its address: name the
/// header the proxy sets (kXForwardedFor, kForwarded) and only that one is read.
enum class ForwardedHeader { kAuto, kForwarded, kXForwardedFor };

/// "auto", "forwarded" or "x-forwarded-for"; nullopt for anything else.
std::optional<ForwardedHeader> ParseForwardedHeader(std::string_view name);

/// The client's address of a request received from `peer`: nullopt when `peer` is not in
/// `trusted` (the peer is the client) or forwards no usable address (see above).
std::optional<boost::asio::ip::address> ForwardedClient(
    const boost::asio::ip::address& peer, const Headers& headers,
    const std::vector<net::Cidr>& trusted, ForwardedHeader which = ForwardedHeader::kAuto);

}  // namespace a2ad::transport
