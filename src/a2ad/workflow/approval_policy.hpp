#pragma once
// Who may answer an approval interrupt, and how the votes of several approvers decide it
// (DIGEST §4.3 "Approval": requiredApprovals, rejectionPolicy, approversList,
// approverGroupRefs, approverRoleRefs; "RBAC/quorum/approver checks happen in the host before
// the engine sees the resume"). Used by the approval gates (nodes/gates.cpp) at load time
// (ParseApprovalPolicy) and under the run's lock when an answer arrives (CheckApprover,
// CastVote), on every answering surface alike (A2A reply, OpenWOP REST, interrupt token).
//
// Approvers are authenticated principals (protocol::Principal, transport/auth/auth.hpp):
//   approversList      principal ids: an API key's id (the 16 hex digits `a2ad keys list`
//                      shows; what `decidedBy` records)
//   approverGroupRefs  group names: a principal is in group G when its credential lists the
//                      scope `group:G` (`a2ad keys create --scopes group:G,...`; an OIDC
//                      token's scope claim would carry it the same way)
//   approverRoleRefs   role names: the scope `role:R`
// A gate naming any of them is *restricted*: a principal in the list, in one of the groups or
// holding one of the roles may answer (the union); nobody else may, whatever the answer (ask
// included). Only the scopes a credential lists count: `admin` grants every scope a2ad
// checks, but it is no member of every group. Absent or empty lists: anyone who may answer
// interrupts at all (scope interrupts:resolve / tasks:write) may answer.
//
// Quorum (requiredApprovals N > 1): each answer is one principal's vote, accept or reject
// (refine and edit-accept cannot be combined from several approvers and are refused at load;
// ask stays a question and is no vote). The gate is accepted once N distinct principals
// accepted; rejected once the rejection policy says so: single-veto (default) at the first
// reject, majority once a majority of N rejected (N/2 + 1 rejects: 2 of 3, 2 of 2, 3 of 4),
// and in either case as soon as N accepts can no longer be reached because the gate names
// only an approversList (no groups or roles) and too few listed approvers are left to vote.
// A principal votes once: the same vote again changes nothing (answered 2xx with the current
// tally); another vote from it is refused (kConflict, reason vote_already_cast): a vote,
// once counted, is final, so a tally never goes backwards and the log reads as it was cast.
//
// Identity needs authentication: a quorum or restricted gate refuses answers from an
// unauthenticated principal (development mode, where every caller is `anonymous`: repeated
// anonymous votes would otherwise make a quorum of one person) and answers by interrupt token
// (a bearer credential names no approver), both kPermissionDenied. A gate with neither is
// answered as before: by anyone, once.
//
// Thread safety: plain values and pure functions.
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"

namespace a2ad::workflow {

struct ApprovalPolicy {
  int64_t required = 1;                // requiredApprovals
  bool majority = false;               // rejectionPolicy "majority" (else "single-veto")
  std::vector<std::string> approvers;  // approversList: principal ids
  std::vector<std::string> groups;     // approverGroupRefs: scopes group:<ref>
  std::vector<std::string> roles;      // approverRoleRefs: scopes role:<ref>

  bool Quorum() const { return required > 1; }
  bool Restricted() const { return !approvers.empty() || !groups.empty() || !roles.empty(); }
  /// The rejects that reject the gate: 1 (single-veto), N/2 + 1 (majority).
  int64_t RejectsToReject() const { return majority ? required / 2 + 1 : 1; }
  /// "single-veto" | "majority".
  std::string_view RejectionPolicyName() const { return majority ? "majority" : "single-veto"; }
};

/// Reads and checks the approval fields of `fields` (a core.approvalGate's config, or a
/// core.interrupt approval's data) found at `path` ("nodes[0].config"); `actions` are the
/// gate's actions. kInvalidParams with a `field` detail naming the member when:
///   requiredApprovals   is not an integer >= 1
///   rejectionPolicy     is not "single-veto" or "majority"
///   approversList, approverGroupRefs, approverRoleRefs   are not arrays of non-empty strings
///   audience            is not an object (it is passed through to clients, not honored)
///   overrideBypassesQuorum  is not a boolean; true is refused with reason
///                       capability_required (requiredCapability interrupt.quorum.override):
///                       a2ad has no override principals
///   requiredApprovals > 1 with refine or edit-accept among the actions
///   approversList alone names fewer approvers than requiredApprovals (never satisfiable)
core::Result<ApprovalPolicy> ParseApprovalPolicy(const boost::json::object& fields,
                                                 const std::string& path,
                                                 const boost::json::array& actions);

/// Whether principal `who` may answer the approval gate at `node_id` under `policy`;
/// `via` is how the answer came ("a2a", "rest", "token", "timeout"). nullopt: it may. Else
/// kPermissionDenied, nothing is written, with a `reason` detail:
///   approver_authentication_required  quorum or restricted gate, `who` not authenticated
///   approver_token_refused            quorum or restricted gate answered by interrupt token
///   not_an_approver                   restricted gate, `who` is in none of its lists
/// and the message names the gate's restriction. The engine's own timeout always may.
std::optional<core::Error> CheckApprover(const ApprovalPolicy& policy,
                                         const protocol::Principal& who, std::string_view via,
                                         const std::string& node_id);

/// One counted vote of a quorum gate.
struct Vote {
  std::string principal;
  std::string action;  // accept | reject
};

struct QuorumTally {
  enum class Outcome { kOpen, kAccepted, kRejected };
  int64_t accepts = 0;
  int64_t rejects = 0;
  Outcome outcome = Outcome::kOpen;
  /// Why it closed: "quorum" (accepted), "single-veto" / "majority" (rejected by the
  /// policy), "unreachable" (too few listed approvers left); "" while open.
  std::string reason;
};

/// The tally of `votes` (one per principal) under `policy`.
QuorumTally Tally(const ApprovalPolicy& policy, const std::vector<Vote>& votes);

/// What a vote does to the gate whose counted votes are `votes`.
struct CastResult {
  bool duplicate = false;  // the principal had cast this very vote: nothing changes
  QuorumTally tally;       // the tally with the vote counted (unchanged for a duplicate)
};

/// Counts `vote` (action accept or reject) against `votes`. Errors: kConflict with reason
/// vote_already_cast when the principal voted otherwise before (votes are final).
core::Result<CastResult> CastVote(const ApprovalPolicy& policy, const std::vector<Vote>& votes,
                                  const Vote& vote);

/// The counted votes of an open quorum interrupt as the run snapshot keeps them
/// (run.interrupt.quorum.votes: [{principal, action, ...}], tasks/run_projection.hpp).
std::vector<Vote> VotesOf(const boost::json::object& interrupt);

/// A sentence for people: the tally and what the gate still needs ("2 of 3 approvals, 0
/// rejections (rejection policy majority: 2 rejections reject); waiting for 1 more
/// approval").
std::string DescribeTally(const ApprovalPolicy& policy, const QuorumTally& tally);

/// A sentence naming who may answer a restricted gate ("approvers: k1, k2; groups: finance").
std::string DescribeApprovers(const ApprovalPolicy& policy);

}  // namespace a2ad::workflow
