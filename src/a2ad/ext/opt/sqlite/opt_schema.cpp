// The OPT tables on SQLite (opt_schema.hpp). Frozen once released: a change is a new step.
#include "a2ad/ext/opt/opt_schema.hpp"

namespace a2ad::ext::opt {
namespace {

// Version 1 (opt_schema.hpp). opt_actions is read in rowid order (the order of its inserts).
constexpr const char* kV1 = R"sql(
CREATE TABLE opt_objectives (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  status TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  last_sequence INTEGER NOT NULL,
  version INTEGER NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX opt_objectives_by_tenant ON opt_objectives (tenant, updated_at_ms DESC, id DESC);
CREATE TABLE opt_plans (
  id TEXT PRIMARY KEY,
  objective_id TEXT NOT NULL REFERENCES opt_objectives (id),
  position INTEGER NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX opt_plans_by_objective ON opt_plans (objective_id, position);
CREATE TABLE opt_tasks (
  id TEXT PRIMARY KEY,
  objective_id TEXT NOT NULL REFERENCES opt_objectives (id),
  plan_id TEXT NOT NULL REFERENCES opt_plans (id),
  task_index INTEGER NOT NULL,
  a2a_task_id TEXT,
  doc TEXT NOT NULL
);
CREATE INDEX opt_tasks_by_objective ON opt_tasks (objective_id, plan_id, task_index);
CREATE INDEX opt_tasks_by_a2a_task ON opt_tasks (a2a_task_id) WHERE a2a_task_id IS NOT NULL;
CREATE TABLE opt_events (
  objective_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  last INTEGER NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (objective_id, sequence)
) WITHOUT ROWID;
CREATE TABLE opt_actions (
  run_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  objective_id TEXT NOT NULL,
  plan_task_id TEXT NOT NULL,
  request TEXT NOT NULL,
  PRIMARY KEY (run_id, kind)
);
)sql";

// Version 2: outbox rows are claimed (opt_schema.hpp).
constexpr const char* kV2 = R"sql(
ALTER TABLE opt_actions ADD COLUMN claimed_by TEXT;
ALTER TABLE opt_actions ADD COLUMN claim_expires_ms INTEGER NOT NULL DEFAULT 0;
)sql";

}  // namespace

std::vector<storage::Migration> SqliteSchema() { return {{1, kV1}, {2, kV2}}; }

}  // namespace a2ad::ext::opt
