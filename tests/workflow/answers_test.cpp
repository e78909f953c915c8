// Every field of every gate answer is checked (answers.hpp), through
// WorkflowExecutor::Resolve (the one door of A2A replies, REST resumeValues and interrupt
// tokens): a refusal names the JSON path inside the answer in its message and its `field`
// detail, is -32602 / validation_error, and changes nothing. Also the load-time rules for
// question schemas and core.interrupt data.
#include "a2ad/workflow/answers.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

#include "harness.hpp"

namespace a2ad::workflow {
namespace {
using namespace test_harness;  // NOLINT(google-build-using-namespace)

struct Refusal {
  const char* answer;
  const char* field;
};

// Each answer is refused at `field`, and the record and log are left as they were.
void ExpectRefused(Harness& h, const std::vector<Refusal>& rows) {
  const storage::TaskRecord before = h.rec;
  const size_t logged = h.log.size();
  for (const auto& row : rows) {
    SCOPED_TRACE(row.answer);
    auto r = h.Answer(json::parse(row.answer));
    ASSERT_FALSE(r.ok()) << "accepted";
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidParams);
    EXPECT_EQ(Detail(r.error(), "reason"), "validation_error");
    EXPECT_EQ(Detail(r.error(), "field"), row.field) << r.error().message;
    EXPECT_EQ(r.error().message.rfind(std::string(row.field) + ": ", 0), 0u) << r.error().message;
  }
  EXPECT_EQ(h.rec, before);
  EXPECT_EQ(h.log.size(), logged);
  EXPECT_EQ(h.Plan().kind, K::kParked);
}

std::shared_ptr<const Workflow> Gate(json::object config) {
  return OneNode(NodeDoc("gate", "core.approvalGate", std::move(config)));
}

// ---- approval ----------------------------------------------------------------------------------

// The issue's repro: a number is not an edited brief (the gate has no artifactData: an object).
TEST(ApprovalAnswers, EditedArtifactDataOfAnotherTypeIsRefusedAndNothingIsAppended) {
  Harness h(Gate(json::object{{"actions", AllActions()}}));
  h.Drive();
  ExpectRefused(
      h, {{R"({"action": "edit-accept", "editedArtifactData": 5})", "editedArtifactData"},
          {R"({"action": "edit-accept", "editedArtifactData": "text"})", "editedArtifactData"},
          {R"({"action": "edit-accept", "editedArtifactData": [1]})", "editedArtifactData"},
          {R"({"action": "edit-accept", "editedArtifactData": null})", "editedArtifactData"},
          {R"({"action": "edit-accept"})", "editedArtifactData"},
          // Checked whatever the action.
          {R"({"action": "accept", "editedArtifactData": 5})", "editedArtifactData"}});
  auto r = h.Answer(json::parse(R"({"action": "edit-accept", "editedArtifactData": {"v": 2}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.Status(), "completed");
}

TEST(ApprovalAnswers, EditedArtifactDataTakesTheTypeOfTheArtifactUnderReview) {
  struct Case {
    json::value artifact;
    const char* same;
    const char* other;
  };
  const std::vector<Case> cases = {
      {json::parse(R"({"a": 1})"), R"({"b": 2})", R"([1])"},
      {json::parse(R"([1, 2])"), R"([3])", R"({"a": 1})"},
      {json::value("draft"), R"("edited")", R"({"text": "edited"})"},
      {json::value(3), "4.5", R"("4")"},
      {json::value(true), "false", "1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(json::serialize(c.artifact));
    Harness h(Gate(json::object{{"actions", AllActions()}, {"artifactData", c.artifact}}));
    h.Drive();
    ExpectRefused(
        h, {{(std::string(R"({"action": "edit-accept", "editedArtifactData": )") + c.other + "}")
                 .c_str(),
             "editedArtifactData"}});
    auto r = h.Answer(json::parse(
        std::string(R"({"action": "edit-accept", "editedArtifactData": )") + c.same + "}"));
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
}

TEST(ApprovalAnswers, EveryMemberIsTyped) {
  Harness h(Gate(json::object{{"actions", AllActions()}}));
  h.Drive();
  ExpectRefused(h, {
                       {R"({"action": 1})", "action"},
                       {R"({"action": ["accept"]})", "action"},
                       {R"({"action": "accept", "feedback": 3})", "feedback"},
                       {R"({"action": "accept", "comment": {}})", "comment"},
                       {R"({"action": "ask", "question": ["which?"]})", "question"},
                       {R"({"approve": "yes"})", "approve"},
                       {R"({"approve": 1})", "approve"},
                       {R"({"decision": true})", "decision"},
                       {R"({"decision": "maybe"})", "decision"},
                       {R"({"action": "accept", "decidedBy": 7})", "decidedBy"},
                       {R"({"action": "accept", "decidedAt": 1767225600})", "decidedAt"},
                       {R"({"voter": "ann"})", "action"},
                       {R"({})", "action"},
                       {R"(17)", "(root)"},
                       {R"([{"action": "accept"}])", "(root)"},
                       {R"(null)", "(root)"},
                       {R"("maybe")", "(root)"},
                   });
}

TEST(ApprovalAnswers, RefineFeedbackFollowsItsSchema) {
  Harness h(Gate(json::object{{"actions", AllActions()}}));
  h.Drive();
  ExpectRefused(
      h,
      {
          {R"({"action": "refine", "refineFeedback": "shorter"})", "refineFeedback"},
          {R"({"action": "refine", "refineFeedback": {}})", "refineFeedback.scope"},
          {R"({"action": "refine", "refineFeedback": {"text": "x"}})", "refineFeedback.scope"},
          {R"({"action": "refine", "refineFeedback": {"scope": 1}})", "refineFeedback.scope"},
          {R"({"action": "refine", "refineFeedback": {"scope": "chapter"}})",
           "refineFeedback.scope"},
          {R"({"action": "refine", "refineFeedback": {"scope": "section",
                            "sectionPath": ["intro"]}})",
           "refineFeedback.sectionPath"},
          {R"({"action": "refine", "refineFeedback": {"scope": "whole", "text": 2}})",
           "refineFeedback.text"},
          {R"({"action": "refine", "refineFeedback": {"scope": "items",
                            "itemIds": "a,b"}})",
           "refineFeedback.itemIds"},
          {R"({"action": "refine", "refineFeedback": {"scope": "items",
                            "itemIds": ["a", 2]}})",
           "refineFeedback.itemIds[1]"},
          {R"({"action": "refine", "refineFeedback": {"scope": "whole",
                            "tags": [null]}})",
           "refineFeedback.tags[0]"},
          // Checked whatever the action.
          {R"({"action": "accept", "refineFeedback": {"scope": "all"}})", "refineFeedback.scope"},
          {R"({"action": "refine"})", "refineFeedback"},
          {R"({"action": "refine", "feedback": ""})", "refineFeedback"},
      });
  // Extra members of refineFeedback (and of the answer) are tolerated and kept.
  auto r = h.Answer(json::parse(R"({"action": "refine", "voter": "ann", "refineFeedback":
      {"scope": "items", "itemIds": ["a"], "tags": ["tone"], "text": "warmer", "priority": 1}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json::object& out = ObjAt(h.NodeState("gate"), "outputs");
  EXPECT_EQ(StrOf(out, "action"), "refine");
  EXPECT_EQ(json::value(ObjAt(out, "refineFeedback")),
            json::parse(R"({"scope": "items", "itemIds": ["a"], "tags": ["tone"],
                            "text": "warmer", "priority": 1})"));
}

TEST(ApprovalAnswers, TheActionMustBeOffered) {
  Harness h(Gate(json::object{{"actions", json::array{"accept", "refine"}}}));
  h.Drive();
  ExpectRefused(h, {{R"({"action": "reject"})", "action"},
                    {R"({"action": "Accept"})", "action"},
                    {R"({"approve": false})", "approve"},
                    {R"({"decision": "rejected"})", "decision"},
                    {R"("no")", "(root)"}});
  EXPECT_TRUE(h.Answer(json::parse(R"({"decision": "rejected", "feedback": "again"})")).ok());
}

TEST(ApprovalAnswers, ExtraMembersAreTolerated) {
  Harness h(Gate(json::object{{"actions", AllActions()}}));
  h.Drive();
  auto r = h.Answer(json::parse(
      R"({"action": "accept", "voter": "ann", "comment": "fine", "feedback": "ok", "n": [1]})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  const json::object& out = ObjAt(h.NodeState("gate"), "outputs");
  EXPECT_EQ(StrOf(out, "action"), "accept");
  EXPECT_EQ(StrOf(out, "feedback"), "ok");
  EXPECT_EQ(StrOf(out, "decidedBy"), "alice");  // the caller, not the answer
}

TEST(ApprovalAnswers, CoreInterruptApprovalIsCheckedAgainstItsData) {
  Harness h(OneNode(
      NodeDoc("i", "core.interrupt",
              json::object{{"kind", "approval"},
                           {"data", json::object{{"actions", json::array{"accept", "edit-accept"}},
                                                 {"artifactData", json::array{"line 1"}}}}})));
  h.Drive();
  ExpectRefused(
      h, {{R"({"action": "edit-accept", "editedArtifactData": {"a": 1}})", "editedArtifactData"},
          {R"({"action": "reject"})", "action"}});
  EXPECT_TRUE(
      h.Answer(json::parse(R"({"action": "edit-accept", "editedArtifactData": ["line 2"]})")).ok());
  EXPECT_EQ(h.Status(), "completed");
}

// ---- clarification -----------------------------------------------------------------------------

std::shared_ptr<const Workflow> Questions(const char* questions) {
  return OneNode(NodeDoc("ask", "core.clarificationGate",
                         json::object{{"questions", json::parse(questions)}}));
}

const char* const kTwoQuestions = R"([
  {"id": "q1", "question": "How many?", "schema": {"type": "integer", "minimum": 1}},
  {"id": "q2", "question": "Who?", "schema": {"type": "object", "required": ["email"],
     "properties": {"email": {"type": "string", "pattern": "^[^@]+@[^@]+$"}},
     "additionalProperties": false}},
  {"id": "q3", "question": "Anything else?"}])";

TEST(ClarificationAnswers, ShapesUnknownAndMissingQuestions) {
  Harness h(Questions(kTwoQuestions));
  h.Drive();
  ExpectRefused(h, {
                       {R"({"answers": "3"})", "answers"},
                       {R"({"answers": null})", "answers"},
                       {R"({"q1": 3})", "answers"},
                       {R"(3)", "(root)"},
                       {R"("three")", "(root)"},  // plain text answers one question only
                       {R"({"answers": {"q1": 3, "q2": {"email": "a@b"}}})", "answers.q3"},
                       {R"({"answers": {}})", "answers.q1"},
                       {R"({"answers": {"q1": 3, "q2": {"email": "a@b"}, "q3": "",
                            "q9": "?"}})",
                        "answers.q9"},
                       {R"({"answers": [1]})", "answers[0]"},
                       {R"({"answers": [{"answer": 3}]})", "answers[0].id"},
                       {R"({"answers": [{"id": 1, "answer": 3}]})", "answers[0].id"},
                       {R"({"answers": [{"id": "q9", "answer": 3}]})", "answers[0].id"},
                       {R"({"answers": [{"id": "q1"}]})", "answers[0].answer"},
                       {R"({"answers": [{"id": "q1", "answer": 3}, {"id": "q1", "answer": 4}]})",
                        "answers[1].id"},
                   });
  auto missing = h.Resolve(json::parse(R"({"answers": {"q2": {"email": "a@b"}}})"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("q1, q3"), std::string::npos) << missing.error().message;
}

TEST(ClarificationAnswers, EachAnswerFollowsItsQuestionsSchema) {
  Harness h(Questions(kTwoQuestions));
  h.Drive();
  ExpectRefused(
      h,
      {
          {R"({"answers": {"q1": "3", "q2": {"email": "a@b"}, "q3": ""}})", "answers.q1"},
          {R"({"answers": {"q1": 0, "q2": {"email": "a@b"}, "q3": ""}})", "answers.q1"},
          {R"({"answers": {"q1": 2.5, "q2": {"email": "a@b"}, "q3": ""}})", "answers.q1"},
          {R"({"answers": {"q1": 2, "q2": {}, "q3": ""}})", "answers.q2.email"},
          {R"({"answers": {"q1": 2, "q2": {"email": "nobody"}, "q3": ""}})", "answers.q2.email"},
          {R"({"answers": {"q1": 2, "q2": {"email": "a@b", "x": 1}, "q3": ""}})", "answers.q2.x"},
          {R"({"answers": [{"id": "q1", "answer": 2}, {"id": "q3", "answer": 1},
                            {"id": "q2", "answer": {"email": 5}}]})",
           "answers[2].answer.email"},
      });
  auto r = h.Answer(json::parse(
      R"({"answers": [{"id": "q1", "answer": 2}, {"id": "q2", "answer": {"email": "a@b"}},
                      {"id": "q3", "answer": {"free": ["form"]}}]})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(ObjAt(ObjAt(h.NodeState("ask"), "outputs"), "answers").at("q1"), 2);
}

TEST(ClarificationAnswers, PlainTextIsCheckedAgainstTheOneQuestionsSchema) {
  Harness h(Questions(R"([{"id": "color", "question": "Which colour?",
                           "schema": {"enum": ["red", "blue"]}}])"));
  h.Drive();
  ExpectRefused(
      h, {{R"("green")", "(root)"}, {R"({"answers": {"color": "green"}})", "answers.color"}});
  ASSERT_TRUE(h.Answer("blue").ok());
  EXPECT_EQ(h.Status(), "completed");
}

// ---- load time ---------------------------------------------------------------------------------

core::Error LoadRefusal(const json::object& doc) {
  auto w = ParseWorkflow(doc);
  if (w.ok()) {
    ADD_FAILURE() << "accepted: " << json::serialize(doc);
    return core::Error();
  }
  return w.error();
}

TEST(AnswerRulesAtLoad, AQuestionSchemaWithAnUnsupportedKeywordNamesNodeAndKeyword) {
  auto e = LoadRefusal(Doc(
      json::array{NodeDoc("start", "core.noop"),
                  NodeDoc("ask", "core.clarificationGate",
                          json::object{{"questions", json::parse(R"([{"id": "q1", "question": "?"},
                  {"id": "q2", "question": "?", "schema": {"type": "object",
                   "properties": {"when": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}}])")}})}));
  EXPECT_EQ(e.code, ErrorCode::kInvalidParams);
  EXPECT_EQ(Detail(e, "field"), "nodes[1].config.questions[1].schema.properties.when.anyOf");
  EXPECT_EQ(Detail(e, "nodeId"), "ask");
  EXPECT_EQ(Detail(e, "keyword"), "anyOf");
  EXPECT_NE(e.message.find("'anyOf'"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("node 'ask'"), std::string::npos) << e.message;
  EXPECT_EQ(e.message.rfind(Detail(e, "field"), 0), 0u) << e.message;
}

TEST(AnswerRulesAtLoad, QuestionsAndInterruptDataAreChecked) {
  struct Row {
    json::object node;
    std::string field;
  };
  auto clarify = [](const char* questions) {
    return NodeDoc("ask", "core.clarificationGate",
                   json::object{{"questions", json::parse(questions)}});
  };
  const std::vector<Row> rows = {
      {clarify(R"([{"id": "q", "question": "?"}, {"id": "q", "question": "again?"}])"),
       "nodes[0].config.questions[1].id"},
      {clarify(R"([{"id": "", "question": "?"}])"), "nodes[0].config.questions[0].id"},
      {clarify(R"([{"id": "q", "question": "?", "schema": "string"}])"),
       "nodes[0].config.questions[0].schema"},
      {clarify(R"([{"id": "q", "question": "?", "schema": {"uniqueItems": true}}])"),
       "nodes[0].config.questions[0].schema.uniqueItems"},
      {NodeDoc("i", "core.interrupt", json::object{{"kind", "clarification"}}),
       "nodes[0].config.data.questions"},
      {NodeDoc("i", "core.interrupt",
               json::object{{"kind", "clarification"},
                            {"data", json::parse(R"({"questions": [{"id": "q", "question": "?",
                                "schema": {"$ref": "#/x"}}]})")}}),
       "nodes[0].config.data.questions[0].schema.$ref"},
      {NodeDoc("i", "core.interrupt", json::object{{"kind", "approval"}, {"data", 5}}),
       "nodes[0].config.data"},
      {NodeDoc("i", "core.interrupt",
               json::object{{"kind", "approval"},
                            {"data", json::object{{"actions", json::array{"launch"}}}}}),
       "nodes[0].config.data.actions"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.field);
    auto e = LoadRefusal(Doc(json::array{row.node}));
    EXPECT_EQ(Detail(e, "field"), row.field) << e.message;
    EXPECT_EQ(e.message.rfind(row.field, 0), 0u) << e.message;
  }
  // Annotations and the supported keywords load.
  EXPECT_TRUE(ParseWorkflow(Doc(json::array{clarify(
                                R"([{"id": "q", "question": "?", "schema": {"title": "Q",
                                    "description": "d", "format": "date", "type": "string",
                                    "examples": ["2026-01-01"], "maxLength": 10}}])")}))
                  .ok());
}

}  // namespace
}  // namespace a2ad::workflow
