// core::MakeUuidV7Generator: RFC 9562 layout (time first, version 7, variant 10) and ids that
// do not repeat across threads; core::RandomBytes, the buffered CSPRNG they draw from.
#include "a2ad/core/ids.hpp"

#include <gtest/gtest.h>

#include <array>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/core/random.hpp"

namespace a2ad::core {
namespace {

class FixedClock final : public Clock {
 public:
  int64_t NowMs() const override { return 1767225600123; }
};

TEST(FormatUuid, IsTheCanonicalLowercaseForm) {
  const unsigned char bytes[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                   0xf0, 0x0f, 0x10, 0x9a, 0xbc, 0xde, 0xff, 0x00};
  EXPECT_EQ(FormatUuid(bytes), "01234567-89ab-cdef-f00f-109abcdeff00");
  const unsigned char zeros[16] = {};
  EXPECT_EQ(FormatUuid(zeros), "00000000-0000-0000-0000-000000000000");
}

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

// Draws of every size, from the per-thread buffer and around its refills, on several threads
// at once: no two draws repeat and none comes back zeroed (the buffer wipes what it hands out,
// after the copy).
TEST(RandomBytes, DrawsDoNotRepeatAcrossThreadsOrRefills) {
  constexpr int kThreads = 4, kDraws = 3000;
  std::mutex mu;
  std::set<std::string> seen;
  int zero = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<std::string> mine;
      int mine_zero = 0;
      for (int i = 0; i < kDraws; ++i) {
        const size_t n = 8 + static_cast<size_t>((i + t) % 3) * 5 + (i % 97 == 0 ? 200 : 0);
        std::array<unsigned char, 256> buf{};
        RandomBytes(buf.data(), n);
        bool all_zero = true;
        for (size_t k = 0; k < n; ++k) all_zero = all_zero && buf[k] == 0;
        mine_zero += all_zero ? 1 : 0;
        mine.emplace_back(reinterpret_cast<const char*>(buf.data()), n);
      }
      std::lock_guard lock(mu);
      zero += mine_zero;
      seen.insert(mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(zero, 0);
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kDraws));
}

}  // namespace
}  // namespace a2ad::core
