// A node kind from outside the workflow module (an extension's): registered with
// NodeKindRegistry::Register before the first workflow is read, it loads, validates and runs
// like a built-in one; what cannot be registered is refused, and the registry is sealed once
// read. Its own executable: the registration runs in a test environment, before any test reads
// the registry.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/protocol/run_event.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"
#include "a2ad/workflow/nodes/registry.hpp"
#include "a2ad/workflow/run_steps.hpp"
#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

// "example.twice": outputs {"twice": 2 * inputs.n}; its config may name a `factor` instead of
// 2, which must be an integer.
class Twice final : public NodeKind {
 public:
  core::Result<void> Validate(const Node& node, const std::string& path) const override {
    if (const json::value* f = node.config.if_contains("factor"); f && !f->is_int64())
      return core::Error(core::ErrorCode::kInvalidParams, path + ".config.factor: an integer",
                         {{"field", path + ".config.factor"}});
    return core::Ok{};
  }
  std::vector<tasks::EventDraft> Start(const NodeStep& step,
                                       const json::object& inputs) const override {
    const json::value* n = inputs.if_contains("n");
    const json::value* f = step.node.config.if_contains("factor");
    const int64_t factor = f ? f->as_int64() : 2;
    std::vector<tasks::EventDraft> out;
    out.push_back(Ev(protocol::kEvNodeStarted, step.node.id, StartedPayload(step.node)));
    CompleteNode(out, step.run_id, step.node,
                 json::object{{"twice", (n && n->is_int64() ? n->as_int64() : 0) * factor}});
    return out;
  }
};

struct RegisterTwice : ::testing::Environment {
  void SetUp() override {
    ASSERT_TRUE(NodeKindRegistry::Register("example.twice", std::make_unique<Twice>()));
  }
};
const auto* const kRegistered = ::testing::AddGlobalTestEnvironment(new RegisterTwice);

json::object TwiceNode(json::object config = {}) {
  json::object inputs{{"n", json::object{{"type", "static"}, {"value", 21}}}};
  return NodeDoc("t", "example.twice", std::move(config), std::move(inputs));
}

TEST(NodeKindRegistry, ARegisteredKindLoadsAndRunsLikeABuiltInOne) {
  Harness h(OneNode(TwiceNode()));
  h.Drive();
  ASSERT_EQ(h.Status(), "completed");
  EXPECT_EQ(json::value(ObjAt(h.NodeState("t"), "outputs")), json::parse(R"({"twice":42})"));
}

TEST(NodeKindRegistry, ARegisteredKindValidatesItsConfigWhenTheWorkflowLoads) {
  auto bad = ParseWorkflow(Doc(json::array{TwiceNode({{"factor", "three"}})}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("config.factor"), std::string::npos) << bad.error().message;
  Harness h(OneNode(TwiceNode({{"factor", 3}})));
  h.Drive();
  EXPECT_EQ(json::value(ObjAt(h.NodeState("t"), "outputs")), json::parse(R"({"twice":63})"));
}

TEST(NodeKindRegistry, WhatCannotBeRegisteredIsRefused) {
  // Read already (the tests above): sealed.
  (void)NodeKindRegistry::Get();
  auto late = NodeKindRegistry::Register("example.late", std::make_unique<Twice>());
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, core::ErrorCode::kConflict);
  EXPECT_EQ(NodeKindRegistry::Get().Find("example.late"), nullptr);
  for (const char* id : {"core.twice", "twice", ".twice", "example."}) {
    auto refused = NodeKindRegistry::Register(id, std::make_unique<Twice>());
    ASSERT_FALSE(refused) << id;
    EXPECT_EQ(refused.error().code, core::ErrorCode::kInvalidParams) << id;
  }
  EXPECT_FALSE(NodeKindRegistry::Register("example.none", nullptr));
  // A type id with no kind is still refused when a workflow loads.
  EXPECT_FALSE(ParseWorkflow(Doc(json::array{NodeDoc("x", "example.unknown")})));
  ASSERT_NE(kRegistered, nullptr);
}

}  // namespace
}  // namespace a2ad::workflow
