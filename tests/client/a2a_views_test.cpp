// What the `a2a` CLI prints of tasks (src/a2ad/cli/a2a_views.hpp), from the JSON an agent
// answers: the paused state, ages, --since, the list filters and the child tasks they hide.
#include "a2ad/cli/a2a_views.hpp"

#include <gtest/gtest.h>

#include "a2ad/client/peer_card.hpp"

namespace a2ad::cli {
namespace {
namespace json = boost::json;

constexpr int64_t kNow = 1767261600000;  // 2026-01-01T10:00:00.000Z

json::object Task(const std::string& state, const std::string& at, json::object openwop = {},
                  json::object pause = {}) {
  json::object metadata{{"openwop", std::move(openwop)}};
  if (!pause.empty()) metadata["pause"] = std::move(pause);
  return client::NormalizeTask(json::object{{"id", "t1"},
                                            {"status", json::object{{"state", state}, {"timestamp", at}}},
                                            {"metadata", std::move(metadata)}});
}

TEST(A2aViews, APausedTaskShowsPausedWhateverItsA2aState) {
  EXPECT_EQ(StateLabel(Task("TASK_STATE_WORKING", "2026-01-01T09:00:00Z")), "working");
  EXPECT_EQ(StateLabel(Task("TASK_STATE_WORKING", "2026-01-01T09:00:00Z", {},
                            {{"state", "paused-by-client"}})),
            "paused-by-client");
}

TEST(A2aViews, AgesAndSince) {
  EXPECT_EQ(Age("2026-01-01T09:59:18Z", kNow), "42s");
  EXPECT_EQ(Age("2026-01-01T09:57:00Z", kNow), "3m");
  EXPECT_EQ(Age("2026-01-01T05:00:00Z", kNow), "5h");
  EXPECT_EQ(Age("2025-12-30T10:00:00Z", kNow), "2d");
  EXPECT_EQ(Age("not a time", kNow), "");
  EXPECT_EQ(SinceMs("90s", kNow), kNow - 90000);
  EXPECT_EQ(SinceMs("2h", kNow), kNow - 7200000);
  EXPECT_EQ(SinceMs("2026-01-01T09:00:00Z", kNow), kNow - 3600000);
  EXPECT_FALSE(SinceMs("2w", kNow));
  EXPECT_FALSE(SinceMs("h", kNow));
  EXPECT_FALSE(SinceMs("yesterday", kNow));
}

TEST(A2aViews, FiltersAndTheStepsOfOtherRuns) {
  const json::object mine = Task("TASK_STATE_INPUT_REQUIRED", "2026-01-01T09:00:00Z",
                                 {{"skillId", "campaign-brief"}});
  const json::object child = Task("TASK_STATE_COMPLETED", "2026-01-01T09:00:00Z",
                                  {{"skillId", "brief-drafter"}, {"callerRunId", "r1"}});
  const json::object sub = Task("TASK_STATE_WORKING", "2026-01-01T09:00:00Z",
                                {{"skillId", "x"}, {"parentRunId", "r1"}});
  EXPECT_TRUE(Matches(mine, {}));
  EXPECT_FALSE(Matches(child, {}));
  EXPECT_FALSE(Matches(sub, {}));
  EXPECT_TRUE(Matches(child, {.all = true}));
  EXPECT_TRUE(Matches(mine, {.state = "input-required"}));
  EXPECT_TRUE(Matches(mine, {.state = "TASK_STATE_INPUT_REQUIRED"}));
  EXPECT_FALSE(Matches(mine, {.state = "working"}));
  EXPECT_TRUE(Matches(mine, {.skill = "campaign-brief"}));
  EXPECT_FALSE(Matches(mine, {.skill = "long-delay"}));
  EXPECT_TRUE(Matches(mine, {.since_ms = kNow - 7200000}));
  EXPECT_FALSE(Matches(mine, {.since_ms = kNow - 1800000}));
  const json::object paused = Task("TASK_STATE_WORKING", "2026-01-01T09:00:00Z", {},
                                   {{"state", "paused-by-agent"}});
  EXPECT_TRUE(Matches(paused, {.state = "paused"}));
  EXPECT_FALSE(Matches(paused, {.state = "working"}));
  EXPECT_EQ(ListLine(mine, kNow), "t1  input-required  campaign-brief  1h");
}

}  // namespace
}  // namespace a2ad::cli
