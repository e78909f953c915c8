#pragma once
// Traces (issue 18): W3C Trace Context (https://www.w3.org/TR/trace-context/) and the spans
// a2ad records. A request's `traceparent` is the parent of the request's span; that span's
// context is the parent of the run the request starts, kept durably with the run as
// `metadata.openwop.traceparent`, so a run's node steps, commits, outbound calls and push
// deliveries hours later (and after a restart) are spans of the same trace. Outbound HTTP
// calls, A2A calls and pushes carry their own span's `traceparent` header.
//
// Spans go to the process's sink (SetSpanSink: the OTLP exporter, app/otlp_exporter.hpp).
// Without a sink nothing is recorded and a Span costs two clock reads and random ids (the
// ids still propagate, so a2ad passes a trace along even when it exports none).
//
// Thread safety: Parse/Format are pure; SetSpanSink is called once before serving; Span is
// used by one coroutine; the sink may be called from any thread.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace a2ad::core {

/// A W3C traceparent: version 00, a 16-byte trace id and an 8-byte parent (span) id in
/// lowercase hex, and the flags (bit 0: sampled).
struct TraceParent {
  std::string trace_id;  // 32 hex digits, not all zero
  std::string span_id;   // 16 hex digits, not all zero
  uint8_t flags = 1;

  /// "00-<trace id>-<span id>-<flags>". nullopt for anything else: wrong length or
  /// separators, upper-case or non-hex digits, an all-zero id, version ff; a later version
  /// is read by its first four fields, as the recommendation says.
  static std::optional<TraceParent> Parse(std::string_view text);
  std::string Format() const;
  bool sampled() const { return (flags & 1) != 0; }
};

/// 16 random bytes in hex (a new trace), 8 random bytes in hex (a new span).
std::string NewTraceId();
std::string NewSpanId();

enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };

using SpanValue = std::variant<std::string, int64_t, double, bool>;

/// A finished span, as the sink receives it.
struct SpanData {
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;  // "" for a root
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  std::vector<std::pair<std::string, SpanValue>> attributes;
  bool error = false;
  std::string status_message;  // with error
};

using SpanSink = std::function<void(SpanData)>;
/// Where finished spans go; an empty function: nowhere (the default).
void SetSpanSink(SpanSink sink);
bool TracingEnabled();

/// A span from construction to End() (or destruction). Its parent is `parent` when that is
/// a valid traceparent; else it starts a new trace.
class Span {
 public:
  Span(std::string name, SpanKind kind, std::string_view parent);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  /// This span's context as a traceparent: the parent of the work it does.
  std::string Context() const;
  const std::string& trace_id() const { return data_.trace_id; }
  void Set(std::string key, SpanValue value);
  void Fail(std::string message);
  void Rename(std::string name) { data_.name = std::move(name); }
  void End();

 private:
  SpanData data_;
  uint8_t flags_ = 1;
  bool ended_ = false;
};

}  // namespace a2ad::core
