// SqliteTaskStore's reads: Get, FindByDedupKey, List, ReadEvents and the recovery scans
// (ListRunnable, ListWakes, WaitingOnEvent), each on a connection
// borrowed from the reader pool, on the calling thread. A stored row that does not read is
// quarantined in place (Quarantined). See sqlite_task_store.hpp ("Reads").
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <climits>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/page_cursor.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store_impl.hpp"

namespace a2ad::storage {
namespace {

using sqlite::Connection;
using sqlite::Run;
using sqlite::Stmt;

constexpr const char* kRecordColumns =
    "id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run, dedup_key,"
    " tenant, owner";
constexpr const char* kSelectTask =
    "SELECT id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run, dedup_key,"
    " tenant, owner FROM tasks WHERE id = ?1";
constexpr const char* kSelectByDedupKey =
    "SELECT id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run, dedup_key,"
    " tenant, owner FROM tasks WHERE tenant = ?1 AND dedup_key = ?2";
// Partial indexes of schema version 9: each WHERE repeats its index's verbatim.
constexpr const char* kSelectRunnable =
    "SELECT id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run, dedup_key,"
    " tenant, owner FROM tasks INDEXED BY tasks_runnable"
    " WHERE wake_at_ms IS NULL AND NOT (state BETWEEN 3 AND 5 OR state = 7) AND id > ?1"
    " ORDER BY id LIMIT ?2";
constexpr const char* kSelectWakes =
    "SELECT id, wake_at_ms FROM tasks INDEXED BY tasks_wake WHERE wake_at_ms > 0"
    " AND (wake_at_ms, id) > (?1, ?2) ORDER BY wake_at_ms, id LIMIT ?3";
constexpr const char* kSelectWaitingOnEvent =
    "SELECT id FROM tasks INDEXED BY tasks_waiting_on_event"
    " WHERE tenant = ?1 AND waits_for_event = ?2 AND waits_for_event IS NOT NULL";
constexpr const char* kSelectEvents =
    "SELECT sequence, event_id, type, node_id, timestamp_ms, payload FROM task_events"
    " WHERE task_id = ?1 AND sequence > ?2 ORDER BY sequence LIMIT ?3";

// The row of a SELECT of kRecordColumns. kDataCorrupt when its text does not read.
core::Result<TaskRecord> ReadRecord(const Stmt& row, bool with_run = true) {
  StoredTask stored;
  stored.id = row.Text(0);
  stored.skill_id = row.Text(1);
  stored.created_at_ms = row.Int(2);
  stored.updated_at_ms = row.Int(3);
  stored.last_sequence = row.Int(4);
  stored.snapshot = row.Text(5);
  if (with_run) stored.run = row.Text(6);
  stored.dedup_key = row.Text(7);
  stored.tenant = row.Text(8);
  stored.owner = row.Text(9);
  return DecodeStoredTask(stored, with_run);
}

// Runs `sql` on a connection borrowed from `readers`: `bind` binds its parameters, `row` reads
// each row it returns (an error from it ends the read with that error). `what` names the
// read in a failure.
template <class Bind, class Row>
core::Result<void> ReadRows(sqlite::ReaderPool& readers, const char* sql, const char* what,
                            Bind&& bind, Row&& row) {
  auto lease = readers.Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  auto prepared = db.Prepare(sql);
  if (!prepared) return std::move(prepared).error();
  Stmt select(*prepared);
  bind(select);
  for (;;) {
    const int rc = select.Step();
    if (rc == SQLITE_DONE) return core::Ok{};
    if (rc != SQLITE_ROW) return db.Fail(what, rc);
    if (auto read = row(select); !read) return read;
  }
}

int64_t Limit(size_t limit) { return static_cast<int64_t>(std::min<size_t>(limit, INT32_MAX)); }

// An explicit read transaction, so several statements see one snapshot. Rolls back unless
// committed.
class ReadTransaction {
 public:
  explicit ReadTransaction(Connection& db) : db_(db) {}
  ~ReadTransaction() {
    if (begun_) (void)Run(db_, "ROLLBACK");
  }
  core::Result<void> Begin() {
    auto begun = Run(db_, "BEGIN");
    begun_ = begun.ok();
    return begun;
  }
  core::Result<void> Commit() {
    begun_ = false;
    return Run(db_, "COMMIT");
  }

 private:
  Connection& db_;
  bool begun_ = false;
};

}  // namespace

namespace sqlite {

std::string ListTasksSql(const TaskQuery& query, bool with_cursor, bool count) {
  // One SQL text per filter combination, so each shape gets its own cached plan and the
  // planner sees plain equality/range terms it can serve from an index: the tenant leads
  // every List index (schema version 6); a scan of every tenant by state names it literally.
  std::string where;
  auto add = [&where](const char* term) {
    where += where.empty() ? " WHERE " : " AND ";
    where += term;
  };
  if (!query.all_tenants) add("tenant = :tenant");
  if (!query.owner.empty()) add("owner = :owner");
  if (!query.context_id.empty()) add("context_id = :ctx");
  if (!query.skill_id.empty()) add("skill_id = :skill");
  // Every tenant's (the server's own scans): the state as a literal, so that a partial index
  // of it (tasks_cancelled) serves the scan.
  std::string state_term;
  if (query.state && query.all_tenants)
    state_term = "state = " + std::to_string(static_cast<int>(*query.state));
  if (query.state) add(query.all_tenants ? state_term.c_str() : "state = :state");
  if (query.updated_at_or_after_ms) add("updated_at_ms >= :after");
  if (count) return "SELECT count(*) FROM tasks" + where;
  if (with_cursor) add("(updated_at_ms, id) < (:cursor_updated, :cursor_id)");
  return std::string("SELECT ") + kRecordColumns + " FROM tasks" + where +
         " ORDER BY updated_at_ms DESC, id DESC LIMIT :limit";
}

}  // namespace sqlite

core::Error SqliteTaskStore::Impl::Quarantined(core::Error e) {
  const std::string task_id(e.Detail("taskId"));
  bool first = false;
  {
    std::lock_guard lock(quarantine_mu_);
    if (quarantine_logged_.size() < 10000) first = quarantine_logged_.insert(task_id).second;
  }
  if (first)
    core::LogError("task store: " + e.message +
                   "; the task is skipped (lists, recovery) and refused (reads) until repaired: "
                   "run `a2ad doctor --data-dir DIR`");
  return e;
}

core::Result<std::optional<TaskRecord>> SqliteTaskStore::Impl::GetOn(Connection& db,
                                                                     std::string_view task_id,
                                                                     bool with_run, int& rc) {
  auto prepared = db.Prepare(kSelectTask);
  if (!prepared) return std::move(prepared).error();
  Stmt select(*prepared);
  select.Bind(1, task_id);
  rc = select.Step();
  if (rc == SQLITE_DONE) return std::optional<TaskRecord>();
  if (rc != SQLITE_ROW) return db.Fail("read task", rc);
  auto record = ReadRecord(select, with_run);
  if (!record) return Quarantined(std::move(record).error());
  return std::optional<TaskRecord>(std::in_place, std::move(*record));
}

core::Result<std::optional<TaskRecord>> SqliteTaskStore::Impl::Get(std::string_view task_id) {
  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  int rc = SQLITE_OK;
  return GetOn(lease->connection(), task_id, /*with_run=*/true, rc);
}

std::optional<core::Result<std::optional<TaskRecord>>> SqliteTaskStore::Impl::TryGet(
    std::string_view task_id, bool with_run) {
  auto lease = readers_.TryAcquire();
  if (!lease) return std::nullopt;
  sqlite3* handle = lease->connection().handle();
  sqlite3_busy_timeout(handle, 0);  // a lock held elsewhere: Get waits for it, off this thread
  struct Restore {                  // also if the decode throws
    sqlite3* handle;
    int ms;
    ~Restore() { sqlite3_busy_timeout(handle, ms); }
  } restore{handle, readers_.busy_timeout_ms()};
  int rc = SQLITE_OK;
  auto read = GetOn(lease->connection(), task_id, with_run, rc);
  if (read) return read;
  // The step's code, or (rc untouched: the statement's prepare failed) the connection's.
  const int code = (rc != SQLITE_OK ? rc : sqlite3_errcode(handle)) & 0xff;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) return std::nullopt;
  return read;
}

core::Result<std::optional<TaskRecord>> SqliteTaskStore::Impl::FindByDedupKey(
    std::string_view tenant, std::string_view key) {
  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  auto prepared = db.Prepare(kSelectByDedupKey);
  if (!prepared) return std::move(prepared).error();
  Stmt select(*prepared);
  select.Bind(1, tenant);
  select.Bind(2, key);
  const int rc = select.Step();
  if (rc == SQLITE_DONE) return std::optional<TaskRecord>();
  if (rc != SQLITE_ROW) return db.Fail("read task by dedup key", rc);
  auto record = ReadRecord(select);
  if (!record) return Quarantined(std::move(record).error());
  return std::optional<TaskRecord>(std::in_place, std::move(*record));
}

core::Result<TaskPage> SqliteTaskStore::Impl::List(const TaskQuery& query) {
  auto started = StartPage(query);
  if (!started) return std::move(started).error();
  std::optional<PageCursor> cursor = std::move(started).value();

  const std::string count_sql = sqlite::ListTasksSql(query, false, true);
  const std::string page_sql = sqlite::ListTasksSql(query, cursor.has_value(), false);
  auto bind_filters = [&](Stmt& stmt) {
    if (!query.all_tenants) stmt.Bind(":tenant", query.tenant);
    if (!query.owner.empty()) stmt.Bind(":owner", query.owner);
    if (!query.context_id.empty()) stmt.Bind(":ctx", query.context_id);
    if (!query.skill_id.empty()) stmt.Bind(":skill", query.skill_id);
    if (query.state && !query.all_tenants) stmt.Bind(":state", static_cast<int64_t>(*query.state));
    if (query.updated_at_or_after_ms) stmt.Bind(":after", *query.updated_at_or_after_ms);
  };

  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  ReadTransaction txn(db);
  if (auto begun = txn.Begin(); !begun) return std::move(begun).error();

  TaskPage page;
  {
    auto prepared = db.Prepare(count_sql);
    if (!prepared) return std::move(prepared).error();
    Stmt count(*prepared);
    bind_filters(count);
    const int rc = count.Step();
    if (rc != SQLITE_ROW) return db.Fail("count tasks", rc);
    page.total_size = static_cast<int32_t>(count.Int(0));
  }
  {
    auto prepared = db.Prepare(page_sql);
    if (!prepared) return std::move(prepared).error();
    Stmt select(*prepared);
    bind_filters(select);
    if (cursor) {
      select.Bind(":cursor_updated", cursor->updated_at_ms);
      select.Bind(":cursor_id", cursor->task_id);
    }
    // One row more than the page tells whether another page follows.
    select.Bind(":limit", static_cast<int64_t>(query.page_size) + 1);
    bool more = false;
    size_t rows = 0;  // read, readable or not
    int64_t last_updated = 0;
    std::string last_id;
    for (;;) {
      const int rc = select.Step();
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return db.Fail("list tasks", rc);
      if (rows == static_cast<size_t>(query.page_size)) {
        more = true;
        break;
      }
      // The cursor is the row's own columns, so a page that ends with an unreadable row
      // still moves on past it.
      last_updated = select.Int(3);
      last_id = std::string(select.Text(0));
      ++rows;
      auto record = ReadRecord(select);
      if (!record) {
        page.unreadable.push_back(last_id);
        (void)Quarantined(std::move(record).error());
        continue;
      }
      page.records.push_back(std::move(record).value());
    }
    if (more) page.next_page_token = EncodePageToken({last_updated, last_id});
  }
  if (auto committed = txn.Commit(); !committed) return std::move(committed).error();
  return page;
}

core::Result<TaskPage> SqliteTaskStore::Impl::ListRunnable(std::string_view after_id,
                                                           size_t limit) {
  TaskPage page;
  size_t rows = 0;  // read, readable or not
  std::string last_id;
  auto read = ReadRows(
      readers_, kSelectRunnable, "list the runs to start",
      [&](Stmt& q) {
        q.Bind(1, after_id);
        q.Bind(2, Limit(limit));
      },
      [&](const Stmt& row) -> core::Result<void> {
        ++rows;
        last_id = std::string(row.Text(0));
        auto record = ReadRecord(row);
        if (!record) {  // skipped and said (the store quarantines it in place)
          page.unreadable.push_back(last_id);
          (void)Quarantined(std::move(record).error());
          return core::Ok{};
        }
        page.records.push_back(std::move(record).value());
        return core::Ok{};
      });
  if (!read) return std::move(read).error();
  if (rows == limit && limit > 0) page.next_page_token = std::move(last_id);
  return page;
}

core::Result<std::vector<Wake>> SqliteTaskStore::Impl::ListWakes(int64_t after_ms,
                                                                 std::string_view after_id,
                                                                 size_t limit) {
  std::vector<Wake> wakes;
  auto read = ReadRows(
      readers_, kSelectWakes, "list the parked runs' wake times",
      [&](Stmt& q) {
        q.Bind(1, after_ms);
        q.Bind(2, after_id);
        q.Bind(3, Limit(limit));
      },
      [&](const Stmt& row) -> core::Result<void> {
        wakes.push_back(Wake{std::string(row.Text(0)), row.Int(1)});
        return core::Ok{};
      });
  if (!read) return std::move(read).error();
  return wakes;
}

core::Result<std::vector<std::string>> SqliteTaskStore::Impl::WaitingOnEvent(
    std::string_view tenant, std::string_view name) {
  std::vector<std::string> ids;
  auto read = ReadRows(
      readers_, kSelectWaitingOnEvent, "list the runs waiting for an event",
      [&](Stmt& q) {
        q.Bind(1, tenant);
        q.Bind(2, name);
      },
      [&](const Stmt& row) -> core::Result<void> {
        ids.emplace_back(row.Text(0));
        return core::Ok{};
      });
  if (!read) return std::move(read).error();
  return ids;
}

core::Result<std::vector<protocol::RunEvent>> SqliteTaskStore::Impl::ReadEvents(
    std::string_view task_id, int64_t after_sequence, size_t limit) {
  std::vector<protocol::RunEvent> events;
  auto lease = readers_.Acquire();
  if (!lease) return std::move(lease).error();
  if (limit == 0) return events;
  Connection& db = lease->connection();
  auto prepared = db.Prepare(kSelectEvents);
  if (!prepared) return std::move(prepared).error();
  Stmt select(*prepared);
  select.Bind(1, task_id);
  select.Bind(2, after_sequence);
  select.Bind(3,
              static_cast<int64_t>(std::min<size_t>(limit, std::numeric_limits<int64_t>::max())));
  for (;;) {
    const int rc = select.Step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return db.Fail("read events", rc);
    protocol::RunEvent e;
    e.run_id = std::string(task_id);
    e.sequence = select.Int(0);
    e.event_id = std::string(select.Text(1));
    e.type = std::string(select.Text(2));
    e.node_id = std::string(select.Text(3));
    e.timestamp_ms = select.Int(4);
    auto payload = DecodeEventPayload(task_id, e.sequence, select.Text(5));
    if (!payload) return Quarantined(std::move(payload).error());
    e.payload = std::move(payload).value();
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace a2ad::storage
