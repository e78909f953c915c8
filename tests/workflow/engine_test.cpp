// The workflow engine driven without a server (harness.hpp). Covers the forward projection
// (seed 003), every node kind, every approval action, refused answers, deterministic resume
// keys, limits, definition refusals and interrupt tokens. The rules of every field of a gate
// answer are in answers_test.cpp.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <set>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/encoding.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/executor.hpp"
#include "a2ad/workflow/interrupt_token.hpp"
#include "a2ad/workflow/plan.hpp"
#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

const std::set<std::string>& A2AStateKeys() {
  static const std::set<std::string> k = {"taskId",        "runId",     "contextId", "state",
                                          "interruptKind", "updatedAt", "pushConfig"};
  return k;
}

// Content-free (RFC 0100): only identity and state keys.
void ExpectContentFree(const json::object& a2a) {
  for (const auto& kv : a2a)
    EXPECT_TRUE(A2AStateKeys().count(std::string(kv.key())))
        << "A2ATaskState carries '" << kv.key() << "': " << json::serialize(a2a);
}

// ---- 1. forward projection (seed 003) -------------------------------------------------------

struct ProjectionRow {
  std::string run_status;
  S task_state;
  std::string a2a_state;
  std::string interrupt_kind;  // "" : none expected
};

void ExpectProjection(const Harness& h, const ProjectionRow& row) {
  SCOPED_TRACE("run status " + row.run_status);
  EXPECT_EQ(h.Status(), row.run_status);
  EXPECT_EQ(h.rec.task.status.state, row.task_state);
  EXPECT_EQ(StrOf(h.rec.a2a_state, "state"), row.a2a_state);
  EXPECT_EQ(StrOf(h.rec.a2a_state, "taskId"), kRunId);
  EXPECT_EQ(StrOf(h.rec.a2a_state, "runId"), kRunId);
  EXPECT_EQ(StrOf(h.rec.a2a_state, "contextId"), "ctx-1");
  if (row.interrupt_kind.empty())
    EXPECT_FALSE(h.rec.a2a_state.contains("interruptKind")) << json::serialize(h.rec.a2a_state);
  else
    EXPECT_EQ(StrOf(h.rec.a2a_state, "interruptKind"), row.interrupt_kind);
  ExpectContentFree(h.rec.a2a_state);
}

TEST(ForwardProjection, PendingRunningCompleted) {
  Harness h(OneNode(NodeDoc("n", "core.noop")));
  ExpectProjection(h, {"pending", S::kSubmitted, "submitted", ""});
  EXPECT_EQ(h.Step().kind, K::kCommit);  // run.started
  ExpectProjection(h, {"running", S::kWorking, "working", ""});
  EXPECT_EQ(h.Drive().kind, K::kDone);
  ExpectProjection(h, {"completed", S::kCompleted, "completed", ""});
}

TEST(ForwardProjection, WaitingApprovalIsInputRequiredWithApprovalMetadata) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  EXPECT_EQ(h.Drive().kind, K::kParked);
  ExpectProjection(h, {"waiting-approval", S::kInputRequired, "input-required", "approval"});
  const json::object& ow = ObjAt(h.rec.task.metadata, "openwop");
  EXPECT_EQ(StrOf(ObjAt(ow, "interrupt"), "kind"), "approval");
  EXPECT_EQ(StrOf(ObjAt(ow, "interrupt"), "nodeId"), "gate");
  EXPECT_FALSE(StrOf(ow, "interruptToken").empty()) << json::serialize(ow);
}

TEST(ForwardProjection, WaitingInputIsInputRequiredClarification) {
  Harness h(OneNode(NodeDoc(
      "ask", "core.clarificationGate",
      json::object{{"questions", json::array{json::object{{"id", "q1"}, {"question", "Why?"}}}}})));
  EXPECT_EQ(h.Drive().kind, K::kParked);
  ExpectProjection(h, {"waiting-input", S::kInputRequired, "input-required", "clarification"});
  EXPECT_EQ(StrOf(ObjAt(ObjAt(h.rec.task.metadata, "openwop"), "interrupt"), "kind"),
            "clarification");
}

TEST(ForwardProjection, WaitingExternalIsInputRequired) {
  Harness h(OneNode(NodeDoc(
      "ext", "core.interrupt",
      json::object{{"kind", "external-event"}, {"data", json::object{{"eventType", "x"}}}})));
  EXPECT_EQ(h.Drive().kind, K::kParked);
  EXPECT_EQ(h.Status(), "waiting-external");
  EXPECT_EQ(h.rec.task.status.state, S::kInputRequired);
  EXPECT_EQ(StrOf(h.rec.a2a_state, "state"), "input-required");
  // The schema knows approval | clarification only; an external wait is not an approval.
  EXPECT_EQ(StrOf(h.rec.a2a_state, "interruptKind"), "clarification");
  EXPECT_EQ(StrOf(ObjAt(ObjAt(h.rec.task.metadata, "openwop"), "interrupt"), "kind"),
            "external-event");
  ExpectContentFree(h.rec.a2a_state);
}

TEST(ForwardProjection, FailedCarriesErrorInMetadataAndStatusMessage) {
  Harness h(OneNode(NodeDoc("boom", "core.fail")));
  EXPECT_EQ(h.Drive().kind, K::kDone);
  ExpectProjection(h, {"failed", S::kFailed, "failed", ""});
  const json::object& err = ObjAt(ObjAt(h.rec.task.metadata, "openwop"), "error");
  EXPECT_EQ(StrOf(err, "code"), "conformance_test_failure");
  EXPECT_FALSE(StrOf(err, "message").empty());
  ASSERT_TRUE(h.rec.task.status.message.has_value());
  ASSERT_FALSE(h.rec.task.status.message->parts.empty());
  EXPECT_EQ(h.rec.task.status.message->parts[0].text, StrOf(err, "message"));
}

TEST(ForwardProjection, CancelledIsCanceled) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  EXPECT_EQ(h.Drive().kind, K::kParked);
  h.Commit({{protocol::kEvRunCancelled, "", json::object{{"reason", "user"}}}});
  ExpectProjection(h, {"cancelled", S::kCanceled, "canceled", ""});
  EXPECT_FALSE(ObjAt(h.rec.task.metadata, "openwop").contains("interrupt"));
  EXPECT_FALSE(h.rec.run.contains("interrupt"));
  EXPECT_EQ(h.Plan().kind, K::kDone);
}

TEST(ForwardProjection, A2AStateNeverCarriesContent) {
  // A run with inputs, outputs and artifacts: none of it reaches the A2ATaskState.
  auto wf = OneNode(json::object{
      {"id", "id"},
      {"typeId", "core.identity"},
      {"artifactType", "report"},
      {"inputs", json::object{{"x", json::object{{"type", "static"}, {"value", 7}}}}}});
  Harness h(wf, json::object{{"secret", "s3cr3t"}});
  h.Drive();
  ASSERT_EQ(h.Status(), "completed");
  EXPECT_FALSE(h.rec.task.artifacts.empty());
  ExpectContentFree(h.rec.a2a_state);
  EXPECT_EQ(json::serialize(h.rec.a2a_state).find("s3cr3t"), std::string::npos);
}

// ---- 2. node kinds ---------------------------------------------------------------------------

// The seed's second table (run event -> A2A delivery), over a real run's log: each event's
// projection given the task folded up to it.
struct Delivery {
  std::string type;
  std::string kind;   // "" none, "status", "artifact", "task"
  std::string state;  // for status updates
};

std::vector<Delivery> Deliveries(const std::vector<protocol::RunEvent>& log) {
  std::vector<Delivery> out;
  storage::TaskRecord folded;
  for (const auto& e : log) {
    EXPECT_TRUE(tasks::ApplyEvent(folded, e).ok());
    auto p = tasks::ProjectEvent(folded.task, e);
    Delivery d{e.type, "", ""};
    if (p && p->kind == protocol::StreamEvent::Kind::kStatusUpdate) {
      d.kind = "status";
      d.state = protocol::v10::TaskStateName(p->status_update.status.state);
      if (p->status_update.status.state == S::kInputRequired) {
        const auto& md = p->status_update.metadata;
        EXPECT_EQ(md.at("openwop").at("interrupt").at("kind"), "approval");
        EXPECT_TRUE(p->status_update.final);
      }
      if (p->status_update.status.state == S::kFailed) {
        EXPECT_TRUE(
            p->status_update.metadata.at("openwop").at("error").as_object().contains("code"));
      }
    } else if (p && p->kind == protocol::StreamEvent::Kind::kArtifactUpdate) {
      d.kind = "artifact";
    } else if (p) {
      d.kind = "task";
    }
    out.push_back(d);
  }
  return out;
}

TEST(ForwardProjection, RunEventsDeliverTheSeedsA2AUpdates) {
  auto doc = Doc(
      json::array{
          NodeDoc("draft", "core.identity", {},
                  json::object{{"brief", json::object{{"type", "static"}, {"value", "b"}}}}),
          NodeDoc("gate", "core.approvalGate")},
      json::array{EdgeDoc("e1", "draft", "gate")});
  doc["nodes"].as_array()[0].as_object()["artifactType"] = "brief";
  Harness h(Parse(doc));
  h.Drive();
  ASSERT_TRUE(h.Answer(json::object{{"action", "accept"}}).ok());
  ASSERT_EQ(h.Status(), "completed");
  std::vector<std::string> got;
  for (const auto& d : Deliveries(h.log))
    got.push_back(d.type + ">" + d.kind + (d.state.empty() ? "" : ":" + d.state));
  const std::vector<std::string> want = {
      "a2a.task.submitted>task",
      "run.started>status:TASK_STATE_WORKING",
      "node.started>",
      "artifact.created>artifact",  // node produced an artifact
      "node.completed>",
      "node.started>",
      "interrupt.requested>",
      "approval.requested>",
      "node.suspended>status:TASK_STATE_INPUT_REQUIRED",  // + metadata.openwop.interrupt
      "approval.received>",
      "interrupt.resolved>",
      "node.resumed>status:TASK_STATE_WORKING",
      "node.completed>",
      "artifact.created>artifact",  // the run's outputs
      "run.completed>status:TASK_STATE_COMPLETED",
  };
  EXPECT_EQ(got, want);

  Harness f(OneNode(NodeDoc("boom", "core.fail")));
  f.Drive();
  auto failed = Deliveries(f.log);
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed.back().type, "run.failed");
  EXPECT_EQ(failed.back().state, "TASK_STATE_FAILED");
}

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
  EXPECT_EQ(StrOf(ObjAt(h.rec.run, "error"), "code"), "conformance_test_failure");
  EXPECT_EQ(StrOf(h.rec.run, "failedNodeId"), "boom");
  EXPECT_EQ(StrOf(h.NodeState("boom"), "status"), "failed");
  EXPECT_EQ(h.Count("run.completed"), 0u);
}

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

TEST(NodeKinds, ApprovalGateRaisesOneInterruptInOneStep) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Step();
  Decision d = h.Plan();
  ASSERT_EQ(d.kind, K::kCommit);
  std::vector<std::string> types;
  for (const auto& e : d.events) types.push_back(e.type);
  EXPECT_EQ(types, (std::vector<std::string>{"node.started", "interrupt.requested",
                                             "approval.requested", "node.suspended"}));
  h.Commit(d.events);
  EXPECT_EQ(h.Status(), "waiting-approval");
  const json::object& interrupt = ObjAt(h.rec.run, "interrupt");
  EXPECT_EQ(StrOf(interrupt, "key"), std::string(kRunId) + ":gate:0");
  EXPECT_EQ(ObjAt(interrupt, "data").at("actions"), json::parse(R"(["accept","reject"])"));
  EXPECT_EQ(h.Plan().kind, K::kParked);
  EXPECT_EQ(h.Plan().wake_at, 0);  // no timeoutMs: nothing to time out
}

TEST(NodeKinds, ClarificationGateCompletesWithTheAnswers) {
  Harness h(OneNode(NodeDoc(
      "ask", "core.clarificationGate",
      json::object{{"questions", json::array{json::object{{"id", "q1"}, {"question", "Why?"}}}}})));
  EXPECT_EQ(h.Drive().kind, K::kParked);
  EXPECT_EQ(h.Count("clarification.requested"), 1u);
  auto r = h.Answer(json::parse(R"({"answers": {"q1": "because"}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(json::value(ObjAt(h.NodeState("ask"), "outputs")),
            json::parse(R"({"answers": {"q1": "because"}})"));
  EXPECT_EQ(h.Count("clarification.resolved"), 1u);
}

TEST(NodeKinds, ClarificationTakesPlainTextForOneQuestionAndTheArrayForm) {
  auto wf = OneNode(NodeDoc(
      "ask", "core.clarificationGate",
      json::object{{"questions", json::array{json::object{{"id", "q1"}, {"question", "Why?"}}}}}));
  Harness text(wf);
  text.Drive();
  ASSERT_TRUE(text.Answer("blue").ok());
  EXPECT_EQ(json::value(ObjAt(text.NodeState("ask"), "outputs")),
            json::parse(R"({"answers": {"q1": "blue"}})"));
  Harness arr(wf);
  arr.Drive();
  ASSERT_TRUE(arr.Answer(json::parse(R"({"answers": [{"id": "q1", "answer": "red"}]})")).ok());
  EXPECT_EQ(json::value(ObjAt(arr.NodeState("ask"), "outputs")),
            json::parse(R"({"answers": {"q1": "red"}})"));
}

std::shared_ptr<const Workflow> ExternalWorkflow() {
  return OneNode(NodeDoc("ext", "core.interrupt",
                         json::object{{"kind", "external-event"},
                                      {"data", json::parse(R"({"eventType": "order.done",
                              "correlation": {"orderId": "o-1", "status": "completed"}})")},
                                      {"timeoutMs", 60000}}));
}

TEST(NodeKinds, ExternalEventMatchingCorrelationCompletes) {
  Harness h(ExternalWorkflow());
  const int64_t raised_at = h.now + 1;  // run.started takes one tick
  Decision parked = h.Drive();
  ASSERT_EQ(parked.kind, K::kParked);
  EXPECT_EQ(h.Status(), "waiting-external");
  EXPECT_EQ(parked.wake_at, raised_at + 60000);  // the interrupt's timeout
  auto r = h.Answer(json::parse(R"({"orderId": "o-1", "status": "completed", "total": 3})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(json::value(ObjAt(h.NodeState("ext"), "outputs")),
            json::parse(R"({"orderId": "o-1", "status": "completed", "total": 3})"));
}

TEST(NodeKinds, ExternalEventEnvelopeFormIsUnwrapped) {
  Harness h(ExternalWorkflow());
  h.Drive();
  auto r = h.Answer(json::parse(R"({"eventPayload": {"orderId": "o-1", "status": "completed"}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.Status(), "completed");
}

TEST(NodeKinds, ExternalEventCorrelationMismatchIsRefusedAndChangesNothing) {
  Harness h(ExternalWorkflow());
  h.Drive();
  const storage::TaskRecord before = h.rec;
  const size_t logged = h.log.size();
  for (const char* body :
       {R"({"orderId": "o-2", "status": "completed"})", R"({"orderId": "o-1"})", R"("o-1")"}) {
    SCOPED_TRACE(body);
    auto r = h.Answer(json::parse(body));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Detail(r.error(), "reason"), "correlation_mismatch");
  }
  EXPECT_EQ(h.rec, before);
  EXPECT_EQ(h.log.size(), logged);
  EXPECT_EQ(h.Plan().kind, K::kParked);
  // The right event still resumes it afterwards.
  ASSERT_TRUE(h.Answer(json::parse(R"({"orderId": "o-1", "status": "completed"})")).ok());
  EXPECT_EQ(h.Status(), "completed");
}

TEST(NodeKinds, CustomInterruptTakesAnyValue) {
  auto wf = OneNode(NodeDoc("c", "core.interrupt", json::object{{"kind", "custom"}}));
  Harness h(wf);
  EXPECT_EQ(h.Drive().kind, K::kParked);
  EXPECT_EQ(h.Status(), "waiting-input");
  ASSERT_TRUE(h.Answer("hello").ok());
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(json::value(ObjAt(h.NodeState("c"), "outputs")), json::parse(R"({"value":"hello"})"));

  Harness o(wf);
  o.Drive();
  ASSERT_TRUE(o.Answer(json::parse(R"({"k": [1]})")).ok());
  EXPECT_EQ(json::value(ObjAt(o.NodeState("c"), "outputs")), json::parse(R"({"k":[1]})"));
}

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
  auto events = FinishChild(*wf, CallNode(*wf), h.rec.run, d.child_run_id, child);
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
  EXPECT_EQ(ObjAt(h.rec.run, "variables").at("childOutcome"), json::value(42));
  EXPECT_EQ(
      json::value(ObjAt(h.NodeState("call"), "outputs")),
      json::value(json::object{{"childRunId", d.child_run_id}, {"childStatus", "completed"}}));
  EXPECT_EQ(h.Drive().kind, K::kDone);
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(ObjAt(h.rec.run, "outputs").at("childOutcome"), json::value(42));
}

TEST(NodeKinds, SubWorkflowFailedChildFailsNodeAndRunByDefault) {
  for (const std::string policy : {"", "fail-parent"}) {
    SCOPED_TRACE("policy '" + policy + "'");
    auto wf = ParentWorkflow(policy);
    Harness h(wf);
    Decision d = h.Drive();
    json::object child{{"status", "failed"},
                       {"error", json::object{{"code", "x"}, {"message", "child broke"}}}};
    auto events = FinishChild(*wf, CallNode(*wf), h.rec.run, d.child_run_id, child);
    h.Commit(events);
    EXPECT_EQ(h.Count("variable.changed"), 0u);
    EXPECT_EQ(StrOf(h.NodeState("call"), "status"), "failed");
    EXPECT_EQ(h.Status(), "failed");
    EXPECT_EQ(StrOf(ObjAt(h.rec.run, "error"), "code"), "child_run_failed");
    EXPECT_NE(StrOf(ObjAt(h.rec.run, "error"), "message").find("child broke"), std::string::npos);
    EXPECT_EQ(h.Plan().kind, K::kDone);
  }
}

TEST(NodeKinds, SubWorkflowAbsorbCompletesDespiteAFailedChild) {
  auto wf = ParentWorkflow("absorb");
  Harness h(wf);
  Decision d = h.Drive();
  auto events = FinishChild(*wf, CallNode(*wf), h.rec.run, d.child_run_id,
                            json::object{{"status", "failed"}});
  h.Commit(events);
  EXPECT_EQ(StrOf(h.NodeState("call"), "status"), "completed");
  EXPECT_EQ(StrOf(ObjAt(h.NodeState("call"), "outputs"), "childStatus"), "failed");
  EXPECT_EQ(h.Drive().kind, K::kDone);
  EXPECT_EQ(h.Status(), "completed");
}

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

// ---- 3. approval actions ---------------------------------------------------------------------

TEST(ApprovalActions, AcceptCompletes) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  auto r = h.Answer(json::parse(R"({"action": "accept"})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r.value().resumes);
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(StrOf(ObjAt(h.NodeState("gate"), "outputs"), "action"), "accept");
  EXPECT_EQ(StrOf(ObjAt(h.NodeState("gate"), "outputs"), "decidedBy"), "alice");
  EXPECT_EQ(h.Count("approval.received"), 1u);
  EXPECT_EQ(h.Count("interrupt.resolved"), 1u);
}

TEST(ApprovalActions, RejectFails) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  ASSERT_TRUE(h.Answer(json::parse(R"({"action": "reject", "feedback": "no way"})")).ok());
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.rec.run, "error"), "code"), "approval_rejected");
  EXPECT_NE(StrOf(ObjAt(h.rec.run, "error"), "message").find("no way"), std::string::npos);
  EXPECT_EQ(h.rec.task.status.state, S::kFailed);
}

TEST(ApprovalActions, RefineNeedsFeedback) {
  Harness h(ApprovalWorkflow(AllActions()));
  h.Drive();
  auto bare = h.Answer(json::parse(R"({"action": "refine"})"));
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Detail(bare.error(), "reason"), "validation_error");
  EXPECT_EQ(h.Status(), "waiting-approval");

  auto r = h.Answer(json::parse(
      R"({"action": "refine", "refineFeedback": {"scope": "section", "text": "tighter"}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.Status(), "completed");
  const json::object& out = ObjAt(h.NodeState("gate"), "outputs");
  EXPECT_EQ(StrOf(out, "action"), "refine");
  EXPECT_EQ(StrOf(ObjAt(out, "refineFeedback"), "text"), "tighter");
}

TEST(ApprovalActions, RefineWithAFeedbackString) {
  Harness h(ApprovalWorkflow(AllActions()));
  h.Drive();
  ASSERT_TRUE(h.Answer(json::parse(R"({"action": "refine", "feedback": "shorter"})")).ok());
  const json::object& out = ObjAt(h.NodeState("gate"), "outputs");
  EXPECT_EQ(StrOf(out, "action"), "refine");
  EXPECT_EQ(json::value(ObjAt(out, "refineFeedback")),
            json::parse(R"({"scope": "whole", "text": "shorter"})"));
}

TEST(ApprovalActions, EditAcceptNeedsAndPublishesTheEditedArtifact) {
  Harness h(ApprovalWorkflow(AllActions()));
  h.Drive();
  auto bare = h.Answer(json::parse(R"({"action": "edit-accept"})"));
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(Detail(bare.error(), "reason"), "validation_error");

  ASSERT_TRUE(
      h.Answer(json::parse(R"({"action": "edit-accept", "editedArtifactData": {"v": 2}})")).ok());
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(StrOf(ObjAt(h.NodeState("gate"), "outputs"), "action"), "edit-accept");
  const protocol::RunEvent* created = nullptr;
  for (const auto& e : h.log)
    if (e.type == "artifact.created" && e.node_id == "gate") created = &e;
  ASSERT_TRUE(created);
  const std::string artifact_id = std::string(kRunId) + ":gate";
  EXPECT_EQ(StrOf(created->payload, "artifactId"), artifact_id);
  auto it = std::find_if(h.rec.task.artifacts.begin(), h.rec.task.artifacts.end(),
                         [&](const auto& a) { return a.artifact_id == artifact_id; });
  ASSERT_NE(it, h.rec.task.artifacts.end());
  ASSERT_EQ(it->parts.size(), 1u);
  EXPECT_EQ(it->parts[0].data, json::parse(R"({"v": 2})"));
}

TEST(ApprovalActions, AskDoesNotResume) {
  Harness h(ApprovalWorkflow(AllActions()));
  h.Drive();
  auto r = h.Answer(json::parse(R"({"action": "ask", "question": "which version?"})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r.value().resumes);
  ASSERT_EQ(r.value().events.size(), 1u);
  EXPECT_EQ(r.value().events[0].type, "a2ad.approval.asked");
  EXPECT_EQ(h.Status(), "waiting-approval");
  EXPECT_EQ(h.rec.task.status.state, S::kInputRequired);
  EXPECT_EQ(h.Count("interrupt.resolved"), 0u);
  EXPECT_EQ(h.Plan().kind, K::kParked);
  // Still answerable, and the ask exchange does not leak into the run outputs.
  ASSERT_TRUE(h.Answer(json::parse(R"({"action": "accept"})")).ok());
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_FALSE(ObjAt(h.rec.run, "outputs").contains("_askExchanges"));
}

TEST(ApprovalActions, SeedShapeApproveBool) {
  Harness yes(ApprovalWorkflow(json::array{"accept", "reject"}));
  yes.Drive();
  ASSERT_TRUE(yes.Answer(json::parse(R"({"approve": true, "comment": "ok"})")).ok());
  EXPECT_EQ(StrOf(ObjAt(yes.NodeState("gate"), "outputs"), "action"), "accept");
  EXPECT_EQ(yes.Status(), "completed");

  Harness no(ApprovalWorkflow(json::array{"accept", "reject"}));
  no.Drive();
  ASSERT_TRUE(no.Answer(json::parse(R"({"approve": false})")).ok());
  EXPECT_EQ(no.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(no.rec.run, "error"), "code"), "approval_rejected");
}

TEST(ApprovalActions, LegacyDecisionRejectedWithFeedbackIsRefine) {
  Harness h(ApprovalWorkflow(AllActions()));
  h.Drive();
  ASSERT_TRUE(h.Answer(json::parse(R"({"decision": "rejected", "feedback": "redo"})")).ok());
  const json::object& out = ObjAt(h.NodeState("gate"), "outputs");
  EXPECT_EQ(StrOf(out, "action"), "refine");
  EXPECT_EQ(StrOf(ObjAt(out, "refineFeedback"), "text"), "redo");

  Harness approved(ApprovalWorkflow(json::array{"accept", "reject"}));
  approved.Drive();
  ASSERT_TRUE(approved.Answer(json::parse(R"({"decision": "approved"})")).ok());
  EXPECT_EQ(StrOf(ObjAt(approved.NodeState("gate"), "outputs"), "action"), "accept");
}

TEST(ApprovalActions, ActionNotOfferedIsRefused) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  for (const char* body :
       {R"({"action": "refine", "feedback": "x"})", R"({"action": "ask"})",
        R"({"action": "launch"})", R"({"comment": "no action"})", R"("maybe")", R"(17)"}) {
    SCOPED_TRACE(body);
    auto r = h.Resolve(json::parse(body));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Detail(r.error(), "reason"), "validation_error");
    EXPECT_NE(r.error().message.find("gate"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(h.Status(), "waiting-approval");
}

TEST(ApprovalActions, DefaultActionsAreAcceptAndReject) {
  Harness h(OneNode(NodeDoc("gate", "core.approvalGate")));
  h.Drive();
  EXPECT_EQ(ObjAt(ObjAt(h.rec.run, "interrupt"), "data").at("actions"),
            json::parse(R"(["accept","reject"])"));
  EXPECT_FALSE(
      h.Resolve(json::parse(R"({"action": "edit-accept", "editedArtifactData": 1})")).ok());
  EXPECT_TRUE(h.Resolve(json::parse(R"({"action": "reject"})")).ok());
}

TEST(ApprovalActions, PlainTextReplyNamesTheAction) {
  for (const char* text : {"accept", "Accept.", "approve", "yes"}) {
    SCOPED_TRACE(text);
    Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
    h.Drive();
    protocol::Message m;
    m.message_id = "reply";
    m.role = protocol::Role::kUser;
    m.parts.push_back(protocol::Part::Text(text));
    tasks::ResolveRequest req;
    req.message = &m;
    req.caller = "bob";
    req.via = "a2a";
    auto r = h.executor().Resolve(h.rec, req);
    ASSERT_TRUE(r.ok()) << r.error().message;
    h.Commit(r.value().events);
    h.Drive();
    EXPECT_EQ(StrOf(ObjAt(h.NodeState("gate"), "outputs"), "action"), "accept");
    EXPECT_EQ(h.Status(), "completed");
  }
}

TEST(ApprovalActions, DataPartReplyWins) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  protocol::Message m;
  m.message_id = "reply";
  m.role = protocol::Role::kUser;
  m.parts.push_back(protocol::Part::Text("accept"));
  m.parts.push_back(protocol::Part::Data(json::parse(R"({"action": "reject"})")));
  tasks::ResolveRequest req;
  req.message = &m;
  req.via = "a2a";
  auto r = h.executor().Resolve(h.rec, req);
  ASSERT_TRUE(r.ok()) << r.error().message;
  h.Commit(r.value().events);
  h.Drive();
  EXPECT_EQ(h.Status(), "failed");
}

// ---- 4. wrong replies ------------------------------------------------------------------------

TEST(WrongReplies, WrongNodeIsNotFound) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  auto r = h.Resolve(json::parse(R"({"action": "accept"})"), "other");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTaskNotFound);
  EXPECT_EQ(Detail(r.error(), "reason"), "interrupt_not_found");
  EXPECT_NE(r.error().message.find("gate"), std::string::npos) << r.error().message;
  EXPECT_TRUE(h.Resolve(json::parse(R"({"action": "accept"})"), "gate").ok());
}

TEST(WrongReplies, NothingOpenIsNotFound) {
  Harness h(OneNode(NodeDoc("n", "core.noop")));
  auto pending = h.Resolve(json::parse(R"({"action": "accept"})"));
  ASSERT_FALSE(pending.ok());
  EXPECT_EQ(Detail(pending.error(), "reason"), "interrupt_not_found");
  h.Drive();
  ASSERT_EQ(h.Status(), "completed");
  auto done = h.Resolve(json::parse(R"({"action": "accept"})"));
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code, ErrorCode::kTaskNotFound);
  EXPECT_EQ(Detail(done.error(), "reason"), "interrupt_not_found");
}

TEST(WrongReplies, CancelledRunsInterruptIsGone) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  h.Commit({{protocol::kEvRunCancelled, "", {}}});
  auto r = h.Resolve(json::parse(R"({"action": "accept"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(Detail(r.error(), "reason"), "interrupt_gone");
}

TEST(WrongReplies, ClarificationMissingAnAnswerNamesTheQuestion) {
  Harness h(OneNode(
      NodeDoc("ask", "core.clarificationGate",
              json::object{
                  {"questions", json::array{json::object{{"id", "q1"}, {"question", "Who?"}},
                                            json::object{{"id", "q2"}, {"question", "When?"}}}}})));
  h.Drive();
  auto r = h.Resolve(json::parse(R"({"answers": {"q1": "me"}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Detail(r.error(), "reason"), "validation_error");
  EXPECT_NE(r.error().message.find("q2"), std::string::npos) << r.error().message;
  // Plain text cannot answer two questions; a bare object is not an answer.
  EXPECT_FALSE(h.Resolve("me").ok());
  EXPECT_FALSE(h.Resolve(json::parse(R"({"q1": "me", "q2": "now"})")).ok());
  EXPECT_TRUE(h.Resolve(json::parse(R"({"answers": {"q1": "me", "q2": "now"}})")).ok());
}

TEST(WrongReplies, SecondResolutionIsAlreadyResolved) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  auto first = h.Resolve(json::parse(R"({"action": "accept"})"), "gate");
  ASSERT_TRUE(first.ok());
  h.Commit(first.value().events);  // resolved; the node has not completed yet
  auto second = h.Resolve(json::parse(R"({"action": "reject"})"), "gate");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kConflict);
  EXPECT_EQ(Detail(second.error(), "reason"), "interrupt_already_resolved");
  h.Drive();
  ASSERT_EQ(h.Status(), "completed");
  auto late = h.Resolve(json::parse(R"({"action": "reject"})"), "gate");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(Detail(late.error(), "reason"), "interrupt_already_resolved");
  EXPECT_EQ(StrOf(ObjAt(h.NodeState("gate"), "outputs"), "action"), "accept");
}

TEST(WrongReplies, TimeoutAfterAnAnswerIsAlreadyResolved) {
  Harness h(ExternalWorkflow());
  h.Drive();
  const std::string interrupt_id = StrOf(ObjAt(h.rec.run, "interrupt"), "interruptId");
  ASSERT_TRUE(h.Answer(json::parse(R"({"orderId": "o-1", "status": "completed"})")).ok());
  tasks::ResolveRequest timeout;
  timeout.via = "timeout";
  timeout.resume_value = json::value(json::object{{"interruptId", interrupt_id}});
  auto r = h.executor().Resolve(h.rec, timeout);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(Detail(r.error(), "reason"), "interrupt_already_resolved");
}

TEST(WrongReplies, InterruptTimeoutFailsTheNode) {
  Harness h(ExternalWorkflow());
  h.Drive();
  tasks::ResolveRequest timeout;
  timeout.via = "timeout";
  timeout.resume_value = json::value(
      json::object{{"interruptId", StrOf(ObjAt(h.rec.run, "interrupt"), "interruptId")}});
  auto r = h.executor().Resolve(h.rec, timeout);
  ASSERT_TRUE(r.ok()) << r.error().message;
  h.Commit(r.value().events);
  h.Drive();
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.rec.run, "error"), "code"), "interrupt_timeout");
}

// ---- 5. deterministic resume keys ------------------------------------------------------------

TEST(ResumeKeys, ALoggedAnswerIsNotAskedAgainAfterACrash) {
  auto wf =
      Parse(Doc(json::array{NodeDoc("gate", "core.approvalGate"), NodeDoc("after", "core.noop")},
                json::array{EdgeDoc("e1", "gate", "after")}));
  Harness h(wf);
  h.Drive();
  const std::string key = StrOf(ObjAt(h.rec.run, "interrupt"), "key");
  EXPECT_EQ(key, std::string(kRunId) + ":gate:0");
  auto r = h.Resolve(json::parse(R"({"action": "accept"})"));
  ASSERT_TRUE(r.ok());
  h.Commit(r.value().events);  // interrupt.resolved + node.resumed ... then the crash

  // Restart: fold the log from nothing, as recovery does.
  storage::TaskRecord folded;
  for (const auto& e : h.log) ASSERT_TRUE(tasks::ApplyEvent(folded, e).ok()) << e.type;
  EXPECT_EQ(folded, h.rec);
  EXPECT_TRUE(ObjAt(folded.run, "resumeValues").contains(key));
  EXPECT_EQ(StrOf(ObjAt(folded.run, "nodeStates").at("gate").as_object(), "status"), "running");

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

// ---- 6. limits -------------------------------------------------------------------------------

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
  EXPECT_EQ(StrOf(ObjAt(h.rec.run, "error"), "code"), "run_timeout");
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
  EXPECT_EQ(StrOf(ObjAt(h.rec.run, "error"), "code"), "recursion_limit_exceeded");
  const auto* cap = h.Last("cap.breached");
  ASSERT_TRUE(cap);
  EXPECT_EQ(StrOf(cap->payload, "kind"), "node-executions");
  EXPECT_EQ(h.Count("node.completed"), 100u);
  EXPECT_EQ(h.rec.run.at("nodeExecutions"), json::value(100));
  EXPECT_FALSE(h.NodeState("n100").contains("status"));

  // Exactly 100 nodes fit.
  nodes.pop_back();
  edges.pop_back();
  Harness fits(Parse(Doc(nodes, edges)));
  fits.Drive();
  EXPECT_EQ(fits.Status(), "completed");
}

// ---- 7. definition refusals ------------------------------------------------------------------

core::Error Refusal(const json::object& doc) {
  auto w = ParseWorkflow(doc);
  if (w.ok()) {
    ADD_FAILURE() << "accepted: " << json::serialize(doc);
    return core::Error();
  }
  return w.error();
}

TEST(Definition, MissingNodesIsRefusedNamingTheField) {
  json::object doc = Doc(json::array{NodeDoc("n", "core.noop")});
  doc.erase("nodes");
  auto e = Refusal(doc);
  EXPECT_EQ(e.code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Detail(e, "field"), "nodes");
  EXPECT_EQ(e.message.rfind("nodes", 0), 0u) << e.message;
  auto empty = Refusal(Doc(json::array{}));
  EXPECT_EQ(Detail(empty, "field"), "nodes");
}

TEST(Definition, UnknownTypeIdIsCapabilityRequired) {
  auto e = Refusal(Doc(json::array{NodeDoc("a", "core.noop"), NodeDoc("b", "vendor.llm")}));
  EXPECT_EQ(e.code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Detail(e, "reason"), "capability_required");
  EXPECT_EQ(Detail(e, "offendingTypeId"), "vendor.llm");
  EXPECT_EQ(Detail(e, "nodeId"), "b");
  EXPECT_EQ(Detail(e, "field"), "nodes[1].typeId");
  EXPECT_NE(e.message.find("nodes[1].typeId"), std::string::npos) << e.message;
}

TEST(Definition, CycleIsRefused) {
  auto e = Refusal(Doc(json::array{NodeDoc("a", "core.noop"), NodeDoc("b", "core.noop")},
                       json::array{EdgeDoc("e1", "a", "b"), EdgeDoc("e2", "b", "a")}));
  EXPECT_EQ(Detail(e, "field"), "edges");
  EXPECT_NE(e.message.find("cycle"), std::string::npos) << e.message;
}

TEST(Definition, BadConditionTypeIsRefused) {
  json::object edge = EdgeDoc("e1", "a", "b");
  edge["condition"] = json::object{{"type", "expression"}, {"left", "x"}};
  auto e = Refusal(
      Doc(json::array{NodeDoc("a", "core.noop"), NodeDoc("b", "core.noop")}, json::array{edge}));
  EXPECT_EQ(Detail(e, "field"), "edges[0].condition.type");
  EXPECT_NE(e.message.find("edges[0].condition.type"), std::string::npos) << e.message;
}

TEST(Definition, QuorumApprovalsAreRefused) {
  auto e = Refusal(Doc(
      json::array{NodeDoc("gate", "core.approvalGate", json::object{{"requiredApprovals", 3}})}));
  EXPECT_EQ(Detail(e, "field"), "nodes[0].config.requiredApprovals");
  EXPECT_NE(e.message.find("nodes[0].config.requiredApprovals"), std::string::npos) << e.message;
  EXPECT_TRUE(ParseWorkflow(Doc(json::array{NodeDoc("gate", "core.approvalGate",
                                                    json::object{{"requiredApprovals", 1}})}))
                  .ok());
}

TEST(Definition, OtherRefusalsNameTheirField) {
  struct Row {
    json::object doc;
    std::string field;
  };
  json::object no_id = Doc(json::array{NodeDoc("n", "core.noop")});
  no_id.erase("id");
  json::object bad_id = Doc(json::array{NodeDoc("n", "core.noop")});
  bad_id["id"] = "Has Spaces";
  std::vector<Row> rows = {
      {no_id, "id"},
      {bad_id, "id"},
      {Doc(json::array{NodeDoc("n", "core.noop"), NodeDoc("n", "core.noop")}), "nodes[1].id"},
      {Doc(json::array{NodeDoc("n", "core.noop")}, json::array{EdgeDoc("e", "n", "ghost")}),
       "edges[0].targetNodeId"},
      {Doc(json::array{NodeDoc("g", "core.approvalGate",
                               json::object{{"actions", json::array{"accept", "launch"}}})}),
       "nodes[0].config.actions"},
      {Doc(json::array{NodeDoc("q", "core.clarificationGate")}), "nodes[0].config.questions"},
      {Doc(json::array{NodeDoc("i", "core.interrupt", json::object{{"kind", "auth"}})}),
       "nodes[0].config.kind"},
      {Doc(json::array{NodeDoc("s", "core.subWorkflow")}), "nodes[0].config.workflowId"},
      {Doc(json::array{NodeDoc("n", "core.noop", {},
                               json::object{{"p", json::object{{"type", "expression"}}}})}),
       "nodes[0].inputs.p.type"},
      {Doc(json::array{NodeDoc("n", "core.noop")}, {}, {}, json::object{{"timeout", -1}}),
       "settings.timeout"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.field);
    auto e = Refusal(row.doc);
    EXPECT_EQ(Detail(e, "field"), row.field);
    EXPECT_EQ(e.message.rfind(row.field, 0), 0u) << e.message;
  }
}

std::filesystem::path RepoWorkflows() {
  return std::filesystem::path(A2AD_SOURCE_DIR) / "workflows";
}

TEST(Definition, EveryBundledWorkflowLoads) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(RepoWorkflows()))
    if (entry.path().extension() == ".json") ++files;
  ASSERT_GT(files, 0u) << RepoWorkflows();
  LoadedWorkflows loaded = LoadWorkflowDir(RepoWorkflows());
  EXPECT_TRUE(loaded.refusals.empty()) << [&] {
    std::string all;
    for (const auto& r : loaded.refusals) all += r + "\n";
    return all;
  }();
  EXPECT_EQ(loaded.workflows.size(), files);
  std::set<std::string> ids;
  for (const auto& w : loaded.workflows) ids.insert(w.id);
  EXPECT_TRUE(ids.count("conformance-approval"));
  EXPECT_TRUE(ids.count("conformance-subworkflow-parent"));
}

class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("a2ad-wf-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }

 private:
  std::filesystem::path path_;
};

TEST(Definition, ABadFileDoesNotStopTheGoodOnes) {
  TempDir dir;
  json::object good = Doc(json::array{NodeDoc("n", "core.noop")});
  good["id"] = "good";
  json::object bad = Doc(json::array{NodeDoc("n", "vendor.unknown")});
  bad["id"] = "bad";
  dir.Write("a-bad.json", json::serialize(bad));
  dir.Write("b-good.json", json::serialize(good));
  dir.Write("notes.txt", "not a workflow");
  LoadedWorkflows loaded = LoadWorkflowDir(dir.path());
  ASSERT_EQ(loaded.workflows.size(), 1u);
  EXPECT_EQ(loaded.workflows[0].id, "good");
  ASSERT_EQ(loaded.refusals.size(), 1u);
  EXPECT_NE(loaded.refusals[0].find("a-bad.json"), std::string::npos) << loaded.refusals[0];
  EXPECT_NE(loaded.refusals[0].find("nodes[0].typeId"), std::string::npos) << loaded.refusals[0];
}

TEST(Definition, DirectoryRefusalsNameTheFile) {
  TempDir dir;
  json::object a = Doc(json::array{NodeDoc("n", "core.noop")});
  a["id"] = "same";
  json::object parent = Doc(json::array{
      NodeDoc("call", "core.subWorkflow", json::object{{"workflowId", "missing-child"}})});
  parent["id"] = "parent";
  dir.Write("1.json", json::serialize(a));
  dir.Write("2.json", json::serialize(a));
  dir.Write("3.json", "{not json");
  dir.Write("4.json", json::serialize(parent));
  LoadedWorkflows loaded = LoadWorkflowDir(dir.path());
  ASSERT_EQ(loaded.workflows.size(), 1u);
  EXPECT_EQ(loaded.workflows[0].id, "same");
  ASSERT_EQ(loaded.refusals.size(), 3u);
  std::string all;
  for (const auto& r : loaded.refusals) all += r + "\n";
  EXPECT_NE(all.find("2.json: id:"), std::string::npos) << all;
  EXPECT_NE(all.find("3.json: not JSON"), std::string::npos) << all;
  EXPECT_NE(all.find("4.json: nodes:"), std::string::npos) << all;
  EXPECT_NE(all.find("missing-child"), std::string::npos) << all;
}

// ---- 8. interrupt tokens ---------------------------------------------------------------------

TEST(InterruptTokens, MintVerifyRoundTrip) {
  InterruptTokens tokens("secret-a");
  TokenClaims claims{"run-9", "gate", "gate-0", kStart + 60000, "inspect"};
  const std::string token = tokens.Mint(claims);
  auto v = tokens.Verify(token);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v.value().run_id, "run-9");
  EXPECT_EQ(v.value().node_id, "gate");
  EXPECT_EQ(v.value().interrupt_id, "gate-0");
  EXPECT_EQ(v.value().expires_at_ms, kStart + 60000);
  EXPECT_EQ(v.value().intent, "inspect");
}

TEST(InterruptTokens, TamperedTokenIsRefused) {
  InterruptTokens tokens("secret-a");
  const std::string token = tokens.Mint({"run-9", "gate", "gate-0", kStart, "resolve"});
  const size_t dot = token.find('.');
  ASSERT_NE(dot, std::string::npos);
  // Forge other claims under the original MAC.
  const std::string forged_claims = core::Base64UrlEncode(
      R"({"runId":"run-X","nodeId":"gate","interruptId":"gate-0","expiresAt":1,"intent":"resolve","kid":"k1"})");
  auto forged = tokens.Verify(forged_claims + token.substr(dot));
  ASSERT_FALSE(forged.ok());
  EXPECT_EQ(forged.error().code, ErrorCode::kInvalidParams);
  // Flip one character of the MAC.
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(tokens.Verify(flipped).ok());
  for (const std::string& junk : {std::string(), std::string("abc"), token.substr(0, dot),
                                  token.substr(0, dot + 1), token + "x"})
    EXPECT_FALSE(tokens.Verify(junk).ok()) << "'" << junk << "'";
}

TEST(InterruptTokens, AnotherSecretIsRefused) {
  const std::string token = InterruptTokens("secret-a").Mint({"r", "n", "i", kStart, "resolve"});
  auto v = InterruptTokens("secret-b").Verify(token);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, ErrorCode::kInvalidParams);
  EXPECT_TRUE(InterruptTokens("secret-a").Verify(token).ok());
}

TEST(InterruptTokens, TheEngineMintsATokenForTheOpenInterrupt) {
  Harness h(ApprovalWorkflow(json::array{"accept", "reject"}));
  h.Drive();
  const std::string token = StrOf(ObjAt(h.rec.task.metadata, "openwop"), "interruptToken");
  ASSERT_FALSE(token.empty());
  auto v = InterruptTokens("test-secret").Verify(token);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v.value().run_id, kRunId);
  EXPECT_EQ(v.value().node_id, "gate");
  EXPECT_EQ(v.value().interrupt_id, StrOf(ObjAt(h.rec.run, "interrupt"), "interruptId"));
  EXPECT_GT(v.value().expires_at_ms, h.now);
  // Answered: the token leaves the task's metadata.
  ASSERT_TRUE(h.Answer(json::parse(R"({"action": "accept"})")).ok());
  EXPECT_FALSE(h.rec.task.metadata.contains("openwop") &&
               ObjAt(h.rec.task.metadata, "openwop").contains("interruptToken"));
}

}  // namespace
}  // namespace a2ad::workflow
