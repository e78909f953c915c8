#include "a2ad/workflow/approval_policy.hpp"

#include <algorithm>
#include <boost/json/array.hpp>
#include <set>

#include "a2ad/protocol/json_util.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

Error Bad(const std::string& field, const std::string& why,
          std::vector<core::ErrorDetail> extra = {}) {
  std::vector<core::ErrorDetail> details{{"field", field}};
  for (auto& d : extra) details.push_back(std::move(d));
  return Error(ErrorCode::kInvalidParams, field + ": " + why, std::move(details));
}

// An array of non-empty strings at `fields[key]` (absent: empty).
core::Result<std::vector<std::string>> Names(const json::object& fields, std::string_view key,
                                             const std::string& path) {
  std::vector<std::string> out;
  const json::value* v = fields.if_contains(key);
  if (!v) return out;
  const std::string at = path + "." + std::string(key);
  if (!v->is_array()) return Bad(at, "expected an array of strings");
  const json::array& a = v->get_array();
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string() || a[i].get_string().empty())
      return Bad(at + "[" + std::to_string(i) + "]", "expected a non-empty string");
    out.emplace_back(a[i].get_string());
  }
  return out;
}

bool Contains(const std::vector<std::string>& list, std::string_view x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

// Only the scopes the credential lists: all_scopes (admin, the system, development mode)
// makes no one a member of every group.
bool HoldsScope(const protocol::Principal& who, const std::string& scope) {
  return Contains(who.scopes, scope);
}

std::string List(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string Plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

core::Result<ApprovalPolicy> ParseApprovalPolicy(const json::object& fields,
                                                 const std::string& path,
                                                 const json::array& actions) {
  ApprovalPolicy p;
  if (const json::value* q = fields.if_contains("requiredApprovals")) {
    if (!q->is_int64() || q->as_int64() < 1)
      return Bad(path + ".requiredApprovals", "expected an integer >= 1");
    p.required = q->as_int64();
  }
  if (const json::value* r = fields.if_contains("rejectionPolicy")) {
    if (!r->is_string() || (r->get_string() != "single-veto" && r->get_string() != "majority"))
      return Bad(path + ".rejectionPolicy", "expected \"single-veto\" or \"majority\"");
    p.majority = r->get_string() == "majority";
  }
  auto approvers = Names(fields, "approversList", path);
  if (!approvers) return std::move(approvers).error();
  p.approvers = std::move(approvers).value();
  auto groups = Names(fields, "approverGroupRefs", path);
  if (!groups) return std::move(groups).error();
  p.groups = std::move(groups).value();
  auto roles = Names(fields, "approverRoleRefs", path);
  if (!roles) return std::move(roles).error();
  p.roles = std::move(roles).value();
  if (const json::value* a = fields.if_contains("audience"); a && !a->is_object())
    return Bad(path + ".audience", "expected an object {subjects?, groups?, roles?}");
  if (const json::value* o = fields.if_contains("overrideBypassesQuorum")) {
    if (!o->is_bool()) return Bad(path + ".overrideBypassesQuorum", "expected a boolean");
    if (o->get_bool())
      return Bad(
          path + ".overrideBypassesQuorum",
          "this host has no override principals; only false (every approval counts as "
          "one vote) is supported",
          {{"reason", "capability_required"}, {"requiredCapability", "interrupt.quorum.override"}});
  }
  if (p.Quorum()) {
    for (const auto& act : actions)
      if (act == json::value("refine") || act == json::value("edit-accept"))
        return Bad(path + ".actions",
                   "a quorum gate (requiredApprovals " + std::to_string(p.required) +
                       ") counts accept and reject votes; '" + std::string(act.get_string()) +
                       "' cannot be combined from several approvers");
    const std::set<std::string> listed(p.approvers.begin(), p.approvers.end());
    if (!listed.empty() && p.groups.empty() && p.roles.empty() &&
        static_cast<int64_t>(listed.size()) < p.required)
      return Bad(path + ".approversList",
                 "names " + Plural(static_cast<int64_t>(listed.size()), "approver") +
                     " but requiredApprovals is " + std::to_string(p.required) +
                     ": the gate could never be approved");
  }
  return p;
}

std::optional<Error> CheckApprover(const ApprovalPolicy& policy, const protocol::Principal& who,
                                   std::string_view via, const std::string& node_id) {
  if (via == "timeout" || (!policy.Quorum() && !policy.Restricted())) return std::nullopt;
  const std::string gate =
      "approval gate '" + node_id + "' " +
      (policy.Quorum() ? "needs " + std::to_string(policy.required) + " approvals from distinct "
                       : std::string("is restricted to named ")) +
      "approvers";
  if (via == "token")
    return Error(ErrorCode::kPermissionDenied,
                 gate +
                     "; an interrupt token is a bearer credential that names no approver: answer "
                     "with your own credential (POST /v1/runs/{runId}/interrupts/" +
                     node_id + ", or an A2A message into the task)",
                 {{"reason", "approver_token_refused"}, {"nodeId", node_id}});
  if (!who.authenticated)
    return Error(ErrorCode::kPermissionDenied,
                 gate +
                     ", which needs authentication; this server runs without API keys "
                     "(development mode), where every caller is the same principal '" +
                     who.id +
                     "': create one key per approver with `a2ad keys create --tenant T --scopes "
                     "...` (authentication turns on at the next request)",
                 {{"reason", "approver_authentication_required"}, {"nodeId", node_id}});
  if (!policy.Restricted()) return std::nullopt;
  if (Contains(policy.approvers, who.id)) return std::nullopt;
  for (const auto& g : policy.groups)
    if (HoldsScope(who, "group:" + g)) return std::nullopt;
  for (const auto& r : policy.roles)
    if (HoldsScope(who, "role:" + r)) return std::nullopt;
  return Error(ErrorCode::kPermissionDenied,
               "principal '" + who.id + "' may not answer approval gate '" + node_id +
                   "': it is restricted to " + DescribeApprovers(policy),
               {{"reason", "not_an_approver"}, {"nodeId", node_id}});
}

QuorumTally Tally(const ApprovalPolicy& policy, const std::vector<Vote>& votes) {
  QuorumTally t;
  for (const auto& v : votes) {
    if (v.action == "accept") ++t.accepts;
    if (v.action == "reject") ++t.rejects;
  }
  if (t.accepts >= policy.required) {
    t.outcome = QuorumTally::Outcome::kAccepted;
    t.reason = "quorum";
  } else if (t.rejects >= policy.RejectsToReject()) {
    t.outcome = QuorumTally::Outcome::kRejected;
    t.reason = std::string(policy.RejectionPolicyName());
  } else if (!policy.approvers.empty() && policy.groups.empty() && policy.roles.empty()) {
    // Only listed principals may vote: the ones who have not voted yet are all that is left.
    const std::set<std::string> listed(policy.approvers.begin(), policy.approvers.end());
    int64_t left = static_cast<int64_t>(listed.size());
    for (const auto& v : votes)
      if (listed.count(v.principal)) --left;
    if (t.accepts + left < policy.required) {
      t.outcome = QuorumTally::Outcome::kRejected;
      t.reason = "unreachable";
    }
  }
  return t;
}

core::Result<CastResult> CastVote(const ApprovalPolicy& policy, const std::vector<Vote>& votes,
                                  const Vote& vote) {
  CastResult out;
  for (const auto& v : votes) {
    if (v.principal != vote.principal) continue;
    if (v.action != vote.action)
      return Error(ErrorCode::kConflict,
                   "principal '" + vote.principal + "' already voted " + v.action +
                       " at this gate; a vote is final and counts once",
                   {{"reason", "vote_already_cast"}, {"vote", v.action}});
    out.duplicate = true;
    out.tally = Tally(policy, votes);
    return out;
  }
  std::vector<Vote> after = votes;
  after.push_back(vote);
  out.tally = Tally(policy, after);
  return out;
}

std::vector<Vote> VotesOf(const json::object& interrupt) {
  std::vector<Vote> out;
  const json::value* votes = protocol::ObjOr(interrupt, "quorum").if_contains("votes");
  if (!votes || !votes->is_array()) return out;
  for (const auto& v : votes->get_array()) {
    if (!v.is_object()) continue;
    const json::object& o = v.get_object();
    out.push_back(
        Vote{std::string(protocol::Str(o, "principal")), std::string(protocol::Str(o, "action"))});
  }
  return out;
}

std::string DescribeTally(const ApprovalPolicy& policy, const QuorumTally& tally) {
  std::string s = std::to_string(tally.accepts) + " of " + std::to_string(policy.required) +
                  " approvals, " + Plural(tally.rejects, "rejection") + " (rejection policy " +
                  std::string(policy.RejectionPolicyName()) + ": " +
                  Plural(policy.RejectsToReject(), "rejection") + " reject)";
  switch (tally.outcome) {
    case QuorumTally::Outcome::kOpen:
      return s + "; waiting for " + Plural(policy.required - tally.accepts, "more approval");
    case QuorumTally::Outcome::kAccepted:
      return s + "; approved";
    case QuorumTally::Outcome::kRejected:
      return s + (tally.reason == "unreachable"
                      ? "; rejected: too few listed approvers are left to approve"
                      : "; rejected");
  }
  return s;
}

std::string DescribeApprovers(const ApprovalPolicy& policy) {
  std::string s;
  auto add = [&s](const char* what, const std::vector<std::string>& names) {
    if (names.empty()) return;
    s += (s.empty() ? "" : "; ") + std::string(what) + " " + List(names);
  };
  add("approvers", policy.approvers);
  add("groups (scope group:<name>)", policy.groups);
  add("roles (scope role:<name>)", policy.roles);
  return s.empty() ? "anyone" : s;
}

}  // namespace a2ad::workflow
