#pragma once
// PageCursor: where the next ListTasks page starts, and its opaque `page_token` form.
// Shared by every TaskStore backend, so a token means the same thing on each engine.
//
// Thread safety: pure functions.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"

namespace a2ad::storage {

/// The (updated_at_ms, task_id) key of the last record of a page. The next page holds the
/// records strictly after it in ListTasks order (updated_at_ms desc, then task id desc).
struct PageCursor {
  int64_t updated_at_ms = 0;
  std::string task_id;
  friend bool operator==(const PageCursor&, const PageCursor&) = default;
};

/// The opaque token: unpadded base64url of "<updated_at_ms>:<task_id>". Clients must not
/// parse it; the format may change with the store.
std::string EncodePageToken(const PageCursor& cursor);

/// Inverse of EncodePageToken. kInvalidParams naming `pageToken` for anything
/// EncodePageToken cannot produce (bad alphabet, padding, non-canonical bits, no
/// separator, a non-numeric or out-of-range timestamp, an empty task id).
core::Result<PageCursor> DecodePageToken(std::string_view token);

struct TaskQuery;
/// The checks every TaskStore::List starts with: page_size at least 1, a tenant (unless
/// all_tenants), and the query's page_token decoded (nullopt for the first page). kInvalidParams
/// otherwise.
core::Result<std::optional<PageCursor>> StartPage(const TaskQuery& query);

/// True if the record keyed (updated_at_ms, task_id) comes strictly after `cursor` in
/// ListTasks order, i.e. belongs to a later page.
bool IsAfterCursor(const PageCursor& cursor, int64_t updated_at_ms, std::string_view task_id);

}  // namespace a2ad::storage
