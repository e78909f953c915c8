// The gates (nodes/gates.cpp): core.approvalGate, core.clarificationGate and
// core.interrupt raise their interrupt in one step; every approval action; answers that are
// refused, and refused for the right reason. The rules of every field of a gate answer are in
// answers_test.cpp.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <vector>

#include "a2ad/protocol/model.hpp"
#include "a2ad/workflow/plan.hpp"
#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

// ---- raising and answering, per gate kind ------------------------------------------------------

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
  const json::object& interrupt = ObjAt(h.Run(), "interrupt");
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

// ---- approval actions --------------------------------------------------------------------------

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
  EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "approval_rejected");
  EXPECT_NE(StrOf(ObjAt(h.Run(), "error"), "message").find("no way"), std::string::npos);
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
  EXPECT_FALSE(ObjAt(h.Run(), "outputs").contains("_askExchanges"));
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
  EXPECT_EQ(StrOf(ObjAt(no.Run(), "error"), "code"), "approval_rejected");
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
  EXPECT_EQ(ObjAt(ObjAt(h.Run(), "interrupt"), "data").at("actions"),
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

// ---- wrong replies -----------------------------------------------------------------------------

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
  const std::string interrupt_id = StrOf(ObjAt(h.Run(), "interrupt"), "interruptId");
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
  timeout.resume_value =
      json::value(json::object{{"interruptId", StrOf(ObjAt(h.Run(), "interrupt"), "interruptId")}});
  auto r = h.executor().Resolve(h.rec, timeout);
  ASSERT_TRUE(r.ok()) << r.error().message;
  h.Commit(r.value().events);
  h.Drive();
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "interrupt_timeout");
}
}  // namespace
}  // namespace a2ad::workflow
