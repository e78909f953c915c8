#include "a2ad/transport/http/cors.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "a2ad/transport/error_body.hpp"

namespace a2ad::transport {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The request headers a2ad reads (besides the CORS-safelisted ones).
constexpr std::array<std::string_view, 11> kRequestHeaders = {
    "authorization", "x-api-key",       "content-type", "a2a-version", "a2a-extensions",
    "last-event-id", "idempotency-key", "traceparent",  "tracestate",  "if-none-match",
    "x-a2a-extensions"};

constexpr std::string_view kMethods = "GET, POST, PUT, PATCH, DELETE, OPTIONS";

// The response headers a browser client needs to read.
constexpr std::string_view kExposed =
    "A2A-Version, A2A-Extensions, X-A2A-Extensions, WWW-Authenticate, Retry-After, ETag, "
    "Location, A2AD-Skipped-Unreadable, openwop-Idempotent-Replay, traceparent";

// scheme "://" host [":" port], nothing after.
bool IsOrigin(std::string_view o) {
  size_t at;
  if (o.starts_with("http://"))
    at = 7;
  else if (o.starts_with("https://"))
    at = 8;
  else
    return false;
  std::string_view rest = o.substr(at);
  if (rest.empty()) return false;
  return std::all_of(rest.begin(), rest.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
           c == '[' || c == ']';
  });
}

}  // namespace

core::Result<CorsPolicy> CorsPolicy::Make(const std::vector<std::string>& origins) {
  CorsPolicy p;
  for (const auto& o : origins) {
    if (o == "*") {
      p.any_ = true;
      continue;
    }
    std::string_view v = o;
    if (v.ends_with("/")) v.remove_suffix(1);  // a pasted "https://app.example.com/"
    if (!IsOrigin(v))
      return core::Error(core::ErrorCode::kInvalidParams,
                         "--cors-origin '" + o +
                             "': expected * or an origin, scheme://host[:port] "
                             "(https://app.example.com), without a path");
    p.origins_.push_back(Lower(v));
  }
  return p;
}

bool CorsPolicy::Allows(std::string_view origin) const {
  if (origin.empty()) return false;
  if (any_) return true;
  const std::string o = Lower(origin);
  return std::find(origins_.begin(), origins_.end(), o) != origins_.end();
}

std::optional<HttpResponse> CorsPolicy::Preflight(const HttpRequest& request) const {
  if (!enabled() || request.method != "OPTIONS") return std::nullopt;
  const std::string_view origin = request.Header("Origin");
  const std::string_view method = request.Header("Access-Control-Request-Method");
  if (origin.empty() || method.empty()) return std::nullopt;
  if (!Allows(origin)) {
    HttpResponse r = RestErrorResponse(
        403, "cors_origin_not_allowed",
        "origin " + std::string(origin) + " may not call this server (--cors-origin)");
    r.headers.emplace_back("Vary", "Origin");
    return r;
  }
  HttpResponse r;
  r.status = 204;
  r.content_type.clear();
  // The headers asked for, each one a2ad reads (a browser refuses the call if one is left
  // out, which is the answer for a header a2ad would ignore anyway).
  std::string allowed;
  std::string_view asked = request.Header("Access-Control-Request-Headers");
  while (!asked.empty()) {
    size_t comma = asked.find(',');
    std::string_view h = asked.substr(0, comma);
    asked = comma == std::string_view::npos ? std::string_view() : asked.substr(comma + 1);
    while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.remove_prefix(1);
    while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.remove_suffix(1);
    const std::string name = Lower(h);
    if (std::find(kRequestHeaders.begin(), kRequestHeaders.end(), name) == kRequestHeaders.end())
      continue;
    if (!allowed.empty()) allowed += ", ";
    allowed += name;
  }
  r.headers.emplace_back("Access-Control-Allow-Origin", any_ ? "*" : std::string(origin));
  r.headers.emplace_back("Access-Control-Allow-Methods", std::string(kMethods));
  if (!allowed.empty()) r.headers.emplace_back("Access-Control-Allow-Headers", allowed);
  r.headers.emplace_back("Access-Control-Max-Age", "600");
  r.headers.emplace_back("Vary", "Origin");
  r.log_operation = "cors-preflight";
  return r;
}

void CorsPolicy::Decorate(std::string_view origin, HttpResponse& response) const {
  response.headers.emplace_back("Access-Control-Allow-Origin",
                                any_ ? "*" : std::string(origin));
  response.headers.emplace_back("Access-Control-Expose-Headers", std::string(kExposed));
  response.headers.emplace_back("Vary", "Origin");
}

}  // namespace a2ad::transport
