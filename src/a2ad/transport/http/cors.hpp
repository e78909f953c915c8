#pragma once
// CORS (issue 18): lets a browser page of a configured origin call a2ad (the A2A inspector,
// a dashboard). With no origin configured nothing changes: no CORS headers, and OPTIONS is
// answered 405 like any method a route does not take.
//
// - A request whose `Origin` is allowed gets `Access-Control-Allow-Origin: <that origin>`
//   (or `*` when every origin is), `Vary: Origin` and the response headers a client reads
//   exposed (`Access-Control-Expose-Headers`).
// - A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) of an allowed
//   origin is answered 204 before authentication (browsers send no credential with it):
//   the methods the server has, the request headers asked for when each is one a2ad reads,
//   and `Access-Control-Max-Age`. Of an origin not allowed: 403, in OpenWOP's envelope.
// - Credentials are headers (Authorization, X-API-Key), never cookies:
//   `Access-Control-Allow-Credentials` is not sent.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

class CorsPolicy {
 public:
  /// `origins`: "*" (any origin) or origins as browsers send them, "https://app.example.com"
  /// or "http://localhost:5173" (scheme, host, port; no path). An error names the value
  /// that is not one.
  static core::Result<CorsPolicy> Make(const std::vector<std::string>& origins);

  bool enabled() const { return any_ || !origins_.empty(); }
  bool Allows(std::string_view origin) const;
  /// The answer to a preflight, or nullopt when `request` is not one (or CORS is off).
  std::optional<HttpResponse> Preflight(const HttpRequest& request) const;
  /// Adds the CORS headers to the answer of a request that came with `origin` (allowed).
  void Decorate(std::string_view origin, HttpResponse& response) const;

 private:
  bool any_ = false;
  std::vector<std::string> origins_;  // lowercase
};

}  // namespace a2ad::transport
