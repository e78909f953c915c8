// protocol/run_snapshot.hpp: the typed RunSnapshot and its JSON form at the storage edge.
#include "a2ad/protocol/run_snapshot.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "a2ad/protocol/json_text.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

std::string Text(const RunSnapshot& run) {
  std::string out;
  JsonTextWriter w(out);
  WriteRunSnapshot(w, run);
  return out;
}

RunSnapshot Read(std::string_view text) {
  return RunSnapshotFromJson(json::parse(text).as_object());
}

// A snapshot as earlier releases stored it: the fold's member order, every member the fold
// writes (a run paused at a sub-workflow after an answered gate, one vote cast).
constexpr const char* kStored = R"({
  "runId":"r1","workflowId":"wf","status":"paused","createdAt":"2026-01-01T00:00:00.000Z",
  "variables":{"x":1,"_askExchanges":{"gate":[{"question":"why?","askedBy":"bob"}]}},
  "nodeStates":{
    "gate":{"status":"completed","typeId":"core.approvalGate","attempt":1,
            "startedAt":"2026-01-01T00:00:01.000Z","completedAt":"2026-01-01T00:00:02.000Z",
            "outputs":{"action":"accept"}},
    "call":{"status":"running","typeId":"core.subWorkflow","attempt":1,
            "startedAt":"2026-01-01T00:00:03.000Z","childRunId":"c1","childWorkflowId":"child"},
    "wait":{"status":"running","typeId":"core.delay","attempt":2,"startedAt":"s",
            "wakeAt":1767225600000,"startedAtMs":1767225500000},
    "http":{"effect":{"request":{"url":"http://127.0.0.1:1/"},"status":200}},
    "bad":{"status":"failed","typeId":"t","attempt":1,"startedAt":"s","error":{"code":"x"}},
    "skip":{"status":"skipped","reason":"condition"}},
  "tags":["a","b"],"inputs":{"q":"hello"},"requestDigest":"sha256:ab",
  "metadata":{"openwop":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
  "parentRunId":"p0","parentNodeId":"n0","engineVersion":"1","eventLogSchemaVersion":2,
  "acceptedMessages":{"m1":"sha256:1","m2":{"alice":["sha256:2"]}},
  "startedAt":"2026-01-01T00:00:00.500Z","nodeExecutions":4,"currentNodeId":"call",
  "interruptCounts":{"gate":1,"call":2},
  "interrupt":{"nodeId":"call","interruptId":"call-1","kind":"approval","key":"r1:call:1",
               "data":{"title":"ok?"},"quorum":{"votes":[],"accepts":0,"rejects":0}},
  "resumeValues":{"r1:gate:0":{"action":"accept"},"r1:call:0":null},
  "childRuns":[{"runId":"c1","status":"pending"}],
  "waitingOn":{"childRunId":"c1","nodeId":"call"},
  "pause":{"mode":"finish_step","resumeToken":"h","previousStatus":"running"},
  "lastResume":{"cause":"manual","resumedAt":"t"},
  "outputs":{"done":true},"error":{"code":"e","message":"m"},"failedNodeId":"bad"})";

TEST(RunSnapshot, ReadsEveryMemberAStoredSnapshotHas) {
  const RunSnapshot r = Read(kStored);
  EXPECT_TRUE(r.extra.empty()) << SerializeJson(r.extra);  // every member is known
  EXPECT_EQ(r.run_id, "r1");
  EXPECT_EQ(r.status, "paused");
  EXPECT_EQ(r.started_at, "2026-01-01T00:00:00.500Z");
  EXPECT_EQ(r.parent_node_id, "n0");
  EXPECT_EQ(r.event_log_schema_version, 2);
  EXPECT_EQ(r.node_executions, 4);
  EXPECT_EQ(r.InterruptCount("call"), 2);
  EXPECT_EQ(r.InterruptCount("none"), 0);
  ASSERT_EQ(r.node_states.size(), 6u);
  EXPECT_EQ(r.node_states[0].id, "gate");  // the stored order
  EXPECT_EQ(r.node_states[5].id, "skip");
  const NodeState* wait = r.Node("wait");
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->attempt, 2);
  EXPECT_EQ(wait->wake_at, 1767225600000);
  EXPECT_EQ(wait->started_at_ms, 1767225500000);
  EXPECT_EQ(r.Node("call")->child_run_id, "c1");
  EXPECT_EQ(r.Node("gate")->OutputsObject().at("action"), "accept");
  EXPECT_EQ(r.Node("http")->EffectObject().at("status"), 200);
  EXPECT_EQ(r.Node("http")->status, "");  // only an effect was logged
  EXPECT_EQ(*r.Node("skip")->reason, "condition");
  ASSERT_EQ(r.child_runs.size(), 1u);
  EXPECT_EQ(r.child_runs[0].status, "pending");
  EXPECT_TRUE(r.resume_values.at("r1:call:0").is_null());
  EXPECT_EQ(OrEmpty(r.waiting_on).at("childRunId"), "c1");
  EXPECT_TRUE(OrEmpty(r.interrupt).contains("quorum"));
}

TEST(RunSnapshot, WritesBackWhatItRead) {
  const json::object stored = json::parse(kStored).as_object();
  const RunSnapshot r = RunSnapshotFromJson(stored);
  // The same members and values as stored (object equality ignores member order)...
  EXPECT_TRUE(json::parse(Text(r)).as_object() == stored) << Text(r);
  EXPECT_TRUE(RunSnapshotToJson(r) == stored);
  // ...and the same snapshot read again.
  EXPECT_EQ(Read(Text(r)), r);
}

TEST(RunSnapshot, AnEmptySnapshotIsAnEmptyObject) {
  EXPECT_EQ(Text(RunSnapshot{}), "{}");
  EXPECT_TRUE(Read("{}").empty());
  EXPECT_FALSE(Read(R"({"runId":"r"})").empty());
  // A run has variables and nodeStates, even empty ones.
  EXPECT_EQ(Text(Read(R"({"runId":"r"})")), R"({"runId":"r","variables":{},"nodeStates":{}})");
}

TEST(RunSnapshot, KeepsMembersItDoesNotKnow) {
  const RunSnapshot r = Read(R"({"runId":"r","status":"running","fromLater":{"a":[1,2]},
                                 "nodeStates":{"n":{"status":"running","vendorX":7}}})");
  EXPECT_EQ(r.extra.at("fromLater"), json::parse(R"({"a":[1,2]})"));
  EXPECT_EQ(r.Node("n")->extra.at("vendorX"), 7);
  const json::object back = json::parse(Text(r)).as_object();
  EXPECT_EQ(back.at("fromLater"), json::parse(R"({"a":[1,2]})"));
  EXPECT_EQ(back.at("nodeStates").at("n").at("vendorX"), 7);
}

TEST(RunSnapshot, AKnownMemberOfAnotherTypeIsKeptAsItWasUntilSet) {
  RunSnapshot r = Read(R"({"runId":"r","status":"running","nodeExecutions":"7",
                           "childRuns":[{"runId":3}],"nodeStates":[1]})");
  EXPECT_EQ(r.node_executions, 0);
  EXPECT_TRUE(r.child_runs.empty());
  EXPECT_EQ(r.extra.at("nodeExecutions"), "7");
  json::object back = json::parse(Text(r)).as_object();
  EXPECT_EQ(back.at("nodeExecutions"), "7");
  EXPECT_EQ(back.at("childRuns"), json::parse(R"([{"runId":3}])"));
  EXPECT_EQ(back.at("nodeStates"), json::parse("[1]"));
  EXPECT_EQ(Read(Text(r)), r);
  // Once the fold sets the member, the typed value is the one written, once.
  r.node_executions = 3;
  r.NodeOrNew("n").status = "running";
  const std::string text = Text(r);
  EXPECT_EQ(json::parse(text).at("nodeExecutions"), 3);
  EXPECT_EQ(json::parse(text).at("nodeStates").at("n").at("status"), "running");
  for (const char* name : {"\"nodeExecutions\"", "\"nodeStates\""})
    EXPECT_EQ(text.find(name), text.rfind(name)) << name;
}

TEST(RunSnapshot, NodeOrNewAppendsInOrderAndFindsAgain) {
  RunSnapshot r;
  r.run_id = "r";
  r.NodeOrNew("b").status = "running";
  r.NodeOrNew("a").status = "running";
  r.NodeOrNew("b").status = "completed";
  ASSERT_EQ(r.node_states.size(), 2u);
  EXPECT_EQ(r.node_states[0].id, "b");
  EXPECT_EQ(r.node_states[0].status, "completed");
  EXPECT_EQ(Text(r).find(R"("nodeStates":{"b":)") != std::string::npos, true);
  EXPECT_EQ(r.Node("c"), nullptr);
  EXPECT_EQ(NoNodeState().status, "");
}

TEST(RunSnapshot, NamesAndValuesAreEscaped) {
  RunSnapshot r;
  r.run_id = "r\"1";
  r.NodeOrNew("n\n").status = "running";
  r.interrupt_counts.emplace_back("n\n", 1);
  const RunSnapshot back = Read(Text(r));
  EXPECT_EQ(back.run_id, "r\"1");
  EXPECT_EQ(back.InterruptCount("n\n"), 1);
  EXPECT_NE(back.Node("n\n"), nullptr);
}

}  // namespace
}  // namespace a2ad::protocol
