#include "a2ad/storage/page_cursor.hpp"

#include <array>
#include <charconv>
#include <system_error>

#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  out.reserve((in.size() * 4 + 2) / 3);
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t n = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) |
                       uint32_t(uint8_t(in[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const size_t rest = in.size() - i;
  if (rest == 1) {
    const uint32_t n = uint32_t(uint8_t(in[i])) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
  } else if (rest == 2) {
    const uint32_t n = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
  }
  return out;
}

// Returns false on a character outside the alphabet or an impossible length. Canonical
// form (zero trailing bits) is checked by the caller through re-encoding.
bool Base64UrlDecode(std::string_view in, std::string& out) {
  std::array<int8_t, 256> rev{};
  rev.fill(-1);
  for (size_t k = 0; k < kAlphabet.size(); ++k) rev[uint8_t(kAlphabet[k])] = int8_t(k);
  if (in.size() % 4 == 1) return false;
  out.clear();
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int8_t v = rev[uint8_t(c)];
    if (v < 0) return false;
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xFF);
    }
  }
  return true;
}

core::Error BadToken(std::string_view why) {
  return core::Error(core::ErrorCode::kInvalidParams,
                     "pageToken: malformed page token (" + std::string(why) + ")",
                     {{"field", "pageToken"}});
}

}  // namespace

std::string EncodePageToken(const PageCursor& cursor) {
  return Base64UrlEncode(std::to_string(cursor.updated_at_ms) + ":" + cursor.task_id);
}

core::Result<PageCursor> DecodePageToken(std::string_view token) {
  std::string raw;
  if (token.empty() || !Base64UrlDecode(token, raw) || Base64UrlEncode(raw) != token) {
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
  if (query.page_token.empty()) return std::optional<PageCursor>();
  auto decoded = DecodePageToken(query.page_token);
  if (!decoded) return std::move(decoded).error();
  return std::optional<PageCursor>(std::move(decoded).value());
}

}  // namespace a2ad::storage
