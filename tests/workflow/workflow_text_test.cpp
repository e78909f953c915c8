// The workflow loader on text (workflow::ParseWorkflowText, what LoadWorkflowDir does with each
// file): what it refuses and how it names the field.
#include "a2ad/workflow/definition.hpp"

#include <gtest/gtest.h>

#include <string>

namespace a2ad::workflow {
namespace {
using core::ErrorCode;

std::string Field(const core::Error& e) {
  for (const auto& [k, v] : e.details)
    if (k == "field") return v;
  return "<none>";
}

// A one-node workflow with `settings` and the node's `config` spliced in.
std::string Doc(const std::string& settings, const std::string& config = "{}") {
  return R"({"id":"wf","name":"W","version":"1.0","metadata":{},"settings":)" + settings +
         R"(,"triggers":[],"variables":[],"nodes":[{"id":"n","typeId":"core.approvalGate",)"
         R"("config":)" +
         config + R"(}],"edges":[]})";
}

TEST(ParseWorkflowText, ReadsADefinition) {
  auto w = ParseWorkflowText(Doc(R"({"timeout":60000.7})", R"({"timeoutMs":1000})"));
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->id, "wf");
  EXPECT_EQ(w->timeout_ms, 60000);
  ASSERT_EQ(w->nodes.size(), 1u);
  EXPECT_EQ(w->nodes[0].type_id, "core.approvalGate");
}

TEST(ParseWorkflowText, TextThatIsNotJsonIsRefusedAsSuch) {
  auto w = ParseWorkflowText(R"({"id":"wf",)");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, ErrorCode::kParseError);
  EXPECT_TRUE(w.error().message.starts_with("not JSON: ")) << w.error().message;
  auto dup = ParseWorkflowText(R"({"id":"a","id":"b"})");
  ASSERT_FALSE(dup);
  EXPECT_TRUE(dup.error().message.starts_with("not JSON: id: duplicate member name 'id'"))
      << dup.error().message;
}

// Found by tests/fuzz/workflow_fuzz (corpus: refused-timeout-huge.json): settings.timeout 1e300
// was converted to an int64 it does not fit (undefined behaviour), and a large one overflowed
// `started + timeout` in the engine. Durations are bounded by 2^53 - 1 ms, here and for the
// interrupt deadline config.timeoutMs the engine reads.
TEST(ParseWorkflowText, DurationsMustBeMillisecondsWithinTwoToThe53) {
  EXPECT_TRUE(ParseWorkflowText(Doc(R"({"timeout":9007199254740991})")));
  EXPECT_TRUE(ParseWorkflowText(Doc(R"({"timeout":0})", R"({"timeoutMs":0})")));
  for (const char* timeout :
       {"1e300", "9007199254740992", "18446744073709551615", "-1", "-0.5", "\"10s\"", "null"}) {
    auto w = ParseWorkflowText(Doc(std::string(R"({"timeout":)") + timeout + "}"));
    ASSERT_FALSE(w) << timeout;
    EXPECT_EQ(w.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Field(w.error()), "settings.timeout");
    EXPECT_EQ(w.error().message,
              "settings.timeout: expected a number of milliseconds from 0 to 9007199254740991");
    auto n = ParseWorkflowText(Doc("{}", std::string(R"({"timeoutMs":)") + timeout + "}"));
    ASSERT_FALSE(n) << timeout;
    EXPECT_EQ(Field(n.error()), "nodes[0].config.timeoutMs");
  }
}

}  // namespace
}  // namespace a2ad::workflow
