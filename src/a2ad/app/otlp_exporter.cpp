#include "a2ad/app/otlp_exporter.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <chrono>

#include "a2ad/core/log.hpp"
#include "a2ad/core/metrics.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::app {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

core::MetricFamily& SpanCounter() {
  return core::Metrics().Family(
      "a2ad_trace_spans_total", core::MetricsRegistry::Type::kCounter,
      "Spans given to the OTLP exporter, by outcome: exported, failed (the collector refused or "
      "was unreachable), dropped (the queue was full).",
      {"outcome"});
}

json::object Attribute(const std::string& key, const core::SpanValue& v) {
  json::object value;
  if (const auto* s = std::get_if<std::string>(&v))
    value["stringValue"] = *s;
  else if (const auto* i = std::get_if<int64_t>(&v))
    value["intValue"] = std::to_string(*i);  // OTLP/JSON: 64-bit integers as strings
  else if (const auto* d = std::get_if<double>(&v))
    value["doubleValue"] = *d;
  else
    value["boolValue"] = std::get<bool>(v);
  return json::object{{"key", key}, {"value", std::move(value)}};
}

}  // namespace

std::string OtlpJson(const OtlpOptions& o, const std::vector<core::SpanData>& spans) {
  json::array resource_attributes{Attribute("service.name", o.service_name)};
  if (!o.service_version.empty())
    resource_attributes.push_back(Attribute("service.version", o.service_version));
  if (!o.instance_id.empty())
    resource_attributes.push_back(Attribute("service.instance.id", o.instance_id));
  json::array out;
  out.reserve(spans.size());
  for (const auto& s : spans) {
    json::object span{{"traceId", s.trace_id},
                      {"spanId", s.span_id},
                      {"name", s.name},
                      {"kind", static_cast<int>(s.kind)},
                      {"startTimeUnixNano", std::to_string(s.start_unix_ns)},
                      {"endTimeUnixNano", std::to_string(s.end_unix_ns)}};
    if (!s.parent_span_id.empty()) span["parentSpanId"] = s.parent_span_id;
    json::array attributes;
    for (const auto& [k, v] : s.attributes) attributes.push_back(Attribute(k, v));
    if (!attributes.empty()) span["attributes"] = std::move(attributes);
    if (s.error)
      span["status"] = json::object{{"code", 2}, {"message", s.status_message}};
    out.push_back(std::move(span));
  }
  json::object scope{{"name", "a2ad"}};
  if (!o.service_version.empty()) scope["version"] = o.service_version;
  json::object doc{
      {"resourceSpans",
       json::array{json::object{
           {"resource", json::object{{"attributes", std::move(resource_attributes)}}},
           {"scopeSpans",
            json::array{json::object{{"scope", std::move(scope)}, {"spans", std::move(out)}}}}}}}};
  return protocol::SerializeJson(doc);
}

struct OtlpExporter::Client {
  net::SystemResolver resolver;
  std::unique_ptr<net::UrlGuard> guard;
  std::unique_ptr<net::HttpClient> http;
};

core::Result<std::unique_ptr<OtlpExporter>> OtlpExporter::Start(OtlpOptions options) {
  net::EgressPolicy lenient;
  lenient.allow_http = true;
  auto parsed = net::ParseUrl(options.endpoint, lenient);
  if (!parsed)
    return core::Error(core::ErrorCode::kInvalidParams,
                       "--otlp-endpoint '" + options.endpoint + "': " + parsed.error().message);
  std::string url = options.endpoint;
  if (parsed->target == "/") {  // a base URL: the traces path of OTLP/HTTP
    while (!url.empty() && url.back() == '/') url.pop_back();
    url += "/v1/traces";
  }
  auto client = std::make_unique<Client>();
  net::EgressPolicy policy;
  policy.allow_http = true;
  policy.allow_list = {parsed->host};
  policy.redirects = net::RedirectPolicy::Never();
  auto guard = net::UrlGuard::Create(policy, client->resolver);
  if (!guard)
    return core::Error(core::ErrorCode::kInvalidParams,
                       "--otlp-endpoint '" + options.endpoint + "': " + guard.error().message);
  client->guard = std::make_unique<net::UrlGuard>(std::move(guard).value());
  net::HttpClientOptions http_options;
  http_options.total_timeout = std::chrono::seconds(10);
  http_options.user_agent = "a2ad-otlp";
  auto http = net::HttpClient::Create(*client->guard, http_options);
  if (!http) return std::move(http).error();
  client->http = std::move(http).value();
  // Declared now: the series exist (at zero) from the first scrape.
  for (const char* outcome : {"exported", "failed", "dropped"}) SpanCounter().Add({outcome}, 0);
  return std::unique_ptr<OtlpExporter>(
      new OtlpExporter(std::move(options), std::move(url), std::move(client)));
}

OtlpExporter::OtlpExporter(OtlpOptions options, std::string url, std::unique_ptr<Client> client)
    : options_(std::move(options)), url_(std::move(url)), client_(std::move(client)) {
  thread_ = std::thread([this] { Loop(); });
}

OtlpExporter::~OtlpExporter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void OtlpExporter::Add(core::SpanData span) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= options_.max_queue) {
      SpanCounter().Add({"dropped"});
      return;
    }
    queue_.push_back(std::move(span));
    if (queue_.size() < options_.max_batch) return;
  }
  cv_.notify_one();
}

void OtlpExporter::Loop() {
  const auto flush_deadline_after_stop = std::chrono::seconds(5);
  std::chrono::steady_clock::time_point stop_by{};
  for (;;) {
    std::vector<core::SpanData> batch;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, std::chrono::seconds(1),
                   [this] { return stopping_ || queue_.size() >= options_.max_batch; });
      if (stopping_ && stop_by == std::chrono::steady_clock::time_point{})
        stop_by = std::chrono::steady_clock::now() + flush_deadline_after_stop;
      while (!queue_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      if (batch.empty() && stopping_) return;
    }
    if (!batch.empty()) {
      const bool ok = Export(batch);
      SpanCounter().Add({ok ? "exported" : "failed"}, static_cast<double>(batch.size()));
    }
    if (stopping_ && std::chrono::steady_clock::now() > stop_by) return;
  }
}

bool OtlpExporter::Export(std::vector<core::SpanData>& batch) {
  net::HttpRequest req;
  req.method = "POST";
  req.url = url_;
  req.headers = options_.headers;
  req.headers.emplace_back("Content-Type", "application/json");
  req.body = OtlpJson(options_, batch);
  std::string failure;
  for (int attempt = 0; attempt < 2; ++attempt) {
    asio::io_context io;  // the exporter's thread waits for its one request
    core::Result<net::HttpResponse> got =
        core::Error(core::ErrorCode::kInternal, "the export did not run");
    asio::co_spawn(io, client_->http->Fetch(req),
                   [&got](const std::exception_ptr& ep, core::Result<net::HttpResponse> r) {
                     if (!ep) got = std::move(r);
                   });
    io.run();
    if (got && got->status >= 200 && got->status < 300) return true;
    failure = got ? "HTTP " + std::to_string(got->status) : got.error().message;
    const bool again = got && (got->status == 429 || got->status == 503);
    if (!again) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  static std::atomic<int64_t> last_logged{0};
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (now - last_logged.load() >= 60) {
    last_logged = now;
    core::LogWarn("traces: the export of " + std::to_string(batch.size()) + " span(s) to " + url_ +
                  " failed: " + failure + " (dropped; said at most once a minute)");
  }
  return false;
}

}  // namespace a2ad::app
