#include "a2ad/storage/sqlite/sqlite_push_store.hpp"

#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"

namespace a2ad::storage {
using sqlite::Connection;
using sqlite::Stmt;

namespace {

constexpr const char* kUpsertConfig =
    "INSERT INTO push_configs(task_id, config_id, url, token, auth_scheme, auth_credentials,"
    " wire_version, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    " ON CONFLICT(task_id, config_id) DO UPDATE SET url = excluded.url, token = excluded.token,"
    " auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials,"
    " wire_version = excluded.wire_version";
constexpr const char* kConfigColumns =
    "SELECT task_id, config_id, url, token, auth_scheme, auth_credentials, wire_version,"
    " created_at_ms FROM push_configs";
constexpr const char* kInsertOutbox =
    "INSERT INTO push_outbox(id, kind, task_id, target_id, url, body, content_type,"
    " created_at_ms, next_attempt_at_ms, attempts, state, last_error, finished_at_ms,"
    " traceparent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
constexpr const char* kOutboxColumns =
    "SELECT id, kind, task_id, target_id, url, body, content_type, created_at_ms,"
    " next_attempt_at_ms, attempts, state, last_error, finished_at_ms, traceparent"
    " FROM push_outbox";

}  // namespace

namespace sqlite {
// Driven by push_configs (few rows), each task looked up by its key: an `IN (SELECT id FROM
// tasks WHERE state NOT IN ...)` made SQLite scan the whole tasks index at every start (1.9 s
// with a million stored tasks and a cold page cache). Terminal states by number
// (protocol::TaskState).
const char* const kActiveConfigsQuery =
    "SELECT task_id, config_id, url, token, auth_scheme, auth_credentials, wire_version,"
    " created_at_ms FROM push_configs WHERE EXISTS (SELECT 1 FROM tasks WHERE tasks.id ="
    " push_configs.task_id AND tasks.state NOT IN (3, 4, 5, 7))"
    " ORDER BY task_id, created_at_ms, config_id";
}  // namespace sqlite

namespace {

core::Error Closed() { return core::Error(core::ErrorCode::kUnavailable, "push store is closed"); }

core::Result<void> StepDone(Connection& db, Stmt& stmt, std::string_view what) {
  const int rc = stmt.Step();
  if (rc == SQLITE_DONE) return core::Ok{};
  if ((rc & 0xff) == SQLITE_CONSTRAINT) {
    return core::Error(core::ErrorCode::kConflict, std::string(what) + ": constraint violated");
  }
  return db.Fail(what, rc);
}

core::Result<void> BindConfigAndWrite(Connection& db, const PushConfigRecord& r) {
  auto prepared = db.Prepare(kUpsertConfig);
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, r.task_id);
  s.Bind(2, r.config.id);
  s.Bind(3, r.config.url);
  s.Bind(4, r.config.token);
  if (r.config.authentication) {
    s.Bind(5, r.config.authentication->scheme);
    s.Bind(6, r.config.authentication->credentials);
  } else {
    s.BindNull(5);
    s.Bind(6, std::string_view(""));
  }
  s.Bind(7, r.config.wire_version);
  s.Bind(8, r.created_at_ms);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return core::Ok{};
  if ((rc & 0xff) == SQLITE_CONSTRAINT) {
    return core::Error(core::ErrorCode::kTaskNotFound, "task " + r.task_id + " not found",
                       {{"taskId", r.task_id}});
  }
  return db.Fail("write push config " + r.config.id + " of task " + r.task_id, rc);
}

core::Result<void> InsertOutbox(Connection& db, const OutboxRow& r) {
  auto prepared = db.Prepare(kInsertOutbox);
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, r.id);
  s.Bind(2, r.kind);
  s.Bind(3, r.task_id);
  s.Bind(4, r.target_id);
  s.Bind(5, r.url);
  s.Bind(6, r.body);
  s.Bind(7, r.content_type);
  s.Bind(8, r.created_at_ms);
  s.Bind(9, r.next_attempt_at_ms);
  s.Bind(10, int64_t{r.attempts});
  s.Bind(11, static_cast<int64_t>(r.state));
  s.Bind(12, r.last_error);
  s.Bind(13, r.finished_at_ms);
  s.Bind(14, r.traceparent);
  return StepDone(db, s, "insert outbox row " + r.id);
}

PushConfigRecord ReadConfig(Stmt& s) {
  PushConfigRecord r;
  r.task_id = std::string(s.Text(0));
  r.config.task_id = r.task_id;
  r.config.id = std::string(s.Text(1));
  r.config.url = std::string(s.Text(2));
  r.config.token = std::string(s.Text(3));
  std::string_view scheme = s.Text(4);
  if (!s.IsNull(4))
    r.config.authentication =
        protocol::AuthenticationInfo{std::string(scheme), std::string(s.Text(5))};
  r.config.wire_version = std::string(s.Text(6));
  r.created_at_ms = s.Int(7);
  return r;
}

OutboxRow ReadOutbox(Stmt& s) {
  OutboxRow r;
  r.id = std::string(s.Text(0));
  r.kind = std::string(s.Text(1));
  r.task_id = std::string(s.Text(2));
  r.target_id = std::string(s.Text(3));
  r.url = std::string(s.Text(4));
  r.body = std::string(s.Text(5));
  r.content_type = std::string(s.Text(6));
  r.created_at_ms = s.Int(7);
  r.next_attempt_at_ms = s.Int(8);
  r.attempts = static_cast<int32_t>(s.Int(9));
  r.state = static_cast<OutboxState>(s.Int(10));
  r.last_error = std::string(s.Text(11));
  r.finished_at_ms = s.Int(12);
  r.traceparent = std::string(s.Text(13));
  return r;
}

template <class Row, class Read, class BindFn>
core::Result<std::vector<Row>> Query(Connection& db, const std::string& sql, BindFn bind,
                                     Read read) {
  auto prepared = db.Prepare(sql);
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  bind(s);
  std::vector<Row> out;
  for (;;) {
    const int rc = s.Step();
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return db.Fail("push store query", rc);
    out.push_back(read(s));
  }
  return out;
}

}  // namespace

namespace sqlite {
core::Result<void> WritePushRows(Connection& db, const std::vector<PushConfigRecord>& configs,
                                 const std::vector<OutboxRow>& outbox) {
  for (const auto& c : configs)
    if (auto w = BindConfigAndWrite(db, c); !w) return w;
  for (const auto& row : outbox)
    if (auto w = InsertOutbox(db, row); !w) return w;
  return core::Ok{};
}
}  // namespace sqlite

SqlitePushStore::SqlitePushStore(std::unique_ptr<Connection> db) : db_(std::move(db)) {}
SqlitePushStore::~SqlitePushStore() = default;

core::Result<std::unique_ptr<SqlitePushStore>> SqlitePushStore::Open(const std::string& path,
                                                                     int busy_timeout_ms) {
  auto db = Connection::Open(path, SQLITE_OPEN_READWRITE, busy_timeout_ms);
  if (!db) return std::move(db).error();
  auto version = sqlite::CurrentVersion(**db);
  if (!version) return std::move(version).error();
  if (*version < 4) {
    return core::Error(core::ErrorCode::kInternal,
                       "sqlite '" + path + "': schema version " + std::to_string(*version) +
                           " has no push tables (version 4); run `a2ad migrate`");
  }
  if (auto fk = (*db)->Exec("PRAGMA foreign_keys=ON", "enable foreign keys"); !fk)
    return std::move(fk).error();
  return std::unique_ptr<SqlitePushStore>(new SqlitePushStore(std::move(db).value()));
}

void SqlitePushStore::Close() {
  std::lock_guard lock(mu_);
  db_.reset();
}

core::Result<void> SqlitePushStore::PutConfig(const PushConfigRecord& record) {
  if (record.config.id.empty() || record.task_id.empty())
    return core::Error(core::ErrorCode::kInvalidParams, "push config: task id and id required");
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return BindConfigAndWrite(*db_, record);
}

core::Result<std::optional<PushConfigRecord>> SqlitePushStore::GetConfig(
    std::string_view task_id, std::string_view config_id) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  auto rows = Query<PushConfigRecord>(
      *db_, std::string(kConfigColumns) + " WHERE task_id = ?1 AND config_id = ?2",
      [&](Stmt& s) {
        s.Bind(1, task_id);
        s.Bind(2, config_id);
      },
      ReadConfig);
  if (!rows) return std::move(rows).error();
  if (rows->empty()) return std::optional<PushConfigRecord>();
  return std::optional<PushConfigRecord>(std::move(rows->front()));
}

core::Result<std::vector<PushConfigRecord>> SqlitePushStore::ListConfigs(std::string_view task_id) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return Query<PushConfigRecord>(
      *db_, std::string(kConfigColumns) + " WHERE task_id = ?1 ORDER BY created_at_ms, config_id",
      [&](Stmt& s) { s.Bind(1, task_id); }, ReadConfig);
}

core::Result<bool> SqlitePushStore::DeleteConfig(std::string_view task_id,
                                                 std::string_view config_id) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  auto prepared = db_->Prepare("DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, task_id);
  s.Bind(2, config_id);
  if (auto done = StepDone(*db_, s, "delete push config"); !done) return std::move(done).error();
  return sqlite3_changes(db_->handle()) > 0;
}

core::Result<std::vector<PushConfigRecord>> SqlitePushStore::AllConfigs() {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return Query<PushConfigRecord>(
      *db_, sqlite::kActiveConfigsQuery, [](Stmt&) {}, ReadConfig);
}

core::Result<void> SqlitePushStore::Enqueue(const std::vector<OutboxRow>& rows) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  if (auto b = db_->Exec("BEGIN IMMEDIATE", "enqueue outbox rows"); !b) return b;
  for (const auto& r : rows) {
    if (auto w = InsertOutbox(*db_, r); !w) {
      (void)db_->Exec("ROLLBACK", "rollback");
      return w;
    }
  }
  if (auto c = db_->Exec("COMMIT", "enqueue outbox rows"); !c) {
    (void)db_->Exec("ROLLBACK", "rollback");
    return c;
  }
  return core::Ok{};
}

core::Result<std::vector<OutboxRow>> SqlitePushStore::DueOutbox(int64_t now_ms, size_t limit) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return Query<OutboxRow>(
      *db_,
      std::string(kOutboxColumns) +
          " WHERE state = 0 AND next_attempt_at_ms <= ?1 ORDER BY next_attempt_at_ms, id LIMIT ?2",
      [&](Stmt& s) {
        s.Bind(1, now_ms);
        s.Bind(2, static_cast<int64_t>(limit));
      },
      ReadOutbox);
}

core::Result<std::optional<int64_t>> SqlitePushStore::NextDueAt() {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  auto prepared = db_->Prepare("SELECT MIN(next_attempt_at_ms) FROM push_outbox WHERE state = 0");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  const int rc = s.Step();
  if (rc != SQLITE_ROW) return db_->Fail("next due outbox row", rc);
  if (s.IsNull(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(s.Int(0));
}

core::Result<void> SqlitePushStore::UpdateOutbox(const OutboxRow& row) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return UpdateOutboxLocked(row);
}

core::Result<void> SqlitePushStore::UpdateOutboxBatch(const std::vector<OutboxRow>& rows) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  if (auto b = db_->Exec("BEGIN IMMEDIATE", "update outbox rows"); !b) return b;
  for (const auto& row : rows) {
    auto r = UpdateOutboxLocked(row);
    if (!r && r.error().code != core::ErrorCode::kInvalidParams) {
      (void)db_->Exec("ROLLBACK", "rollback");
      return r;
    }
  }
  if (auto c = db_->Exec("COMMIT", "update outbox rows"); !c) {
    (void)db_->Exec("ROLLBACK", "rollback");
    return c;
  }
  return core::Ok{};
}

core::Result<void> SqlitePushStore::UpdateOutboxLocked(const OutboxRow& row) {
  auto prepared = db_->Prepare(
      "UPDATE push_outbox SET attempts = ?2, state = ?3, next_attempt_at_ms = ?4,"
      " last_error = ?5, finished_at_ms = ?6 WHERE id = ?1");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, row.id);
  s.Bind(2, int64_t{row.attempts});
  s.Bind(3, static_cast<int64_t>(row.state));
  s.Bind(4, row.next_attempt_at_ms);
  s.Bind(5, row.last_error);
  s.Bind(6, row.finished_at_ms);
  if (auto done = StepDone(*db_, s, "update outbox row " + row.id); !done) return done;
  if (sqlite3_changes(db_->handle()) == 0)
    return core::Error(core::ErrorCode::kInvalidParams, "outbox row " + row.id + " not found");
  return core::Ok{};
}

core::Result<std::vector<OutboxRow>> SqlitePushStore::ListOutbox(std::string_view task_id) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return Query<OutboxRow>(
      *db_, std::string(kOutboxColumns) + " WHERE task_id = ?1 ORDER BY created_at_ms, id",
      [&](Stmt& s) { s.Bind(1, task_id); }, ReadOutbox);
}

core::Result<std::vector<OutboxRow>> SqlitePushStore::ListDead(size_t limit) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return Query<OutboxRow>(
      *db_,
      std::string(kOutboxColumns) + " WHERE state = 2 ORDER BY finished_at_ms DESC, id LIMIT ?1",
      [&](Stmt& s) { s.Bind(1, static_cast<int64_t>(limit)); }, ReadOutbox);
}

namespace {
WebhookRecord ReadWebhook(Stmt& s) {
  WebhookRecord w;
  w.id = std::string(s.Text(0));
  w.tenant_id = std::string(s.Text(1));
  w.url = std::string(s.Text(2));
  std::string events(s.Text(3));
  size_t start = 0;
  while (start < events.size()) {
    size_t comma = events.find(',', start);
    if (comma == std::string::npos) comma = events.size();
    if (comma > start) w.events.push_back(events.substr(start, comma - start));
    start = comma + 1;
  }
  w.secret = std::string(s.Text(4));
  w.created_at_ms = s.Int(5);
  return w;
}
constexpr const char* kWebhookColumns =
    "SELECT id, tenant_id, url, events, secret, created_at_ms FROM push_webhooks";
}  // namespace

core::Result<void> SqlitePushStore::PutWebhook(const WebhookRecord& record) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  auto prepared = db_->Prepare(
      "INSERT INTO push_webhooks(id, tenant_id, url, events, secret, created_at_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!prepared) return std::move(prepared).error();
  std::string events;
  for (const auto& e : record.events) events += (events.empty() ? "" : ",") + e;
  Stmt s(*prepared);
  s.Bind(1, record.id);
  s.Bind(2, record.tenant_id);
  s.Bind(3, record.url);
  s.Bind(4, events);
  s.Bind(5, record.secret);
  s.Bind(6, record.created_at_ms);
  return StepDone(*db_, s, "insert webhook " + record.id);
}

core::Result<std::optional<WebhookRecord>> SqlitePushStore::GetWebhook(std::string_view id) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  auto rows = Query<WebhookRecord>(
      *db_, std::string(kWebhookColumns) + " WHERE id = ?1", [&](Stmt& s) { s.Bind(1, id); },
      ReadWebhook);
  if (!rows) return std::move(rows).error();
  if (rows->empty()) return std::optional<WebhookRecord>();
  return std::optional<WebhookRecord>(std::move(rows->front()));
}

core::Result<bool> SqlitePushStore::DeleteWebhook(std::string_view id) {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  auto prepared = db_->Prepare("DELETE FROM push_webhooks WHERE id = ?1");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, id);
  if (auto done = StepDone(*db_, s, "delete webhook"); !done) return std::move(done).error();
  return sqlite3_changes(db_->handle()) > 0;
}

core::Result<std::vector<WebhookRecord>> SqlitePushStore::AllWebhooks() {
  std::lock_guard lock(mu_);
  if (!db_) return Closed();
  return Query<WebhookRecord>(
      *db_, std::string(kWebhookColumns) + " ORDER BY created_at_ms, id", [](Stmt&) {},
      ReadWebhook);
}

}  // namespace a2ad::storage
