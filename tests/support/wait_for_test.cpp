// testing::WaitFor and PollUntil (wait_for.hpp): the first look is immediate, a condition
// that comes to hold is seen, one that never does is given up at the timeout (not before),
// and PollUntil hands back the last value it fetched.
#include "wait_for.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace a2ad::testing {
namespace {
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TEST(WaitFor, AConditionThatHoldsIsSeenAtTheFirstLook) {
  int looks = 0;
  const auto t0 = Clock::now();
  EXPECT_TRUE(WaitFor([&] { return ++looks > 0; }, std::chrono::seconds(10)));
  EXPECT_EQ(looks, 1);
  EXPECT_LT(Clock::now() - t0, milliseconds(500));
}

TEST(WaitFor, AConditionThatComesToHoldIsSeen) {
  int looks = 0;
  EXPECT_TRUE(WaitFor([&] { return ++looks == 5; }, std::chrono::seconds(10)));
  EXPECT_EQ(looks, 5);
}

TEST(WaitFor, AConditionThatNeverHoldsIsGivenUpAtTheTimeoutAndLookedAtThen) {
  int looks = 0;
  const auto t0 = Clock::now();
  EXPECT_FALSE(WaitFor([&] { return ++looks < 0; }, milliseconds(100), milliseconds(10)));
  EXPECT_GE(Clock::now() - t0, milliseconds(100));
  EXPECT_GT(looks, 2);  // at once, with the backoff, and at the deadline
}

TEST(PollUntil, ReturnsTheFirstValueThatSatisfiesThePredicate) {
  int n = 0;
  EXPECT_EQ(PollUntil([&] { return ++n; }, [](int v) { return v == 3; }), 3);
  EXPECT_EQ(n, 3);  // fetched once per look
}

TEST(PollUntil, ReturnsTheLastValueFetchedWhenItTimesOut) {
  int n = 0;
  const int last = PollUntil([&] { return ++n; }, [](int) { return false; }, milliseconds(50));
  EXPECT_EQ(last, n);
  EXPECT_GT(n, 1);
}

}  // namespace
}  // namespace a2ad::testing
