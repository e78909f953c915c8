#pragma once
// Internal to storage_sqlite: RAII over the SQLite C API. One Connection is used by one
// thread at a time (connections are opened SQLITE_OPEN_NOMUTEX). The first Open turns SQLite's
// memory statistics off for the process (a global mutex on every allocation). Every
// connection opens its database through the VFS of sqlite_wal_vfs.hpp.
#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"

namespace a2ad::storage::sqlite {

/// A borrowed, cached prepared statement for one use. The destructor resets it and clears
/// its bindings, so a cached statement never keeps a read transaction (WAL snapshot) open.
/// Bound text is copied (SQLITE_TRANSIENT).
class Stmt {
 public:
  explicit Stmt(sqlite3_stmt* stmt) : stmt_(stmt) {}
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  void Bind(int index, int64_t value);
  void Bind(int index, std::string_view value);
  /// Binds without copying: `value` must stay valid until this Stmt is destroyed (which
  /// clears its bindings).
  void BindStatic(int index, std::string_view value);
  void BindNull(int index);
  /// Binds by parameter name (":name"); a name absent from the statement is ignored.
  void Bind(const char* name, int64_t value);
  void Bind(const char* name, std::string_view value);

  /// SQLITE_ROW, SQLITE_DONE or an error code (including the first failed bind).
  int Step();

  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string_view Text(int column) const;

 private:
  sqlite3_stmt* stmt_;
  int bind_error_ = SQLITE_OK;
};

class Connection {
 public:
  /// Opens `path` with `flags` (SQLITE_OPEN_NOMUTEX is added) and sets busy_timeout.
  /// kInternal (naming the path and SQLite's message) on failure.
  static core::Result<std::unique_ptr<Connection>> Open(const std::string& path, int flags,
                                                        int busy_timeout_ms);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();  // finalizes cached statements, then closes

  /// Runs one or more SQL statements without results. kInternal with `what` on failure.
  core::Result<void> Exec(const char* sql, std::string_view what);
  /// The cached statement for `sql`, preparing it on first use.
  core::Result<sqlite3_stmt*> Prepare(std::string_view sql);
  /// kInternal "<what>: <sqlite message> (<code>)".
  core::Error Fail(std::string_view what, int rc) const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  Connection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*, std::less<>> cache_;
};

}  // namespace a2ad::storage::sqlite
