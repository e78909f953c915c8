#include "a2ad/protocol/json_text.hpp"

#include <array>
#include <boost/json/serializer.hpp>
#include <charconv>
#include <cmath>
#include <cstring>

namespace a2ad::protocol {

namespace {

// For each byte: 0 = copied as is; 'u' = \u00xx; anything else = that letter after '\'.
constexpr std::array<char, 256> MakeEscapes() {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}
constexpr std::array<char, 256> kEscapes = MakeEscapes();
constexpr char kHex[] = "0123456789abcdef";

// Whether any of the 8 bytes of `w` needs a look: below 0x20, '"' or '\\' (the bytes
// kEscapes marks), or 0x80 and above (UTF-8 to check). The classic word-at-a-time tests:
// (x - 0x01..) & ~x & 0x80.. is nonzero iff some byte of x is zero, and (x - 0x20..) & ~x &
// 0x80.. iff some byte is below 0x20 (or, through ~x, at least 0x80: w itself says so).
// Exact for "any".
inline bool AnyByteNeedsALook(uint64_t w) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const uint64_t quote = w ^ (kOnes * '"');
  const uint64_t backslash = w ^ (kOnes * '\\');
  const uint64_t control = (w - kOnes * 0x20) & ~w;
  const uint64_t zero_q = (quote - kOnes) & ~quote;
  const uint64_t zero_b = (backslash - kOnes) & ~backslash;
  return ((control | zero_q | zero_b | w) & kHigh) != 0;
}

// The UTF-8 sequence starting at p[0] >= 0x80 (Unicode Table 3-7: no overlong forms, no
// surrogates, nothing past U+10FFFF). Returns its length when it is well formed, else 0 with
// `bad` set to the length of its maximal ill-formed subpart (at least 1), which one U+FFFD
// replaces (Unicode's recommended practice, as the WHATWG decoder does).
size_t Utf8Sequence(const unsigned char* p, size_t avail, size_t& bad) {
  const unsigned char c = p[0];
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    bad = 1;  // a continuation byte, C0, C1, F5..FF
    return 0;
  }
  for (size_t i = 1; i < n; ++i) {
    if (i >= avail || p[i] < lo || p[i] > hi) {
      bad = i;
      return 0;
    }
    lo = 0x80;
    hi = 0xBF;
  }
  return n;
}

}  // namespace

std::string WellFormedUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* const end = p + s.size();
  std::string out;
  const unsigned char* run = p;  // start of the bytes not yet copied
  while (p < end) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    size_t bad = 0;
    const size_t n = Utf8Sequence(p, static_cast<size_t>(end - p), bad);
    if (n != 0) {
      p += n;
      continue;
    }
    if (out.empty()) out.reserve(s.size() + 8);
    out.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
    out.append("\xEF\xBF\xBD", 3);  // U+FFFD REPLACEMENT CHARACTER
    p += bad;
    run = p;
  }
  if (run == reinterpret_cast<const unsigned char*>(s.data())) return std::string(s);
  out.append(reinterpret_cast<const char*>(run), static_cast<size_t>(end - run));
  return out;
}

void AppendJsonString(std::string& out, std::string_view s) {
  const char* run = s.data();  // start of the bytes not yet copied
  const char* p = run;
  const char* const end = p + s.size();
  // Most strings (keys, ids, states, timestamps) need no look at all: find the first byte that
  // does, and copy a string without one in a single append.
  while (end - p >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (AnyByteNeedsALook(w)) break;
    p += 8;
  }
  if (end - p < 8)
    while (p < end && kEscapes[static_cast<unsigned char>(*p)] == 0 &&
           static_cast<unsigned char>(*p) < 0x80)
      ++p;
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  if (p == end) {
    out.append(run, s.size());
    out.push_back('"');
    return;
  }
  // Looks at the byte at p (which needs a look) and moves p past what it decided.
  auto one = [&]() {
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 0x80) {
      size_t bad = 0;
      const size_t n = Utf8Sequence(reinterpret_cast<const unsigned char*>(p),
                                    static_cast<size_t>(end - p), bad);
      if (n != 0) {  // well formed: stays in the run
        p += n;
        return;
      }
      out.append(run, static_cast<size_t>(p - run));
      out.append("\xEF\xBF\xBD", 3);  // U+FFFD REPLACEMENT CHARACTER
      p += bad;
      run = p;
      return;
    }
    const char e = kEscapes[c];
    if (e == 0) {
      ++p;
      return;
    }
    out.append(run, static_cast<size_t>(p - run));
    if (e != 'u') {
      const char esc[2] = {'\\', e};
      out.append(esc, 2);
    } else {
      const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(esc, 6);
    }
    ++p;
    run = p;
  };
  // Eight bytes at a time while none needs a look; a word that has one goes byte by byte (a
  // UTF-8 sequence may end in the next word).
  while (end - p >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    if (!AnyByteNeedsALook(w)) {
      p += 8;
      continue;
    }
    const char* const word_end = p + 8;
    while (p < word_end) one();
  }
  while (p < end) one();
  out.append(run, static_cast<size_t>(end - run));
  out.push_back('"');
}

void AppendJsonInt(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, static_cast<size_t>(r.ptr - buf));
}

namespace {

size_t EstimateParts(const std::vector<Part>& parts) {
  size_t n = 2;
  for (const auto& p : parts) {
    n += 48 + p.text.size() + p.filename.size() + p.media_type.size();
    if (!p.data.is_null()) n += 64;
    if (!p.metadata.empty()) n += 64;
  }
  return n;
}

size_t EstimateStrings(const std::vector<std::string>& v) {
  size_t n = 24;
  for (const auto& s : v) n += 3 + s.size();
  return n;
}

size_t EstimateMessage(const Message& m) {
  size_t n = 96 + m.message_id.size() + m.context_id.size() + m.task_id.size();
  n += EstimateParts(m.parts);
  if (!m.metadata.empty()) n += 64;
  if (!m.extensions.empty()) n += EstimateStrings(m.extensions);
  if (!m.reference_task_ids.empty()) n += EstimateStrings(m.reference_task_ids);
  return n;
}

}  // namespace

size_t EstimateTaskJsonSize(const Task& t) {
  size_t n = 128 + t.id.size() + t.context_id.size();
  if (t.status.message) n += EstimateMessage(*t.status.message);
  for (const auto& a : t.artifacts) {
    n += 64 + a.artifact_id.size() + a.name.size() + a.description.size();
    n += EstimateParts(a.parts);
    if (!a.metadata.empty()) n += 64;
    if (!a.extensions.empty()) n += EstimateStrings(a.extensions);
  }
  for (const auto& m : t.history) n += EstimateMessage(m);
  if (!t.metadata.empty()) n += 64;
  return n;
}

void JsonTextWriter::Double(double d) {
  // The only writer of doubles: JSON has no spelling for infinity or NaN (Boost 1.81 would
  // write `Infinity`, which no reader accepts). ParseJson never makes one; code that
  // computes one gets null, as JSON.stringify writes it.
  if (!std::isfinite(d)) {
    out_.append("null", 4);
    return;
  }
  // Boost's shortest round-trip form ("1.5E0"), so a double stays a double when read back.
  char buf[32];
  const boost::json::value v(d);
  boost::json::serializer sr;
  sr.reset(&v);
  const boost::json::string_view text = sr.read(buf, sizeof buf);
  out_.append(text.data(), text.size());
}

void JsonTextWriter::Value(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::null:
      out_.append("null", 4);
      return;
    case boost::json::kind::bool_:
      Bool(v.get_bool());
      return;
    case boost::json::kind::int64:
      AppendJsonInt(out_, v.get_int64());
      return;
    case boost::json::kind::uint64: {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof buf, v.get_uint64());
      out_.append(buf, static_cast<size_t>(r.ptr - buf));
      return;
    }
    case boost::json::kind::double_:
      Double(v.get_double());
      return;
    case boost::json::kind::string:
      String(v.get_string());
      return;
    case boost::json::kind::array:
      Array(v.get_array(),
            [](JsonTextWriter& w, const boost::json::value& item) { w.Value(item); });
      return;
    case boost::json::kind::object:
      Object(v.get_object());
      return;
  }
}

void JsonTextWriter::Object(const boost::json::object& o) {
  out_.push_back('{');
  bool first = true;
  for (const auto& kv : o) {
    if (!first) out_.push_back(',');
    first = false;
    Key(kv.key());
    Value(kv.value());
  }
  out_.push_back('}');
}

std::string SerializeJson(const boost::json::value& v) {
  std::string out;
  JsonTextWriter(out).Value(v);
  return out;
}

std::string SerializeJson(const boost::json::object& o) {
  std::string out;
  JsonTextWriter(out).Object(o);
  return out;
}

std::string SerializeJson(const boost::json::array& a) {
  std::string out;
  JsonTextWriter(out).Array(a, [](JsonTextWriter& w, const boost::json::value& v) { w.Value(v); });
  return out;
}

}  // namespace a2ad::protocol
