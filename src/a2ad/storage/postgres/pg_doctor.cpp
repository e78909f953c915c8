// See pg_doctor.hpp.
#include "a2ad/storage/postgres/pg_doctor.hpp"

#include <string>

#include "a2ad/storage/postgres/pg_connection.hpp"
#include "a2ad/storage/postgres/pg_schema.hpp"
#include "a2ad/storage/stored_records.hpp"

namespace a2ad::storage {

core::Result<PgDoctorReport> CheckPostgres(const std::string& url) {
  auto opened = pg::Connection::Open(url, 0);
  if (!opened) return std::move(opened).error();
  pg::Connection& db = **opened;
  auto version = pg::CurrentVersion(db);
  if (!version) return std::move(version).error();
  if (*version != pg::LatestVersion())
    return core::Error(core::ErrorCode::kInvalidParams,
                       "the database's schema is version " + std::to_string(*version) +
                           ", this build's " + std::to_string(pg::LatestVersion()) +
                           ": run `a2ad migrate` first");
  // One snapshot for the whole check, read in pages by key.
  if (auto b = db.Run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "begin"); !b)
    return std::move(b).error();
  PgDoctorReport report;
  constexpr int64_t kPage = 500;
  std::string after;
  for (;;) {
    auto rows = db.Exec(
        "SELECT id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run,"
        " coalesce(dedup_key, ''), tenant, owner FROM tasks WHERE id > $1"
        " ORDER BY id LIMIT $2",
        pg::Params().Add(after).Add(kPage), "read tasks");
    if (!rows) return std::move(rows).error();
    for (int i = 0; i < rows->size(); ++i) {
      StoredTask t{rows->Text(i, 0), rows->Text(i, 1), rows->Int(i, 2),  rows->Int(i, 3),
                   rows->Int(i, 4),  rows->Text(i, 5), rows->Text(i, 6), rows->Text(i, 7),
                   rows->Text(i, 8), rows->Text(i, 9)};
      ++report.tasks_checked;
      if (auto r = DecodeStoredTask(t); !r)
        report.damaged.push_back({std::string(t.id), "snapshot", r.error().message});
      after = std::string(t.id);
    }
    if (rows->size() < kPage) break;
  }
  std::string task;
  int64_t sequence = -1;
  for (;;) {
    auto rows = db.Exec(
        "SELECT task_id, sequence, payload FROM task_events WHERE (task_id, sequence) > ($1, $2)"
        " ORDER BY task_id, sequence LIMIT $3",
        pg::Params().Add(task).Add(sequence).Add(kPage), "read events");
    if (!rows) return std::move(rows).error();
    for (int i = 0; i < rows->size(); ++i) {
      task = std::string(rows->Text(i, 0));
      sequence = rows->Int(i, 1);
      ++report.events_checked;
      if (auto r = DecodeEventPayload(task, sequence, rows->Text(i, 2)); !r)
        report.damaged.push_back({task, "event " + std::to_string(sequence), r.error().message});
    }
    if (rows->size() < kPage) break;
  }
  (void)db.Run("COMMIT", "end");
  return report;
}

}  // namespace a2ad::storage
