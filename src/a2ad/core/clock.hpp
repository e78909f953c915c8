#pragma once
// Injected time (STYLE.md #5): code that stamps or waits takes a Clock&, tests pass a
// ManualClock. Times are Unix epoch milliseconds, UTC.
//
// Thread safety: NowMs of every Clock may be called from any thread at once, and so may
// ManualClock's Advance and Set (one atomic). FormatTimestamp and ParseTimestamp are pure.
#include <atomic>
#include <cstdint>
#include <string>

namespace a2ad::core {

class Clock {
 public:
  virtual ~Clock() = default;
  /// Milliseconds since the Unix epoch. Thread-safe.
  virtual int64_t NowMs() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t NowMs() const override;
};

/// A clock that moves only when told to. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1767225600000) : now_(start_ms) {}  // 2026-01-01
  int64_t NowMs() const override { return now_.load(); }
  void Advance(int64_t ms) { now_ += ms; }
  void Set(int64_t ms) { now_ = ms; }

 private:
  std::atomic<int64_t> now_;
};

/// RFC 3339 UTC with millisecond precision and `Z`: "2026-01-01T10:00:00.000Z".
std::string FormatTimestamp(int64_t epoch_ms);

/// Parses RFC 3339 / ISO-8601 date-times ("Z" or "+hh:mm" offsets, optional fraction).
/// Returns false if `text` is not such a timestamp.
bool ParseTimestamp(std::string_view text, int64_t& epoch_ms);

}  // namespace a2ad::core
