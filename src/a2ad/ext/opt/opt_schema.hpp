#pragma once
// The tables of the OPT extension (component "opt", opt_store.hpp), one list of steps per
// engine: the DDL is the engine's own (a folder per backend), the statements that read and
// write the tables are shared (opt_rows.cpp, opt_store.cpp, opt_follow.cpp over
// storage/sql.hpp). A version means the same tables on every engine:
//   version 1
//     opt_objectives  one row per objective: its tenant, status and change time (for
//                     listing), the sequence of its last event, a version bumped by every write
//     opt_plans, opt_tasks  one JSON document per plan and plan task (opt_json.hpp)
//     opt_events      every status that moved, per objective, gap-free (objectives/subscribe)
//     opt_actions     the outbox of runs to start or cancel (OptRunner), read in the order its
//                     rows were written (`ORDER BY rowid`: SQLite's own row ids, a column of
//                     that name on PostgreSQL)
//   version 2
//     opt_actions     + claimed_by, claim_expires_ms: the replica working a row and until when
//                     (OptStore::ClaimActions), so several replicas do not work one row at once
// Steps are frozen once released: a change is a new step, on every engine.
//
// Thread safety: plain values.
#include <vector>

#include "a2ad/storage/schema_migrations.hpp"

namespace a2ad::ext::opt {

/// The steps on SQLite (sqlite/opt_schema.cpp).
std::vector<storage::Migration> SqliteSchema();
/// The steps on PostgreSQL (postgres/opt_schema.cpp).
std::vector<storage::Migration> PostgresSchema();

}  // namespace a2ad::ext::opt
