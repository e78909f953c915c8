#pragma once
// Internal to storage_sqlite: the schema and its migrations.
//
// schema_migrations(version INTEGER PRIMARY KEY, applied_at_ms INTEGER) records every
// applied step. Migrations are an ordered list; step N moves the schema from version N-1
// to N and is applied in its own IMMEDIATE transaction together with its
// schema_migrations row, so a crash leaves the database at a whole version.
//
// Version 1:
//   tasks(id TEXT PK, context_id, state INTEGER (protocol::TaskState), skill_id,
//         created_at_ms, updated_at_ms, last_sequence, snapshot TEXT)     -- STRICT
//     snapshot is the v1.0 JSON of the Task (protocol/v10/codec.hpp), the other columns
//     are the filter/sort keys of ListTasks and TaskRecord's bookkeeping. A rowid table:
//     snapshots (history, artifacts) are often larger than WITHOUT ROWID rows should be.
//     Indexes: tasks_by_updated(updated_at_ms DESC, id DESC) for the unfiltered ListTasks
//     order and its keyset cursor; tasks_by_context(context_id, updated_at_ms DESC, id DESC)
//     and tasks_by_state(state, updated_at_ms DESC, id DESC) for the filtered ones.
//   task_events(task_id TEXT REFERENCES tasks(id) ON DELETE CASCADE, sequence, event_id,
//               type, node_id, timestamp_ms, payload TEXT, PRIMARY KEY(task_id, sequence))
//     WITHOUT ROWID, STRICT: the log clustered by (task, sequence), so ReadEvents is one
//     range scan and a duplicate sequence is impossible. payload is the JSON text of
//     RunEvent::payload; run_id is not stored (it equals task_id).
//
// Version 2 (event retention, TaskStore::PruneEvents):
//   tasks.pruned_through INTEGER NOT NULL DEFAULT -1: every event of the task with
//     sequence <= pruned_through has been deleted by retention, so the task's log holds
//     exactly the sequences (pruned_through, last_sequence]. -1: nothing pruned. Commits
//     never write it; appending to a pruned task makes it a candidate again.
//   tasks_prunable(updated_at_ms) WHERE state IN (3, 4, 5, 7) AND
//     pruned_through < last_sequence: a partial index holding only terminal tasks that
//     still have logged events, so a prune visits the tasks it deletes from, never the
//     (ever growing) set of tasks pruned before.
//
// Version 3: tasks.run TEXT (the OpenWOP RunSnapshot JSON), tasks.a2a_state TEXT (the
//   RFC 0100 A2ATaskState JSON), tasks.dedup_key TEXT with the unique partial index
//   tasks_by_dedup_key (idempotent creation by messageId / Idempotency-Key).
//
// Version 4 (push notifications; written by sqlite_push_store.cpp):
//   push_configs(task_id REFERENCES tasks ON DELETE CASCADE, config_id, url, token,
//     auth_scheme (NULL: no authentication), auth_credentials, wire_version, created_at_ms,
//     PRIMARY KEY(task_id, config_id)) WITHOUT ROWID, STRICT.
//   push_outbox(id TEXT PK, kind, task_id, target_id, url, body, content_type,
//     created_at_ms, next_attempt_at_ms, attempts, state (storage::OutboxState),
//     last_error, finished_at_ms) STRICT; partial indexes push_outbox_due (pending rows by
//     due time) and push_outbox_dead (dead letters, newest first), push_outbox_by_task.
//   push_webhooks(id TEXT PK, tenant_id, url, events (comma-separated RunEventTypes),
//     secret, created_at_ms) STRICT: OpenWOP webhook subscriptions (DIGEST §6.2).
//
// Version 5 (`a2ad doctor`, sqlite_doctor.hpp):
//   quarantined_tasks(task_id, quarantined_at_ms, problem, record TEXT) STRICT: tasks set
//     aside because their stored text could not be read or rebuilt; `record` is a JSON
//     object of the row, its events and push configs as the text they held.
//
// Version 6 (tenants and owners, TaskRecord::tenant / owner):
//   tasks.tenant TEXT NOT NULL DEFAULT 'default', tasks.owner TEXT NOT NULL DEFAULT
//     'anonymous' (what every task stored before belongs to), written at creation only.
//   The List indexes lead with the tenant, since every request's list is one tenant's:
//     tasks_by_updated(tenant, updated_at_ms DESC, id DESC), tasks_by_context(tenant,
//     context_id, ...) and the new tasks_by_tenant_state(tenant, state, ...).
//     tasks_by_state(state, ...) stays for the server's scans of every tenant (recovery).
//   tasks_by_dedup_key becomes UNIQUE (tenant, dedup_key): idempotency keys are per tenant.
//
// Version 7 (API keys, storage/api_key_store.hpp; sqlite_api_key_store.cpp):
//   api_keys(key_id TEXT PK, secret_sha256, tenant, scopes (comma-separated), name,
//     created_at_ms, expires_at_ms (0: never), revoked_at_ms (0: not revoked))
//     WITHOUT ROWID, STRICT. Only the SHA-256 of a key's secret is stored.
//
// Version 8: push_outbox.traceparent (the run's trace, for the delivery's span).
//
// Version 9 (parked runs, stored_records.hpp ParkedUntil / EventAwaited, written with every
//   commit): tasks.wake_at_ms INTEGER (NULL: not parked; 0: parked with no time; else when
//   to wake it), tasks.waits_for_event TEXT. Partial indexes: tasks_runnable(id) of the
//   unfinished runs not parked (what a restart starts again: TaskStore::ListRunnable),
//   tasks_wake(wake_at_ms, id) of the timed ones (ListWakes), tasks_waiting_on_event(tenant,
//   waits_for_event) (UnfinishedRunsWaitingFor). The runs unfinished at the upgrade are read
//   once by the step itself (SQLite's JSON functions). tasks_prunable is rewritten with the
//   same terms as tasks_runnable (comparisons, not an IN list: a partial index's IN list made
//   SQLite build an ephemeral table for every row it wrote, about 15,000 instructions).
//   tasks_by_state is dropped; tasks_cancelled(updated_at_ms DESC, id DESC) WHERE state = 5, the
//   one scan of every tenant left (the cancels resent at a start, TaskQuery::all_tenants).
//
// Version 10: the List indexes ascending: tasks_by_updated(tenant, updated_at_ms, id),
//   tasks_by_context(tenant, context_id, updated_at_ms, id), tasks_by_tenant_state(tenant,
//   state, updated_at_ms, id), tasks_cancelled(updated_at_ms, id) WHERE state = 5. A task
//   written now lands at the right edge of each, where SQLite packs pages full; descending,
//   it landed at the left edge, where every insert moved cells between the first leaves (two
//   pages written per index per task, leaves half empty). Lists read them backwards, newest
//   first, as before.
//
// Extensions keep their own tables through per-component migrations
// (sqlite_migration.hpp, MigrateComponent below), applied after these.
//
// Thread safety: the functions use only the connection they are given (one thread at a
// time, sqlite_connection.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_migration.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage::sqlite {

/// The prune candidates (schema version 2, its index rewritten by version 9): terminal tasks
/// with events left and updated_at_ms < ?1, oldest first, at most ?2. Forced onto
/// tasks_prunable (the planner would otherwise pick tasks_by_state and visit every old
/// terminal task); its WHERE must repeat the index's verbatim for SQLite to accept the index.
inline constexpr const char* kSelectPrunableTasks =
    "SELECT id, pruned_through, last_sequence FROM tasks INDEXED BY tasks_prunable"
    " WHERE (state BETWEEN 3 AND 5 OR state = 7) AND pruned_through < last_sequence"
    " AND updated_at_ms < ?1 ORDER BY updated_at_ms LIMIT ?2";

/// The ordered migrations: Migrations()[i].version == i + 1.
const std::vector<Migration>& Migrations();
int LatestVersion();

/// The highest version in schema_migrations; 0 if the table does not exist.
core::Result<int> CurrentVersion(Connection& db);

/// Brings `db` to LatestVersion(). Returns the resulting version. kInternal if the
/// database is newer than this build knows (nothing is changed) or a step fails (that
/// step is rolled back; earlier steps stay applied). Safe against a concurrent migrator:
/// each step re-reads the version inside its transaction.
core::Result<int> MigrateToLatest(Connection& db);

/// The error for a database newer than this build.
core::Error NewerSchemaError(const std::string& path, int found);

/// The version of `component` recorded in component_migrations; 0 if none (or no table).
core::Result<int> ComponentVersion(Connection& db, std::string_view component);

/// Brings `component` to the last version of `migrations` (the core schema must be current).
/// Returns the resulting version. kInvalidParams for an empty name or versions that are not
/// 1..N in order; kInternal if the database holds a newer version of the component than
/// `migrations` knows (nothing changed) or a step fails (that step is rolled back; earlier
/// steps stay applied). Same crash safety as MigrateToLatest.
core::Result<int> MigrateComponent(Connection& db, std::string_view component,
                                   const std::vector<Migration>& migrations);

/// The SQL of TaskStore::List for `query`'s filters: the page (with the keyset cursor's
/// term when `with_cursor`) or, with `count`, the count of every match. Named parameters
/// :tenant, :owner, :ctx, :state, :after, :cursor_updated, :cursor_id, :limit (those of the
/// filters in use). Exposed so a test can check the plans.
std::string ListTasksSql(const TaskQuery& query, bool with_cursor, bool count);

}  // namespace a2ad::storage::sqlite
