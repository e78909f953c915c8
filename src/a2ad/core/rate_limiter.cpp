#include "a2ad/core/rate_limiter.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace a2ad::core {

RateLimiter::RateLimiter(double per_second, double burst, size_t max_keys)
    : per_second_(per_second),
      burst_(std::max(1.0, burst)),
      max_per_shard_(std::max<size_t>(1, max_keys / kShards)) {}

double RateLimiter::Refilled(const Bucket& b, int64_t now_ms) const {
  const double elapsed_s = static_cast<double>(std::max<int64_t>(0, now_ms - b.updated_ms)) / 1000;
  return std::min(burst_, b.tokens + elapsed_s * per_second_);
}

void RateLimiter::MakeRoom(Shard& shard, int64_t now_ms) {
  std::erase_if(shard.buckets,
                [&](const auto& kv) { return Refilled(kv.second, now_ms) >= burst_; });
  if (shard.buckets.size() < max_per_shard_) return;
  auto oldest = std::min_element(
      shard.buckets.begin(), shard.buckets.end(),
      [](const auto& a, const auto& b) { return a.second.updated_ms < b.second.updated_ms; });
  shard.buckets.erase(oldest);
}

int64_t RateLimiter::Take(std::string_view key, int64_t now_ms) {
  Shard& shard = shards_[std::hash<std::string_view>{}(key) % kShards];
  std::lock_guard lock(shard.mu);
  auto it = shard.buckets.find(key);
  if (it == shard.buckets.end()) {
    if (shard.buckets.size() >= max_per_shard_) MakeRoom(shard, now_ms);
    it = shard.buckets.emplace(std::string(key), Bucket{burst_, now_ms}).first;
  }
  Bucket& b = it->second;
  b.tokens = Refilled(b, now_ms);
  b.updated_ms = std::max(b.updated_ms, now_ms);
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  const double wait_ms = std::ceil((1 - b.tokens) / per_second_ * 1000);
  return std::max<int64_t>(1, static_cast<int64_t>(wait_ms));
}

size_t RateLimiter::buckets() {
  size_t n = 0;
  for (Shard& shard : shards_) {
    std::lock_guard lock(shard.mu);
    n += shard.buckets.size();
  }
  return n;
}

}  // namespace a2ad::core
