#pragma once
// `a2ad doctor`: finds the stored records a2ad cannot read, repairs what it can, and sets the
// rest aside, so that one damaged row never costs more than its own task.
//
// Check (always): SQLite's quick_check, then every task row (snapshot, run, a2a_state) and
// every event payload is decoded exactly as the server decodes them (storage/stored_records.hpp).
//
// Repair (`repair`), per damaged task, the first that works:
//  1. text holding the bare tokens `Infinity`, `-Infinity` or `NaN` (what a2ad up to 1c072fb
//     wrote for a number beyond a double, e.g. a request carrying 1e999) gets `null` in their
//     place, in the snapshot, run, a2a_state and event payloads alike, when that makes every
//     damaged column read;
//  2. a snapshot (or run, a2a_state) that still does not read is rebuilt from the task's
//     event log, when the log is complete (sequences 0..last_sequence, none pruned) and every
//     event reads (the log is the truth; the snapshot is its fold);
//  3. otherwise the task is set aside: its row, events and push configs are copied into the
//     `quarantined_tasks` table (as the text they held) and removed from the live tables.
//     The task then reads as not found; its messageId may be used again.
// An event that does not read while its task's snapshot does is repaired by (1) or left as
// it is (reported: streams replaying it answer record_unreadable).
//
// Export (`export_path`): every damaged and every set-aside task as one JSON line each, with
// the stored text of each column (as a JSON string, or {"base64": ...} when it is not UTF-8).
//
// Run it with the server stopped when repairing (the server caches the newest state of
// active tasks). Thread safety: one call at a time per database.
#include <functional>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage::sqlite {

/// Folds a complete event log (sequence 0 first) into the record it describes. Supplied by
/// the caller (tasks/ owns the fold; storage/ must not depend on it).
using RefoldLog = std::function<core::Result<TaskRecord>(const std::vector<protocol::RunEvent>&)>;

struct DoctorOptions {
  bool repair = false;
  std::string export_path;  // "" = no export
  RefoldLog refold;         // required for repair step 2; without it that step is skipped
};

struct DoctorFinding {
  std::string task_id;
  std::string where;    // "snapshot", "run", "a2a_state" or "event <sequence>"
  std::string problem;  // why it does not read
};

struct DoctorReport {
  std::string integrity = "ok";  // SQLite's quick_check verdict
  size_t tasks_checked = 0;
  size_t events_checked = 0;
  size_t quarantined_before = 0;  // rows already in quarantined_tasks
  std::vector<DoctorFinding> damaged;
  std::vector<std::string> repaired;    // "task <id>: <how>"
  std::vector<std::string> set_aside;   // task ids
  std::vector<std::string> unrepaired;  // "task <id>: <why>"
  size_t exported = 0;

  bool clean() const { return integrity == "ok" && damaged.empty(); }
};

/// Checks (and with options.repair, repairs) the database at `db_path`, which must exist and
/// be migrated (kInvalidParams otherwise, with what to do). kInternal when the file is not a
/// database SQLite can open.
core::Result<DoctorReport> RunDoctor(const std::string& db_path, const DoctorOptions& options);

/// `text` with every bare `Infinity`, `-Infinity` and `NaN` token outside strings replaced
/// by `null`; nullopt when it holds none.
std::optional<std::string> ReplaceNonJsonNumbers(std::string_view text);

}  // namespace a2ad::storage::sqlite
