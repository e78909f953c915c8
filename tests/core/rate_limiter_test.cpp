// The token buckets of rate limits (core/rate_limiter.hpp): a burst, then a wait that says
// exactly when a token is back; refill at the rate, never past the burst; one key's use does
// not touch another's; the number of buckets stays bounded, dropping idle ones first.
#include "a2ad/core/rate_limiter.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace a2ad::core {
namespace {

TEST(RateLimiter, ABurstThenAWaitUntilTheNextToken) {
  RateLimiter limiter(2, 3);  // 2 per second, bursts of 3
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.Take("k", 1000), 0) << i;
  EXPECT_EQ(limiter.Take("k", 1000), 500);  // one token takes 500 ms at 2/s
  EXPECT_EQ(limiter.Take("k", 1200), 300);  // a refused request takes nothing
  EXPECT_EQ(limiter.Take("k", 1500), 0);    // the token is back
  EXPECT_EQ(limiter.Take("k", 1500), 500);
}

TEST(RateLimiter, RefillStopsAtTheBurst) {
  RateLimiter limiter(10, 2);
  EXPECT_EQ(limiter.Take("k", 0), 0);
  EXPECT_EQ(limiter.Take("k", 0), 0);
  // An hour idle refills two tokens, not 36000.
  EXPECT_EQ(limiter.Take("k", 3'600'000), 0);
  EXPECT_EQ(limiter.Take("k", 3'600'000), 0);
  EXPECT_EQ(limiter.Take("k", 3'600'000), 100);
}

TEST(RateLimiter, KeysHaveTheirOwnBuckets) {
  RateLimiter limiter(1, 1);
  EXPECT_EQ(limiter.Take("greedy", 0), 0);
  EXPECT_GT(limiter.Take("greedy", 0), 0);
  EXPECT_EQ(limiter.Take("patient", 0), 0);
}

TEST(RateLimiter, ASlowRateWaitsLong) {
  RateLimiter limiter(0.001, 1);  // one per 1000 s
  EXPECT_EQ(limiter.Take("k", 0), 0);
  EXPECT_EQ(limiter.Take("k", 0), 1'000'000);
}

TEST(RateLimiter, BucketsAreBounded) {
  RateLimiter limiter(1, 1, 64);  // 16 shards x 4 buckets
  for (int i = 0; i < 10000; ++i) limiter.Take("k" + std::to_string(i), i);
  EXPECT_LE(limiter.buckets(), 64u);
  EXPECT_GE(limiter.buckets(), 16u);
  // Buckets that refilled completely are dropped first: after an idle while, new keys find
  // room without evicting anyone in use.
  RateLimiter idle(1, 1, 64);
  for (int i = 0; i < 64; ++i) idle.Take("old" + std::to_string(i), 0);
  idle.Take("new", 10'000);
  EXPECT_LE(idle.buckets(), 64u);
}

TEST(RateLimiter, ConcurrentTakesNeverGrantMoreThanTheBurst) {
  RateLimiter limiter(0.001, 100);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i)
        if (limiter.Take("shared", 0) == 0) ++granted;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(granted.load(), 100);
}

}  // namespace
}  // namespace a2ad::core
