#pragma once
// Token buckets per key (issue 14: rate limits per principal, off by default). Each key's
// bucket holds up to `burst` tokens and refills at `per_second`; a request takes one token or
// is told how long until one is there. Used by the router and the gRPC binding with the
// principal's id as the key (transport/auth/auth.hpp).
//
// Memory is bounded: at most `max_keys` buckets. A new key past that first drops the buckets
// that have refilled completely (a full bucket is the same as no bucket), and when every
// bucket is in use, the one touched longest ago.
//
// Thread safety: Take may be called from any thread at once (keys are spread over shards,
// each with its own mutex).
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace a2ad::core {

class RateLimiter {
 public:
  /// `per_second` > 0, `burst` >= 1.
  RateLimiter(double per_second, double burst, size_t max_keys = 100000);

  /// 0 when `key` may make a request at `now_ms` (a token is taken); else the milliseconds
  /// until it may (>= 1; nothing is taken).
  int64_t Take(std::string_view key, int64_t now_ms);

  /// Buckets held now (for tests and metrics).
  size_t buckets();
  double per_second() const { return per_second_; }
  double burst() const { return burst_; }

 private:
  struct Bucket {
    double tokens = 0;
    int64_t updated_ms = 0;
  };
  struct Shard {
    std::mutex mu;
    std::map<std::string, Bucket, std::less<>> buckets;
  };
  static constexpr size_t kShards = 16;

  void MakeRoom(Shard& shard, int64_t now_ms);
  double Refilled(const Bucket& b, int64_t now_ms) const;

  const double per_second_;
  const double burst_;
  const size_t max_per_shard_;
  std::array<Shard, kShards> shards_;
};

}  // namespace a2ad::core
