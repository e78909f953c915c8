#include "a2ad/workflow/answers.hpp"

#include <algorithm>
#include <boost/json/array.hpp>
#include <cctype>
#include <set>
#include <vector>

#include "a2ad/protocol/json_text.hpp"
#include "a2ad/workflow/answer_schema.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

// An answer refused at `field` (a path inside the answer).
Error Refuse(const std::string& field, const std::string& why) {
  return Error(ErrorCode::kInvalidParams, field + ": " + why,
               {{"field", field}, {"reason", "validation_error"}});
}

// A definition refused at `field` (load time).
Error Bad(const std::string& field, const std::string& why) {
  return Error(ErrorCode::kInvalidParams, field + ": " + why, {{"field", field}});
}

// The JSON type of a value, as JSON Schema names it (every number is a "number").
std::string_view JsonType(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object:
      return "object";
    case json::kind::array:
      return "array";
    case json::kind::string:
      return "string";
    case json::kind::bool_:
      return "boolean";
    case json::kind::null:
      return "null";
    default:
      return "number";
  }
}

std::string WithArticle(std::string_view type) {
  if (type == "null") return "null";
  return (type == "object" || type == "array" ? "an " : "a ") + std::string(type);
}

std::string Got(const json::value& v) { return "got " + WithArticle(JsonType(v)); }

std::string AsText(const json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : protocol::SerializeJson(v);
}

std::string Join(const json::array& items) {
  std::string out;
  for (const auto& x : items) out += (out.empty() ? "" : ", ") + AsText(x);
  return out;
}

std::optional<Error> ExpectString(const json::object& in, std::string_view key,
                                  const std::string& base = "") {
  const json::value* v = in.if_contains(key);
  if (!v || v->is_string()) return std::nullopt;
  return Refuse(MemberPath(base, key), "expected a string, " + Got(*v));
}

std::optional<Error> ExpectStrings(const json::object& in, std::string_view key,
                                   const std::string& base) {
  const json::value* v = in.if_contains(key);
  if (!v) return std::nullopt;
  const std::string path = MemberPath(base, key);
  if (!v->is_array()) return Refuse(path, "expected an array of strings, " + Got(*v));
  const json::array& a = v->get_array();
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].is_string()) return Refuse(IndexPath(path, i), "expected a string, " + Got(a[i]));
  return std::nullopt;
}

// RefineFeedback (run-event-payloads.schema.json approvalReceived.refineFeedback).
std::optional<Error> CheckRefineFeedback(const json::value& v) {
  const std::string base = "refineFeedback";
  if (!v.is_object())
    return Refuse(base,
                  "expected an object {scope, sectionPath?, itemIds?, tags?, text?}, " + Got(v));
  const json::object& rf = v.get_object();
  const json::value* scope = rf.if_contains("scope");
  if (!scope) return Refuse(base + ".scope", "required: whole, section or items");
  if (!scope->is_string()) return Refuse(base + ".scope", "expected a string, " + Got(*scope));
  const std::string_view s = scope->get_string();
  if (s != "whole" && s != "section" && s != "items")
    return Refuse(base + ".scope", "'" + std::string(s) + "' is not one of whole, section, items");
  for (const char* key : {"sectionPath", "text"})
    if (auto bad = ExpectString(rf, key, base)) return bad;
  for (const char* key : {"itemIds", "tags"})
    if (auto bad = ExpectStrings(rf, key, base)) return bad;
  return std::nullopt;
}

// One word of a plain-text approval reply, as an action ("" when it names none).
std::string ActionOfWord(std::string t) {
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  while (!t.empty() &&
         (t.back() == '.' || t.back() == '!' || std::isspace(static_cast<unsigned char>(t.back()))))
    t.pop_back();
  if (t == "accept" || t == "approve" || t == "approved" || t == "yes") return "accept";
  if (t == "reject" || t == "rejected" || t == "no") return "reject";
  if (t == "ask") return "ask";
  return "";
}

}  // namespace

core::Result<ApprovalAnswer> CheckApprovalAnswer(const json::value& answer,
                                                 const json::object& data,
                                                 const std::string& node_id) {
  const json::array actions = data.contains("actions") && data.at("actions").is_array()
                                  ? data.at("actions").get_array()
                                  : json::array{"accept", "reject"};
  const std::string offered =
      "send {\"action\": one of " + Join(actions) + "} (or {\"approve\": true|false})";
  json::object in;
  std::string action_field = "action";  // the member that named the action
  if (answer.is_object()) {
    in = answer.get_object();
  } else if (answer.is_string()) {
    action_field = "(root)";
    const std::string word = ActionOfWord(std::string(answer.get_string()));
    if (word.empty())
      return Refuse(action_field, "'" + std::string(answer.get_string()) +
                                      "' names no action at approval node '" + node_id + "'; " +
                                      offered);
    in["action"] = word;
  } else {
    return Refuse("(root)", "an answer to approval node '" + node_id +
                                "' is an object {\"action\": ...} or one word naming the action, " +
                                Got(answer));
  }

  // Every member present is typed, whatever the action.
  for (const char* key :
       {"action", "decision", "feedback", "comment", "question", "decidedBy", "decidedAt"})
    if (auto bad = ExpectString(in, key)) return std::move(*bad);
  if (const json::value* a = in.if_contains("approve"); a && !a->is_bool())
    return Refuse("approve", "expected a boolean (true accepts, false rejects), " + Got(*a));
  if (const json::value* rf = in.if_contains("refineFeedback"))
    if (auto bad = CheckRefineFeedback(*rf)) return std::move(*bad);
  const json::value* artifact = data.if_contains("artifactData");
  const std::string_view artifact_type = artifact ? JsonType(*artifact) : "object";
  if (const json::value* edited = in.if_contains("editedArtifactData");
      edited && JsonType(*edited) != artifact_type)
    return Refuse("editedArtifactData", "expected " + WithArticle(artifact_type) +
                                            " (the type of the artifact under review), " +
                                            Got(*edited));

  // Accepted spellings of the action: {action}, the seed's {approve: bool}, legacy {decision}.
  const json::value* feedback = in.if_contains("feedback");
  const bool has_feedback = feedback && !feedback->get_string().empty();
  if (!in.contains("action")) {
    if (const json::value* a = in.if_contains("approve")) {
      in["action"] = a->get_bool() ? "accept" : "reject";
      action_field = "approve";
    } else if (const json::value* d = in.if_contains("decision")) {
      const std::string_view dec = d->get_string();
      if (dec == "approved")
        in["action"] = "accept";
      else if (dec == "rejected")
        in["action"] = has_feedback ? "refine" : "reject";
      else
        return Refuse("decision", "'" + std::string(dec) +
                                      "' is not a decision: approved or rejected; or " + offered);
      action_field = "decision";
    }
    // Adding "action" may have rehashed `in`: the old pointer into it dangles (ASan).
    feedback = in.if_contains("feedback");
  }
  ApprovalAnswer out;
  if (!in.contains("action"))
    return Refuse("action", "required: the answer to approval node '" + node_id +
                                "' names no action; " + offered);
  out.action = in.at("action").get_string();
  if (std::find(actions.begin(), actions.end(), json::value(out.action)) == actions.end())
    return Refuse(action_field, "'" + out.action + "' is not offered at approval node '" + node_id +
                                    "'; " + offered);
  if (feedback) out.feedback = *feedback;
  if (out.action == "refine") {
    if (const json::value* rf = in.if_contains("refineFeedback"))
      out.refine_feedback = rf->get_object();
    else if (has_feedback)
      out.refine_feedback = json::object{{"scope", "whole"}, {"text", *feedback}};
    else
      return Refuse("refineFeedback",
                    "required for refine: {\"scope\": \"whole\"|\"section\"|\"items\", \"text\": "
                    "...} (or a non-empty feedback string)");
  }
  if (out.action == "edit-accept") {
    const json::value* edited = in.if_contains("editedArtifactData");
    if (!edited)
      return Refuse("editedArtifactData",
                    "required for edit-accept (the approved, edited artifact: " +
                        WithArticle(artifact_type) + ")");
    out.edited_artifact_data = *edited;
  }
  if (out.action == "ask")
    out.question = in.contains("question") ? in.at("question")
                   : feedback              ? *feedback
                                           : json::value(AsText(answer));
  return out;
}

core::Result<json::object> CheckClarificationAnswer(const json::value& answer,
                                                    const json::object& data,
                                                    const std::string& node_id) {
  const json::value* qs = data.if_contains("questions");
  const json::array no_questions;
  const json::array& questions = qs && qs->is_array() ? qs->get_array() : no_questions;
  auto question = [&](std::string_view id) -> const json::object* {
    for (const auto& q : questions)
      if (q.is_object() && q.get_object().if_contains("id") &&
          q.get_object().at("id") == json::value(id))
        return &q.get_object();
    return nullptr;
  };
  std::string ids;
  for (const auto& q : questions)
    if (q.is_object() && q.get_object().contains("id"))
      ids += (ids.empty() ? "" : ", ") + AsText(q.get_object().at("id"));
  const std::string unknown_why =
      "node '" + node_id + "' asks no such question (its questions: " + ids + ")";

  json::object answers;
  std::vector<std::pair<std::string, std::string>> paths;  // question id -> answer's path
  if (answer.is_string()) {
    if (questions.size() != 1)
      return Refuse("(root)", "node '" + node_id + "' asks " + std::to_string(questions.size()) +
                                  " questions; answer with {\"answers\": {\"<id>\": ...}}");
    const std::string id = AsText(questions[0].get_object().at("id"));
    answers[id] = answer;
    paths.emplace_back(id, "(root)");
  } else if (!answer.is_object()) {
    return Refuse("(root)", "a clarification answer is {\"answers\": {\"<questionId>\": ...}}, " +
                                Got(answer));
  } else if (const json::value* a = answer.get_object().if_contains("answers"); !a) {
    return Refuse("answers",
                  "required: a clarification answer is {\"answers\": "
                  "{\"<questionId>\": ...}} (questions of node '" +
                      node_id + "': " + ids + ")");
  } else if (a->is_object()) {
    for (const auto& kv : a->get_object()) {
      const std::string path = MemberPath("answers", kv.key());
      if (!question(kv.key())) return Refuse(path, unknown_why);
      answers[kv.key()] = kv.value();
      paths.emplace_back(kv.key(), path);
    }
  } else if (a->is_array()) {  // the spec's [{id, answer}] form
    const json::array& list = a->get_array();
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = IndexPath("answers", i);
      if (!list[i].is_object()) return Refuse(path, "expected {id, answer}, " + Got(list[i]));
      const json::object& item = list[i].get_object();
      const json::value* id = item.if_contains("id");
      if (!id) return Refuse(path + ".id", "required");
      if (!id->is_string()) return Refuse(path + ".id", "expected a string, " + Got(*id));
      if (!question(id->get_string())) return Refuse(path + ".id", unknown_why);
      if (answers.contains(id->get_string()))
        return Refuse(path + ".id",
                      "question '" + std::string(id->get_string()) + "' is answered twice");
      if (!item.contains("answer")) return Refuse(path + ".answer", "required");
      answers[id->get_string()] = item.at("answer");
      paths.emplace_back(id->get_string(), path + ".answer");
    }
  } else {
    return Refuse("answers",
                  "expected an object {\"<questionId>\": answer} or a list [{\"id\": "
                  "..., \"answer\": ...}], " +
                      Got(*a));
  }

  std::string missing, first_missing;
  for (const auto& q : questions) {
    const std::string id = AsText(q.get_object().at("id"));
    if (answers.contains(id)) continue;
    if (first_missing.empty()) first_missing = id;
    missing += (missing.empty() ? "" : ", ") + id;
  }
  if (!missing.empty())
    return Refuse(MemberPath("answers", first_missing),
                  "required: unanswered question(s) at node '" + node_id + "': " + missing);
  for (const auto& q : questions) {
    const json::value* schema = q.get_object().if_contains("schema");
    if (!schema) continue;
    const std::string id = AsText(q.get_object().at("id"));
    auto at =
        std::find_if(paths.begin(), paths.end(), [&](const auto& p) { return p.first == id; });
    if (auto issue = ValidateAnswer(*schema, answers.at(id), at->second))
      return Refuse(issue->path, issue->message + " (the schema of question '" + id + "')");
  }
  return answers;
}

core::Result<void> CheckQuestions(const json::value* questions, const std::string& path,
                                  const std::string& node_id) {
  if (!questions || !questions->is_array() || questions->get_array().empty())
    return Bad(path, "expected a non-empty array of {id, question}");
  std::set<std::string, std::less<>> ids;
  const json::array& list = questions->get_array();
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string qp = IndexPath(path, k);
    if (!list[k].is_object()) return Bad(qp, "expected {id, question, schema?}");
    const json::object& q = list[k].get_object();
    for (const char* key : {"id", "question"}) {
      const json::value* v = q.if_contains(key);
      if (!v) return Bad(MemberPath(qp, key), "required");
      if (!v->is_string()) return Bad(MemberPath(qp, key), "expected a string");
      if (v->get_string().empty()) return Bad(MemberPath(qp, key), "must not be empty");
    }
    if (!ids.insert(std::string(q.at("id").get_string())).second)
      return Bad(qp + ".id",
                 "duplicate question id '" + std::string(q.at("id").get_string()) + "'");
    if (const json::value* schema = q.if_contains("schema"))
      if (auto issue = CheckAnswerSchema(*schema, qp + ".schema"))
        return Error(ErrorCode::kInvalidParams,
                     issue->path + ": " + issue->message + " (node '" + node_id + "')",
                     {{"field", issue->path}, {"nodeId", node_id}, {"keyword", issue->keyword}});
  }
  return core::Ok{};
}

core::Result<void> CheckActions(const json::value* actions, const std::string& path) {
  if (!actions) return core::Ok{};
  if (!actions->is_array() || actions->get_array().empty())
    return Bad(path, "expected a non-empty array of actions");
  static const std::set<std::string, std::less<>> kActions = {"accept", "reject", "refine",
                                                              "edit-accept", "ask"};
  for (const auto& act : actions->get_array())
    if (!act.is_string() || !kActions.count(std::string_view(act.get_string())))
      return Bad(path, "each action must be one of accept, reject, refine, edit-accept, ask");
  return core::Ok{};
}

}  // namespace a2ad::workflow
