// See request_line.hpp.
#include "a2ad/transport/http/request_line.hpp"

namespace a2ad::transport {

std::string_view PathOfTarget(std::string_view target) {
  return target.substr(0, target.find('?'));
}

namespace {

bool IsTokenChar(char ch) {
  if (ch >= 'a' && ch <= 'z') return true;
  if (ch >= 'A' && ch <= 'Z') return true;
  if (ch >= '0' && ch <= '9') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(ch) != std::string_view::npos;
}

}  // namespace

std::string PathOfRequestLine(std::string_view head, size_t limit) {
  const size_t eol = head.substr(0, limit).find("\r\n");
  if (eol == std::string_view::npos) return {};
  const std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 == 0) return {};
  for (char ch : line.substr(0, sp1))
    if (!IsTokenChar(ch)) return {};
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return {};
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  auto digit = [](char ch) { return ch >= '0' && ch <= '9'; };
  if (target.empty() || version.size() != 8 || !version.starts_with("HTTP/") ||
      !digit(version[5]) || version[6] != '.' || !digit(version[7]))
    return {};
  for (char ch : target)
    if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f) return {};
  return std::string(PathOfTarget(target));
}

}  // namespace a2ad::transport
