#pragma once
// Exports the spans a2ad records (core/trace.hpp) to an OpenTelemetry collector over OTLP/HTTP
// with the JSON encoding (`POST <endpoint>/v1/traces`, `application/json`), in batches: every
// second, or sooner once 512 spans wait. A bounded queue (8192 spans) sits between the server
// and the exporter's own thread; when the collector is slow or gone, spans past it are
// dropped and counted (a2ad_trace_spans_total{outcome="dropped"}), never the server's work.
// A failed export is logged (at most once a minute) and its batch dropped; 429 and 503 are
// tried once more after a second.
//
// The endpoint is the operator's: its host is allowed by the exporter's own egress guard
// (a collector usually runs on loopback or a private address), plain http included.
//
// Thread safety: Add may be called from any thread; the destructor flushes what waits (for at
// most 5 s) and stops the thread.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/core/trace.hpp"

namespace a2ad::app {

struct OtlpOptions {
  std::string endpoint;  // http(s)://host:port[/path]; no path: /v1/traces is appended
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. an API key of the collector
  std::string service_name = "a2ad";
  std::string service_version;
  std::string instance_id;  // service.instance.id
  size_t max_queue = 8192;
  size_t max_batch = 512;
};

class OtlpExporter {
 public:
  /// kInvalidParams for an endpoint that is not an http(s) URL.
  static core::Result<std::unique_ptr<OtlpExporter>> Start(OtlpOptions options);
  ~OtlpExporter();
  void Add(core::SpanData span);
  const std::string& url() const { return url_; }

 private:
  struct Client;
  OtlpExporter(OtlpOptions options, std::string url, std::unique_ptr<Client> client);
  void Loop();
  bool Export(std::vector<core::SpanData>& batch);

  const OtlpOptions options_;
  const std::string url_;
  std::unique_ptr<Client> client_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<core::SpanData> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

/// The OTLP/JSON body of `spans` (ExportTraceServiceRequest).
std::string OtlpJson(const OtlpOptions& options, const std::vector<core::SpanData>& spans);

}  // namespace a2ad::app
