// The OPT tables on PostgreSQL (opt_schema.hpp): SQLite's shape in PostgreSQL's types. Frozen
// once released: a change is a new step.
#include "a2ad/ext/opt/opt_schema.hpp"

namespace a2ad::ext::opt {
namespace {

// Version 1 (opt_schema.hpp). Ids that are sorted or compared are COLLATE "C", so objectives
// list (and their page cursors compare) by the ids' bytes, as on SQLite, whatever the
// database's locale. opt_actions.rowid numbers the outbox's rows in the order they were written,
// as SQLite's row ids do: the shared statements read it `ORDER BY rowid`.
constexpr const char* kV1 = R"sql(
CREATE TABLE opt_objectives (
  id text COLLATE "C" PRIMARY KEY,
  tenant text COLLATE "C" NOT NULL,
  status text NOT NULL,
  updated_at_ms bigint NOT NULL,
  last_sequence bigint NOT NULL,
  version bigint NOT NULL,
  doc text NOT NULL
);
CREATE INDEX opt_objectives_by_tenant ON opt_objectives (tenant, updated_at_ms DESC, id DESC);
CREATE TABLE opt_plans (
  id text COLLATE "C" PRIMARY KEY,
  objective_id text COLLATE "C" NOT NULL REFERENCES opt_objectives (id),
  position bigint NOT NULL,
  doc text NOT NULL
);
CREATE INDEX opt_plans_by_objective ON opt_plans (objective_id, position);
CREATE TABLE opt_tasks (
  id text COLLATE "C" PRIMARY KEY,
  objective_id text COLLATE "C" NOT NULL REFERENCES opt_objectives (id),
  plan_id text COLLATE "C" NOT NULL REFERENCES opt_plans (id),
  task_index bigint NOT NULL,
  a2a_task_id text COLLATE "C",
  doc text NOT NULL
);
CREATE INDEX opt_tasks_by_objective ON opt_tasks (objective_id, plan_id, task_index);
CREATE INDEX opt_tasks_by_a2a_task ON opt_tasks (a2a_task_id) WHERE a2a_task_id IS NOT NULL;
CREATE TABLE opt_events (
  objective_id text COLLATE "C" NOT NULL,
  sequence bigint NOT NULL,
  at_ms bigint NOT NULL,
  last integer NOT NULL,
  event text NOT NULL,
  PRIMARY KEY (objective_id, sequence)
);
CREATE TABLE opt_actions (
  run_id text COLLATE "C" NOT NULL,
  kind text COLLATE "C" NOT NULL,
  objective_id text COLLATE "C" NOT NULL,
  plan_task_id text COLLATE "C" NOT NULL,
  request text NOT NULL,
  rowid bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  PRIMARY KEY (run_id, kind)
);
)sql";

// Version 2: outbox rows are claimed (opt_schema.hpp).
constexpr const char* kV2 = R"sql(
ALTER TABLE opt_actions ADD COLUMN claimed_by text COLLATE "C",
  ADD COLUMN claim_expires_ms bigint NOT NULL DEFAULT 0;
)sql";

}  // namespace

std::vector<storage::Migration> PostgresSchema() { return {{1, kV1}, {2, kV2}}; }

}  // namespace a2ad::ext::opt
