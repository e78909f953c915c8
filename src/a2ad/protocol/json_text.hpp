#pragma once
// The one JSON writer of a2ad: every JSON text the server sends or stores is written here
// (tests/lint checks that nothing calls boost::json::serialize directly). Bytes that are only
// signed or hashed are written in RFC 8785 canonical form by jcs.hpp (which escapes strings
// with AppendJsonString).
//
// The output is byte-identical to boost::json::serialize (Boost 1.81) of the same content
// (the same string escaping and number forms), with two exceptions that are the reason this
// is the only writer, both for content that has no JSON spelling (ParseJson never produces
// either, so they only guard values made in code):
// - a non-finite double (Boost writes `Infinity`, which no reader accepts) is written as
//   `null`, as JSON.stringify does;
// - bytes of a string that are not UTF-8 (Boost copies them: text no strict reader accepts,
//   RFC 8259 §8.1) are written as U+FFFD, one per maximal ill-formed subpart. Strings that
//   echo a header or a request target can hold any byte.
//
// Thread safety: a JsonTextWriter is used by one thread; the free functions are pure.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol {

/// Appends `s` as a quoted JSON string, escaped as boost::json::serializer does: `"` and `\`
/// backslashed; \b \t \n \f \r; any other byte below 0x20 as \u00xx (lowercase hex);
/// 0x7F, '/' and well-formed UTF-8 copied as they are. Unlike Boost, bytes that are not
/// UTF-8 become U+FFFD (see the file comment), so the text is always valid JSON.
void AppendJsonString(std::string& out, std::string_view s);

/// `s` with its bytes that are not UTF-8 replaced as AppendJsonString replaces them, for a
/// writer of another format that needs well-formed text (a protobuf string field).
std::string WellFormedUtf8(std::string_view s);

/// Appends the decimal text of `v`, as boost::json writes an int64.
void AppendJsonInt(std::string& out, int64_t v);

/// A rough size of a task's JSON text in either wire version (string lengths plus a fixed
/// allowance per element; metadata and data objects count a fixed amount), for reserve().
size_t EstimateTaskJsonSize(const Task& t);

/// The JSON text of a value (never `Infinity` or `NaN`: see the file comment).
std::string SerializeJson(const boost::json::value& v);
std::string SerializeJson(const boost::json::object& o);
std::string SerializeJson(const boost::json::array& a);

/// Appends JSON text to one string.
class JsonTextWriter {
 public:
  explicit JsonTextWriter(std::string& out) noexcept : out_(out) {}
  JsonTextWriter(const JsonTextWriter&) = delete;
  JsonTextWriter& operator=(const JsonTextWriter&) = delete;

  std::string& out() noexcept { return out_; }

  /// Appends `text` verbatim (punctuation, pre-escaped literals).
  void Raw(std::string_view text) { out_.append(text); }
  void Raw(char c) { out_.push_back(c); }

  /// `"name":`, the name escaped. Encoders with fixed member names write them with Raw as
  /// one literal (`,"name":`) instead: one append rather than several.
  void Key(std::string_view name) {
    AppendJsonString(out_, name);
    out_.push_back(':');
  }

  void String(std::string_view s) { AppendJsonString(out_, s); }
  void Int(int64_t v) { AppendJsonInt(out_, v); }
  void Bool(bool b) { b ? out_.append("true", 4) : out_.append("false", 5); }

  /// Writes `v` (no copy of the value); a non-finite double as null.
  void Value(const boost::json::value& v);
  void Object(const boost::json::object& o);
  /// A finite double in Boost's shortest round-trip form ("1.5E0"); non-finite as null.
  void Double(double d);

  /// `[item,item,...]`, each item written by `write(*this, item)`.
  template <class Range, class Write>
  void Array(const Range& items, Write&& write) {
    Raw('[');
    bool first = true;
    for (const auto& item : items) {
      if (!first) Raw(',');
      first = false;
      write(*this, item);
    }
    Raw(']');
  }
  void Strings(const std::vector<std::string>& v) {
    Array(v, [](JsonTextWriter& w, const std::string& s) { w.String(s); });
  }

  /// An optional member: `member` is its literal with punctuation (`,"name":`), written with
  /// the value only when the value is not empty.
  void OptString(std::string_view member, std::string_view value) {
    if (value.empty()) return;
    Raw(member);
    String(value);
  }
  void OptObject(std::string_view member, const boost::json::object& value) {
    if (value.empty()) return;
    Raw(member);
    Object(value);
  }
  void OptStrings(std::string_view member, const std::vector<std::string>& values) {
    if (values.empty()) return;
    Raw(member);
    Strings(values);
  }

 private:
  std::string& out_;
};

}  // namespace a2ad::protocol
