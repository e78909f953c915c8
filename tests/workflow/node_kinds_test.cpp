// The node kinds without an interrupt (nodes/basic.cpp, delay.cpp, sub_workflow.cpp), each
// driven through the pure Plan by the harness (harness.hpp). The gates are in gates_test.cpp,
// the graph, resume keys and caps in plan_test.cpp.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <vector>

#include "a2ad/tasks/task_service.hpp"
#include "a2ad/workflow/plan.hpp"
#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

// ---- core.noop, core.identity, core.fail -------------------------------------------------------

TEST(NodeKinds, Noop) {
  Harness h(OneNode(NodeDoc("n", "core.noop")));
  EXPECT_EQ(h.Drive().kind, K::kDone);
  EXPECT_EQ(h.Types(),
            (std::vector<std::string>{"a2a.task.submitted", "run.started", "node.started",
                                      "node.completed", "artifact.created", "run.completed"}));
  EXPECT_EQ(StrOf(h.NodeState("n"), "status"), "completed");
  EXPECT_EQ(h.Status(), "completed");
}

TEST(NodeKinds, IdentityOutputsEqualItsInputs) {
  json::object inputs{{"a", json::object{{"type", "static"}, {"value", json::array{1, 2}}}},
                      {"b", json::object{{"type", "variable"}, {"variableName", "who"}}}};
  auto wf = Parse(Doc(json::array{NodeDoc("id", "core.identity", {}, inputs)}, {},
                      json::array{json::object{{"name", "who"}, {"type", "string"}}}));
  Harness h(wf, json::object{{"who", "bob"}});
  h.Drive();
  ASSERT_EQ(h.Status(), "completed");
  EXPECT_EQ(json::value(ObjAt(h.NodeState("id"), "outputs")),
            json::parse(R"({"a":[1,2],"b":"bob"})"));
  const auto* done = h.Last("node.completed");
  ASSERT_TRUE(done);
  EXPECT_EQ(json::value(ObjAt(done->payload, "outputs")), json::parse(R"({"a":[1,2],"b":"bob"})"));
}

TEST(NodeKinds, FailFailsNodeAndRun) {
  Harness h(OneNode(NodeDoc("boom", "core.fail")));
  h.Drive();
  const auto* nf = h.Last("node.failed");
  ASSERT_TRUE(nf);
  EXPECT_EQ(nf->node_id, "boom");
  EXPECT_EQ(StrOf(ObjAt(nf->payload, "error"), "code"), "conformance_test_failure");
  const auto* rf = h.Last("run.failed");
  ASSERT_TRUE(rf);
  EXPECT_EQ(StrOf(ObjAt(rf->payload, "error"), "code"), "conformance_test_failure");
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "conformance_test_failure");
  EXPECT_EQ(StrOf(h.Run(), "failedNodeId"), "boom");
  EXPECT_EQ(StrOf(h.NodeState("boom"), "status"), "failed");
  EXPECT_EQ(h.Count("run.completed"), 0u);
}

// ---- a2ad.format ------------------------------------------------------------------------------

TEST(NodeKinds, FormatWritesItsInputsIntoATextArtifact) {
  json::object inputs{{"who", json::object{{"type", "variable"}, {"variableName", "who"}}},
                      {"n", json::object{{"type", "static"}, {"value", json::array{1, 2}}}}};
  json::object node = NodeDoc(
      "f", "a2ad.format",
      json::object{{"template", "Dear {{who}}, {{n}} {{who}}."}, {"outputKey", "letter"}}, inputs);
  node["artifactType"] = "letter";
  auto wf = Parse(
      Doc(json::array{node}, {}, json::array{json::object{{"name", "who"}, {"type", "string"}}}));
  Harness h(wf, json::object{{"who", "Ann"}});
  h.Drive();
  ASSERT_EQ(h.Status(), "completed");
  EXPECT_EQ(json::value(ObjAt(h.NodeState("f"), "outputs")),
            json::parse(R"({"letter":"Dear Ann, [1,2] Ann."})"));
  bool text_part = false;
  for (const auto& e : h.log)
    if (e.type == "artifact.created" && e.node_id == "f")
      text_part = json::serialize(e.payload).find(R"({"text":"Dear Ann, [1,2] Ann."})") !=
                  std::string::npos;
  EXPECT_TRUE(text_part) << "the node's artifact is a text part";
}

TEST(NodeKinds, FormatRefusesAPlaceholderNamingNoInput) {
  auto bad = ParseWorkflow(Doc(json::array{
      NodeDoc("f", "a2ad.format", json::object{{"template", "Hi {{nobody}}"}},
              json::object{{"who", json::object{{"type", "static"}, {"value", "x"}}}})}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("{{nobody}} names no input"), std::string::npos)
      << bad.error().message;
  auto none = ParseWorkflow(Doc(json::array{NodeDoc("f", "a2ad.format")}));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("config.template"), std::string::npos);
}

// ---- core.delay --------------------------------------------------------------------------------

TEST(NodeKinds, DelayLogsItsWakeTimeSleepsThenCompletes) {
  Harness h(OneNode(NodeDoc("wait", "core.delay", json::object{{"delayMs", 5000}})));
  h.Step();  // run.started
  const int64_t started_at = h.now;
  Decision d = h.Plan();
  ASSERT_EQ(d.kind, K::kCommit);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].type, "node.started");
  ASSERT_TRUE(d.events[0].payload.contains("wakeAt"));
  EXPECT_EQ(d.events[0].payload.at("wakeAt"), json::value(started_at + 5000));
  h.Commit(d.events);

  // The timer is durable: deciding again (e.g. after a restart) sleeps to the same instant.
  Decision sleep = h.Plan();
  ASSERT_EQ(sleep.kind, K::kSleep);
  EXPECT_EQ(sleep.wake_at, started_at + 5000);
  ASSERT_FALSE(sleep.events.empty());
  EXPECT_EQ(sleep.events.back().type, "node.completed");
  EXPECT_EQ(h.Status(), "running");
  EXPECT_EQ(h.Count("node.completed"), 0u);

  EXPECT_EQ(h.Drive().kind, K::kDone);
  EXPECT_EQ(h.sleeps.front(), started_at + 5000);
  EXPECT_EQ(StrOf(h.NodeState("wait"), "status"), "completed");
  EXPECT_EQ(h.Status(), "completed");
}

TEST(NodeKinds, DelayTakesItsDurationFromAVariable) {
  auto wf = Parse(json::parse(R"({
    "id": "wf", "name": "d", "version": "1", "metadata": {}, "settings": {}, "triggers": [],
    "variables": [{"name": "delayMs", "type": "number", "defaultValue": 1000}],
    "nodes": [{"id": "wait", "typeId": "core.delay",
               "inputs": {"delayMs": {"type": "variable", "variableName": "delayMs"}}}],
    "edges": []})")
                      .as_object());
  Harness h(wf, json::object{{"delayMs", 250}});
  h.Step();
  const int64_t t = h.now;
  h.Step();
  EXPECT_EQ(h.NodeState("wait").at("wakeAt"), json::value(t + 250));
}

// ---- core.subWorkflow --------------------------------------------------------------------------

std::shared_ptr<const Workflow> ParentWorkflow(std::string policy) {
  json::object config{
      {"workflowId", "child-wf"},
      {"outputMapping", json::object{{"childOutcome", "childResult"}, {"absent", "notInChild"}}}};
  if (!policy.empty()) config["onChildFailure"] = policy;
  return Parse(Doc(json::array{NodeDoc("start", "core.noop"),
                               NodeDoc("call", "core.subWorkflow", std::move(config)),
                               NodeDoc("end", "core.noop")},
                   json::array{EdgeDoc("e1", "start", "call"), EdgeDoc("e2", "call", "end")},
                   json::array{json::object{{"name", "childOutcome"}, {"defaultValue", "none"}}}));
}

const Node& CallNode(const Workflow& w) { return *w.FindNode("call"); }

TEST(NodeKinds, SubWorkflowWaitsForADeterministicChild) {
  auto wf = ParentWorkflow("");
  Harness h(wf);
  Decision d = h.Drive();
  ASSERT_EQ(d.kind, K::kWaitChild);
  ASSERT_TRUE(d.node);
  EXPECT_EQ(d.node->id, "call");
  EXPECT_FALSE(d.child_run_id.empty());
  EXPECT_EQ(d.child_run_id, tasks::NameBasedId(std::string("child\n") + kRunId + "\ncall"));
  EXPECT_EQ(StrOf(h.NodeState("call"), "childRunId"), d.child_run_id);
  // Deciding again (a restart) names the same child: creating it is idempotent.
  Harness again(wf);
  EXPECT_EQ(again.Drive().child_run_id, d.child_run_id);
  EXPECT_EQ(h.Plan().child_run_id, d.child_run_id);
  EXPECT_EQ(h.Count("node.started"), 2u);  // waiting started nothing new
}

TEST(NodeKinds, SubWorkflowCompletedChildMapsOutputs) {
  auto wf = ParentWorkflow("");
  Harness h(wf);
  Decision d = h.Drive();
  ASSERT_EQ(d.kind, K::kWaitChild);
  json::object child{{"runId", d.child_run_id},
                     {"status", "completed"},
                     {"variables", json::object{{"childResult", 42}}}};
  auto events = FinishChild(*wf, CallNode(*wf), h.rec.run, d.child_run_id,
                            protocol::RunSnapshotFromJson(child));
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].type, "variable.changed");
  EXPECT_EQ(events[0].payload.at("name"), json::value("childOutcome"));
  EXPECT_EQ(events[0].payload.at("next"), json::value(42));
  EXPECT_EQ(events[0].payload.at("previous"), json::value("none"));
  for (const auto& e : events)  // a child variable that does not exist overwrites nothing
    if (e.type == "variable.changed") {
      EXPECT_NE(e.payload.at("name"), json::value("absent"));
    }
  EXPECT_EQ(events.back().type, "node.completed");
  h.Commit(events);
  EXPECT_EQ(ObjAt(h.Run(), "variables").at("childOutcome"), json::value(42));
  EXPECT_EQ(
      json::value(ObjAt(h.NodeState("call"), "outputs")),
      json::value(json::object{{"childRunId", d.child_run_id}, {"childStatus", "completed"}}));
  EXPECT_EQ(h.Drive().kind, K::kDone);
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(ObjAt(h.Run(), "outputs").at("childOutcome"), json::value(42));
}

TEST(NodeKinds, SubWorkflowFailedChildFailsNodeAndRunByDefault) {
  for (const std::string policy : {"", "fail-parent"}) {
    SCOPED_TRACE("policy '" + policy + "'");
    auto wf = ParentWorkflow(policy);
    Harness h(wf);
    Decision d = h.Drive();
    json::object child{{"status", "failed"},
                       {"error", json::object{{"code", "x"}, {"message", "child broke"}}}};
    auto events = FinishChild(*wf, CallNode(*wf), h.rec.run, d.child_run_id,
                              protocol::RunSnapshotFromJson(child));
    h.Commit(events);
    EXPECT_EQ(h.Count("variable.changed"), 0u);
    EXPECT_EQ(StrOf(h.NodeState("call"), "status"), "failed");
    EXPECT_EQ(h.Status(), "failed");
    EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "child_run_failed");
    EXPECT_NE(StrOf(ObjAt(h.Run(), "error"), "message").find("child broke"), std::string::npos);
    EXPECT_EQ(h.Plan().kind, K::kDone);
  }
}

TEST(NodeKinds, SubWorkflowAbsorbCompletesDespiteAFailedChild) {
  auto wf = ParentWorkflow("absorb");
  Harness h(wf);
  Decision d = h.Drive();
  auto events = FinishChild(*wf, CallNode(*wf), h.rec.run, d.child_run_id,
                            protocol::RunSnapshotFromJson(json::object{{"status", "failed"}}));
  h.Commit(events);
  EXPECT_EQ(StrOf(h.NodeState("call"), "status"), "completed");
  EXPECT_EQ(StrOf(ObjAt(h.NodeState("call"), "outputs"), "childStatus"), "failed");
  EXPECT_EQ(h.Drive().kind, K::kDone);
  EXPECT_EQ(h.Status(), "completed");
}
}  // namespace
}  // namespace a2ad::workflow
