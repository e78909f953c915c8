#include "a2ad/core/trace.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "a2ad/core/random.hpp"

namespace a2ad::core {
namespace {

bool IsLowerHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool AllZero(std::string_view s) { return s.find_first_not_of('0') == std::string_view::npos; }

std::string RandomHex(size_t bytes) {
  unsigned char buf[16];
  RandomBytes(buf, bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(bytes * 2, '0');
  for (size_t i = 0; i < bytes; ++i) {
    out[2 * i] = kHex[buf[i] >> 4];
    out[2 * i + 1] = kHex[buf[i] & 15];
  }
  return out;
}

int64_t UnixNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Set once before serving and read everywhere: a shared_ptr swapped atomically.
std::mutex sink_mu;
std::shared_ptr<const SpanSink> sink;
std::atomic<bool> enabled{false};

std::shared_ptr<const SpanSink> CurrentSink() {
  std::lock_guard lock(sink_mu);
  return sink;
}

}  // namespace

std::optional<TraceParent> TraceParent::Parse(std::string_view text) {
  // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55.
  if (text.size() < 55) return std::nullopt;
  const std::string_view version = text.substr(0, 2);
  if (!IsLowerHex(version) || version == "ff") return std::nullopt;
  if (version == "00" && text.size() != 55) return std::nullopt;
  if (text.size() > 55 && text[55] != '-') return std::nullopt;  // a later version's fields
  if (text[2] != '-' || text[35] != '-' || text[52] != '-') return std::nullopt;
  const std::string_view trace = text.substr(3, 32), span = text.substr(36, 16),
                         flags = text.substr(53, 2);
  if (!IsLowerHex(trace) || !IsLowerHex(span) || !IsLowerHex(flags)) return std::nullopt;
  if (AllZero(trace) || AllZero(span)) return std::nullopt;
  TraceParent p;
  p.trace_id = std::string(trace);
  p.span_id = std::string(span);
  p.flags = static_cast<uint8_t>(std::strtoul(std::string(flags).c_str(), nullptr, 16));
  return p;
}

std::string TraceParent::Format() const {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "00-" + trace_id + "-" + span_id + "-";
  out += kHex[flags >> 4];
  out += kHex[flags & 15];
  return out;
}

std::string NewTraceId() { return RandomHex(16); }
std::string NewSpanId() { return RandomHex(8); }

void SetSpanSink(SpanSink s) {
  std::lock_guard lock(sink_mu);
  enabled = static_cast<bool>(s);
  sink = s ? std::make_shared<const SpanSink>(std::move(s)) : nullptr;
}

bool TracingEnabled() { return enabled.load(std::memory_order_relaxed); }

Span::Span(std::string name, SpanKind kind, std::string_view parent) {
  data_.name = std::move(name);
  data_.kind = kind;
  if (auto p = TraceParent::Parse(parent)) {
    data_.trace_id = std::move(p->trace_id);
    data_.parent_span_id = std::move(p->span_id);
    flags_ = p->flags;
  } else {
    data_.trace_id = NewTraceId();
  }
  data_.span_id = NewSpanId();
  if (TracingEnabled()) data_.start_unix_ns = UnixNanos();
}

Span::~Span() { End(); }

std::string Span::Context() const {
  TraceParent p;
  p.trace_id = data_.trace_id;
  p.span_id = data_.span_id;
  p.flags = flags_;
  return p.Format();
}

void Span::Set(std::string key, SpanValue value) {
  if (TracingEnabled()) data_.attributes.emplace_back(std::move(key), std::move(value));
}

void Span::Fail(std::string message) {
  data_.error = true;
  data_.status_message = std::move(message);
}

void Span::End() {
  if (ended_) return;
  ended_ = true;
  // Only sampled traces are exported (the caller's decision, flag bit 0; ours: always).
  if (!TracingEnabled() || (flags_ & 1) == 0 || data_.start_unix_ns == 0) return;
  data_.end_unix_ns = UnixNanos();
  if (auto s = CurrentSink()) (*s)(std::move(data_));
}

}  // namespace a2ad::core
