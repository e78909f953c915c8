#pragma once
// Migrations an extension declares for the tables it keeps in the task store's database
// (a *component*: a name and its own ordered list of steps per engine), whatever the store.
// The DDL differs per engine (SQLite's STRICT and WITHOUT ROWID tables, PostgreSQL's types), so
// a component gives one list for each; the statements that use its tables are shared
// (sql.hpp). Each engine applies its own list after its core schema, each step recorded with
// the component's name: SQLite in component_migrations (sqlite_migration.hpp), PostgreSQL in
// a2ad_schema (pg_schema.hpp). A version number means the same tables on both.
//
// Rules for a list: versions are 1, 2, ..., N in that order; a step's SQL is frozen once
// released (a change is a new step). An empty list: the component keeps no tables on that
// engine (its version there stays 0). Thread safety: plain values.
#include <string>
#include <vector>

namespace a2ad::storage {

struct Migration {
  int version;
  const char* sql;  // one or more statements of the engine's dialect; text with static lifetime
};

/// One extension's tables: its name (non-empty, unique among components, not "core") and its
/// steps on each engine.
struct ComponentMigrations {
  std::string component;
  std::vector<Migration> sqlite;
  std::vector<Migration> postgresql;
};

}  // namespace a2ad::storage
