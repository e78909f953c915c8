#include "a2ad/protocol/json_util.hpp"

namespace a2ad::protocol {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

Error FieldError(std::string_view path, std::string_view what) {
  std::string msg;
  msg.reserve(path.size() + what.size() + 2);
  msg.append(path).append(": ").append(what);
  return Error(ErrorCode::kInvalidParams, std::move(msg), {{"field", std::string(path)}});
}

std::string Join(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string Index(std::string_view path, size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

const json::value* Find(const json::object& o, std::string_view camel, std::string_view snake) {
  if (auto* v = o.if_contains(camel)) return v;
  if (!snake.empty())
    if (auto* v = o.if_contains(snake)) return v;
  return nullptr;
}

Result<std::string> OptString(const json::object& o, std::string_view path, std::string_view camel,
                              std::string_view snake) {
  const json::value* v = Find(o, camel, snake);
  if (!v || v->is_null()) return std::string();
  if (!v->is_string()) return FieldError(Join(path, camel), "expected a string");
  return std::string(v->get_string());
}

Result<std::string> ReqString(const json::object& o, std::string_view path, std::string_view camel,
                              std::string_view snake) {
  const json::value* v = Find(o, camel, snake);
  if (!v || v->is_null()) return FieldError(Join(path, camel), "required field is missing");
  if (!v->is_string()) return FieldError(Join(path, camel), "expected a string");
  if (v->get_string().empty()) return FieldError(Join(path, camel), "must not be empty");
  return std::string(v->get_string());
}

Result<std::optional<int64_t>> OptInt(const json::object& o, std::string_view path,
                                      std::string_view camel, std::string_view snake) {
  const json::value* v = Find(o, camel, snake);
  if (!v || v->is_null()) return std::optional<int64_t>();
  if (v->is_int64()) return std::optional<int64_t>(v->get_int64());
  if (v->is_uint64() && v->get_uint64() <= static_cast<uint64_t>(INT64_MAX))
    return std::optional<int64_t>(static_cast<int64_t>(v->get_uint64()));
  if (v->is_double()) {
    double d = v->get_double();
    // The range first: converting a double an int64 cannot hold is undefined behaviour.
    if (d > -9e15 && d < 9e15 && d == static_cast<double>(static_cast<int64_t>(d)))
      return std::optional<int64_t>(static_cast<int64_t>(d));
  }
  if (v->is_string()) {  // ProtoJSON allows int64 as strings
    const auto& s = v->get_string();
    try {
      size_t used = 0;
      long long n = std::stoll(std::string(s), &used);
      if (used == s.size()) return std::optional<int64_t>(n);
    } catch (...) {
    }
  }
  return FieldError(Join(path, camel), "expected an integer");
}

Result<std::optional<bool>> OptBool(const json::object& o, std::string_view path,
                                    std::string_view camel, std::string_view snake) {
  const json::value* v = Find(o, camel, snake);
  if (!v || v->is_null()) return std::optional<bool>();
  if (!v->is_bool()) return FieldError(Join(path, camel), "expected a boolean");
  return std::optional<bool>(v->get_bool());
}

Result<json::object> OptObject(const json::object& o, std::string_view path, std::string_view camel,
                               std::string_view snake) {
  const json::value* v = Find(o, camel, snake);
  if (!v || v->is_null()) return json::object();
  if (!v->is_object()) return FieldError(Join(path, camel), "expected an object");
  return json::object(v->get_object(), json::storage_ptr());  // not o's resource: an arena's, say
}

Result<std::vector<std::string>> OptStringList(const json::object& o, std::string_view path,
                                               std::string_view camel, std::string_view snake) {
  std::vector<std::string> out;
  const json::value* v = Find(o, camel, snake);
  if (!v || v->is_null()) return out;
  if (!v->is_array()) return FieldError(Join(path, camel), "expected an array of strings");
  const auto& a = v->get_array();
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].is_string()) return FieldError(Index(Join(path, camel), i), "expected a string");
    out.emplace_back(a[i].get_string());
  }
  return out;
}

Result<const json::object*> AsObject(const json::value& v, std::string_view path) {
  if (!v.is_object()) return FieldError(path, "expected an object");
  return &v.get_object();
}

// ---- lenient readers -------------------------------------------------------------------------

std::string_view Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

const json::object& ObjOr(const json::object& o, std::string_view key) {
  static const json::object kEmpty;
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? v->get_object() : kEmpty;
}

int64_t IntOr(const json::object& o, std::string_view key, int64_t fallback) {
  const json::value* v = o.if_contains(key);
  if (!v) return fallback;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  if (v->is_double()) return static_cast<int64_t>(v->as_double());
  return fallback;
}

}  // namespace a2ad::protocol
