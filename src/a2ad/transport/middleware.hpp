#pragma once
// The stages every HTTP request passes through around its route (router.hpp): a list of
// Middleware, each with a Before (in list order, before the route) and an After (in reverse
// order, once the answer is made). The Router's list, in order:
//   VersionQuery  A2A 1.0 §3.6.1: the A2A-Version query parameter read as the header
//   AccessLog     one info line per request once it is answered (a stream: once it begins)
//   RequestMetrics a2ad_http_requests_total and a2ad_http_request_duration_seconds
//   Tracing       the request's server span, the caller's traceparent its parent
//   Cors          a preflight answered before any route; the CORS headers added after
// Probes and scrapes (/healthz, /readyz, /metrics) are neither logged, counted nor traced.
//
// To add one: derive from Middleware, override Before (return an answer to stop the request
// there: the later stages' Before and the route are skipped, the After of every stage whose
// Before ran still runs) and/or After, and pass it to Router::Use before serving. Hooks are
// synchronous (no coroutine frame per stage on the request path); a stage that needs to wait
// (authentication) is a route's business, not a middleware's.
//
// Thread safety: a Middleware is shared by every request once serving begins: its hooks are
// const in effect (per-request state goes into the Exchange).
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "a2ad/core/trace.hpp"
#include "a2ad/transport/http/cors.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::transport {

/// What the stages of one request share.
struct Exchange {
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string method;
  std::string client;
  /// The path as logged and traced: a signed interrupt token in it is a credential, so
  /// /v1/interrupts/<token>[/...] is /v1/interrupts/{token}[/...].
  std::string route;
  bool quiet = false;     // a probe or scrape: not logged, counted or traced
  std::string principal;  // "tenant/id" or "id" once authenticated (set by the routing)
  std::optional<core::Span> span;
  std::string trace_id;  // the span's, for the access log
  std::string origin;    // an allowed CORS origin the request came with
  // Set once the answer is made, before the After hooks:
  double ms = 0;
  /// What the request was: the operation a binding named, else the route's family (a path no
  /// route serves is one label, "unmatched"), so that ids never become labels.
  std::string operation;
};

class Middleware {
 public:
  virtual ~Middleware() = default;
  virtual std::optional<HttpResponse> Before(HttpRequest& request, Exchange& x) {
    (void)request;
    (void)x;
    return std::nullopt;
  }
  virtual void After(Exchange& x, HttpResponse& response) {
    (void)x;
    (void)response;
  }
};

std::unique_ptr<Middleware> MakeVersionQuery();
std::unique_ptr<Middleware> MakeAccessLog();
/// Declares its metric families at once (present from the first scrape).
std::unique_ptr<Middleware> MakeRequestMetrics();
std::unique_ptr<Middleware> MakeTracing();
std::unique_ptr<Middleware> MakeCors(CorsPolicy policy);

/// The route's family for the `operation` label: its first two segments ("/v1/runs/<id>/events"
/// -> "/v1/runs"); a /.well-known/ path whole.
std::string RouteFamily(std::string_view route);

}  // namespace a2ad::transport
