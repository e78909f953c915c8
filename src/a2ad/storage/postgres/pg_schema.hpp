#pragma once
// Internal to storage_postgres: the schema and its migrations.
//
// a2ad_schema(component, version, applied_at_ms, PRIMARY KEY(component, version)) records
// every applied step; the core schema is component "core", an extension's tables are the
// component it names (storage/schema_migrations.hpp: ComponentMigrations::postgresql), brought
// to their latest version after the core's. Migrate() takes a transaction-level advisory lock
// first, so replicas started at once migrate once: the others wait, then find the schema
// current. DDL is transactional in PostgreSQL, so all of one call's steps commit together or
// not at all.
//
// Version 1 of "core" (the shape of SQLite's version 7, sqlite_schema.hpp, in one step):
//   tasks(id PK, context_id, state (protocol::TaskState), skill_id, created_at_ms,
//     updated_at_ms, last_sequence, pruned_through, snapshot, run, a2a_state, dedup_key,
//     tenant, owner). Every text column that is sorted or compared is COLLATE "C", so ListTasks
//     orders ids by their bytes as the page cursor does (page_cursor.hpp) whatever the
//     database's locale. snapshot, run and a2a_state are JSON as text: the store never looks
//     inside them, and text costs the server no parse on every commit (jsonb would).
//     Indexes as in SQLite: tasks_by_updated, tasks_by_context, tasks_by_tenant_state,
//     tasks_by_state (recovery), tasks_prunable (partial: terminal tasks with events left),
//     tasks_by_dedup_key (UNIQUE (tenant, dedup_key) where a key is set).
//   task_events(task_id REFERENCES tasks ON DELETE CASCADE, sequence, event_id, type,
//     node_id, timestamp_ms, payload, PRIMARY KEY(task_id, sequence)).
//   push_configs, push_outbox, push_webhooks: as SQLite's version 4.
//   api_keys: as SQLite's version 7 (storage/api_key_store.hpp).
//   server_keys(name PK, value, created_at_ms): the server's secrets, made once by whichever
//     replica needs one first (PostgresStore::ServerKey, storage/server_keys.hpp Secret).
// Version 2: the key rings of storage/server_keys.hpp (push signing keys), pg_server_keys.cpp:
//   server_key_rings(ring PK, version): one row per ring, its version bumped by every change
//     (what a server polls to see another's rotation), and the row a rotation locks (FOR
//     UPDATE) so that rotations of one ring run one after the other.
//   server_ring_keys(ring, kid, private_key (PEM), created_at_ms, retired_at_ms (0: active),
//     PRIMARY KEY (ring, kid)); a partial unique index allows one active key per ring.
//
// Thread safety: the functions use only the connection they are given.
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/postgres/pg_connection.hpp"
#include "a2ad/storage/schema_migrations.hpp"

namespace a2ad::storage::pg {

/// The core schema's version this build writes and reads.
int LatestVersion();

/// The core schema's version recorded in the database (0: none yet).
core::Result<int> CurrentVersion(Connection& db);

/// The version of `component` recorded in the database (0: none yet).
core::Result<int> ComponentVersion(Connection& db, std::string_view component);

/// Brings the core schema to LatestVersion(), then every one of `components` to the last
/// version of its PostgreSQL list, in one transaction under the advisory lock; returns the core
/// schema's version. kInvalidParams (nothing changed) for a component without a name, named
/// "core", or whose list is not versions 1..N; kInternal if the database holds a newer version
/// of the core or of a component than this build knows (nothing changed).
core::Result<int> Migrate(Connection& db, const std::vector<ComponentMigrations>& components = {});

}  // namespace a2ad::storage::pg
