// `a2ad doctor`: the operator's view of stored records the server cannot read
// (storage/sqlite/sqlite_doctor.hpp), with the event-log fold of tasks/ for rebuilding.
#include <cstdio>
#include <filesystem>

#include "a2ad/app/config.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/storage/postgres/pg_doctor.hpp"
#include "a2ad/storage/postgres/pg_backend.hpp"
#include "a2ad/storage/sqlite/sqlite_doctor.hpp"
#include "a2ad/tasks/task_projection.hpp"

namespace a2ad::app {

namespace {

// PostgreSQL: every record read back; repair and export are SQLite's for now.
int RunPostgresDoctor(const Config& config, const DoctorConfig& doctor) {
  if (doctor.repair || !doctor.export_path.empty()) {
    std::fprintf(stderr,
                 "a2ad doctor: --repair and --export work on SQLite only for now; on "
                 "PostgreSQL doctor reads every record and names the damaged ones\n");
    return 2;
  }
  auto report = storage::CheckPostgres(config.database_url);
  if (!report) {
    std::fprintf(stderr, "a2ad doctor: %s\n", report.error().message.c_str());
    return 2;
  }
  std::printf("a2ad doctor: PostgreSQL database %s\n",
              storage::PostgresDatabaseName(config.database_url).c_str());
  std::printf("  checked: %zu tasks, %zu events\n", report->tasks_checked,
              report->events_checked);
  if (report->damaged.empty()) std::printf("  every stored record reads\n");
  for (const auto& f : report->damaged)
    std::printf("  damaged: task %s, %s: %s\n", f.task_id.c_str(), f.where.c_str(),
                f.problem.c_str());
  return report->damaged.empty() ? 0 : 1;
}

}  // namespace

int RunDoctor(const Config& config, const DoctorConfig& doctor) {
  if (!config.database_url.empty()) return RunPostgresDoctor(config, doctor);
  const std::string path = (std::filesystem::path(config.data_dir) / "a2ad.db").string();
  storage::sqlite::DoctorOptions options;
  options.repair = doctor.repair;
  options.export_path = doctor.export_path;
  options.refold =
      [](const std::vector<protocol::RunEvent>& log) -> core::Result<storage::TaskRecord> {
    storage::TaskRecord record;
    for (const auto& e : log)  // ApplyEvent: every step checked, as when it was committed
      if (auto applied = tasks::ApplyEvent(record, e); !applied) return std::move(applied).error();
    return record;
  };
  auto report = storage::sqlite::RunDoctor(path, options);
  if (!report) {
    std::fprintf(stderr, "a2ad doctor: %s\n", report.error().message.c_str());
    return 2;
  }
  const auto& r = report.value();
  std::printf("a2ad doctor: %s\n", path.c_str());
  std::printf("  integrity: %s\n", r.integrity.c_str());
  std::printf("  checked: %zu tasks, %zu events; %zu tasks set aside earlier\n", r.tasks_checked,
              r.events_checked, r.quarantined_before);
  if (r.damaged.empty()) std::printf("  every stored record reads\n");
  for (const auto& f : r.damaged)
    std::printf("  damaged: task %s, %s: %s\n", f.task_id.c_str(), f.where.c_str(),
                f.problem.c_str());
  if (!doctor.export_path.empty())
    std::printf("  exported %zu records to %s\n", r.exported, doctor.export_path.c_str());
  for (const auto& line : r.repaired) std::printf("  repaired: %s\n", line.c_str());
  for (const auto& id : r.set_aside)
    std::printf("  set aside: task %s (kept in quarantined_tasks; --export writes it out)\n",
                id.c_str());
  for (const auto& line : r.unrepaired) std::printf("  not repaired: %s\n", line.c_str());
  if (!r.damaged.empty() && !doctor.repair)
    std::printf(
        "  run again with --repair to repair what can be repaired and set the rest "
        "aside (stop the server first)\n");
  if (r.integrity != "ok") {
    std::printf("  the database file itself is damaged: restore it from a backup\n");
    return 1;
  }
  const bool fixed = doctor.repair && r.unrepaired.empty();
  return r.damaged.empty() || fixed ? 0 : 1;
}

}  // namespace a2ad::app
