#pragma once
// `a2ad doctor` on PostgreSQL: reads every stored task and event back exactly as the server
// reads them (storage/stored_records.hpp) and names the ones that do not read. Repair and
// export are SQLite's for now (sqlite_doctor.hpp); on PostgreSQL a damaged row is the
// database administrator's to fix, with the ids this reports.
//
// Thread safety: a free function with its own connection.
#include <cstddef>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::storage {

struct PgDoctorReport {
  struct Damage {
    std::string task_id;
    std::string where;  // "snapshot" or "event N"
    std::string problem;
  };
  size_t tasks_checked = 0;
  size_t events_checked = 0;
  std::vector<Damage> damaged;
};

/// Reads every row of the database at `url` (in pages, one snapshot). Errors: those of
/// connecting (kUnavailable, redacted) and of the statements.
core::Result<PgDoctorReport> CheckPostgres(const std::string& url);

}  // namespace a2ad::storage
