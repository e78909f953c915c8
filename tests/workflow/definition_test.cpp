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

}  // namespace
}  // namespace a2ad::workflow
