// The pure Plan (plan.cpp) over the graph (graph.cpp): conditional edges, deterministic
// resume keys (a run re-driven from its log after a crash decides the same and re-asks
// nothing), and the run's caps.
#include "a2ad/workflow/plan.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <vector>

#include "a2ad/tasks/task_projection.hpp"
#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

// ---- edges and conditions ----------------------------------------------------------------------

TEST(NodeKinds, ConditionalEdgeSkipsTheOtherBranch) {
  auto wf = Parse(Doc(json::array{NodeDoc("gate", "core.approvalGate"), NodeDoc("yes", "core.noop"),
                                  NodeDoc("no", "core.noop")},
                      json::array{json::object{{"id", "e1"},
                                               {"sourceNodeId", "gate"},
                                               {"targetNodeId", "yes"},
                                               {"condition", json::object{{"type", "equals"},
                                                                          {"left", "output.action"},
                                                                          {"right", "accept"}}}},
                                  json::object{{"id", "e2"},
                                               {"sourceNodeId", "gate"},
                                               {"targetNodeId", "no"},
                                               {"condition", json::object{{"type", "notEquals"},
                                                                          {"left", "output.action"},
                                                                          {"right", "accept"}}}}}));
  Harness h(wf);
  h.Drive();
  ASSERT_TRUE(h.Answer(json::parse(R"({"action": "accept"})")).ok());
  EXPECT_EQ(StrOf(h.NodeState("yes"), "status"), "completed");
  EXPECT_EQ(StrOf(h.NodeState("no"), "status"), "skipped");
  EXPECT_EQ(h.Status(), "completed");
}

// A regex condition matches a caller's answer of any length: the default std::regex matcher
// recursed per character and overflowed the stack (killing the server) on a long subject.
TEST(NodeKinds, RegexConditionOnAVeryLongAnswerDoesNotOverflowTheStack) {
  auto wf =
      Parse(Doc(json::array{NodeDoc("gate", "core.approvalGate"), NodeDoc("yes", "core.noop"),
                            NodeDoc("no", "core.noop")},
                json::array{json::object{{"id", "e1"},
                                         {"sourceNodeId", "gate"},
                                         {"targetNodeId", "yes"},
                                         {"condition", json::object{{"type", "regex"},
                                                                    {"left", "output.feedback"},
                                                                    {"right", "^(a|b)+$"}}}},
                            json::object{{"id", "e2"},
                                         {"sourceNodeId", "gate"},
                                         {"targetNodeId", "no"},
                                         {"condition", json::object{{"type", "equals"},
                                                                    {"left", "output.action"},
                                                                    {"right", "reject"}}}}}));
  Harness h(wf);
  h.Drive();
  json::object answer{{"action", "accept"}, {"feedback", std::string(300000, 'a')}};
  ASSERT_TRUE(h.Answer(answer).ok());
  EXPECT_EQ(StrOf(h.NodeState("yes"), "status"), "completed");
  EXPECT_EQ(StrOf(h.NodeState("no"), "status"), "skipped");
}

// ---- deterministic resume keys -----------------------------------------------------------------

TEST(ResumeKeys, ALoggedAnswerIsNotAskedAgainAfterACrash) {
  auto wf =
      Parse(Doc(json::array{NodeDoc("gate", "core.approvalGate"), NodeDoc("after", "core.noop")},
                json::array{EdgeDoc("e1", "gate", "after")}));
  Harness h(wf);
  h.Drive();
  const std::string key = StrOf(ObjAt(h.Run(), "interrupt"), "key");
  EXPECT_EQ(key, std::string(kRunId) + ":gate:0");
  auto r = h.Resolve(json::parse(R"({"action": "accept"})"));
  ASSERT_TRUE(r.ok());
  h.Commit(r.value().events);  // interrupt.resolved + node.resumed ... then the crash

  // Restart: fold the log from nothing, as recovery does.
  storage::TaskRecord folded;
  for (const auto& e : h.log) ASSERT_TRUE(tasks::ApplyEvent(folded, e).ok()) << e.type;
  EXPECT_EQ(folded, h.rec);
  EXPECT_TRUE(folded.run.resume_values.contains(key));
  ASSERT_NE(folded.run.Node("gate"), nullptr);
  EXPECT_EQ(folded.run.Node("gate")->status, "running");

  Decision d = Plan(*wf, kRunId, folded.run, h.Env());
  ASSERT_EQ(d.kind, K::kCommit);
  std::vector<std::string> types;
  for (const auto& e : d.events) types.push_back(e.type);
  EXPECT_EQ(std::count(types.begin(), types.end(), "interrupt.requested"), 0);
  EXPECT_EQ(std::count(types.begin(), types.end(), "node.suspended"), 0);
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.back(), "node.completed");
  EXPECT_EQ(StrOf(ObjAt(d.events.back().payload, "outputs"), "action"), "accept");

  h.Drive();
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(h.Count("interrupt.requested"), 1u);
  EXPECT_EQ(StrOf(h.NodeState("after"), "status"), "completed");
}

TEST(ResumeKeys, ACrashBeforeTheAnswerStaysParked) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  storage::TaskRecord folded;
  for (const auto& e : h.log) ASSERT_TRUE(tasks::ApplyEvent(folded, e).ok());
  EXPECT_EQ(
      Plan(*ApprovalWorkflow(json::array{"accept", "reject"}), kRunId, folded.run, h.Env()).kind,
      K::kParked);
}

TEST(ResumeKeys, OneStepNodeCutShortIsFinishedNotRestarted) {
  Harness h(OneNode(NodeDoc("n", "core.noop")));
  h.Step();
  h.Commit(
      {{protocol::kEvNodeStarted, "n", json::object{{"typeId", "core.noop"}, {"nodeId", "n"}}}});
  Decision d = h.Plan();
  ASSERT_EQ(d.kind, K::kCommit);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].type, "node.completed");
  h.Drive();
  EXPECT_EQ(h.Count("node.started"), 1u);
  EXPECT_EQ(h.Status(), "completed");
}

// ---- limits ------------------------------------------------------------------------------------

TEST(Limits, RunTimeoutBreachesAndFails) {
  Harness h(OneNode(NodeDoc("wait", "core.delay", json::object{{"delayMs", 30000}}),
                    json::object{{"timeout", 1000}}));
  h.Step();  // run.started
  const int64_t started = h.now - 1;
  h.Step();  // node.started{wakeAt: +30 s}
  Decision d = h.Plan();
  ASSERT_EQ(d.kind, K::kSleep);
  EXPECT_EQ(d.wake_at, started + 1000);  // wakes for the deadline, not the timer
  EXPECT_TRUE(d.events.empty());
  EXPECT_EQ(h.Drive().kind, K::kDone);
  const auto* cap = h.Last("cap.breached");
  ASSERT_TRUE(cap);
  EXPECT_EQ(StrOf(cap->payload, "kind"), "run-duration");
  EXPECT_EQ(cap->payload.at("limit"), json::value(1000));
  EXPECT_GE(cap->payload.at("observed").to_number<int64_t>(), 1000);
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "run_timeout");
  EXPECT_EQ(h.Count("node.completed"), 0u);
}

TEST(Limits, MoreThanMaxNodeExecutionsFails) {
  json::array nodes, edges;
  for (int i = 0; i <= 100; ++i) {
    nodes.push_back(NodeDoc("n" + std::to_string(i), "core.noop"));
    if (i > 0)
      edges.push_back(
          EdgeDoc("e" + std::to_string(i), "n" + std::to_string(i - 1), "n" + std::to_string(i)));
  }
  auto wf = Parse(Doc(nodes, edges));
  ASSERT_TRUE(wf);
  ASSERT_EQ(wf->nodes.size(), 101u);
  Harness h(wf);
  EXPECT_EQ(h.Drive().kind, K::kDone);
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "recursion_limit_exceeded");
  const auto* cap = h.Last("cap.breached");
  ASSERT_TRUE(cap);
  EXPECT_EQ(StrOf(cap->payload, "kind"), "node-executions");
  EXPECT_EQ(h.Count("node.completed"), 100u);
  EXPECT_EQ(h.Run().at("nodeExecutions"), json::value(100));
  EXPECT_FALSE(h.NodeState("n100").contains("status"));

  // Exactly 100 nodes fit.
  nodes.pop_back();
  edges.pop_back();
  Harness fits(Parse(Doc(nodes, edges)));
  fits.Drive();
  EXPECT_EQ(fits.Status(), "completed");
}
}  // namespace
}  // namespace a2ad::workflow
