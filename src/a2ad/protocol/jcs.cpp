#include "a2ad/protocol/jcs.hpp"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "a2ad/protocol/json_text.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr int64_t kMaxExact = int64_t{1} << 53;  // integers up to here are exact doubles

// Decodes UTF-8 (Unicode Table 3-7: no overlong forms, no surrogates, nothing past
// U+10FFFF) into UTF-16 code units when `out` is given. false when `s` is not UTF-8.
bool Utf16Of(std::string_view s, std::u16string* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned char c = *p;
    uint32_t cp = 0;
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c < 0x80) {
      cp = c;
      n = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      cp = c & 0x1F;
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      cp = c & 0x0F;
      n = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      cp = c & 0x07;
      n = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) < n) return false;
    for (size_t i = 1; i < n; ++i) {
      if (p[i] < lo || p[i] > hi) return false;
      lo = 0x80;
      hi = 0xBF;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    p += n;
    if (!out) continue;
    if (cp < 0x10000) {
      out->push_back(static_cast<char16_t>(cp));
    } else {
      cp -= 0x10000;
      out->push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out->push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    }
  }
  return true;
}

Error Refuse(const std::string& path, std::string_view why) {
  return Error(ErrorCode::kInvalidParams,
               "canonical JSON (RFC 8785): " + std::string(why) + " at " + path, {{"field", path}});
}

Result<void> AppendString(std::string& out, std::string_view s, const std::string& path) {
  if (!Utf16Of(s, nullptr)) return Refuse(path, "a string that is not UTF-8");
  AppendJsonString(out, s);  // RFC 8785 §3.2.2.2 escaping (see json_text.hpp)
  return core::Ok{};
}

Result<void> Append(std::string& out, const json::value& v, const std::string& path);

Result<void> AppendObject(std::string& out, const json::object& o, const std::string& path) {
  struct Member {
    std::u16string sort_key;
    std::string_view name;
    const json::value* value;
  };
  std::vector<Member> members;
  members.reserve(o.size());
  for (const auto& kv : o) {
    Member m{{}, kv.key(), &kv.value()};
    if (!Utf16Of(m.name, &m.sort_key)) return Refuse(path, "a member name that is not UTF-8");
    members.push_back(std::move(m));
  }
  // RFC 8785 §3.2.3: by UTF-16 code units, compared as unsigned numbers (char16_t is).
  std::sort(members.begin(), members.end(),
            [](const Member& a, const Member& b) { return a.sort_key < b.sort_key; });
  out.push_back('{');
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string member_path = path + "." + std::string(members[i].name);
    if (i > 0) {
      if (members[i].sort_key == members[i - 1].sort_key)
        return Refuse(member_path, "a member name given twice");
      out.push_back(',');
    }
    if (auto r = AppendString(out, members[i].name, member_path); !r) return r;
    out.push_back(':');
    if (auto r = Append(out, *members[i].value, member_path); !r) return r;
  }
  out.push_back('}');
  return core::Ok{};
}

Result<void> Append(std::string& out, const json::value& v, const std::string& path) {
  switch (v.kind()) {
    case json::kind::null:
      out.append("null");
      return core::Ok{};
    case json::kind::bool_:
      out.append(v.get_bool() ? "true" : "false");
      return core::Ok{};
    case json::kind::int64: {
      const int64_t i = v.get_int64();
      if (i >= -kMaxExact && i <= kMaxExact) {
        AppendJsonInt(out, i);
        return core::Ok{};
      }
      return AppendCanonicalNumber(out, static_cast<double>(i));
    }
    case json::kind::uint64: {
      const uint64_t u = v.get_uint64();
      if (u <= static_cast<uint64_t>(kMaxExact)) {
        AppendJsonInt(out, static_cast<int64_t>(u));
        return core::Ok{};
      }
      return AppendCanonicalNumber(out, static_cast<double>(u));
    }
    case json::kind::double_:
      if (!std::isfinite(v.get_double())) return Refuse(path, "a number that is not finite");
      return AppendCanonicalNumber(out, v.get_double());
    case json::kind::string:
      return AppendString(out, v.get_string(), path);
    case json::kind::array: {
      out.push_back('[');
      const json::array& a = v.get_array();
      for (size_t i = 0; i < a.size(); ++i) {
        if (i > 0) out.push_back(',');
        if (auto r = Append(out, a[i], path + "[" + std::to_string(i) + "]"); !r) return r;
      }
      out.push_back(']');
      return core::Ok{};
    }
    case json::kind::object:
      return AppendObject(out, v.get_object(), path);
  }
  return Refuse(path, "an unknown kind of value");
}

}  // namespace

Result<void> AppendCanonicalNumber(std::string& out, double d) {
  if (!std::isfinite(d))
    return Error(ErrorCode::kInvalidParams,
                 "canonical JSON (RFC 8785): NaN and the "
                 "infinities have no JSON form");
  if (d == 0) {  // 0 and -0
    out.push_back('0');
    return core::Ok{};
  }
  if (d < 0) {
    out.push_back('-');
    d = -d;
  }
  // The shortest digits that round-trip, as "D.DDDDe+XX" (std::to_chars picks the digits
  // nearest the value among the shortest, as ECMAScript's Number::toString does).
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
  const size_t e = text.find('e');
  std::string digits(1, text[0]);
  if (e > 1) digits.append(text.substr(2, e - 2));  // after the '.'
  int exponent = 0;
  std::string_view exp_text = text.substr(e + 1);
  const bool negative_exp = exp_text.front() == '-';
  if (exp_text.front() == '+' || exp_text.front() == '-') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  if (negative_exp) exponent = -exponent;
  // ECMAScript Number::toString(x) with k digits and x = digits × 10^(n−k).
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  if (k <= n && n <= 21) {
    out.append(digits);
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out.append(digits, 0, static_cast<size_t>(n));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-n), '0');
    out.append(digits);
  } else {
    out.push_back(digits[0]);
    if (k > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    out.push_back(n - 1 >= 0 ? '+' : '-');
    out.append(std::to_string(std::abs(n - 1)));
  }
  return core::Ok{};
}

Result<std::string> CanonicalJson(const json::value& v) {
  std::string out;
  if (auto r = Append(out, v, "$"); !r) return std::move(r).error();
  return out;
}

}  // namespace a2ad::protocol
