// Quorum approvals and approver restrictions at the gates (nodes/gates.cpp with
// approval_policy.hpp), through WorkflowExecutor::Resolve and the fold the service commits
// with: the conformance-interrupt-quorum outcomes, what each vote logs, repeated and changed
// votes, development mode and tokens refused, restricted gates per principal, and the tally
// rebuilt from the log alone.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

#include "a2ad/protocol/model.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

protocol::Principal Key(std::string id, std::vector<std::string> scopes = {}) {
  protocol::Principal p;
  p.id = std::move(id);
  p.tenant = "acme";
  p.scopes = std::move(scopes);
  p.all_scopes = false;
  p.authenticated = true;
  return p;
}

const json::value kAccept = json::parse(R"({"action": "accept"})");
const json::value kReject = json::parse(R"({"action": "reject", "feedback": "not yet"})");

// conformance-interrupt-quorum: three approvals, majority rejection, anyone may vote.
std::shared_ptr<const Workflow> QuorumWorkflow(json::object extra = {}) {
  json::object config{{"title", "Ship it?"},
                      {"actions", json::array{"accept", "reject", "ask"}},
                      {"requiredApprovals", 3},
                      {"rejectionPolicy", "majority"},
                      {"approversList", json::array()}};
  for (auto& kv : extra) config[kv.key()] = kv.value();
  return OneNode(NodeDoc("gate", "core.approvalGate", std::move(config)));
}

const json::object& Quorum(const Harness& h) {
  return ObjAt(ObjAt(h.Run(), "interrupt"), "quorum");
}

const json::object& TaskQuorum(const Harness& h) {
  return ObjAt(ObjAt(ObjAt(h.rec.task.metadata, "openwop"), "interrupt"), "quorum");
}

TEST(QuorumGate, OpensWithAnEmptyTallyInTheRunAndTheTask) {
  Harness h(QuorumWorkflow());
  ASSERT_EQ(h.Drive().kind, K::kParked);
  EXPECT_EQ(h.Status(), "waiting-approval");
  EXPECT_EQ(json::value(Quorum(h)), json::parse(R"({"required": 3, "rejectionPolicy": "majority",
      "accepts": 0, "rejects": 0, "votes": []})"));
  EXPECT_EQ(TaskQuorum(h), Quorum(h));
  EXPECT_EQ(h.Last("approval.requested")->payload.at("requiredApprovals"), 3);
  const std::string prompt = h.rec.task.status.message->parts[0].text;
  EXPECT_NE(prompt.find("needs 3 approvals"), std::string::npos) << prompt;
}

TEST(QuorumGate, TwoAcceptsKeepItWaitingTheThirdCompletesIt) {
  Harness h(QuorumWorkflow());
  h.Drive();
  for (const char* who : {"k1", "k2"}) {
    SCOPED_TRACE(who);
    const size_t logged = h.log.size();
    auto r = h.AnswerAs(Key(who), kAccept);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_FALSE(r->resumes);
    ASSERT_EQ(h.log.size(), logged + 1);
    EXPECT_EQ(h.log.back().type, "a2ad.approval.vote");
    EXPECT_EQ(h.log.back().payload.at("principal"), json::value(who));
    EXPECT_EQ(h.Status(), "waiting-approval");
    EXPECT_EQ(h.rec.task.status.state, S::kInputRequired);
  }
  EXPECT_EQ(Quorum(h).at("accepts"), 2);
  EXPECT_EQ(Quorum(h).at("votes").as_array().size(), 2u);
  EXPECT_EQ(TaskQuorum(h), Quorum(h));
  // The task's status message says the tally.
  const std::string said = h.rec.task.status.message->parts[0].text;
  EXPECT_NE(said.find("2 of 3 approvals"), std::string::npos) << said;
  EXPECT_NE(said.find("by k2"), std::string::npos) << said;
  EXPECT_EQ(h.Count("approval.received"), 0u);

  auto closing = h.AnswerAs(Key("k3"), kAccept);
  ASSERT_TRUE(closing.ok()) << closing.error().message;
  EXPECT_TRUE(closing->resumes);
  EXPECT_EQ(h.Status(), "completed");
  const json::object& received = h.Last("approval.received")->payload;
  EXPECT_EQ(received.at("action"), "accept");
  EXPECT_EQ(received.at("decidedBy"), "k3");  // the closing approver
  const json::object& q = received.at("quorum").as_object();
  EXPECT_EQ(q.at("outcome"), "accepted");
  EXPECT_EQ(q.at("accepts"), 3);
  ASSERT_EQ(q.at("votes").as_array().size(), 3u);
  EXPECT_EQ(q.at("votes").at(2).at("principal"), "k3");
  EXPECT_EQ(h.Count("a2ad.approval.vote"), 2u);  // the closing vote is approval.received
  EXPECT_EQ(h.Count("interrupt.resolved"), 1u);
  EXPECT_EQ(ObjAt(h.NodeState("gate"), "outputs").at("decidedBy"), "k3");
}

TEST(QuorumGate, AMajorityOfRejectsFailsTheRun) {
  Harness h(QuorumWorkflow());
  h.Drive();
  ASSERT_TRUE(h.AnswerAs(Key("k1"), kReject).ok());
  EXPECT_EQ(h.Status(), "waiting-approval");
  ASSERT_TRUE(h.AnswerAs(Key("k2"), kAccept).ok());
  EXPECT_EQ(h.Status(), "waiting-approval");
  auto closing = h.AnswerAs(Key("k3"), kReject);
  ASSERT_TRUE(closing.ok()) << closing.error().message;
  EXPECT_EQ(h.Status(), "failed");
  const json::object& received = h.Last("approval.received")->payload;
  EXPECT_EQ(received.at("action"), "reject");
  EXPECT_EQ(received.at("quorum").at("reason"), "majority");
  const std::string why(ObjAt(h.Run(), "error").at("message").as_string());
  EXPECT_NE(why.find("rejected by k3"), std::string::npos) << why;
  EXPECT_NE(why.find("2 rejections"), std::string::npos) << why;
  EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "approval_rejected");
}

TEST(QuorumGate, SingleVetoRejectsAtTheFirstReject) {
  Harness h(QuorumWorkflow(json::object{{"rejectionPolicy", "single-veto"}}));
  h.Drive();
  ASSERT_TRUE(h.AnswerAs(Key("k1"), kAccept).ok());
  ASSERT_TRUE(h.AnswerAs(Key("k2"), kReject).ok());
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(h.Last("approval.received")->payload.at("quorum").at("reason"), "single-veto");
}

TEST(QuorumGate, TheSameVoteAgainWritesNothingAnotherIsRefused) {
  Harness h(QuorumWorkflow());
  h.Drive();
  ASSERT_TRUE(h.AnswerAs(Key("k1"), kAccept).ok());
  const storage::TaskRecord before = h.rec;
  const size_t logged = h.log.size();
  // Idempotent: feedback or surface may differ, the vote is the same.
  for (const char* body : {R"({"action": "accept"})", R"({"action": "accept", "feedback": "x"})",
                           R"({"approve": true})", R"("yes")"}) {
    SCOPED_TRACE(body);
    auto again = h.ResolveAs(Key("k1"), json::parse(body), "a2a");
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_FALSE(again->resumes);
    EXPECT_TRUE(again->changes_nothing);
    EXPECT_TRUE(again->events.empty());
  }
  auto changed = h.ResolveAs(Key("k1"), kReject);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.error().code, ErrorCode::kConflict);
  EXPECT_EQ(Detail(changed.error(), "reason"), "vote_already_cast");
  EXPECT_EQ(h.rec, before);
  EXPECT_EQ(h.log.size(), logged);
  // Asking is no vote: an approver who voted may still ask.
  auto ask = h.ResolveAs(Key("k1"), json::parse(R"({"action": "ask", "question": "why?"})"));
  ASSERT_TRUE(ask.ok()) << ask.error().message;
  EXPECT_EQ(ask->events.at(0).type, "a2ad.approval.asked");
}

TEST(QuorumGate, DevelopmentModeAndTokensCannotVote) {
  Harness h(QuorumWorkflow());
  h.Drive();
  const size_t logged = h.log.size();
  protocol::Principal anonymous;  // every caller of a server without keys
  for (int i = 0; i < 3; ++i) {
    auto r = h.AnswerAs(anonymous, kAccept, "a2a");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
    EXPECT_EQ(Detail(r.error(), "reason"), "approver_authentication_required");
  }
  protocol::Principal holder = Key("token:gate-0");
  auto by_token = h.AnswerAs(holder, kAccept, "token");
  ASSERT_FALSE(by_token.ok());
  EXPECT_EQ(Detail(by_token.error(), "reason"), "approver_token_refused");
  EXPECT_EQ(h.log.size(), logged);
  EXPECT_EQ(h.Status(), "waiting-approval");
}

TEST(QuorumGate, TheTimeoutStillRejectsAnOpenQuorum) {
  Harness h(QuorumWorkflow(json::object{{"timeoutMs", 1000}}));
  h.Drive();
  ASSERT_TRUE(h.AnswerAs(Key("k1"), kAccept).ok());
  tasks::ResolveRequest timeout;
  timeout.via = "timeout";
  timeout.caller = "system:timeout";
  timeout.resume_value =
      json::object{{"interruptId", StrOf(ObjAt(h.Run(), "interrupt"), "interruptId")}};
  auto r = h.executor().Resolve(h.rec, timeout);
  ASSERT_TRUE(r.ok()) << r.error().message;
  h.Commit(r->events);
  h.Drive();
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.Run(), "error"), "code"), "approval_timeout");
}

TEST(QuorumGate, TheTallyIsTheFoldOfTheLog) {
  Harness h(QuorumWorkflow());
  h.Drive();
  ASSERT_TRUE(h.AnswerAs(Key("k1"), kAccept).ok());
  ASSERT_TRUE(h.AnswerAs(Key("k2"), kReject).ok());
  // What a restart (or `a2ad doctor --repair`) does: fold the stored log from nothing.
  storage::TaskRecord replayed;
  for (const auto& e : h.log) ASSERT_TRUE(tasks::FoldCommittedEvent(replayed, e).ok()) << e.type;
  EXPECT_EQ(replayed, h.rec);
  EXPECT_EQ(Quorum(h).at("accepts"), 1);
  EXPECT_EQ(Quorum(h).at("rejects"), 1);
  // A vote projects to an A2A status update (still input-required) carrying the tally.
  const protocol::RunEvent& vote = h.log.back();
  auto update = tasks::ProjectEvent(h.rec.task, vote);
  ASSERT_TRUE(update);
  EXPECT_EQ(update->kind, protocol::StreamEvent::Kind::kStatusUpdate);
  EXPECT_EQ(update->status_update.status.state, S::kInputRequired);
  EXPECT_EQ(ObjAt(ObjAt(ObjAt(update->status_update.metadata, "openwop"), "interrupt"), "quorum")
                .at("rejects"),
            1);
  // And the engine decides on from the replayed record as it would have.
  Harness after(QuorumWorkflow());
  after.rec = replayed;
  after.log = h.log;
  after.now = h.now;
  ASSERT_TRUE(after.AnswerAs(Key("k3"), kReject).ok());
  EXPECT_EQ(after.Status(), "failed");
  auto dup = after.ResolveAs(Key("k1"), kAccept);
  EXPECT_FALSE(dup.ok());  // the run is over
}

// ---- restricted gates --------------------------------------------------------------------------

std::shared_ptr<const Workflow> RestrictedWorkflow(json::object policy) {
  json::object config{{"title", "Pay it?"}, {"actions", json::array{"accept", "reject", "ask"}}};
  for (auto& kv : policy) config[kv.key()] = kv.value();
  return OneNode(NodeDoc("gate", "core.approvalGate", std::move(config)));
}

TEST(RestrictedGate, OnlyListedGroupedOrRoledPrincipalsMayAnswer) {
  auto wf = RestrictedWorkflow(json::object{{"approversList", json::array{"k1"}},
                                            {"approverGroupRefs", json::array{"finance"}},
                                            {"approverRoleRefs", json::array{"cfo"}}});
  Harness h(wf);
  h.Drive();
  const size_t logged = h.log.size();
  protocol::Principal admin = Key("k-admin", {"admin"});
  admin.all_scopes = true;
  for (const auto& who : {Key("k2", {"interrupts:resolve"}), Key("k3", {"group:ops"}), admin}) {
    SCOPED_TRACE(who.id);
    // Refused whatever the answer, even a question, and even a malformed one.
    for (const char* body : {R"({"action": "accept"})", R"({"action": "ask"})", R"(42)"}) {
      auto r = h.AnswerAs(who, json::parse(body));
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.error().code, ErrorCode::kPermissionDenied);
      EXPECT_EQ(Detail(r.error(), "reason"), "not_an_approver");
    }
  }
  EXPECT_EQ(h.log.size(), logged);
  EXPECT_EQ(h.Status(), "waiting-approval");
  const std::string prompt = h.rec.task.status.message->parts[0].text;
  EXPECT_NE(prompt.find("Only these may answer"), std::string::npos) << prompt;
  for (const auto& who : {Key("k1"), Key("k4", {"group:finance"}), Key("k5", {"role:cfo"})}) {
    SCOPED_TRACE(who.id);
    Harness each(wf);
    each.Drive();
    auto r = each.AnswerAs(who, kAccept);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(each.Status(), "completed");
    EXPECT_EQ(each.Last("approval.received")->payload.at("decidedBy"), json::value(who.id));
  }
}

TEST(RestrictedGate, CoreInterruptApprovalDataIsCheckedAndEnforcedTheSameWay) {
  auto wf = OneNode(NodeDoc(
      "gate", "core.interrupt",
      json::object{{"kind", "approval"},
                   {"data", json::object{{"title", "Deploy?"},
                                         {"requiredApprovals", 2},
                                         {"approverRoleRefs", json::array{"release-manager"}}}}}));
  Harness h(wf);
  h.Drive();
  ASSERT_FALSE(h.AnswerAs(Key("k1"), kAccept).ok());
  ASSERT_TRUE(h.AnswerAs(Key("k2", {"role:release-manager"}), kAccept).ok());
  EXPECT_EQ(h.Status(), "waiting-approval");
  ASSERT_TRUE(h.AnswerAs(Key("k3", {"role:release-manager"}), kAccept).ok());
  EXPECT_EQ(h.Status(), "completed");
}

}  // namespace
}  // namespace a2ad::workflow
