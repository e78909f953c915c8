#pragma once
// Field readers for decoders: each returns an InvalidParams error naming the JSON path of
// the offending field ("params.message.parts[0].text: expected a string").
// Below them, lenient readers (Str, ObjOr, IntOr) for documents a2ad wrote itself (the run
// snapshot, event payloads, a checked workflow definition): absent or of another type, a
// member reads as the fallback, never as an error.
//
// Thread safety: pure functions (ObjOr's empty object is a constant shared by all threads).
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::protocol {

core::Error FieldError(std::string_view path, std::string_view what);
std::string Join(std::string_view path, std::string_view key);
std::string Index(std::string_view path, size_t i);

/// Looks up `camel` or, failing that, `snake` (ProtoJSON parsers accept both).
const boost::json::value* Find(const boost::json::object& o, std::string_view camel,
                               std::string_view snake = {});

/// Optional string member; missing or null => "" . Wrong type => error.
core::Result<std::string> OptString(const boost::json::object& o, std::string_view path,
                                    std::string_view camel, std::string_view snake = {});
/// Required non-empty string member.
core::Result<std::string> ReqString(const boost::json::object& o, std::string_view path,
                                    std::string_view camel, std::string_view snake = {});
core::Result<std::optional<int64_t>> OptInt(const boost::json::object& o, std::string_view path,
                                            std::string_view camel, std::string_view snake = {});
core::Result<std::optional<bool>> OptBool(const boost::json::object& o, std::string_view path,
                                          std::string_view camel, std::string_view snake = {});
/// Optional object member, copied with the default resource (`o` may live in an arena);
/// missing or null => {}. Wrong type => error.
core::Result<boost::json::object> OptObject(const boost::json::object& o, std::string_view path,
                                            std::string_view camel, std::string_view snake = {});
core::Result<std::vector<std::string>> OptStringList(const boost::json::object& o,
                                                     std::string_view path, std::string_view camel,
                                                     std::string_view snake = {});
/// `v` must be an object; else an error "<path>: expected an object".
core::Result<const boost::json::object*> AsObject(const boost::json::value& v,
                                                  std::string_view path);

// ---- lenient readers -------------------------------------------------------------------------

/// The string member `key` of `o`; "" when absent or not a string. The view points into `o`.
std::string_view Str(const boost::json::object& o, std::string_view key);
/// The object member `key` of `o`; an empty object when absent or not an object. The reference
/// points into `o` (or to a static empty object).
const boost::json::object& ObjOr(const boost::json::object& o, std::string_view key);
/// The number member `key` of `o` as an integer (a double is truncated, a uint64 cast);
/// `fallback` when absent or not a number.
int64_t IntOr(const boost::json::object& o, std::string_view key, int64_t fallback);

/// Room for one more member or item, for containers built one at a time (a parse, an
/// encoder). Boost.JSON grows a container by half from nothing, a reallocation each at 1, 2,
/// 3, 4, 6 and 9 members; this starts at 4 and doubles.
template <class Container>
void RoomForOne(Container& c) {
  if (c.size() == c.capacity()) c.reserve(c.capacity() < 4 ? 4 : c.capacity() * 2);
}

}  // namespace a2ad::protocol
