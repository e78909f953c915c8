#include "a2ad/storage/sqlite/sqlite_backup.hpp"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

namespace a2ad::storage::sqlite {
namespace {

struct Db {
  sqlite3* db = nullptr;
  ~Db() { sqlite3_close_v2(db); }
};

core::Error Failed(const std::string& what, sqlite3* db, int rc) {
  return core::Error(core::ErrorCode::kInternal,
                     what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)),
                     {{"sqlite", std::to_string(rc)}});
}

core::Result<int64_t> One(sqlite3* db, const char* sql) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
  if (rc != SQLITE_OK) return Failed(sql, db, rc);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> guard(s, sqlite3_finalize);
  rc = sqlite3_step(s);
  if (rc != SQLITE_ROW) return Failed(sql, db, rc);
  if (sqlite3_column_type(s, 0) == SQLITE_TEXT) {
    const std::string text(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    return text == "ok" ? 1 : 0;
  }
  return sqlite3_column_int64(s, 0);
}

}  // namespace

core::Result<BackupReport> BackupDatabase(const std::string& source, const std::string& dest) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(source, ec))
    return core::Error(core::ErrorCode::kInvalidParams, "no database at " + source);
  if (fs::exists(dest, ec))
    return core::Error(core::ErrorCode::kInvalidParams,
                       dest + " exists; a backup is written to a new file");
  Db src, out;
  // Read-write without create: the source is in WAL mode, whose reader needs the -shm.
  int rc = sqlite3_open_v2(source.c_str(), &src.db, SQLITE_OPEN_READWRITE, nullptr);
  if (rc != SQLITE_OK) return Failed("open " + source, src.db, rc);
  sqlite3_busy_timeout(src.db, 10000);
  const std::string partial = dest + ".partial";
  fs::remove(partial, ec);
  rc = sqlite3_open_v2(partial.c_str(), &out.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                       nullptr);
  if (rc != SQLITE_OK) return Failed("create " + partial, out.db, rc);
  BackupReport report;
  {
    sqlite3_backup* b = sqlite3_backup_init(out.db, "main", src.db, "main");
    if (!b) return Failed("backup", out.db, sqlite3_errcode(out.db));
    // One step (-1: every page) under one read transaction: a consistent snapshot that
    // writers do not disturb. Busy (a checkpoint's lock): wait and try again.
    for (int attempt = 0;; ++attempt) {
      rc = sqlite3_backup_step(b, -1);
      if (rc == SQLITE_DONE) break;
      if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempt < 100) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      sqlite3_backup_finish(b);
      fs::remove(partial, ec);
      return Failed("backup of " + source, nullptr, rc);
    }
    report.pages = sqlite3_backup_pagecount(b);
    rc = sqlite3_backup_finish(b);
    if (rc != SQLITE_OK) {
      fs::remove(partial, ec);
      return Failed("backup of " + source, out.db, rc);
    }
  }
  auto check = One(out.db, "PRAGMA quick_check");
  if (!check || *check != 1) {
    fs::remove(partial, ec);
    return check ? core::Error(core::ErrorCode::kInternal, "the copy fails quick_check")
                 : std::move(check).error();
  }
  auto tasks = One(out.db, "SELECT count(*) FROM tasks");
  auto version = One(out.db, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!tasks || !version) {
    fs::remove(partial, ec);
    return !tasks ? std::move(tasks).error() : std::move(version).error();
  }
  report.tasks = *tasks;
  report.schema_version = static_cast<int>(*version);
  sqlite3_close_v2(out.db);
  out.db = nullptr;
  fs::rename(partial, dest, ec);
  if (ec) return core::Error(core::ErrorCode::kInternal, "rename to " + dest + ": " + ec.message());
  return report;
}

}  // namespace a2ad::storage::sqlite
