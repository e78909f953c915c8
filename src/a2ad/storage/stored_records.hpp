#pragma once
// Reading a task back from its stored text (every SQL backend's reads, `a2ad doctor`). A row
// whose text does not read (not strict JSON, not a task) is kDataCorrupt with a `taskId`
// detail and a message naming the column and the fault, for the log: the store skips or
// refuses that one record and serves the rest (quarantine in place).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string_view>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

/// The columns of one `tasks` row as stored.
struct StoredTask {
  std::string_view id;
  std::string_view skill_id;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  int64_t last_sequence = -1;
  std::string_view snapshot;   // the v1.0 Task JSON
  std::string_view run;        // the OpenWOP RunSnapshot JSON object
  std::string_view dedup_key;
  std::string_view tenant;
  std::string_view owner;
};

/// The record a row stores; kDataCorrupt when a column does not read. Without `with_run`
/// the run column is neither read nor checked (TaskRecord::run stays empty).
core::Result<TaskRecord> DecodeStoredTask(const StoredTask& row, bool with_run = true);

/// The event a stored run is paused until (its open pause's `conditions.onEvent`: `status`
/// "paused" and `pause.conditions.onEvent` a string); "" when none. The one reading of it:
/// the PostgreSQL writer indexes it (waits_for_event), the task service follows it.
std::string_view EventAwaited(const protocol::RunSnapshot& run);

/// Whether a stored run is parked, and until when: nullopt when it is not (an unfinished run
/// that is not parked needs an execution); 0 when it waits with no time set (for an answer, a
/// resume or an event); else the epoch ms at which it must be woken (its interrupt's
/// `expiresAt`, or the earlier of its open pause's `triggerAtMs` and `timeoutAtMs`). Parked:
/// `status` "paused", or "waiting-..." without `waitingOn` (a run waiting for its child's gate
/// is not: it follows the child). The one reading of it: both SQL writers store it
/// (`tasks.wake_at_ms`: recovery starts no execution for a parked run, and the task service's
/// wake timer reads the due ones), and the workflow engine plans with it.
std::optional<int64_t> ParkedUntil(const protocol::RunSnapshot& run);

/// The payload of a `task_events` row; kDataCorrupt (taskId, sequence) when it does not read.
core::Result<boost::json::object> DecodeEventPayload(std::string_view task_id, int64_t sequence,
                                                     std::string_view payload);

}  // namespace a2ad::storage
