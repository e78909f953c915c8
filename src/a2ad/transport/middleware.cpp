#include "a2ad/transport/middleware.hpp"

#include <algorithm>
#include <cctype>

#include "a2ad/core/log.hpp"
#include "a2ad/core/metrics.hpp"

namespace a2ad::transport {

namespace {

// Sets header `name` of `request` to `value` (replacing every one of that name).
void SetHeader(HttpRequest& request, std::string_view name, std::string value) {
  std::erase_if(request.headers, [name](const auto& h) {
    return h.first.size() == name.size() &&
           std::equal(h.first.begin(), h.first.end(), name.begin(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) ==
                    std::tolower(static_cast<unsigned char>(b));
           });
  });
  request.headers.emplace_back(std::string(name), std::move(value));
}

class VersionQuery : public Middleware {
 public:
  std::optional<HttpResponse> Before(HttpRequest& request, Exchange&) override {
    // A client may name the version as the query parameter A2A-Version instead of the header
    // (a card URL can carry it); every binding reads it as the header.
    if (request.Header("A2A-Version").empty() && request.target.find('?') != std::string::npos)
      if (std::string v = request.Query("A2A-Version"); !v.empty())
        request.headers.emplace_back("A2A-Version", std::move(v));
    return std::nullopt;
  }
};

class AccessLog : public Middleware {
 public:
  void After(Exchange& x, HttpResponse& r) override {
    if (x.quiet || !core::LogEnabled(core::LogLevel::kInfo)) return;
    core::Log(core::LogLevel::kInfo, "request",
              {{"method", std::string_view(x.method)},
               {"route", std::string_view(x.route)},
               {"status", r.status},
               {"ms", x.ms},
               {"operation", std::string_view(x.operation)},
               {"task", std::string_view(r.log_task)},
               {"error", std::string_view(r.log_error)},
               {"principal", std::string_view(x.principal)},
               {"client", std::string_view(x.client)},
               {"traceId", std::string_view(x.trace_id)},
               {"stream", static_cast<bool>(r.stream)}});
  }
};

class RequestMetrics : public Middleware {
 public:
  RequestMetrics()
      : requests_(core::Metrics().Family(
            "a2ad_http_requests_total", core::MetricsRegistry::Type::kCounter,
            "Requests answered, by operation (the method, or the route's family) and HTTP status.",
            {"operation", "status"})),
        latency_(core::Metrics().Family(
            "a2ad_http_request_duration_seconds", core::MetricsRegistry::Type::kHistogram,
            "Time from a request read to its answer (a stream: to its head), by operation.",
            {"operation"}, core::LatencyBuckets())) {}
  void After(Exchange& x, HttpResponse& r) override {
    if (x.quiet) return;
    requests_.Add({x.operation, std::to_string(r.status)});
    latency_.Observe({x.operation}, x.ms / 1000);
  }

 private:
  core::MetricFamily& requests_;
  core::MetricFamily& latency_;
};

class Tracing : public Middleware {
 public:
  std::optional<HttpResponse> Before(HttpRequest& request, Exchange& x) override {
    if (x.quiet) return std::nullopt;
    // The caller's traceparent is the span's parent, and the request goes on with the span's
    // own context in that header, so what it starts (a run) is a child of it.
    x.span.emplace("HTTP " + x.method, core::SpanKind::kServer, request.Header("traceparent"));
    SetHeader(request, "traceparent", x.span->Context());
    x.trace_id = x.span->trace_id();
    return std::nullopt;
  }
  void After(Exchange& x, HttpResponse& r) override {
    if (!x.span) return;
    // With no collector the span is only a traceparent for what the request started: its
    // name and attributes would be built for nothing.
    if (core::TracingEnabled()) {
      core::Span& span = *x.span;
      span.Rename(!r.log_operation.empty() ? r.log_operation : x.method + " " + x.operation);
      span.Set("http.request.method", x.method);
      span.Set("url.path", x.route);
      span.Set("http.response.status_code", static_cast<int64_t>(r.status));
      if (!r.log_task.empty()) span.Set("a2a.task.id", r.log_task);
      if (!r.log_error.empty()) span.Set("rpc.jsonrpc.error_code", r.log_error);
      if (!x.principal.empty()) span.Set("a2ad.principal", x.principal);
      if (r.stream) span.Set("a2ad.stream", true);
      if (r.status >= 500) span.Fail("HTTP " + std::to_string(r.status));
    }
    x.span->End();
  }
};

class Cors : public Middleware {
 public:
  explicit Cors(CorsPolicy policy) : policy_(std::move(policy)) {}
  std::optional<HttpResponse> Before(HttpRequest& request, Exchange& x) override {
    if (!policy_.enabled()) return std::nullopt;
    auto preflight = policy_.Preflight(request);
    // A preflight's answer carries its own headers; any other answer gets them after.
    if (!preflight && policy_.Allows(request.Header("Origin"))) x.origin = request.Header("Origin");
    return preflight;
  }
  void After(Exchange& x, HttpResponse& r) override {
    if (!x.origin.empty()) policy_.Decorate(x.origin, r);
  }

 private:
  CorsPolicy policy_;
};

}  // namespace

std::unique_ptr<Middleware> MakeVersionQuery() { return std::make_unique<VersionQuery>(); }
std::unique_ptr<Middleware> MakeAccessLog() { return std::make_unique<AccessLog>(); }
std::unique_ptr<Middleware> MakeRequestMetrics() { return std::make_unique<RequestMetrics>(); }
std::unique_ptr<Middleware> MakeTracing() { return std::make_unique<Tracing>(); }
std::unique_ptr<Middleware> MakeCors(CorsPolicy policy) {
  return std::make_unique<Cors>(std::move(policy));
}

std::string RouteFamily(std::string_view route) {
  if (route.starts_with("/.well-known/")) return std::string(route);
  size_t cut = 0;
  for (int segments = 0; segments < 2 && cut != std::string_view::npos;) {
    cut = route.find('/', cut + 1);
    ++segments;
  }
  return std::string(cut == std::string_view::npos ? route : route.substr(0, cut));
}

}  // namespace a2ad::transport
