#include "a2ad/net/cidr.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace a2ad::net {
namespace ip = boost::asio::ip;
using core::Error;
using core::ErrorCode;

namespace {

bool InV4(uint32_t a, uint32_t base, int bits) {
  const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (a & mask) == (base & mask);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

core::Result<Cidr> ParseCidr(std::string_view entry) {
  const size_t slash = entry.find('/');
  boost::system::error_code ec;
  const ip::address addr = ip::make_address(std::string(entry.substr(0, slash)), ec);
  if (ec)
    return Error(ErrorCode::kInvalidParams,
                 "'" + std::string(entry) + "' is not an IP address or CIDR range");
  const int max = addr.is_v4() ? 32 : 128;
  int bits = max;
  if (slash != std::string_view::npos) {
    const std::string_view len = entry.substr(slash + 1);
    if (len.empty() || len.size() > 3 || len.find_first_not_of("0123456789") != len.npos ||
        std::stoi(std::string(len)) > max)
      return Error(ErrorCode::kInvalidParams,
                   "'" + std::string(entry) + "': bad prefix length (0.." + std::to_string(max) +
                       ")");
    bits = std::stoi(std::string(len));
  }
  return Cidr{addr, bits};
}

core::Result<std::vector<Cidr>> ParseCidrList(std::string_view list) {
  std::vector<Cidr> out;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view entry = Trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (entry.empty()) continue;
    auto parsed = ParseCidr(entry);
    if (!parsed) return std::move(parsed).error();
    out.push_back(*parsed);
  }
  return out;
}

bool InCidr(const ip::address& a, const Cidr& range) {
  if (a.is_v4() != range.base.is_v4()) {
    // An IPv4-mapped address matches an IPv4 range.
    if (a.is_v6() && a.to_v6().is_v4_mapped())
      return InCidr(ip::make_address_v4(ip::v4_mapped, a.to_v6()), range);
    return false;
  }
  if (a.is_v4()) return InV4(a.to_v4().to_uint(), range.base.to_v4().to_uint(), range.bits);
  const auto x = a.to_v6().to_bytes();
  const auto y = range.base.to_v6().to_bytes();
  int bits = range.bits;
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((x[i] & mask) != (y[i] & mask)) return false;
  }
  return true;
}

bool InAnyCidr(const ip::address& a, const std::vector<Cidr>& ranges) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const Cidr& c) { return InCidr(a, c); });
}

}  // namespace a2ad::net
