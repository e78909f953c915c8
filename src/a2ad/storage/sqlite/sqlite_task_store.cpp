#include "a2ad/storage/sqlite/sqlite_task_store.hpp"

#include <sqlite3.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store_impl.hpp"

namespace a2ad::storage {

namespace sqlite {

core::Error Closed() { return core::Error(core::ErrorCode::kUnavailable, "task store is closed"); }

core::Error Internal(std::string message) {
  return core::Error(core::ErrorCode::kInternal, std::move(message));
}

// Runs one cached statement that returns no rows (BEGIN, SAVEPOINT, COMMIT, ...).
core::Result<void> Run(Connection& db, const char* sql) {
  auto prepared = db.Prepare(sql);
  if (!prepared) return std::move(prepared).error();
  Stmt stmt(*prepared);
  if (const int rc = stmt.Step(); rc != SQLITE_DONE && rc != SQLITE_ROW) return db.Fail(sql, rc);
  return core::Ok{};
}

// Pragmas of every read-write connection. journal_mode is persistent in the file; the
// others are per connection.
core::Result<void> ConfigureReadWrite(Connection& db, std::optional<bool> synchronous_full) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db.handle(), "PRAGMA journal_mode=WAL", -1, &raw, nullptr);
  std::string mode;
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(raw);
    if (rc == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, 0));
      mode = text != nullptr ? text : "";
      rc = SQLITE_OK;
    }
  }
  sqlite3_finalize(raw);
  if (rc != SQLITE_OK) return db.Fail("PRAGMA journal_mode=WAL", rc);
  if (mode != "wal") {
    return Internal("sqlite '" + db.path() + "': cannot enable WAL mode (journal_mode is '" + mode +
                    "')");
  }
  if (synchronous_full) {
    const char* sync = *synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL";
    if (auto set = db.Exec(sync, "set synchronous"); !set) return set;
  }
  return db.Exec("PRAGMA foreign_keys=ON", "enable foreign keys");
}

core::Result<void> ProbeWritable(Connection& db) {
  int64_t version = 0;
  {
    auto read = db.Prepare("PRAGMA user_version");
    if (!read) return std::move(read).error();
    Stmt s(*read);
    if (const int rc = s.Step(); rc != SQLITE_ROW) return db.Fail("PRAGMA user_version", rc);
    version = s.Int(0);
  }
  if (auto begun = Run(db, "BEGIN IMMEDIATE"); !begun) return begun;
  const std::string set = "PRAGMA user_version=" + std::to_string(version);
  auto written = db.Exec(set.c_str(), "write the database (a probe)");
  if (written) written = Run(db, "COMMIT");
  if (!written && sqlite3_get_autocommit(db.handle()) == 0) (void)Run(db, "ROLLBACK");
  return written;
}

}  // namespace sqlite

namespace {

using sqlite::ConfigureReadWrite;
using sqlite::Connection;
using sqlite::Internal;
using sqlite::Stmt;

}  // namespace

// ---- Impl -------------------------------------------------------------------------------
// The writer: sqlite_writer.cpp; retention: sqlite_retention.cpp; the reads:
// sqlite_task_queries.cpp.

void SqliteTaskStore::Impl::Start() {
  StartCheckpointer();
  writer_thread_ = std::thread([this] {
    core::SetThreadName("sqlite-writer");
    WriterLoop();
  });
}

void SqliteTaskStore::Impl::Close() {
  if (WritingHere()) {
    // A `done` callback called Close(): waiting for the writer would deadlock (task_store.hpp
    // forbids it).
    core::LogError("SqliteTaskStore::Close called from a commit callback");
    std::abort();
  }
  std::lock_guard close_lock(close_mu_);
  if (closed_) return;
  {
    std::lock_guard lock(queue_mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (writer_thread_.joinable()) writer_thread_.join();
  StopCheckpointer();
  readers_.Close();
  writer_.reset();  // the last connection to close checkpoints the WAL
  closed_ = true;
}

// ---- SqliteTaskStore ---------------------------------------------------------------------

SqliteTaskStore::SqliteTaskStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteTaskStore::~SqliteTaskStore() { Close(); }

core::Result<std::unique_ptr<SqliteTaskStore>> SqliteTaskStore::Open(const std::string& path,
                                                                     SqliteOptions opts) {
  if (path.empty() || path == ":memory:") {
    return core::Error(core::ErrorCode::kInvalidParams,
                       "sqlite: a database file path is required (not '" + path + "')");
  }
  if (opts.max_batch_commits < 1 || opts.reader_connections < 1 || opts.prune_batch_events < 1 ||
      opts.busy_timeout_ms < 0) {
    return core::Error(core::ErrorCode::kInvalidParams,
                       "sqlite: max_batch_commits, reader_connections and prune_batch_events "
                       "must be at least 1, busy_timeout_ms not negative");
  }
  if (sqlite3_threadsafe() == 0) {
    return Internal("sqlite: the linked libsqlite3 is built without thread support");
  }
  auto writer =
      Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, opts.busy_timeout_ms);
  if (!writer) return std::move(writer).error();
  Connection& db = **writer;
  if (auto configured = ConfigureReadWrite(db, opts.synchronous_full); !configured) {
    return std::move(configured).error();
  }
  if (opts.migrate_on_open) {
    if (auto migrated = sqlite::MigrateToLatest(db); !migrated) return std::move(migrated).error();
    for (const auto& c : opts.components)
      if (auto migrated = sqlite::MigrateComponent(db, c.component, c.sqlite); !migrated)
        return std::move(migrated).error();
  } else {
    auto version = sqlite::CurrentVersion(db);
    if (!version) return std::move(version).error();
    if (*version > sqlite::LatestVersion()) return sqlite::NewerSchemaError(path, *version);
    if (*version < sqlite::LatestVersion()) {
      return Internal("sqlite '" + path + "': database schema version " + std::to_string(*version) +
                      " is older than " + std::to_string(sqlite::LatestVersion()) +
                      "; run `a2ad migrate`");
    }
    for (const auto& c : opts.components) {
      auto at = sqlite::ComponentVersion(db, c.component);
      if (!at) return std::move(at).error();
      const int latest = c.sqlite.empty() ? 0 : c.sqlite.back().version;
      if (*at != latest)
        return Internal("sqlite '" + path + "': component '" + c.component + "' is at version " +
                        std::to_string(*at) + ", this build uses " + std::to_string(latest) +
                        "; run its migration");
    }
  }
  // Writable now (a database file that is read-only, a full disk, a directory where the WAL
  // cannot be made), rather than at the first commit of a request.
  if (auto writable = sqlite::ProbeWritable(db); !writable) return std::move(writable).error();
  // When the WAL restarts after a burst, its file is cut back to this size instead of keeping
  // the burst's size on disk.
  if (auto limited = db.Exec("PRAGMA journal_size_limit=67108864", "limit the WAL file"); !limited)
    return std::move(limited).error();
  // What the writer connection really runs with (PRAGMA synchronous reads back 1 or 2).
  std::string synchronous = "unknown";
  if (auto prepared = db.Prepare("PRAGMA synchronous")) {
    Stmt read(*prepared);
    if (read.Step() == SQLITE_ROW) {
      static constexpr const char* kLevels[] = {"off", "normal", "full", "extra"};
      const int64_t level = read.Int(0);
      if (level >= 0 && level <= 3) synchronous = kLevels[level];
    }
  }
  auto impl = std::make_unique<Impl>(path, std::move(opts), std::move(writer).value());
  impl->Start();
  auto store = std::unique_ptr<SqliteTaskStore>(new SqliteTaskStore(std::move(impl)));
  store->synchronous_ = std::move(synchronous);
  return store;
}

namespace {
// A read-write connection to `path` (created if missing, in WAL mode) for a migration.
core::Result<std::unique_ptr<Connection>> OpenForMigration(const std::string& path) {
  if (path.empty() || path == ":memory:") {
    return core::Error(core::ErrorCode::kInvalidParams,
                       "sqlite: a database file path is required (not '" + path + "')");
  }
  auto db = Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                             SqliteOptions{}.busy_timeout_ms);
  if (!db) return std::move(db).error();
  if (auto configured = ConfigureReadWrite(**db, std::nullopt); !configured) {
    return std::move(configured).error();
  }
  return db;
}
}  // namespace

int SqliteTaskStore::LatestSchemaVersion() { return sqlite::LatestVersion(); }

core::Result<int> SqliteTaskStore::Migrate(const std::string& path) {
  auto db = OpenForMigration(path);
  if (!db) return std::move(db).error();
  return sqlite::MigrateToLatest(**db);
}

core::Result<int> SqliteTaskStore::MigrateComponent(
    const std::string& path, std::string_view component,
    const std::vector<sqlite::Migration>& migrations) {
  auto db = OpenForMigration(path);
  if (!db) return std::move(db).error();
  if (auto core = sqlite::MigrateToLatest(**db); !core) return std::move(core).error();
  return sqlite::MigrateComponent(**db, component, migrations);
}

core::Result<int> SqliteTaskStore::ComponentVersion(const std::string& path,
                                                    std::string_view component) {
  auto db = OpenForMigration(path);
  if (!db) return std::move(db).error();
  return sqlite::ComponentVersion(**db, component);
}

void SqliteTaskStore::Commit(TaskCommit commit, CommitCallback done) {
  impl_->Commit(std::move(commit), std::move(done));
}

core::Result<std::optional<TaskRecord>> SqliteTaskStore::Get(std::string_view task_id) {
  return impl_->Get(task_id);
}

std::optional<core::Result<std::optional<TaskRecord>>> SqliteTaskStore::TryGet(
    std::string_view task_id, bool with_run) {
  return impl_->TryGet(task_id, with_run);
}

core::Result<TaskPage> SqliteTaskStore::List(const TaskQuery& query) { return impl_->List(query); }

core::Result<std::optional<TaskRecord>> SqliteTaskStore::FindByDedupKey(std::string_view tenant,
                                                                        std::string_view key) {
  return impl_->FindByDedupKey(tenant, key);
}

core::Result<std::vector<protocol::RunEvent>> SqliteTaskStore::ReadEvents(std::string_view task_id,
                                                                          int64_t after_sequence,
                                                                          size_t limit) {
  return impl_->ReadEvents(task_id, after_sequence, limit);
}

core::Result<size_t> SqliteTaskStore::PruneEvents(int64_t terminal_before_ms) {
  return impl_->PruneEvents(terminal_before_ms);
}

core::Result<std::optional<std::vector<std::string>>> SqliteTaskStore::UnfinishedRunsWaitingFor(
    std::string_view tenant, std::string_view name) {
  auto ids = impl_->WaitingOnEvent(tenant, name);
  if (!ids) return std::move(ids).error();
  return std::optional<std::vector<std::string>>(std::move(ids).value());
}

core::Result<TaskPage> SqliteTaskStore::ListRunnable(std::string_view after_id, size_t limit) {
  return impl_->ListRunnable(after_id, limit);
}

core::Result<std::vector<Wake>> SqliteTaskStore::ListWakes(int64_t after_ms,
                                                           std::string_view after_id,
                                                           size_t limit, std::string_view) {
  return impl_->ListWakes(after_ms, after_id, limit);
}

void SqliteTaskStore::Close() { impl_->Close(); }

}  // namespace a2ad::storage
