#pragma once
// `a2ad backup`'s database part: SQLite's online backup API copies a live database page by
// page into a new file, while the server keeps serving (writers are not blocked: the copy
// reads one consistent WAL snapshot; pages written meanwhile restart it, so it is run in
// one step). The copy is checked (quick_check) and its task count read before it is put in
// place (written as <dest>.partial, then renamed).
#include <cstdint>
#include <string>

#include "a2ad/core/result.hpp"

namespace a2ad::storage::sqlite {

struct BackupReport {
  int64_t tasks = 0;
  int64_t pages = 0;
  int schema_version = 0;
};

/// Copies the database at `source` into the new file `dest` (it must not exist).
core::Result<BackupReport> BackupDatabase(const std::string& source, const std::string& dest);

}  // namespace a2ad::storage::sqlite
