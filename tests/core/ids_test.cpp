// core::MakeUuidV7Generator: RFC 9562 layout (time first, version 7, variant 10) and ids that
// do not repeat across threads.
#include "a2ad/core/ids.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <regex>
#include <set>
#include <thread>
#include <vector>

namespace a2ad::core {
namespace {

class FixedClock final : public Clock {
 public:
  int64_t NowMs() const override { return 1767225600123; }
};

TEST(UuidV7, LayoutVersionVariantAndTimePrefix) {
  FixedClock clock;
  auto ids = MakeUuidV7Generator(clock);
  const std::string id = ids->Next();
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-"
                                              "[0-9a-f]{12}")))
      << id;
  // 48-bit big-endian milliseconds: 1767225600123 = 0x019b76daa87b.
  EXPECT_EQ(id.substr(0, 13), "019b76da-a87b");
}

TEST(UuidV7, NoRepeatsAcrossThreadsWithinOneMillisecond) {
  FixedClock clock;  // every id in the same millisecond: only the random bits differ
  auto ids = MakeUuidV7Generator(clock);
  std::mutex mu;
  std::set<std::string> seen;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<std::string> mine;
      for (int i = 0; i < 20000; ++i) mine.push_back(ids->Next());
      std::lock_guard lock(mu);
      seen.insert(mine.begin(), mine.end());
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), 80000u);
}

}  // namespace
}  // namespace a2ad::core
