// json_parse_fuzz: protocol::ParseJson, the strict reader of every byte that enters a2ad, and
// SerializeJson, the one writer. Invariants:
//  - what Boost.JSON's own parser refuses, ParseJson refuses too (it may refuse more);
//  - what ParseJson accepts, Boost accepts as the same document, but for the doubles (Boost
//    1.81 misreads some: a few ulps off, "0e400" as NaN; ParseJson reads them exactly);
//  - every number of an accepted text is its literal read exactly: an integer as the int64
//    or uint64 it spells (one beyond 64 bits is refused), any other as the correctly rounded
//    double (std::from_chars);
//  - SerializeJson of an accepted value has no Infinity/NaN token and parses back to an
//    equal value, whose text is the same again;
//  - ParseJsonReportingFaults agrees: the same value when ParseJson accepts; when ParseJson
//    refuses a value (kInvalidParams) it reports that very fault and returns the document
//    without it (which ParseJson accepts), unless the text turns out not to be JSON further
//    on or it meets a fault it cannot read past (a lone surrogate escape); text that is not
//    JSON fails both ways alike;
//  - any object, read as a stored run snapshot (protocol/run_snapshot.hpp), is written as
//    text that reads back to the same snapshot, with no member written twice.
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/run_snapshot.hpp"
#include "fuzz_check.hpp"

namespace a2ad::fuzz {
namespace {
namespace json = boost::json;

// The same document (`a` read by ParseJson, `b` by Boost), doubles aside: Boost 1.81 misreads
// some ("901099109000210.98" a few ulps off, "0e400" as NaN, "-1.7976931348623157e308" as
// -infinity); CheckNumbers holds ParseJson's to the exact value.
bool Equivalent(const json::value& a, const json::value& b) {
  if (a.is_double() && b.is_double()) return true;
  if (a.kind() != b.kind()) return a == b;  // int64 vs uint64 of the same number
  if (a.is_array()) {
    const auto &x = a.get_array(), &y = b.get_array();
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!Equivalent(x[i], y[i])) return false;
    return true;
  }
  if (a.is_object()) {
    const auto &x = a.get_object(), &y = b.get_object();
    if (x.size() != y.size()) return false;
    for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
      if (i->key() != j->key() || !Equivalent(i->value(), j->value())) return false;
    return true;
  }
  return a == b;
}

// `o` read as a stored run snapshot is written as text that reads back to the same snapshot.
// The text is what SerializeJson writes of its own parse: no member is written twice (the
// parse would keep one of them, and the text would be shorter).
void CheckRunSnapshot(const json::object& o) {
  const protocol::RunSnapshot run = protocol::RunSnapshotFromJson(o);
  std::string text;
  protocol::JsonTextWriter w(text);
  protocol::WriteRunSnapshot(w, run);
  auto back = protocol::ParseJsonObject(text, "run");
  FUZZ_CHECK(back.ok(), "WriteRunSnapshot wrote text that does not read: " + text);
  FUZZ_CHECK(protocol::SerializeJson(*back) == text, "a member written twice? " + text);
  FUZZ_CHECK(protocol::RunSnapshotFromJson(*back) == run, "the snapshot changed: " + text);
}

// No `Infinity`/`NaN` (or any other bare word but true/false/null) outside strings.
bool OnlyJsonTokens(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      continue;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      if (c == 'e' || c == 'E') continue;  // an exponent
      for (std::string_view word : {"true", "false", "null"})
        if (text.substr(i, word.size()) == word) {
          i += word.size() - 1;
          goto next;
        }
      return false;
    }
  next:;
  }
  return true;
}

// The number literals of `text`, in order (outside strings).
std::vector<std::string_view> NumberLiterals(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      ++i;
      continue;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i + 1;
      while (j < text.size() &&
             ((text[j] >= '0' && text[j] <= '9') || text[j] == '.' || text[j] == 'e' ||
              text[j] == 'E' || text[j] == '+' || text[j] == '-'))
        ++j;
      out.push_back(text.substr(i, j - i));
      i = j;
      continue;
    }
    ++i;
  }
  return out;
}

// The numbers of `v` in document order.
void Numbers(const json::value& v, std::vector<const json::value*>& out) {
  if (v.is_number()) out.push_back(&v);
  if (v.is_array())
    for (const auto& x : v.get_array()) Numbers(x, out);
  if (v.is_object())
    for (const auto& kv : v.get_object()) Numbers(kv.value(), out);
}

// Each number of an accepted document is its literal read exactly: an integer literal as
// the int64 or uint64 it spells (it must fit), any other as the correctly rounded double.
void CheckNumbers(std::string_view text, const json::value& doc) {
  const auto literals = NumberLiterals(text);
  std::vector<const json::value*> numbers;
  Numbers(doc, numbers);
  FUZZ_CHECK(literals.size() == numbers.size(), "number literals and numbers do not pair up");
  for (size_t i = 0; i < literals.size(); ++i) {
    const std::string_view lit = literals[i];
    const json::value& n = *numbers[i];
    const char* b = lit.data();
    const char* e = lit.data() + lit.size();
    const std::string what = std::string(lit) + " read as " + protocol::SerializeJson(n);
    if (lit.find_first_of(".eE") == std::string_view::npos) {
      int64_t i64 = 0;
      uint64_t u64 = 0;
      if (auto r = std::from_chars(b, e, i64); r.ec == std::errc() && r.ptr == e)
        FUZZ_CHECK(n.is_int64() && n.get_int64() == i64, what);
      else if (auto r2 = std::from_chars(b, e, u64); r2.ec == std::errc() && r2.ptr == e)
        FUZZ_CHECK(n.is_uint64() && n.get_uint64() == u64, what);
      else
        FUZZ_CHECK(false, "an integer beyond 64 bits was accepted: " + what);
      continue;
    }
    FUZZ_CHECK(n.is_double(), what);
    double d = 0;
    if (auto r = std::from_chars(b, e, d); r.ec == std::errc() && r.ptr == e)
      FUZZ_CHECK(n.get_double() == d && std::signbit(n.get_double()) == std::signbit(d), what);
    else  // an underflow: zero or a subnormal
      FUZZ_CHECK(std::fabs(n.get_double()) < 2.3e-308, what);
  }
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace a2ad;
  using namespace a2ad::fuzz;
  namespace json = boost::json;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  auto strict = protocol::ParseJson(text);
  boost::system::error_code ec;
  const json::value loose = json::parse(text, ec);  // same default depth limit (32)
  if (ec) FUZZ_CHECK(!strict, "ParseJson accepts what Boost refuses (" + ec.message() + ")");

  std::optional<core::Error> fault;
  auto lenient = protocol::ParseJsonReportingFaults(text, fault);
  if (strict) {
    FUZZ_CHECK(Equivalent(*strict, loose),
               "ParseJson and Boost read different documents: " + protocol::SerializeJson(*strict) +
                   " vs " + protocol::SerializeJson(loose));
    CheckNumbers(text, *strict);
    FUZZ_CHECK(lenient && !fault && *lenient == *strict,
               "ParseJsonReportingFaults disagrees with ParseJson on an accepted text");
    const std::string out = protocol::SerializeJson(*strict);
    FUZZ_CHECK(OnlyJsonTokens(out), "SerializeJson wrote a bare word: " + out);
    auto back = protocol::ParseJson(out);
    FUZZ_CHECK(back.ok(),
               "ParseJson refuses SerializeJson's text: " + back.error().message + "\n     " + out);
    FUZZ_CHECK(*back == *strict, "the round trip changed the value: " + out);
    FUZZ_CHECK(protocol::SerializeJson(*back) == out, "the text is not stable: " + out);
    if (strict->is_object()) {
      FUZZ_CHECK(protocol::ParseJsonObject(text, "body").ok(), out);
      CheckRunSnapshot(strict->get_object());
    }
  } else if (strict.error().code == core::ErrorCode::kInvalidParams) {
    // ParseJson stops at the fault; the lenient reader goes on, and may then meet text that
    // is not JSON after all.
    if (lenient) {
      FUZZ_CHECK(fault && fault->message == strict.error().message,
                 "ParseJsonReportingFaults does not report the fault ParseJson refused: " +
                     strict.error().message);
      const std::string out = protocol::SerializeJson(*lenient);
      FUZZ_CHECK(OnlyJsonTokens(out), "SerializeJson wrote a bare word: " + out);
      FUZZ_CHECK(protocol::ParseJson(out).ok(),
                 "the document without its faults is refused: " + out);
    } else {
      // Text that is not JSON further on, or a fault the reader cannot read past (a lone
      // surrogate escape, this one or a later one).
      FUZZ_CHECK(lenient.error().code == core::ErrorCode::kParseError ||
                     (lenient.error().code == core::ErrorCode::kInvalidParams &&
                      lenient.error().message.find("unpaired UTF-16 surrogate") !=
                          std::string::npos),
                 lenient.error().message);
    }
  } else {
    FUZZ_CHECK(strict.error().code == core::ErrorCode::kParseError, strict.error().message);
    FUZZ_CHECK(
        !lenient && lenient.error().message == strict.error().message,
        "ParseJsonReportingFaults disagrees on text that is not JSON: " + strict.error().message);
  }
  return 0;
}
