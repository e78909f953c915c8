#pragma once
// Writing JSON text straight into a std::string, for encoders that skip the boost::json DOM.
// The output is byte-identical to boost::json::serialize (Boost 1.81) of the same content:
// the same string escaping, and boost::json values are written by boost::json::serializer.
#include <boost/json/object.hpp>
#include <boost/json/serializer.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol {

/// Appends `s` as a quoted JSON string, escaped as boost::json::serializer does: `"` and `\`
/// backslashed; \b \t \n \f \r; any other byte below 0x20 as \u00xx (lowercase hex);
/// every other byte (0x7F, '/', UTF-8 sequences, even invalid ones) copied as is.
void AppendJsonString(std::string& out, std::string_view s);

/// Appends the decimal text of `v`, as boost::json writes an int64.
void AppendJsonInt(std::string& out, int64_t v);

/// A rough size of a task's JSON text in either wire version (string lengths plus a fixed
/// allowance per element; metadata and data objects count a fixed amount), for reserve().
size_t EstimateTaskJsonSize(const Task& t);

/// Appends JSON text to one string. Holds one boost::json::serializer that is reused for
/// every value it writes, so its internal stack (used only when a value does not fit the
/// chunk buffer) is allocated at most once per writer.
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

  /// Serializes `v` in place (no copy of the value).
  void Value(const boost::json::value& v);
  void Object(const boost::json::object& o);

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
  template <class T>
  void Serialize(const T* p);

  std::string& out_;
  boost::json::serializer sr_;
};

}  // namespace a2ad::protocol
