#include "a2ad/storage/sqlite/sqlite_connection.hpp"

#include <mutex>

#include "a2ad/storage/sqlite/sqlite_wal_vfs.hpp"

namespace a2ad::storage::sqlite {
namespace {

// SQLite keeps memory statistics (sqlite3_memory_used, the soft and hard heap limits; a2ad
// reads none of them) behind one process-wide mutex taken on every allocation and free:
// about 75 times per commit, by the writer and every reader alike. Off, for the process,
// before the first connection: sqlite3_config must precede SQLite's initialization, so it
// is refused (and changes nothing) if something opened a database first.
void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

Stmt::~Stmt() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Stmt::Bind(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

void Stmt::Bind(int index, std::string_view value) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

void Stmt::BindStatic(int index, std::string_view value) {
  const int rc =
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_STATIC, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

void Stmt::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
}

void Stmt::Bind(const char* name, int64_t value) {
  if (const int index = sqlite3_bind_parameter_index(stmt_, name); index > 0) Bind(index, value);
}

void Stmt::Bind(const char* name, std::string_view value) {
  if (const int index = sqlite3_bind_parameter_index(stmt_, name); index > 0) Bind(index, value);
}

int Stmt::Step() {
  if (bind_error_ != SQLITE_OK) return bind_error_;
  return sqlite3_step(stmt_);
}

std::string_view Stmt::Text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr) return {};
  return {data, static_cast<size_t>(size)};
}

core::Result<std::unique_ptr<Connection>> Connection::Open(const std::string& path, int flags,
                                                           int busy_timeout_ms) {
  ConfigureSqliteOnce();
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, CoalescingWalVfs());
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return core::Error(core::ErrorCode::kInternal,
                       "sqlite: cannot open '" + path + "': " + message,
                       {{"sqlite", std::to_string(rc & 0xff)}});
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return std::unique_ptr<Connection>(new Connection(db, path));
}

Connection::~Connection() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

core::Result<void> Connection::Exec(const char* sql, std::string_view what) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return core::Ok{};
  std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return core::Error(core::ErrorCode::kInternal,
                     "sqlite '" + path_ + "': " + std::string(what) + ": " + text + " (" +
                         std::to_string(rc) + ")",
                     {{"sqlite", std::to_string(rc & 0xff)}});
}

core::Result<sqlite3_stmt*> Connection::Prepare(std::string_view sql) {
  if (auto it = cache_.find(sql); it != cache_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Fail("prepare '" + std::string(sql) + "'", rc);
  cache_.emplace(std::string(sql), stmt);
  return stmt;
}

core::Error Connection::Fail(std::string_view what, int rc) const {
  // The primary result code as a detail (SQLITE_READONLY 8, SQLITE_CORRUPT 11, SQLITE_FULL
  // 13, SQLITE_NOTADB 26...): what app/ tells an operator to do about it (DatabaseAdvice).
  return core::Error(core::ErrorCode::kInternal,
                     "sqlite '" + path_ + "': " + std::string(what) + ": " + sqlite3_errmsg(db_) +
                         " (" + std::to_string(rc) + ")",
                     {{"sqlite", std::to_string(rc & 0xff)}});
}

}  // namespace a2ad::storage::sqlite
