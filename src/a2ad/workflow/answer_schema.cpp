#include "a2ad/workflow/answer_schema.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <charconv>
#include <cmath>
#include <regex>
#include <set>

#include "a2ad/protocol/json_text.hpp"

namespace a2ad::workflow {
namespace json = boost::json;

namespace {

// ---- vocabulary --------------------------------------------------------------------------------

const std::set<std::string, std::less<>>& Implemented() {
  static const std::set<std::string, std::less<>> k = {"type",
                                                       "enum",
                                                       "const",
                                                       "minLength",
                                                       "maxLength",
                                                       "pattern",
                                                       "minimum",
                                                       "maximum",
                                                       "exclusiveMinimum",
                                                       "exclusiveMaximum",
                                                       "multipleOf",
                                                       "minItems",
                                                       "maxItems",
                                                       "items",
                                                       "properties",
                                                       "required",
                                                       "additionalProperties"};
  return k;
}

const std::set<std::string, std::less<>>& Annotations() {
  static const std::set<std::string, std::less<>> k = {
      "title",     "description",      "examples",       "default",     "format",     "$schema",
      "$id",       "$comment",         "$defs",          "definitions", "deprecated", "readOnly",
      "writeOnly", "contentMediaType", "contentEncoding"};
  return k;
}

const std::set<std::string, std::less<>>& TypeNames() {
  static const std::set<std::string, std::less<>> k = {"integer", "number", "string", "boolean",
                                                       "object",  "array",  "null"};
  return k;
}

// The standard keywords this subset leaves out: named as such in the refusal.
const std::set<std::string, std::less<>>& NotImplemented() {
  static const std::set<std::string, std::less<>> k = {"anyOf",
                                                       "oneOf",
                                                       "allOf",
                                                       "not",
                                                       "if",
                                                       "then",
                                                       "else",
                                                       "$ref",
                                                       "$dynamicRef",
                                                       "$recursiveRef",
                                                       "$anchor",
                                                       "$dynamicAnchor",
                                                       "$recursiveAnchor",
                                                       "$vocabulary",
                                                       "uniqueItems",
                                                       "dependentRequired",
                                                       "dependentSchemas",
                                                       "dependencies",
                                                       "prefixItems",
                                                       "additionalItems",
                                                       "contains",
                                                       "minContains",
                                                       "maxContains",
                                                       "unevaluatedItems",
                                                       "unevaluatedProperties",
                                                       "propertyNames",
                                                       "patternProperties",
                                                       "minProperties",
                                                       "maxProperties",
                                                       "contentSchema"};
  return k;
}

std::string SupportedList() {
  std::string out;
  for (const char* k : {"type", "enum", "const", "minLength", "maxLength", "pattern", "minimum",
                        "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems",
                        "maxItems", "items", "properties", "required", "additionalProperties"})
    out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

// ---- numbers -----------------------------------------------------------------------------------

bool IsIntegral(const json::value& v) {
  if (v.is_int64() || v.is_uint64()) return true;
  if (!v.is_double()) return false;
  const double d = v.get_double();
  return std::isfinite(d) && std::floor(d) == d;
}

bool IsInteger(const json::value& v) { return v.is_int64() || v.is_uint64(); }

long double AsLongDouble(const json::value& v) {
  if (v.is_int64()) return static_cast<long double>(v.get_int64());
  if (v.is_uint64()) return static_cast<long double>(v.get_uint64());
  return static_cast<long double>(v.get_double());
}

// -1, 0, 1: a < b, a == b, a > b (both numbers). Exact for two integers of either kind.
int Compare(const json::value& a, const json::value& b) {
  if (IsInteger(a) && IsInteger(b)) {
    const bool a_neg = a.is_int64() && a.get_int64() < 0;
    const bool b_neg = b.is_int64() && b.get_int64() < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    if (a_neg) {
      const int64_t x = a.get_int64(), y = b.get_int64();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const uint64_t x = a.is_int64() ? static_cast<uint64_t>(a.get_int64()) : a.get_uint64();
    const uint64_t y = b.is_int64() ? static_cast<uint64_t>(b.get_int64()) : b.get_uint64();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const long double x = AsLongDouble(a);
  const long double y = AsLongDouble(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

std::string NumberText(const json::value& v) {
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v.get_double());
  return ec == std::errc() ? std::string(buf, end) : protocol::SerializeJson(v);
}

// `m` > 0 (checked at load).
bool MultipleOf(const json::value& v, const json::value& m) {
  if (IsInteger(v) && IsInteger(m)) {
    const uint64_t y = m.is_int64() ? static_cast<uint64_t>(m.get_int64()) : m.get_uint64();
    uint64_t x = 0;
    if (v.is_uint64())
      x = v.get_uint64();
    else if (v.get_int64() >= 0)
      x = static_cast<uint64_t>(v.get_int64());
    else
      x = static_cast<uint64_t>(-(v.get_int64() + 1)) + 1;  // |v| without overflow
    return y != 0 && x % y == 0;
  }
  const long double q = AsLongDouble(v) / AsLongDouble(m);
  if (!std::isfinite(q)) return false;
  return std::fabs(q - std::nearbyint(q)) <= 1e-9L * std::max(1.0L, std::fabs(q));
}

// A non-negative integer keyword value (lengths and counts).
std::optional<uint64_t> Count(const json::value& v) {
  if (v.is_uint64()) return v.get_uint64();
  if (v.is_int64() && v.get_int64() >= 0) return static_cast<uint64_t>(v.get_int64());
  if (v.is_double() && IsIntegral(v) && v.get_double() >= 0 && v.get_double() < 1.8e19)
    return static_cast<uint64_t>(v.get_double());
  return std::nullopt;
}

// ---- values ------------------------------------------------------------------------------------

std::string_view KindName(const json::value& v) {
  switch (v.kind()) {
    case json::kind::object:
      return "an object";
    case json::kind::array:
      return "an array";
    case json::kind::string:
      return "a string";
    case json::kind::bool_:
      return "a boolean";
    case json::kind::null:
      return "null";
    default:
      return IsIntegral(v) ? "an integer" : "a number";
  }
}

bool HasType(const json::value& v, std::string_view type) {
  if (type == "integer") return IsIntegral(v);
  if (type == "number") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_bool();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return type == "null" && v.is_null();
}

// JSON equality as JSON Schema has it: numbers by value.
bool SameJson(const json::value& a, const json::value& b) {
  if (a.is_number() && b.is_number()) return Compare(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  if (a.is_object()) {
    const auto& x = a.get_object();
    const auto& y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& kv : x) {
      const json::value* other = y.if_contains(kv.key());
      if (!other || !SameJson(kv.value(), *other)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    const auto& x = a.get_array();
    const auto& y = b.get_array();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!SameJson(x[i], y[i])) return false;
    return true;
  }
  return a == b;
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

std::string Shown(const json::value& v) {
  std::string text = protocol::SerializeJson(v);
  if (text.size() > 200) text = text.substr(0, 197) + "...";
  return text;
}

// ---- load-time check ---------------------------------------------------------------------------

std::optional<SchemaIssue> Bad(const std::string& path, std::string_view keyword,
                               std::string message) {
  return SchemaIssue{MemberPath(path, keyword), std::move(message), std::string(keyword)};
}

std::optional<SchemaIssue> CheckKeyword(const std::string& path, std::string_view key,
                                        const json::value& v) {
  if (key == "type") {
    auto known = [](const json::value& t) {
      return t.is_string() && TypeNames().count(std::string_view(t.get_string()));
    };
    if (known(v)) return std::nullopt;
    if (v.is_array() && !v.get_array().empty()) {
      for (const auto& t : v.get_array())
        if (!known(t))
          return Bad(
              path, key,
              "expected integer, number, string, boolean, object, array or null; got " + Shown(t));
      return std::nullopt;
    }
    return Bad(path, key,
               "expected a type name (integer, number, string, boolean, object, array, null) or "
               "a non-empty array of them");
  }
  if (key == "enum") {
    if (!v.is_array() || v.get_array().empty())
      return Bad(path, key, "expected a non-empty array of the allowed values");
    return std::nullopt;
  }
  if (key == "const") return std::nullopt;
  if (key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems") {
    if (!Count(v)) return Bad(path, key, "expected a non-negative integer");
    return std::nullopt;
  }
  if (key == "pattern") {
    if (!v.is_string()) return Bad(path, key, "expected a regular expression (a string)");
    try {
      (void)CompileLinearTimeRegex(v.get_string());
    } catch (const std::regex_error& e) {
      return Bad(path, key,
                 "'" + std::string(v.get_string()) +
                     "' is not a supported ECMAScript regular expression (back-references are "
                     "not supported): " +
                     e.what());
    }
    return std::nullopt;
  }
  if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
      key == "exclusiveMaximum") {
    if (!v.is_number())
      return Bad(path, key, "expected a number (the draft-4 boolean form is not supported)");
    return std::nullopt;
  }
  if (key == "multipleOf") {
    if (!v.is_number() || AsLongDouble(v) <= 0)
      return Bad(path, key, "expected a number greater than 0");
    return std::nullopt;
  }
  if (key == "items") {
    if (v.is_array())
      return Bad(path, key,
                 "the array (tuple) form is not supported; give one schema for every item");
    return CheckAnswerSchema(v, MemberPath(path, key));
  }
  if (key == "properties") {
    if (!v.is_object()) return Bad(path, key, "expected an object of schemas");
    for (const auto& kv : v.get_object())
      if (auto issue = CheckAnswerSchema(kv.value(), MemberPath(MemberPath(path, key), kv.key())))
        return issue;
    return std::nullopt;
  }
  if (key == "required") {
    if (!v.is_array()) return Bad(path, key, "expected an array of property names");
    for (const auto& name : v.get_array())
      if (!name.is_string()) return Bad(path, key, "expected an array of property names");
    return std::nullopt;
  }
  if (key == "additionalProperties") {
    if (v.is_bool()) return std::nullopt;
    return CheckAnswerSchema(v, MemberPath(path, key));
  }
  return std::nullopt;
}

// ---- validation --------------------------------------------------------------------------------

std::optional<SchemaIssue> Violation(const std::string& path, std::string_view keyword,
                                     std::string message) {
  return SchemaIssue{path, std::move(message), std::string(keyword)};
}

std::optional<SchemaIssue> Validate(const json::value& schema, const json::value& v,
                                    const std::string& path) {
  if (schema.is_bool()) {
    if (schema.get_bool()) return std::nullopt;
    return Violation(path, "false", "no value is allowed here");
  }
  if (!schema.is_object()) return std::nullopt;  // refused at load
  const json::object& s = schema.get_object();

  if (const json::value* t = s.if_contains("type")) {
    bool ok = false;
    std::string wanted;
    if (t->is_string()) {
      ok = HasType(v, t->get_string());
      wanted = t->get_string();
    } else if (t->is_array()) {
      for (const auto& one : t->get_array()) {
        if (!one.is_string()) continue;
        ok = ok || HasType(v, one.get_string());
        wanted += (wanted.empty() ? "" : " or ") + std::string(one.get_string());
      }
    }
    if (!ok)
      return Violation(path, "type", "expected " + wanted + ", got " + std::string(KindName(v)));
  }
  if (const json::value* e = s.if_contains("enum"); e && e->is_array()) {
    bool found = false;
    for (const auto& allowed : e->get_array()) found = found || SameJson(allowed, v);
    if (!found) return Violation(path, "enum", "must be one of " + Shown(*e));
  }
  if (const json::value* c = s.if_contains("const"); c && !SameJson(*c, v))
    return Violation(path, "const", "must be " + Shown(*c));

  if (v.is_string()) {
    const std::string_view text = v.get_string();
    const size_t length = CodePoints(text);
    if (auto n = s.if_contains("minLength") ? Count(s.at("minLength")) : std::nullopt;
        n && length < *n)
      return Violation(path, "minLength",
                       "must be at least " + std::to_string(*n) + " characters long (is " +
                           std::to_string(length) + ")");
    if (auto n = s.if_contains("maxLength") ? Count(s.at("maxLength")) : std::nullopt;
        n && length > *n)
      return Violation(path, "maxLength",
                       "must be at most " + std::to_string(*n) + " characters long (is " +
                           std::to_string(length) + ")");
    if (const json::value* p = s.if_contains("pattern"); p && p->is_string()) {
      bool matches = false;
      try {
        matches = std::regex_search(text.begin(), text.end(), CompileLinearTimeRegex(p->get_string()));
      } catch (const std::regex_error&) {
        matches = false;  // e.g. the matcher's complexity limit: not shown to match
      }
      if (!matches)
        return Violation(path, "pattern",
                         "does not match the pattern '" + std::string(p->get_string()) + "'");
    }
  }

  if (v.is_number()) {
    struct Bound {
      const char* keyword;
      bool (*holds)(int);
      const char* relation;
    };
    static const Bound kBounds[] = {
        {"minimum", [](int c) { return c >= 0; }, ">="},
        {"maximum", [](int c) { return c <= 0; }, "<="},
        {"exclusiveMinimum", [](int c) { return c > 0; }, ">"},
        {"exclusiveMaximum", [](int c) { return c < 0; }, "<"},
    };
    for (const auto& b : kBounds) {
      const json::value* limit = s.if_contains(b.keyword);
      if (limit && limit->is_number() && !b.holds(Compare(v, *limit)))
        return Violation(path, b.keyword,
                         std::string("must be ") + b.relation + " " + NumberText(*limit));
    }
    if (const json::value* m = s.if_contains("multipleOf");
        m && m->is_number() && AsLongDouble(*m) > 0 && !MultipleOf(v, *m))
      return Violation(path, "multipleOf", "must be a multiple of " + NumberText(*m));
  }

  if (v.is_array()) {
    const json::array& a = v.get_array();
    if (auto n = s.if_contains("minItems") ? Count(s.at("minItems")) : std::nullopt;
        n && a.size() < *n)
      return Violation(path, "minItems",
                       "must have at least " + std::to_string(*n) + " items (has " +
                           std::to_string(a.size()) + ")");
    if (auto n = s.if_contains("maxItems") ? Count(s.at("maxItems")) : std::nullopt;
        n && a.size() > *n)
      return Violation(path, "maxItems",
                       "must have at most " + std::to_string(*n) + " items (has " +
                           std::to_string(a.size()) + ")");
    if (const json::value* items = s.if_contains("items"))
      for (size_t i = 0; i < a.size(); ++i)
        if (auto issue = Validate(*items, a[i], IndexPath(path, i))) return issue;
  }

  if (v.is_object()) {
    const json::object& o = v.get_object();
    if (const json::value* req = s.if_contains("required"); req && req->is_array())
      for (const auto& name : req->get_array())
        if (name.is_string() && !o.contains(name.get_string()))
          return Violation(MemberPath(path, name.get_string()), "required", "required");
    const json::object* props = nullptr;
    if (const json::value* p = s.if_contains("properties"); p && p->is_object())
      props = &p->get_object();
    const json::value* additional = s.if_contains("additionalProperties");
    for (const auto& kv : o) {
      const std::string member = MemberPath(path, kv.key());
      if (const json::value* sub = props ? props->if_contains(kv.key()) : nullptr) {
        if (auto issue = Validate(*sub, kv.value(), member)) return issue;
      } else if (additional) {
        if (additional->is_bool() && !additional->get_bool())
          return Violation(member, "additionalProperties",
                           "is not allowed here (additionalProperties is false)");
        if (auto issue = Validate(*additional, kv.value(), member)) return issue;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string MemberPath(const std::string& base, std::string_view member) {
  return base.empty() ? std::string(member) : base + "." + std::string(member);
}

std::string IndexPath(const std::string& base, size_t index) {
  return base + "[" + std::to_string(index) + "]";
}

std::optional<SchemaIssue> CheckAnswerSchema(const json::value& schema, const std::string& path) {
  if (schema.is_bool()) return std::nullopt;
  if (!schema.is_object())
    return SchemaIssue{path, "expected a JSON Schema (an object or a boolean)", ""};
  for (const auto& kv : schema.get_object()) {
    const std::string_view key = kv.key();
    if (Implemented().count(key)) {
      if (auto issue = CheckKeyword(path, key, kv.value())) return issue;
    } else if (Annotations().count(key) || key.starts_with("x-")) {
      continue;
    } else if (NotImplemented().count(key)) {
      return Bad(path, key,
                 "the JSON Schema keyword '" + std::string(key) +
                     "' is not supported by this host's answer validation (supported: " +
                     SupportedList() + ")");
    } else {
      return Bad(path, key,
                 "unknown JSON Schema keyword '" + std::string(key) +
                     "' (supported: " + SupportedList() +
                     "; annotations such as title and description are "
                     "accepted; vendor extensions are named x-...)");
    }
  }
  return std::nullopt;
}

std::optional<SchemaIssue> ValidateAnswer(const json::value& schema, const json::value& value,
                                          const std::string& path) {
  return Validate(schema, value, path);
}

std::regex CompileLinearTimeRegex(std::string_view pattern) {
  auto flags = std::regex::ECMAScript;
#if defined(__GLIBCXX__)
  // The breadth-first matcher: linear in the subject, no recursion per character (the
  // default one overflows the stack on a subject of some ten thousand characters).
  flags |= std::regex_constants::__polynomial;
#endif
  return std::regex(pattern.begin(), pattern.end(), flags);
}

}  // namespace a2ad::workflow
