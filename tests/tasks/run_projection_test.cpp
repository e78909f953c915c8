// The forward projection of a run onto its A2A task (tasks/run_projection.cpp, seed 003):
// the run status -> task state table, the content-free A2ATaskState, and the A2A update each
// run event delivers. Real runs are produced by the workflow engine without a server
// (tests/workflow/harness.hpp).
#include "a2ad/tasks/run_projection.hpp"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <set>
#include <string>
#include <vector>

#include "../workflow/harness.hpp"
#include "a2ad/protocol/a2a_task_state.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/task_projection.hpp"

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

json::object A2A(const Harness& h) { return protocol::A2ATaskStateOf(h.rec.task, h.rec.run); }

// ---- the run status table ----------------------------------------------------------------------

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
  EXPECT_EQ(StrOf(A2A(h), "state"), row.a2a_state);
  EXPECT_EQ(StrOf(A2A(h), "taskId"), kRunId);
  EXPECT_EQ(StrOf(A2A(h), "runId"), kRunId);
  EXPECT_EQ(StrOf(A2A(h), "contextId"), "ctx-1");
  if (row.interrupt_kind.empty())
    EXPECT_FALSE(A2A(h).contains("interruptKind")) << json::serialize(A2A(h));
  else
    EXPECT_EQ(StrOf(A2A(h), "interruptKind"), row.interrupt_kind);
  ExpectContentFree(A2A(h));
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
  EXPECT_EQ(StrOf(A2A(h), "state"), "input-required");
  // The schema knows approval | clarification only; an external wait is not an approval.
  EXPECT_EQ(StrOf(A2A(h), "interruptKind"), "clarification");
  EXPECT_EQ(StrOf(ObjAt(ObjAt(h.rec.task.metadata, "openwop"), "interrupt"), "kind"),
            "external-event");
  ExpectContentFree(A2A(h));
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
  EXPECT_FALSE(h.rec.run.interrupt);
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
  ExpectContentFree(A2A(h));
  EXPECT_EQ(json::serialize(A2A(h)).find("s3cr3t"), std::string::npos);
}

// ---- the A2A update of each run event ----------------------------------------------------------

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
      d.state = protocol::TaskStateName(p->status_update.status.state, protocol::Wire::kV10);
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

}  // namespace
}  // namespace a2ad::workflow
