#include "a2ad/transport/http/http_types.hpp"

#include <strings.h>

#include <boost/url/parse.hpp>
#include <cstdio>
#include <ctime>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/sha256.hpp"

namespace a2ad::transport {

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  return {};
}

std::string HttpRequest::Query(std::string_view name) const {
  auto parsed = boost::urls::parse_origin_form(target);
  if (!parsed) return "";
  auto params = parsed->params();
  auto it = params.find(name);
  return it == params.end() ? std::string() : std::string((*it).value);
}

std::string_view HttpRequest::Path() const {
  std::string_view t = target;
  return t.substr(0, t.find('?'));
}

HttpResponse JsonResponse(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string Sha256Hex(std::string_view bytes) {
  return core::HexEncode(core::DigestBytes(core::Sha256Of(bytes)));
}

std::string WeakEtag(std::string_view body) {
  return "W/\"" + Sha256Hex(body).substr(0, 16) + "\"";
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

std::map<std::string, std::string> QueryParams(std::string_view target) {
  std::map<std::string, std::string> q;
  size_t qm = target.find('?');
  if (qm == std::string_view::npos) return q;
  std::string_view rest = target.substr(qm + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    size_t eq = pair.find('=');
    q[PercentDecode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return q;
}

std::string HttpDate(std::chrono::system_clock::time_point t) {
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char out[40];
  std::snprintf(out, sizeof out, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return out;
}

}  // namespace a2ad::transport
