#include "a2ad/core/clock.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <random>
#include <set>
#include <vector>

#include "a2ad/core/ids.hpp"

namespace a2ad::core {
namespace {

TEST(Timestamp, FormatsRfc3339UtcWithMilliseconds) {
  EXPECT_EQ(FormatTimestamp(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatTimestamp(1767261600123), "2026-01-01T10:00:00.123Z");
  EXPECT_EQ(FormatTimestamp(951782400000), "2000-02-29T00:00:00.000Z");  // leap day
}

TEST(Timestamp, ParsesWhatItFormatsAndCommonVariants) {
  int64_t ms = 0;
  for (int64_t v :
       {int64_t{0}, int64_t{1767261600123}, int64_t{951782400000}, int64_t{4102444799999}}) {
    ASSERT_TRUE(ParseTimestamp(FormatTimestamp(v), ms));
    EXPECT_EQ(ms, v);
  }
  ASSERT_TRUE(ParseTimestamp("2026-01-01T11:00:00+01:00", ms));
  EXPECT_EQ(ms, 1767261600000);
  ASSERT_TRUE(ParseTimestamp("2025-04-02T16:59:25.331844", ms));  // SDK examples omit the zone
  EXPECT_EQ(ms, 1743613165331);
  ASSERT_TRUE(ParseTimestamp("2026-01-01T10:00:00.5Z", ms));
  EXPECT_EQ(ms, 1767261600500);
}

TEST(Timestamp, RejectsGarbage) {
  int64_t ms = 0;
  for (const char* bad :
       {"", "yesterday", "2026-13-01T00:00:00Z", "2026-01-01", "2026-01-01T10:00:00.Z",
        "2026-01-01T10:00:00Zjunk", "2026-01-01T25:00:00Z", "2026-01-01T10:00:00+1"})
    EXPECT_FALSE(ParseTimestamp(bad, ms)) << bad;
}

TEST(Ids, UuidV7IsTimeOrderedVersion7AndUnique) {
  ManualClock clock(1767261600000);
  auto gen = MakeUuidV7Generator(clock);
  std::set<std::string> seen;
  std::string prev;
  for (int i = 0; i < 1000; ++i) {
    if (i % 100 == 0) clock.Advance(1);
    std::string id = gen->Next();
    ASSERT_EQ(id.size(), 36u);
    EXPECT_EQ(id[14], '7');
    EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
    EXPECT_TRUE(seen.insert(id).second);
    if (i % 100 == 0 && !prev.empty()) {
      EXPECT_LT(prev.substr(0, 13), id.substr(0, 13));
    }
    prev = id;
  }
  char hex[16];
  std::snprintf(hex, sizeof hex, "%012llx", static_cast<unsigned long long>(clock.NowMs()));
  std::string expected = std::string(hex).substr(0, 8) + "-" + std::string(hex).substr(8, 4);
  EXPECT_EQ(gen->Next().substr(0, 13), expected);  // 48-bit big-endian ms prefix
}

TEST(Ids, SequentialGeneratorIsDeterministic) {
  auto gen = MakeSequentialIdGenerator("t");
  EXPECT_EQ(gen->Next(), "t-0001");
  EXPECT_EQ(gen->Next(), "t-0002");
}

}  // namespace
}  // namespace a2ad::core

namespace a2ad::core {
namespace {
// The hand-written civil-date formatting agrees with gmtime_r + strftime across eras,
// leap years, month ends and negative times.
TEST(Timestamp, FormattingAgreesWithTheCLibrary) {
  std::mt19937_64 rng(42);
  std::vector<int64_t> samples = {0,
                                  -1,
                                  -1000,
                                  86399999,
                                  86400000,
                                  951868799999,
                                  4107542399999,
                                  253402300799999,
                                  -30610224000000};  // year 1000 (strftime pads no further)
  for (int i = 0; i < 20000; ++i)
    samples.push_back(static_cast<int64_t>(rng() % 284012524800000ULL) - 30610224000000LL);
  for (int64_t ms : samples) {
    int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
    std::time_t t = static_cast<std::time_t>(secs);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    char frac[8];
    std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms - secs * 1000));
    ASSERT_EQ(FormatTimestamp(ms), std::string(buf) + frac) << ms;
  }
}
}  // namespace
}  // namespace a2ad::core
