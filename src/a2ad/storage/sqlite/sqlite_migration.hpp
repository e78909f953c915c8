#pragma once
// Migrations of a SQLite schema, as an extension declares them (public: the type of
// SqliteOptions::components and SqliteTaskStore::MigrateComponent).
//
// The core schema (tasks, events, push, quarantine) has one ordered list, recorded in
// schema_migrations (sqlite_schema.hpp). An extension that keeps its own tables in the task
// store's database (Objective-Plan-Task) owns them through a *component*: a name and its own
// ordered list (ComponentMigrations::sqlite), recorded per component in
//   component_migrations(component TEXT, version INTEGER, applied_at_ms INTEGER,
//                        PRIMARY KEY(component, version))   -- WITHOUT ROWID, STRICT
// (created by the first component migration). A component is migrated after the core
// schema, so its tables may reference `tasks`; the core never references a component's.
//
// Crash safety is the core's: step N of a component moves it from N-1 to N in its own
// IMMEDIATE transaction together with its component_migrations row, so a crash leaves the
// component at a whole version; each step re-reads the version inside its transaction, so
// two processes migrating at once apply every step once.
//
// The types are storage/schema_migrations.hpp's (store-neutral, so an extension declared
// above the storage layer can carry them).
//
// Thread safety: plain values.
#include "a2ad/storage/schema_migrations.hpp"

namespace a2ad::storage::sqlite {

using storage::ComponentMigrations;
using storage::Migration;

}  // namespace a2ad::storage::sqlite
