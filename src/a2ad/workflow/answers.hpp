#pragma once
// The answers of approval and clarification interrupts (DIGEST §4.3, §4.4), checked member
// by member before anything is committed, whichever way they arrive (A2A reply, REST
// resumeValue, interrupt token: all go through WorkflowExecutor::Resolve). A refusal is
// kInvalidParams with reason=validation_error and a `field` detail naming the JSON path of
// the offending member inside the answer ("editedArtifactData", "refineFeedback.scope",
// "answers.q1", "(root)" for the answer as a whole); the message starts with that path.
// Also the load-time rules of what those answers are checked against (questions, actions).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>

#include "a2ad/core/result.hpp"

namespace a2ad::workflow {

/// A checked approval answer.
struct ApprovalAnswer {
  std::string action;                                      // one of the interrupt's actions
  std::optional<boost::json::value> feedback;              // a string
  std::optional<boost::json::object> refine_feedback;      // set for refine
  std::optional<boost::json::value> edited_artifact_data;  // set for edit-accept
  boost::json::value question;                             // for ask: what was asked
};

/// Checks `answer` against the open approval interrupt's `data` (its actions, its artifactData)
/// at node `node_id`. Accepted shapes: {action, feedback?, comment?, question?,
/// refineFeedback?, editedArtifactData?} (extra members such as `voter` are tolerated), the
/// seed's {approve: bool}, the legacy {decision: "approved" | "rejected", feedback?}, and one
/// word of text (accept, approve, yes, reject, no, ask). Rules:
///   action               a string among the interrupt's actions
///   feedback, comment, question, decidedBy, decidedAt   strings
///   approve              a boolean;  decision  a string ("approved" | "rejected" when it is
///                        what names the action)
///   refineFeedback       an object {scope: whole|section|items (required), sectionPath?:
///                        string, itemIds?: [string], tags?: [string], text?: string, ...};
///                        refine needs it or a non-empty feedback string
///   editedArtifactData   required for edit-accept; of the JSON type of the artifact under
///                        review (data.artifactData; an object when there is none)
/// Every member present is checked, whatever the action.
core::Result<ApprovalAnswer> CheckApprovalAnswer(const boost::json::value& answer,
                                                 const boost::json::object& data,
                                                 const std::string& node_id);

/// Checks `answer` against the open clarification interrupt's data.questions and returns the
/// answers by question id. Accepted shapes: {answers: {id: value}}, {answers: [{id, answer}]}
/// (string ids, each once) and, for one question, plain text. Every question must be
/// answered, no unknown id may be, and each answer must satisfy its question's `schema`
/// (answer_schema.hpp); the field of a violation is the path inside the answer
/// ("answers.q1.email", "answers[0].answer").
core::Result<boost::json::object> CheckClarificationAnswer(const boost::json::value& answer,
                                                           const boost::json::object& data,
                                                           const std::string& node_id);

/// Load time: `questions` (at `path`, of node `node_id`) is a non-empty array of {id,
/// question, schema?} with distinct non-empty string ids and schemas CheckAnswerSchema
/// accepts. kInvalidParams with a `field` detail (and nodeId, plus keyword for a schema).
core::Result<void> CheckQuestions(const boost::json::value* questions, const std::string& path,
                                  const std::string& node_id);

/// Load time: `actions` (at `path`), when present, is a non-empty array of accept, reject,
/// refine, edit-accept, ask.
core::Result<void> CheckActions(const boost::json::value* actions, const std::string& path);

}  // namespace a2ad::workflow
