#include "a2ad/transport/http/forwarded.hpp"

#include <boost/algorithm/string/predicate.hpp>
#include <string_view>

namespace a2ad::transport {
namespace ip = boost::asio::ip;

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// One node of a chain: "192.0.2.43", "192.0.2.43:4711", "[2001:db8::1]", "[2001:db8::1]:4711",
// "2001:db8::1" (X-Forwarded-For's bare IPv6). nullopt for anything else ("unknown",
// "_hidden", garbage).
std::optional<ip::address> NodeAddress(std::string_view node) {
  node = Trim(node);
  if (node.size() >= 2 && node.front() == '"' && node.back() == '"')
    node = node.substr(1, node.size() - 2);
  if (node.empty()) return std::nullopt;
  if (node.front() == '[') {
    const size_t close = node.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view rest = node.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return std::nullopt;
    node = node.substr(1, close - 1);
  } else if (node.find(':') == node.rfind(':') && node.find(':') != std::string_view::npos) {
    node = node.substr(0, node.find(':'));  // IPv4 with a port
  }
  boost::system::error_code ec;
  ip::address a = ip::make_address(std::string(node), ec);
  if (ec) return std::nullopt;
  if (a.is_v6() && a.to_v6().is_v4_mapped()) a = ip::make_address_v4(ip::v4_mapped, a.to_v6());
  return a;
}

// The `for` nodes of Forwarded header values (RFC 7239 §4: elements by ',', pairs by ';').
// An element without `for` is a node nobody named: kept as "" (unusable).
std::vector<std::string> ForwardedFor(const std::vector<std::string_view>& values) {
  std::vector<std::string> nodes;
  for (std::string_view v : values) {
    while (!v.empty()) {
      // A quoted string may hold ',' or ';' only in theory (an IPv6 node has neither).
      const size_t comma = v.find(',');
      std::string_view element = v.substr(0, comma);
      v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
      std::string node;
      while (!element.empty()) {
        const size_t semi = element.find(';');
        const std::string_view pair = Trim(element.substr(0, semi));
        element =
            semi == std::string_view::npos ? std::string_view{} : element.substr(semi + 1);
        const size_t eq = pair.find('=');
        if (eq != std::string_view::npos && boost::iequals(Trim(pair.substr(0, eq)), "for"))
          node = std::string(pair.substr(eq + 1));
      }
      nodes.push_back(std::move(node));
    }
  }
  return nodes;
}

std::vector<std::string> XForwardedFor(const std::vector<std::string_view>& values) {
  std::vector<std::string> nodes;
  for (std::string_view v : values) {
    while (!v.empty()) {
      const size_t comma = v.find(',');
      nodes.emplace_back(Trim(v.substr(0, comma)));
      v = comma == std::string_view::npos ? std::string_view{} : v.substr(comma + 1);
    }
  }
  return nodes;
}

}  // namespace

std::optional<ForwardedHeader> ParseForwardedHeader(std::string_view name) {
  if (name == "auto") return ForwardedHeader::kAuto;
  if (name == "forwarded") return ForwardedHeader::kForwarded;
  if (name == "x-forwarded-for") return ForwardedHeader::kXForwardedFor;
  return std::nullopt;
}

std::optional<ip::address> ForwardedClient(const ip::address& peer, const Headers& headers,
                                           const std::vector<net::Cidr>& trusted,
                                           ForwardedHeader which) {
  if (trusted.empty() || !net::InAnyCidr(peer, trusted)) return std::nullopt;
  std::vector<std::string_view> forwarded, x_forwarded_for;
  for (const auto& [name, value] : headers) {
    if (boost::iequals(name, "Forwarded"))
      forwarded.push_back(value);
    else if (boost::iequals(name, "X-Forwarded-For"))
      x_forwarded_for.push_back(value);
  }
  const bool rfc7239 = which == ForwardedHeader::kForwarded ||
                       (which == ForwardedHeader::kAuto && !forwarded.empty());
  const std::vector<std::string> chain =
      rfc7239 ? ForwardedFor(forwarded) : XForwardedFor(x_forwarded_for);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    auto a = NodeAddress(*it);
    if (!a) return std::nullopt;  // an unusable node: nothing further left can be trusted
    if (!net::InAnyCidr(*a, trusted)) return a;
  }
  return std::nullopt;  // only proxies (or nothing) in the chain
}

}  // namespace a2ad::transport
