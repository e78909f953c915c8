#pragma once
// The JSON Schema of a clarification question's answer (DIGEST §4.4: a question's optional
// `schema` constrains its answer, and the resolve endpoint SHOULD validate it). Only the
// subset that makes sense for one answer is implemented:
//   type         "integer" | "number" | "string" | "boolean" | "object" | "array" | "null",
//                or an array of them (1.0 is an integer)
//   enum, const  JSON equality, numbers by value (1 equals 1.0)
//   minLength, maxLength          in code points
//   pattern      ECMAScript, unanchored (a search), matched against the UTF-8 bytes; in
//                linear time where the library allows it (libstdc++), so that no answer can
//                exhaust the stack; back-references are refused at load for that reason
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, as in draft 2020-12),
//   multipleOf (> 0)
//   minItems, maxItems, items (one schema for every item)
//   properties, required, additionalProperties (a boolean or a schema)
// A schema may also be `true` or `false`. As in JSON Schema, a keyword about another type is
// ignored (minLength says nothing about a number).
//
// CheckAnswerSchema, called when a workflow loads, refuses every other keyword, so that no
// constraint an author wrote is silently skipped: the standard validation keywords this
// subset leaves out (anyOf, oneOf, allOf, not, if/then/else, $ref, uniqueItems,
// dependentRequired, prefixItems, patternProperties, ...) and unknown keywords (a typo like
// "maxlength"), except vendor extensions named "x-...". Annotations are accepted and ignored:
// title, description, examples, default, format, $schema, $id, $comment, $defs, definitions,
// deprecated, readOnly, writeOnly, contentMediaType, contentEncoding.
//
// Thread safety: pure functions.
#include <boost/json/value.hpp>
#include <optional>
#include <regex>
#include <string>

namespace a2ad::workflow {

struct SchemaIssue {
  /// ValidateAnswer: the JSON path of the offending value ("answers.q1.emails[2]").
  /// CheckAnswerSchema: the path of the offending keyword ("...schema.properties.x.anyOf").
  std::string path;
  std::string message;  // why, without the path
  std::string keyword;  // the schema keyword at fault ("maxLength", "anyOf")
};

/// Load time: nullopt if `schema` (at `path`) uses only the keywords above, each with a
/// well-formed value (a pattern that compiles, a non-negative integer length, ...).
std::optional<SchemaIssue> CheckAnswerSchema(const boost::json::value& schema,
                                             const std::string& path);

/// The first violation of `schema` by `value`, which is named `path` (nullopt: valid).
/// `schema` must have passed CheckAnswerSchema.
std::optional<SchemaIssue> ValidateAnswer(const boost::json::value& schema,
                                          const boost::json::value& value, const std::string& path);

/// `base` + "." + `member` (just `member` when `base` is empty): how paths are written.
std::string MemberPath(const std::string& base, std::string_view member);
/// `base` + "[" + `index` + "]".
std::string IndexPath(const std::string& base, size_t index);

/// An ECMAScript regex matched in time linear in the subject, without recursion per
/// character: every pattern a2ad matches against caller-supplied text goes through here (the
/// default std::regex matcher overflows the stack on a long subject and kills the process).
/// Throws std::regex_error for a pattern it cannot compile (back-references included).
std::regex CompileLinearTimeRegex(std::string_view pattern);

}  // namespace a2ad::workflow
