#pragma once
// Address ranges in CIDR notation ("10.0.0.0/8", "::1/128", or a bare address: its own /32
// or /128), for the egress allow-list (url_guard.hpp) and the trusted proxies of the HTTP
// server (transport/http/forwarded.hpp). An IPv4-mapped IPv6 address (::ffff:10.0.0.5) is in the
// IPv4 ranges that hold its IPv4 address.
//
// Thread safety: values; pure functions.
#include <boost/asio/ip/address.hpp>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::net {

struct Cidr {
  boost::asio::ip::address base;
  int bits = 0;
};

/// Parses one range. kInvalidParams naming `entry` for anything that is not an address with
/// an optional prefix length no longer than the address.
core::Result<Cidr> ParseCidr(std::string_view entry);

/// Parses a comma-separated list ("" is none; blanks around entries are ignored).
/// kInvalidParams naming the first bad entry.
core::Result<std::vector<Cidr>> ParseCidrList(std::string_view list);

bool InCidr(const boost::asio::ip::address& a, const Cidr& range);
bool InAnyCidr(const boost::asio::ip::address& a, const std::vector<Cidr>& ranges);

}  // namespace a2ad::net
