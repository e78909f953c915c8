#include "a2ad/storage/sqlite/sqlite_schema.hpp"

#include <chrono>
#include <functional>
#include <string>

#include "a2ad/protocol/model.hpp"

namespace a2ad::storage::sqlite {
namespace {

constexpr const char* kCreateMigrationsTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "  version INTEGER PRIMARY KEY,"
    "  applied_at_ms INTEGER NOT NULL)";

constexpr const char* kV1 = R"sql(
CREATE TABLE tasks (
  id TEXT PRIMARY KEY NOT NULL,
  context_id TEXT NOT NULL,
  state INTEGER NOT NULL,
  skill_id TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  last_sequence INTEGER NOT NULL,
  snapshot TEXT NOT NULL
) STRICT;
CREATE INDEX tasks_by_updated ON tasks(updated_at_ms DESC, id DESC);
CREATE INDEX tasks_by_context ON tasks(context_id, updated_at_ms DESC, id DESC);
CREATE INDEX tasks_by_state ON tasks(state, updated_at_ms DESC, id DESC);
CREATE TABLE task_events (
  task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  sequence INTEGER NOT NULL,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  node_id TEXT NOT NULL,
  timestamp_ms INTEGER NOT NULL,
  payload TEXT NOT NULL,
  PRIMARY KEY (task_id, sequence)
) WITHOUT ROWID, STRICT;
)sql";

// Frozen text: the numbers are protocol::TaskState's terminal states (checked below), and
// kSelectPrunableTasks repeats the index's WHERE verbatim.
constexpr const char* kV2 = R"sql(
ALTER TABLE tasks ADD COLUMN pruned_through INTEGER NOT NULL DEFAULT -1;
CREATE INDEX tasks_prunable ON tasks(updated_at_ms)
  WHERE state IN (3, 4, 5, 7) AND pruned_through < last_sequence;
)sql";
static_assert(static_cast<int>(protocol::TaskState::kCompleted) == 3 &&
                  static_cast<int>(protocol::TaskState::kFailed) == 4 &&
                  static_cast<int>(protocol::TaskState::kCanceled) == 5 &&
                  static_cast<int>(protocol::TaskState::kRejected) == 7,
              "tasks_prunable (schema version 2) names the terminal states by number");

// The OpenWOP RunSnapshot and the RFC 0100 A2ATaskState of each task, written with its
// snapshot.
constexpr const char* kV3 = R"sql(
ALTER TABLE tasks ADD COLUMN run TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN a2a_state TEXT NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN dedup_key TEXT;
CREATE UNIQUE INDEX tasks_by_dedup_key ON tasks(dedup_key) WHERE dedup_key IS NOT NULL;
)sql";

// Schema version 4 — push notifications (issue 5): configs with their raw tokens (only here: the
// snapshot never carries them) and the delivery outbox, whose rows TaskStore::Commit writes in the
// state change's transaction. State numbers are storage::OutboxState.
constexpr const char* kV4 = R"sql(
CREATE TABLE push_configs (
  task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  config_id TEXT NOT NULL,
  url TEXT NOT NULL,
  token TEXT NOT NULL,
  auth_scheme TEXT,
  auth_credentials TEXT NOT NULL,
  wire_version TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (task_id, config_id)
) WITHOUT ROWID, STRICT;
CREATE TABLE push_outbox (
  id TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL,
  task_id TEXT NOT NULL,
  target_id TEXT NOT NULL,
  url TEXT NOT NULL,
  body TEXT NOT NULL,
  content_type TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  next_attempt_at_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  state INTEGER NOT NULL,
  last_error TEXT NOT NULL,
  finished_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX push_outbox_due ON push_outbox(next_attempt_at_ms, id) WHERE state = 0;
CREATE INDEX push_outbox_by_task ON push_outbox(task_id, created_at_ms, id);
CREATE INDEX push_outbox_dead ON push_outbox(finished_at_ms DESC, id) WHERE state = 2;
CREATE TABLE push_webhooks (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
) STRICT;
)sql";

// `a2ad doctor --repair` sets tasks aside here when their stored text cannot be read or
// rebuilt: the row, events and push configs as the text they held (sqlite_doctor.hpp).
constexpr const char* kV5 = R"sql(
CREATE TABLE quarantined_tasks (
  task_id TEXT NOT NULL,
  quarantined_at_ms INTEGER NOT NULL,
  problem TEXT NOT NULL,
  record TEXT NOT NULL
) STRICT;
CREATE INDEX quarantined_tasks_by_task ON quarantined_tasks(task_id);
)sql";

// Tenants and owners. Columns added with the values every task stored before belongs to;
// the List indexes rebuilt to lead with the tenant (tasks_by_state stays: the server's own
// scans of every tenant); idempotency keys unique per tenant.
constexpr const char* kV6 = R"sql(
ALTER TABLE tasks ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE tasks ADD COLUMN owner TEXT NOT NULL DEFAULT 'anonymous';
DROP INDEX tasks_by_updated;
CREATE INDEX tasks_by_updated ON tasks(tenant, updated_at_ms DESC, id DESC);
DROP INDEX tasks_by_context;
CREATE INDEX tasks_by_context ON tasks(tenant, context_id, updated_at_ms DESC, id DESC);
CREATE INDEX tasks_by_tenant_state ON tasks(tenant, state, updated_at_ms DESC, id DESC);
DROP INDEX tasks_by_dedup_key;
CREATE UNIQUE INDEX tasks_by_dedup_key ON tasks(tenant, dedup_key) WHERE dedup_key IS NOT NULL;
)sql";

// API keys (issue 14; storage/api_key_store.hpp): the SHA-256 of each secret, never the
// secret. expires_at_ms / revoked_at_ms 0: never / not revoked. scopes comma-separated.
constexpr const char* kV7 = R"sql(
CREATE TABLE api_keys (
  key_id TEXT PRIMARY KEY NOT NULL,
  secret_sha256 TEXT NOT NULL,
  tenant TEXT NOT NULL,
  scopes TEXT NOT NULL,
  name TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  revoked_at_ms INTEGER NOT NULL
) WITHOUT ROWID, STRICT;
)sql";

// Schema version 8 — traces (issue 18): the W3C traceparent of the run a push is about, so
// the delivery (whenever it happens) is a span of the run's trace and carries its context.
constexpr const char* kV8 = R"sql(
ALTER TABLE push_outbox ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';
)sql";

// Schema version 9 — parked runs (stored_records.hpp ParkedUntil and EventAwaited, written with
// every commit): `wake_at_ms` is NULL for a run that is not parked, 0 for one parked with no
// time, else when it must be woken; `waits_for_event` the event a paused run waits for. A
// restart lists only the unfinished runs that are not parked (tasks_runnable, a partial index
// of the runs in flight), the wake timer reads the parked runs' times (tasks_wake) and a posted
// event the runs waiting for it (tasks_waiting_on_event). The rows of runs unfinished now are
// read once here (the same reading in SQL); a row whose run text does not read keeps NULL.
// The terminal states are compared, never listed: a partial index whose WHERE holds an IN
// list costs an ephemeral table on every row written (tasks_prunable is rewritten so).
// tasks_by_state goes: it served the scans of every tenant, of which the restart's are now
// tasks_runnable and tasks_cancelled (the cancels resent at a start); every task written fed
// it (about 4% of a send's instructions).
constexpr const char* kV9 = R"sql(
ALTER TABLE tasks ADD COLUMN wake_at_ms INTEGER;
ALTER TABLE tasks ADD COLUMN waits_for_event TEXT;
UPDATE tasks SET
  wake_at_ms = CASE
    WHEN json_extract(run, '$.status') = 'paused' THEN (
      SELECT CASE WHEN t > 0 AND o > 0 THEN min(t, o) ELSE max(t, o) END FROM (SELECT
        CASE WHEN json_type(run, '$.pause.triggerAtMs') IN ('integer', 'real')
             THEN max(CAST(json_extract(run, '$.pause.triggerAtMs') AS INTEGER), 0) ELSE 0 END AS t,
        CASE WHEN json_type(run, '$.pause.timeoutAtMs') IN ('integer', 'real')
             THEN max(CAST(json_extract(run, '$.pause.timeoutAtMs') AS INTEGER), 0) ELSE 0 END AS o))
    WHEN substr(json_extract(run, '$.status'), 1, 8) = 'waiting-'
         AND json_type(run, '$.waitingOn') IS NULL THEN
      CASE WHEN json_type(run, '$.interrupt.expiresAt') IN ('integer', 'real')
           THEN max(CAST(json_extract(run, '$.interrupt.expiresAt') AS INTEGER), 0) ELSE 0 END
  END,
  waits_for_event = CASE
    WHEN json_extract(run, '$.status') = 'paused'
         AND json_type(run, '$.pause.conditions.onEvent') = 'text'
    THEN json_extract(run, '$.pause.conditions.onEvent') END
  WHERE state NOT IN (3, 4, 5, 7) AND json_valid(run) AND json_type(run) = 'object'
    AND json_type(run, '$.status') = 'text';
CREATE INDEX tasks_runnable ON tasks(id)
  WHERE wake_at_ms IS NULL AND NOT (state BETWEEN 3 AND 5 OR state = 7);
DROP INDEX tasks_prunable;
CREATE INDEX tasks_prunable ON tasks(updated_at_ms)
  WHERE (state BETWEEN 3 AND 5 OR state = 7) AND pruned_through < last_sequence;
CREATE INDEX tasks_wake ON tasks(wake_at_ms, id) WHERE wake_at_ms > 0;
DROP INDEX tasks_by_state;
CREATE INDEX tasks_cancelled ON tasks(updated_at_ms DESC, id DESC) WHERE state = 5;
CREATE INDEX tasks_waiting_on_event ON tasks(tenant, waits_for_event)
  WHERE waits_for_event IS NOT NULL;
)sql";

// Schema version 10: the List indexes ascending (sqlite_schema.hpp). A list still reads them
// newest first, scanning backwards.
constexpr const char* kV10 = R"sql(
DROP INDEX tasks_by_updated;
CREATE INDEX tasks_by_updated ON tasks(tenant, updated_at_ms, id);
DROP INDEX tasks_by_context;
CREATE INDEX tasks_by_context ON tasks(tenant, context_id, updated_at_ms, id);
DROP INDEX tasks_by_tenant_state;
CREATE INDEX tasks_by_tenant_state ON tasks(tenant, state, updated_at_ms, id);
DROP INDEX tasks_cancelled;
CREATE INDEX tasks_cancelled ON tasks(updated_at_ms, id) WHERE state = 5;
)sql";

constexpr const char* kCreateComponentMigrationsTable =
    "CREATE TABLE IF NOT EXISTS component_migrations ("
    "  component TEXT NOT NULL,"
    "  version INTEGER NOT NULL,"
    "  applied_at_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (component, version)) WITHOUT ROWID, STRICT";

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

core::Result<int> ReadVersion(Connection& db) {
  auto prepared = db.Prepare("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  if (!prepared) return std::move(prepared).error();
  Stmt stmt(*prepared);
  const int rc = stmt.Step();
  if (rc != SQLITE_ROW) return db.Fail("read schema version", rc);
  return static_cast<int>(stmt.Int(0));
}

core::Result<int> ReadComponentVersion(Connection& db, std::string_view component) {
  auto prepared =
      db.Prepare("SELECT COALESCE(MAX(version), 0) FROM component_migrations WHERE component = ?1");
  if (!prepared) return std::move(prepared).error();
  Stmt stmt(*prepared);
  stmt.Bind(1, component);
  const int rc = stmt.Step();
  if (rc != SQLITE_ROW) return db.Fail("read version of component " + std::string(component), rc);
  return static_cast<int>(stmt.Int(0));
}

core::Result<bool> TableExists(Connection& db, const char* name) {
  auto prepared =
      db.Prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  if (!prepared) return std::move(prepared).error();
  Stmt stmt(*prepared);
  stmt.Bind(1, std::string_view(name));
  const int rc = stmt.Step();
  if (rc != SQLITE_ROW) return db.Fail("read schema", rc);
  return stmt.Int(0) != 0;
}

// How one ordered list of migrations is kept: the core schema's or a component's.
struct Ledger {
  std::string name;  // for messages: "schema" or "component 'x'" (+ " version N")
  std::function<core::Result<int>()> read_version;
  std::function<core::Result<void>(int version)> record;
  std::function<core::Error(int found)> newer;
};

// Applies the steps of `steps` above the ledger's version, each in its own IMMEDIATE
// transaction with its ledger row, re-reading the version inside it (another process may
// have migrated between our read and our write lock).
core::Result<int> Apply(Connection& db, const Ledger& ledger, const std::vector<Migration>& steps) {
  const int latest = steps.empty() ? 0 : steps.back().version;
  auto current = ledger.read_version();
  if (!current) return current;
  if (*current > latest) return ledger.newer(*current);
  for (const Migration& step : steps) {
    if (step.version <= *current) continue;
    const std::string what =
        "migration to " + ledger.name + " version " + std::to_string(step.version);
    if (auto begun = db.Exec("BEGIN IMMEDIATE", what); !begun) return std::move(begun).error();
    auto rollback = [&db](core::Error e) -> core::Result<int> {
      (void)db.Exec("ROLLBACK", "rollback");
      return e;
    };
    auto now = ledger.read_version();
    if (!now) return rollback(std::move(now).error());
    if (*now > latest) return rollback(ledger.newer(*now));
    if (*now >= step.version) {
      *current = *now;
      if (auto ended = db.Exec("COMMIT", what); !ended) return rollback(std::move(ended).error());
      continue;
    }
    if (auto applied = db.Exec(step.sql, what); !applied) {
      return rollback(std::move(applied).error());
    }
    if (auto recorded = ledger.record(step.version); !recorded) {
      return rollback(std::move(recorded).error());
    }
    if (auto committed = db.Exec("COMMIT", what); !committed) {
      return rollback(std::move(committed).error());
    }
    *current = step.version;
  }
  return *current;
}

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1, kV1}, {2, kV2}, {3, kV3}, {4, kV4}, {5, kV5},
      {6, kV6}, {7, kV7}, {8, kV8}, {9, kV9}, {10, kV10},
  };
  return kMigrations;
}

int LatestVersion() { return Migrations().back().version; }

core::Error NewerSchemaError(const std::string& path, int found) {
  return core::Error(core::ErrorCode::kInternal,
                     "sqlite '" + path + "': database schema version " + std::to_string(found) +
                         " is newer than this a2ad build supports (" +
                         std::to_string(LatestVersion()) +
                         "); upgrade a2ad or use a database written by this version",
                     {{"schemaVersion", std::to_string(found)},
                      {"supportedSchemaVersion", std::to_string(LatestVersion())}});
}

core::Result<int> CurrentVersion(Connection& db) {
  auto prepared = db.Prepare(
      "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'");
  if (!prepared) return std::move(prepared).error();
  {
    Stmt stmt(*prepared);
    const int rc = stmt.Step();
    if (rc != SQLITE_ROW) return db.Fail("read schema", rc);
    if (stmt.Int(0) == 0) return 0;
  }
  return ReadVersion(db);
}

core::Result<int> MigrateToLatest(Connection& db) {
  if (auto made = db.Exec(kCreateMigrationsTable, "create schema_migrations"); !made) {
    return std::move(made).error();
  }
  Ledger ledger;
  ledger.name = "schema";
  ledger.read_version = [&db] { return ReadVersion(db); };
  ledger.record = [&db](int version) -> core::Result<void> {
    auto prepared =
        db.Prepare("INSERT INTO schema_migrations(version, applied_at_ms) VALUES (?1, ?2)");
    if (!prepared) return std::move(prepared).error();
    Stmt insert(*prepared);
    insert.Bind(1, int64_t{version});
    insert.Bind(2, NowMs());
    if (const int rc = insert.Step(); rc != SQLITE_DONE)
      return db.Fail("record schema version " + std::to_string(version), rc);
    return core::Ok{};
  };
  ledger.newer = [&db](int found) { return NewerSchemaError(db.path(), found); };
  return Apply(db, ledger, Migrations());
}

core::Result<int> ComponentVersion(Connection& db, std::string_view component) {
  auto exists = TableExists(db, "component_migrations");
  if (!exists) return std::move(exists).error();
  if (!*exists) return 0;
  return ReadComponentVersion(db, component);
}

core::Result<int> MigrateComponent(Connection& db, std::string_view component,
                                   const std::vector<Migration>& migrations) {
  if (component.empty())
    return core::Error(core::ErrorCode::kInvalidParams, "sqlite: a component needs a name");
  for (size_t i = 0; i < migrations.size(); ++i)
    if (migrations[i].version != static_cast<int>(i) + 1 || migrations[i].sql == nullptr)
      return core::Error(core::ErrorCode::kInvalidParams,
                         "sqlite: the migrations of component '" + std::string(component) +
                             "' must be versions 1..N in order, each with its SQL");
  if (auto made = db.Exec(kCreateComponentMigrationsTable, "create component_migrations"); !made)
    return std::move(made).error();
  const std::string name(component);
  const int known = migrations.empty() ? 0 : migrations.back().version;
  Ledger ledger;
  ledger.name = "component '" + name + "'";
  ledger.read_version = [&db, &name] { return ReadComponentVersion(db, name); };
  ledger.record = [&db, &name](int version) -> core::Result<void> {
    auto prepared = db.Prepare(
        "INSERT INTO component_migrations(component, version, applied_at_ms) VALUES (?1, ?2, ?3)");
    if (!prepared) return std::move(prepared).error();
    Stmt insert(*prepared);
    insert.Bind(1, std::string_view(name));
    insert.Bind(2, int64_t{version});
    insert.Bind(3, NowMs());
    if (const int rc = insert.Step(); rc != SQLITE_DONE)
      return db.Fail("record version " + std::to_string(version) + " of component " + name, rc);
    return core::Ok{};
  };
  ledger.newer = [&db, &name, known](int found) {
    return core::Error(core::ErrorCode::kInternal,
                       "sqlite '" + db.path() + "': component '" + name + "' is at version " +
                           std::to_string(found) + ", newer than this build knows (" +
                           std::to_string(known) + ")",
                       {{"component", name}, {"componentVersion", std::to_string(found)}});
  };
  return Apply(db, ledger, migrations);
}

}  // namespace a2ad::storage::sqlite
