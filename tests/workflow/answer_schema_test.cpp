// The answer-schema subset (answer_schema.hpp), table-driven: each row is a schema, a value,
// and the expected outcome (valid, or the path and keyword of the first violation); then the
// load-time check of the schemas themselves.
#include "a2ad/workflow/answer_schema.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>
#include <vector>

namespace a2ad::workflow {
namespace {
namespace json = boost::json;

struct Row {
  const char* schema;
  const char* value;
  const char* path;     // "" : valid
  const char* keyword;  // of the violation
};

void Expect(const std::vector<Row>& rows) {
  for (const auto& row : rows) {
    SCOPED_TRACE(std::string("schema ") + row.schema + " value " + row.value);
    const json::value schema = json::parse(row.schema);
    ASSERT_FALSE(CheckAnswerSchema(schema, "s")) << "the schema itself is refused";
    auto issue = ValidateAnswer(schema, json::parse(row.value), "answers.q1");
    if (std::string(row.path).empty()) {
      EXPECT_FALSE(issue) << issue->path << ": " << issue->message;
      continue;
    }
    ASSERT_TRUE(issue) << "accepted";
    EXPECT_EQ(issue->path, row.path) << issue->message;
    EXPECT_EQ(issue->keyword, row.keyword) << issue->message;
    EXPECT_FALSE(issue->message.empty());
  }
}

TEST(AnswerSchema, Types) {
  Expect({
      {R"({"type": "string"})", R"("x")", "", ""},
      {R"({"type": "string"})", "5", "answers.q1", "type"},
      {R"({"type": "integer"})", "5", "", ""},
      {R"({"type": "integer"})", "5.0", "", ""},
      {R"({"type": "integer"})", "5.5", "answers.q1", "type"},
      {R"({"type": "integer"})", "18446744073709551615", "", ""},
      {R"({"type": "number"})", "5", "", ""},
      {R"({"type": "number"})", "-0.25", "", ""},
      {R"({"type": "number"})", R"("5")", "answers.q1", "type"},
      {R"({"type": "boolean"})", "false", "", ""},
      {R"({"type": "boolean"})", "0", "answers.q1", "type"},
      {R"({"type": "null"})", "null", "", ""},
      {R"({"type": "null"})", "false", "answers.q1", "type"},
      {R"({"type": "object"})", "{}", "", ""},
      {R"({"type": "object"})", "[]", "answers.q1", "type"},
      {R"({"type": "array"})", "[]", "", ""},
      {R"({"type": "array"})", "{}", "answers.q1", "type"},
      {R"({"type": ["string", "null"]})", "null", "", ""},
      {R"({"type": ["string", "null"]})", R"("a")", "", ""},
      {R"({"type": ["string", "null"]})", "1", "answers.q1", "type"},
      {"true", "1", "", ""},
      {"false", "1", "answers.q1", "false"},
      {"{}", R"({"anything": [1]})", "", ""},
  });
}

TEST(AnswerSchema, EnumAndConst) {
  Expect({
      {R"({"enum": ["red", "green"]})", R"("red")", "", ""},
      {R"({"enum": ["red", "green"]})", R"("blue")", "answers.q1", "enum"},
      {R"({"enum": [1, null, {"a": [1]}]})", "1.0", "", ""},
      {R"({"enum": [1, null, {"a": [1]}]})", R"({"a": [1.0]})", "", ""},
      {R"({"enum": [1, null, {"a": [1]}]})", R"({"a": [1], "b": 2})", "answers.q1", "enum"},
      {R"({"enum": [1, null]})", R"("1")", "answers.q1", "enum"},
      {R"({"const": "yes"})", R"("yes")", "", ""},
      {R"({"const": "yes"})", R"("no")", "answers.q1", "const"},
      {R"({"const": [1, 2]})", "[1, 2]", "", ""},
      {R"({"const": [1, 2]})", "[2, 1]", "answers.q1", "const"},
  });
}

TEST(AnswerSchema, Strings) {
  Expect({
      {R"({"minLength": 2})", R"("ab")", "", ""},
      {R"({"minLength": 2})", R"("a")", "answers.q1", "minLength"},
      {R"({"maxLength": 2})", R"("ab")", "", ""},
      {R"({"maxLength": 2})", R"("abc")", "answers.q1", "maxLength"},
      // Code points, not bytes: two characters of two and four bytes.
      {R"({"maxLength": 2})", R"("é😀")", "", ""},
      {R"({"minLength": 3})", R"("é😀")", "answers.q1", "minLength"},
      {R"({"minLength": 2})", "5", "", ""},  // not a string: does not apply
      {R"({"pattern": "^[a-z]+@[a-z]+\\.[a-z]{2,}$"})", R"("ann@example.org")", "", ""},
      {R"({"pattern": "^[a-z]+@[a-z]+\\.[a-z]{2,}$"})", R"("ann@example")", "answers.q1",
       "pattern"},
      {R"({"pattern": "b"})", R"("abc")", "", ""},  // unanchored
      {R"({"pattern": "^b"})", R"("abc")", "answers.q1", "pattern"},
  });
}

TEST(AnswerSchema, Numbers) {
  Expect({
      {R"({"minimum": 1})", "1", "", ""},
      {R"({"minimum": 1})", "0.999", "answers.q1", "minimum"},
      {R"({"maximum": 10})", "10", "", ""},
      {R"({"maximum": 10})", "10.5", "answers.q1", "maximum"},
      {R"({"exclusiveMinimum": 0})", "0.001", "", ""},
      {R"({"exclusiveMinimum": 0})", "0", "answers.q1", "exclusiveMinimum"},
      {R"({"exclusiveMaximum": 1})", "0.5", "", ""},
      {R"({"exclusiveMaximum": 1})", "1", "answers.q1", "exclusiveMaximum"},
      {R"({"minimum": -1})", "18446744073709551615", "", ""},
      {R"({"maximum": 9223372036854775807})", "9223372036854775808", "answers.q1", "maximum"},
      {R"({"minimum": 0})", "-9223372036854775808", "answers.q1", "minimum"},
      {R"({"multipleOf": 5})", "15", "", ""},
      {R"({"multipleOf": 5})", "-15", "", ""},
      {R"({"multipleOf": 5})", "16", "answers.q1", "multipleOf"},
      {R"({"multipleOf": 0.1})", "0.3", "", ""},
      {R"({"multipleOf": 0.1})", "0.35", "answers.q1", "multipleOf"},
      {R"({"multipleOf": 2})", "4.0", "", ""},
      {R"({"minimum": 3})", R"("1")", "", ""},  // not a number: does not apply
  });
}

TEST(AnswerSchema, Arrays) {
  Expect({
      {R"({"minItems": 1})", "[0]", "", ""},
      {R"({"minItems": 1})", "[]", "answers.q1", "minItems"},
      {R"({"maxItems": 1})", "[0, 1]", "answers.q1", "maxItems"},
      {R"({"items": {"type": "string"}})", R"(["a", "b"])", "", ""},
      {R"({"items": {"type": "string"}})", R"(["a", 2])", "answers.q1[1]", "type"},
      {R"({"items": {"items": {"minimum": 0}}})", "[[0], [1, -1]]", "answers.q1[1][1]", "minimum"},
      {R"({"items": false})", "[]", "", ""},
      {R"({"items": false})", "[1]", "answers.q1[0]", "false"},
  });
}

TEST(AnswerSchema, Objects) {
  const char* person = R"({"type": "object", "required": ["name"],
      "properties": {"name": {"type": "string", "minLength": 1}, "age": {"type": "integer"}}})";
  const char* closed = R"({"properties": {"a": {}}, "additionalProperties": false})";
  const char* typed_rest =
      R"({"properties": {"a": {}}, "additionalProperties": {"type": "number"}})";
  Expect({
      {person, R"({"name": "Ann", "age": 40})", "", ""},
      {person, R"({"name": "Ann", "extra": true})", "", ""},  // open by default
      {person, R"({"age": 40})", "answers.q1.name", "required"},
      {person, R"({"name": ""})", "answers.q1.name", "minLength"},
      {person, R"({"name": "Ann", "age": "40"})", "answers.q1.age", "type"},
      {closed, R"({"a": 1})", "", ""},
      {closed, R"({"a": 1, "b": 2})", "answers.q1.b", "additionalProperties"},
      {typed_rest, R"({"a": "x", "b": 2})", "", ""},
      {typed_rest, R"({"a": "x", "b": "2"})", "answers.q1.b", "type"},
      {R"({"required": ["x"]})", "5", "", ""},  // not an object: does not apply
  });
}

TEST(AnswerSchema, TheFirstViolationIsReported) {
  Expect({
      {R"({"type": "string", "minLength": 5, "pattern": "^x"})", R"("ab")", "answers.q1",
       "minLength"},
      {R"({"type": "string", "minLength": 5})", "3", "answers.q1", "type"},
  });
}

TEST(AnswerSchema, AHostilePatternSubjectDoesNotExhaustTheStack) {
  const json::value schema = json::parse(R"({"pattern": "^(a|b)*$"})");
  ASSERT_FALSE(CheckAnswerSchema(schema, "s"));
  const std::string long_answer(200000, 'a');
  EXPECT_FALSE(ValidateAnswer(schema, json::value(long_answer), "answers.q1"));
  EXPECT_TRUE(ValidateAnswer(schema, json::value(long_answer + "c"), "answers.q1"));
}

struct LoadRow {
  const char* schema;
  const char* path;  // "" : accepted
  const char* keyword;
};

TEST(AnswerSchema, UnsupportedKeywordsAreRefusedAtLoad) {
  const std::vector<LoadRow> rows = {
      {R"({"type": "string", "title": "Name", "description": "d", "examples": ["a"],
           "format": "email", "default": "x", "$schema": "https://json-schema.org/draft/2020-12/schema",
           "$comment": "c", "deprecated": false, "x-ui": {"widget": "text"}})",
       "", ""},
      {R"({"anyOf": [{"type": "string"}]})", "s.anyOf", "anyOf"},
      {R"({"oneOf": []})", "s.oneOf", "oneOf"},
      {R"({"allOf": []})", "s.allOf", "allOf"},
      {R"({"not": {}})", "s.not", "not"},
      {R"({"if": {}, "then": {}})", "s.if", "if"},
      {R"({"$ref": "#/$defs/x"})", "s.$ref", "$ref"},
      {R"({"uniqueItems": true})", "s.uniqueItems", "uniqueItems"},
      {R"({"dependentRequired": {}})", "s.dependentRequired", "dependentRequired"},
      {R"({"patternProperties": {}})", "s.patternProperties", "patternProperties"},
      {R"({"maxlength": 3})", "s.maxlength", "maxlength"},  // a typo is not ignored
      {R"({"properties": {"a": {"items": {"oneOf": []}}}})", "s.properties.a.items.oneOf", "oneOf"},
      {R"({"additionalProperties": {"not": {}}})", "s.additionalProperties.not", "not"},
      // Supported keywords with malformed values.
      {R"({"type": "text"})", "s.type", "type"},
      {R"({"type": []})", "s.type", "type"},
      {R"({"enum": []})", "s.enum", "enum"},
      {R"({"minLength": -1})", "s.minLength", "minLength"},
      {R"({"maxItems": 1.5})", "s.maxItems", "maxItems"},
      {R"({"pattern": "("})", "s.pattern", "pattern"},
      {R"({"pattern": "(a)\\1"})", "s.pattern", "pattern"},
      {R"({"minimum": "1"})", "s.minimum", "minimum"},
      {R"({"exclusiveMinimum": true})", "s.exclusiveMinimum", "exclusiveMinimum"},
      {R"({"multipleOf": 0})", "s.multipleOf", "multipleOf"},
      {R"({"items": [{}]})", "s.items", "items"},
      {R"({"required": [1]})", "s.required", "required"},
      {R"({"properties": []})", "s.properties", "properties"},
      {R"({"additionalProperties": 1})", "s.additionalProperties", ""},
      {R"("string")", "s", ""},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.schema);
    auto issue = CheckAnswerSchema(json::parse(row.schema), "s");
    if (std::string(row.path).empty()) {
      EXPECT_FALSE(issue) << issue->path << ": " << issue->message;
      continue;
    }
    ASSERT_TRUE(issue) << "accepted";
    EXPECT_EQ(issue->path, row.path) << issue->message;
    EXPECT_EQ(issue->keyword, row.keyword) << issue->message;
  }
}

TEST(AnswerSchema, Paths) {
  EXPECT_EQ(MemberPath("", "answers"), "answers");
  EXPECT_EQ(MemberPath("answers", "q1"), "answers.q1");
  EXPECT_EQ(IndexPath("answers", 2), "answers[2]");
}

}  // namespace
}  // namespace a2ad::workflow
