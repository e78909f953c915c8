#pragma once
// Migrations an extension declares for the tables it keeps in the task store's database
// (a *component*: a name and its own ordered list of steps), whatever the store. The SQLite
// store applies them (sqlite_migration.hpp says how: per component, after the core schema,
// each step in its own transaction); a store with another SQL dialect will take its own
// list beside `migrations`.
//
// Rules for a list: versions are 1, 2, ..., N in that order; a step's SQL is frozen once
// released (a change is a new step). Thread safety: plain values.
#include <string>
#include <vector>

namespace a2ad::storage {

struct Migration {
  int version;
  const char* sql;  // one or more SQLite statements; text with static lifetime
};

/// One extension's tables: its name (non-empty, unique among components) and its steps.
struct ComponentMigrations {
  std::string component;
  std::vector<Migration> migrations;
};

}  // namespace a2ad::storage
