// The pure rules of who may answer an approval and how quorum votes add up
// (workflow/approval_policy.hpp): load-time refusals naming their field, the approver check
// per principal and surface, and the tally under both rejection policies.
#include "a2ad/workflow/approval_policy.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

namespace a2ad::workflow {
namespace {
namespace json = boost::json;
using core::ErrorCode;
using Outcome = QuorumTally::Outcome;

std::string Detail(const core::Error& e, const std::string& key) {
  for (const auto& [k, v] : e.details)
    if (k == key) return v;
  return "<no " + key + ">";
}

ApprovalPolicy Policy(const char* fields, json::array actions = {"accept", "reject"}) {
  auto p = ParseApprovalPolicy(json::parse(fields).as_object(), "config", actions);
  EXPECT_TRUE(p.ok()) << fields << ": " << (p.ok() ? "" : p.error().message);
  return p.ok() ? std::move(p).value() : ApprovalPolicy{};
}

protocol::Principal Key(std::string id, std::vector<std::string> scopes = {}) {
  protocol::Principal p;
  p.id = std::move(id);
  p.tenant = "acme";
  p.scopes = std::move(scopes);
  p.all_scopes = false;
  p.authenticated = true;
  return p;
}

TEST(ApprovalPolicy, DefaultsAreOneApproverAnyoneSingleVeto) {
  ApprovalPolicy p = Policy("{}");
  EXPECT_EQ(p.required, 1);
  EXPECT_FALSE(p.Quorum());
  EXPECT_FALSE(p.Restricted());
  EXPECT_EQ(p.RejectionPolicyName(), "single-veto");
  EXPECT_EQ(p.RejectsToReject(), 1);
  // The conformance fixture's shape: an empty approversList restricts nothing.
  ApprovalPolicy q =
      Policy(R"({"requiredApprovals": 3, "rejectionPolicy": "majority", "approversList": []})");
  EXPECT_TRUE(q.Quorum());
  EXPECT_FALSE(q.Restricted());
  EXPECT_EQ(q.RejectsToReject(), 2);
}

TEST(ApprovalPolicy, MajorityIsMoreThanHalfOfTheRequiredApprovals) {
  for (auto [n, rejects] : std::vector<std::pair<int, int>>{{2, 2}, {3, 2}, {4, 3}, {5, 3}}) {
    ApprovalPolicy p;
    p.required = n;
    p.majority = true;
    EXPECT_EQ(p.RejectsToReject(), rejects) << n;
  }
}

TEST(ApprovalPolicy, LoadRefusalsNameTheirField) {
  struct Row {
    const char* fields;
    std::string field;
    json::array actions = {"accept", "reject"};
  };
  const std::vector<Row> rows = {
      {R"({"requiredApprovals": 0})", "config.requiredApprovals"},
      {R"({"requiredApprovals": "3"})", "config.requiredApprovals"},
      {R"({"requiredApprovals": 2.5})", "config.requiredApprovals"},
      {R"({"rejectionPolicy": "unanimous"})", "config.rejectionPolicy"},
      {R"({"approversList": "k1"})", "config.approversList"},
      {R"({"approversList": ["k1", 2]})", "config.approversList[1]"},
      {R"({"approverGroupRefs": [""]})", "config.approverGroupRefs[0]"},
      {R"({"approverRoleRefs": {}})", "config.approverRoleRefs"},
      {R"({"audience": []})", "config.audience"},
      {R"({"overrideBypassesQuorum": "no"})", "config.overrideBypassesQuorum"},
      {R"({"overrideBypassesQuorum": true})", "config.overrideBypassesQuorum"},
      {R"({"requiredApprovals": 2})", "config.actions", {"accept", "reject", "refine"}},
      {R"({"requiredApprovals": 2})", "config.actions", {"accept", "edit-accept"}},
      // Two listed approvers can never give three approvals.
      {R"({"requiredApprovals": 3, "approversList": ["k1", "k2", "k2"]})", "config.approversList"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.fields);
    auto p = ParseApprovalPolicy(json::parse(row.fields).as_object(), "config", row.actions);
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Detail(p.error(), "field"), row.field);
    EXPECT_TRUE(p.error().message.starts_with(row.field)) << p.error().message;
  }
  auto over = ParseApprovalPolicy(json::parse(R"({"overrideBypassesQuorum": true})").as_object(),
                                  "config", {"accept"});
  EXPECT_EQ(Detail(over.error(), "reason"), "capability_required");
  // What is allowed: a group may fill a quorum that the list alone could not; ask stays.
  Policy(R"({"requiredApprovals": 3, "approversList": ["k1"], "approverGroupRefs": ["ops"]})");
  Policy(R"({"requiredApprovals": 2, "overrideBypassesQuorum": false, "audience": {}})",
         {"accept", "reject", "ask"});
  Policy(R"({"requiredApprovals": 1})", {"accept", "refine", "edit-accept"});
}

TEST(ApprovalPolicy, AnUnrestrictedSingleApprovalTakesAnyone) {
  ApprovalPolicy p = Policy("{}");
  protocol::Principal anonymous;  // development mode
  EXPECT_FALSE(CheckApprover(p, anonymous, "a2a", "gate"));
  EXPECT_FALSE(CheckApprover(p, anonymous, "token", "gate"));
  EXPECT_FALSE(CheckApprover(p, Key("k1"), "rest", "gate"));
}

TEST(ApprovalPolicy, QuorumAndRestrictedGatesNeedAnAuthenticatedPrincipalNotAToken) {
  for (const char* fields : {R"({"requiredApprovals": 2})", R"({"approversList": ["k1"]})"}) {
    SCOPED_TRACE(fields);
    ApprovalPolicy p = Policy(fields);
    protocol::Principal anonymous;
    auto dev = CheckApprover(p, anonymous, "a2a", "gate");
    ASSERT_TRUE(dev);
    EXPECT_EQ(dev->code, ErrorCode::kPermissionDenied);
    EXPECT_EQ(Detail(*dev, "reason"), "approver_authentication_required");
    EXPECT_NE(dev->message.find("a2ad keys create"), std::string::npos) << dev->message;
    EXPECT_NE(dev->message.find("'gate'"), std::string::npos) << dev->message;
    auto token = CheckApprover(p, Key("k1"), "token", "gate");
    ASSERT_TRUE(token);
    EXPECT_EQ(Detail(*token, "reason"), "approver_token_refused");
    // The engine's own timeout answers every gate.
    EXPECT_FALSE(CheckApprover(p, anonymous, "timeout", "gate"));
  }
  EXPECT_FALSE(CheckApprover(Policy(R"({"requiredApprovals": 2})"), Key("k9"), "rest", "gate"));
}

TEST(ApprovalPolicy, RestrictionsAreTheUnionOfListGroupsAndRoles) {
  ApprovalPolicy p = Policy(
      R"({"approversList": ["k1"], "approverGroupRefs": ["finance"], "approverRoleRefs": ["cfo"]})");
  EXPECT_FALSE(CheckApprover(p, Key("k1"), "rest", "gate"));
  EXPECT_FALSE(CheckApprover(p, Key("k2", {"interrupts:resolve", "group:finance"}), "a2a", "g"));
  EXPECT_FALSE(CheckApprover(p, Key("k3", {"role:cfo"}), "rest", "gate"));
  struct Row {
    protocol::Principal who;
    const char* why;
  };
  protocol::Principal admin = Key("k4", {"admin"});
  admin.all_scopes = true;  // admin grants every scope a2ad checks, no group membership
  for (const auto& [who, why] :
       std::vector<Row>{{Key("k5", {"interrupts:resolve"}), "no membership"},
                        {Key("k6", {"group:fin"}), "another group"},
                        {Key("k7", {"finance", "cfo"}), "bare names are not memberships"},
                        {Key("k8", {"role:finance"}), "a role named like the group"},
                        {admin, "admin"}}) {
    SCOPED_TRACE(why);
    auto refused = CheckApprover(p, who, "rest", "gate");
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->code, ErrorCode::kPermissionDenied);
    EXPECT_EQ(Detail(*refused, "reason"), "not_an_approver");
    EXPECT_NE(refused->message.find(who.id), std::string::npos) << refused->message;
    EXPECT_NE(refused->message.find("finance"), std::string::npos) << refused->message;
    EXPECT_NE(refused->message.find("k1"), std::string::npos) << refused->message;
  }
}

TEST(ApprovalPolicy, TallyUnderEachPolicy) {
  struct Row {
    const char* fields;
    std::vector<Vote> votes;
    Outcome outcome;
    std::string reason;
  };
  const char* majority3 = R"({"requiredApprovals": 3, "rejectionPolicy": "majority"})";
  const char* veto3 = R"({"requiredApprovals": 3})";
  const char* listed = R"({"requiredApprovals": 2, "approversList": ["a", "b", "c"]})";
  const char* listed_majority =
      R"({"requiredApprovals": 2, "approversList": ["a", "b", "c"], "rejectionPolicy": "majority"})";
  const std::vector<Row> rows = {
      {majority3, {}, Outcome::kOpen, ""},
      {majority3, {{"a", "accept"}, {"b", "accept"}}, Outcome::kOpen, ""},
      {majority3,
       {{"a", "accept"}, {"b", "accept"}, {"c", "accept"}},
       Outcome::kAccepted,
       "quorum"},
      {majority3, {{"a", "reject"}}, Outcome::kOpen, ""},
      {majority3, {{"a", "reject"}, {"b", "accept"}}, Outcome::kOpen, ""},
      {majority3, {{"a", "reject"}, {"b", "reject"}}, Outcome::kRejected, "majority"},
      {majority3,
       {{"a", "accept"}, {"b", "reject"}, {"c", "accept"}, {"d", "accept"}},
       Outcome::kAccepted,
       "quorum"},
      {veto3, {{"a", "accept"}, {"b", "reject"}}, Outcome::kRejected, "single-veto"},
      // Only a, b, c may vote: after one reject two accepts are still possible; after two
      // rejects they are not.
      {listed_majority, {{"a", "reject"}}, Outcome::kOpen, ""},
      {listed_majority, {{"a", "reject"}, {"b", "reject"}}, Outcome::kRejected, "majority"},
      {R"({"requiredApprovals": 3, "approversList": ["a", "b", "c", "d"],
           "rejectionPolicy": "majority"})",
       {{"a", "reject"}, {"b", "accept"}, {"c", "reject"}},
       Outcome::kRejected,
       "majority"},
      {R"({"requiredApprovals": 3, "approversList": ["a", "b", "c", "d", "e"],
           "rejectionPolicy": "majority"})",
       {{"a", "reject"}, {"b", "accept"}, {"c", "accept"}},
       Outcome::kOpen,
       ""},
      {R"({"requiredApprovals": 4, "approversList": ["a", "b", "c", "d", "e"],
           "rejectionPolicy": "majority"})",
       {{"a", "reject"}, {"b", "reject"}},
       Outcome::kRejected,
       "unreachable"},
      {listed, {{"a", "accept"}, {"b", "accept"}}, Outcome::kAccepted, "quorum"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string(row.fields) + " votes " + std::to_string(row.votes.size()));
    QuorumTally t = Tally(Policy(row.fields), row.votes);
    EXPECT_EQ(t.outcome, row.outcome);
    EXPECT_EQ(t.reason, row.reason);
  }
}

TEST(ApprovalPolicy, AVoteCountsOnceAndIsFinal) {
  ApprovalPolicy p = Policy(R"({"requiredApprovals": 3, "rejectionPolicy": "majority"})");
  const std::vector<Vote> votes = {{"a", "accept"}, {"b", "reject"}};
  auto fresh = CastVote(p, votes, {"c", "accept"});
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(fresh->duplicate);
  EXPECT_EQ(fresh->tally.accepts, 2);
  EXPECT_EQ(fresh->tally.rejects, 1);
  EXPECT_EQ(fresh->tally.outcome, Outcome::kOpen);
  auto again = CastVote(p, votes, {"a", "accept"});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->tally.accepts, 1);
  EXPECT_EQ(again->tally.rejects, 1);
  auto changed = CastVote(p, votes, {"b", "accept"});
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.error().code, ErrorCode::kConflict);
  EXPECT_EQ(Detail(changed.error(), "reason"), "vote_already_cast");
  EXPECT_EQ(Detail(changed.error(), "vote"), "reject");
}

TEST(ApprovalPolicy, VotesAreReadFromTheOpenInterrupt) {
  auto interrupt = json::parse(R"({"quorum": {"votes": [
      {"principal": "a", "action": "accept", "votedAt": "t"}, {"principal": "b", "action": "reject"}]}})");
  const std::vector<Vote> votes = VotesOf(interrupt.as_object());
  ASSERT_EQ(votes.size(), 2u);
  EXPECT_EQ(votes[0].principal, "a");
  EXPECT_EQ(votes[1].action, "reject");
  EXPECT_TRUE(VotesOf(json::object{}).empty());
}

TEST(ApprovalPolicy, DescribeSaysTheTallyAndWhatIsLeft) {
  ApprovalPolicy p = Policy(R"({"requiredApprovals": 3, "rejectionPolicy": "majority"})");
  EXPECT_EQ(DescribeTally(p, Tally(p, {{"a", "accept"}, {"b", "accept"}})),
            "2 of 3 approvals, 0 rejections (rejection policy majority: 2 rejections reject); "
            "waiting for 1 more approval");
  EXPECT_EQ(
      DescribeApprovers(Policy(R"({"approversList": ["k1", "k2"], "approverRoleRefs": ["cfo"]})")),
      "approvers k1, k2; roles (scope role:<name>) cfo");
}

}  // namespace
}  // namespace a2ad::workflow
