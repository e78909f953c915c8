#include "a2ad/storage/page_cursor.hpp"

#include <array>
#include <charconv>
#include <system_error>

#include "a2ad/core/encoding.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {
namespace {

core::Error BadToken(std::string_view why) {
  return core::Error(core::ErrorCode::kInvalidParams,
                     "pageToken: malformed page token (" + std::string(why) + ")",
                     {{"field", "pageToken"}});
}

}  // namespace

std::string EncodePageToken(const PageCursor& cursor) {
  return core::Base64UrlEncode(std::to_string(cursor.updated_at_ms) + ":" + cursor.task_id);
}

core::Result<PageCursor> DecodePageToken(std::string_view token) {
  std::string raw;
  auto decoded = core::Base64UrlDecode(token);
  if (decoded) raw = std::move(*decoded);
  if (token.empty() || !decoded || core::Base64UrlEncode(raw) != token) {
    return BadToken("not base64url");
  }
  const size_t colon = raw.find(':');
  if (colon == std::string::npos) return BadToken("no separator");
  PageCursor cursor;
  const char* first = raw.data();
  const char* last = raw.data() + colon;
  const auto [end, ec] = std::from_chars(first, last, cursor.updated_at_ms);
  if (colon == 0 || ec != std::errc() || end != last ||
      std::to_string(cursor.updated_at_ms) != std::string_view(first, colon)) {
    return BadToken("bad timestamp");
  }
  cursor.task_id = raw.substr(colon + 1);
  if (cursor.task_id.empty()) return BadToken("empty task id");
  return cursor;
}

bool IsAfterCursor(const PageCursor& cursor, int64_t updated_at_ms, std::string_view task_id) {
  if (updated_at_ms != cursor.updated_at_ms) return updated_at_ms < cursor.updated_at_ms;
  return task_id < std::string_view(cursor.task_id);
}

core::Result<std::optional<PageCursor>> StartPage(const TaskQuery& query) {
  if (query.page_size < 1)
    return core::Error(core::ErrorCode::kInvalidParams, "pageSize: must be at least 1");
  if (!query.all_tenants && query.tenant.empty())
    return core::Error(core::ErrorCode::kInvalidParams,
                       "task query: a tenant is required (or all_tenants for a server scan)");
  if (query.page_token.empty()) return std::optional<PageCursor>();
  auto decoded = DecodePageToken(query.page_token);
  if (!decoded) return std::move(decoded).error();
  return std::optional<PageCursor>(std::move(decoded).value());
}

}  // namespace a2ad::storage
