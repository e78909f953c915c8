// See pg_schema.hpp.
#include "a2ad/storage/postgres/pg_schema.hpp"

#include <chrono>
#include <vector>

namespace a2ad::storage::pg {
namespace {

// Any number both builds agree on: the advisory lock every migrating replica takes.
constexpr const char* kLock = "SELECT pg_advisory_xact_lock(7305020300)";

const std::vector<const char*>& Steps() {
  static const std::vector<const char*> steps = {
      // 1
      R"sql(
CREATE TABLE tasks (
  id text COLLATE "C" PRIMARY KEY,
  context_id text COLLATE "C" NOT NULL,
  state integer NOT NULL,
  skill_id text NOT NULL,
  created_at_ms bigint NOT NULL,
  updated_at_ms bigint NOT NULL,
  last_sequence bigint NOT NULL,
  pruned_through bigint NOT NULL DEFAULT -1,
  snapshot text NOT NULL,
  run text NOT NULL,
  a2a_state text NOT NULL,
  dedup_key text COLLATE "C",
  tenant text COLLATE "C" NOT NULL,
  owner text COLLATE "C" NOT NULL
);
CREATE INDEX tasks_by_updated ON tasks(tenant, updated_at_ms DESC, id DESC);
CREATE INDEX tasks_by_context ON tasks(tenant, context_id, updated_at_ms DESC, id DESC);
CREATE INDEX tasks_by_tenant_state ON tasks(tenant, state, updated_at_ms DESC, id DESC);
CREATE INDEX tasks_by_state ON tasks(state, updated_at_ms DESC, id DESC);
CREATE INDEX tasks_prunable ON tasks(updated_at_ms)
  WHERE state IN (3, 4, 5, 7) AND pruned_through < last_sequence;
CREATE UNIQUE INDEX tasks_by_dedup_key ON tasks(tenant, dedup_key) WHERE dedup_key IS NOT NULL;
CREATE TABLE task_events (
  task_id text COLLATE "C" NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  sequence bigint NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  node_id text NOT NULL,
  timestamp_ms bigint NOT NULL,
  payload text NOT NULL,
  PRIMARY KEY (task_id, sequence)
);
CREATE TABLE push_configs (
  task_id text COLLATE "C" NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  config_id text COLLATE "C" NOT NULL,
  url text NOT NULL,
  token text NOT NULL,
  auth_scheme text,
  auth_credentials text NOT NULL,
  wire_version text NOT NULL,
  created_at_ms bigint NOT NULL,
  PRIMARY KEY (task_id, config_id)
);
CREATE TABLE push_outbox (
  id text COLLATE "C" PRIMARY KEY,
  kind text NOT NULL,
  task_id text COLLATE "C" NOT NULL,
  target_id text NOT NULL,
  url text NOT NULL,
  body text NOT NULL,
  content_type text NOT NULL,
  created_at_ms bigint NOT NULL,
  next_attempt_at_ms bigint NOT NULL,
  attempts integer NOT NULL,
  state integer NOT NULL,
  last_error text NOT NULL,
  finished_at_ms bigint NOT NULL,
  traceparent text NOT NULL
);
CREATE INDEX push_outbox_due ON push_outbox(next_attempt_at_ms, id) WHERE state = 0;
CREATE INDEX push_outbox_by_task ON push_outbox(task_id, created_at_ms, id);
CREATE INDEX push_outbox_dead ON push_outbox(finished_at_ms DESC, id) WHERE state = 2;
CREATE TABLE push_webhooks (
  id text COLLATE "C" PRIMARY KEY,
  tenant_id text NOT NULL,
  url text NOT NULL,
  events text NOT NULL,
  secret text NOT NULL,
  created_at_ms bigint NOT NULL
);
CREATE TABLE api_keys (
  key_id text COLLATE "C" PRIMARY KEY,
  secret_sha256 text NOT NULL,
  tenant text NOT NULL,
  scopes text NOT NULL,
  name text NOT NULL,
  created_at_ms bigint NOT NULL,
  expires_at_ms bigint NOT NULL,
  revoked_at_ms bigint NOT NULL
);
CREATE TABLE server_keys (
  name text PRIMARY KEY,
  value text NOT NULL,
  created_at_ms bigint NOT NULL
);
)sql",
      // 2: the key rings (push signing keys) that every replica shares.
      R"sql(
CREATE TABLE server_key_rings (
  ring text COLLATE "C" PRIMARY KEY,
  version bigint NOT NULL
);
CREATE TABLE server_ring_keys (
  ring text COLLATE "C" NOT NULL REFERENCES server_key_rings(ring),
  kid text COLLATE "C" NOT NULL,
  private_key text NOT NULL,
  created_at_ms bigint NOT NULL,
  retired_at_ms bigint NOT NULL,
  PRIMARY KEY (ring, kid)
);
CREATE UNIQUE INDEX server_ring_keys_one_active ON server_ring_keys(ring) WHERE retired_at_ms = 0;
)sql",
      // 3: several replicas (pg_cluster.hpp): who is alive, and who executes which run. A
      // run not yet finished when this step runs gets a lease nobody holds, so the first
      // replica to look adopts it. Push deliveries are claimed by the replica delivering them
      // (pg_push.cpp DueOutbox).
      R"sql(
CREATE TABLE replicas (
  holder text COLLATE "C" PRIMARY KEY,
  replica_id text COLLATE "C" NOT NULL,
  started_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE TABLE run_leases (
  task_id text COLLATE "C" PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
  holder text COLLATE "C" NOT NULL,
  epoch bigint NOT NULL
);
CREATE INDEX run_leases_by_holder ON run_leases(holder);
INSERT INTO run_leases(task_id, holder, epoch)
  SELECT id, '', 1 FROM tasks WHERE state NOT IN (3, 4, 5, 7);
ALTER TABLE push_outbox ADD COLUMN claimed_by text COLLATE "C",
  ADD COLUMN claim_expires_ms bigint NOT NULL DEFAULT 0;
)sql",
      // 4: the event a run is paused until (stored_records.hpp EventAwaited, written with
      // every commit), indexed, so that POST /v1/events on any replica reads the runs waiting
      // for that event and not every unfinished run of the tenant. The runs paused now are
      // read once here; a run whose stored text does not read (a2ad doctor) is left out.
      R"sql(
ALTER TABLE tasks ADD COLUMN waits_for_event text COLLATE "C";
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT id, run FROM tasks
           WHERE state NOT IN (3, 4, 5, 7) AND strpos(run, '"onEvent"') > 0 LOOP
    BEGIN
      UPDATE tasks SET waits_for_event = r.run::jsonb #>> '{pause,conditions,onEvent}'
        WHERE id = r.id AND r.run::jsonb ->> 'status' = 'paused';
    EXCEPTION WHEN others THEN NULL;
    END;
  END LOOP;
END $$;
CREATE INDEX tasks_waiting_on_event ON tasks(tenant, waits_for_event)
  WHERE waits_for_event IS NOT NULL;
)sql",
      // 5: whether a run is parked, and until when (stored_records.hpp ParkedUntil, written
      // with every commit): NULL for a run that is not parked, 0 for one parked with no time,
      // else when it must be woken. A start lists only the unfinished runs not parked
      // (tasks_runnable), the wake timer reads the timed ones (tasks_wake). The runs
      // unfinished now are read once here; a run whose text does not read keeps NULL.
      R"sql(
ALTER TABLE tasks ADD COLUMN wake_at_ms bigint;
DO $$
DECLARE r record; j jsonb; t bigint; o bigint;
BEGIN
  FOR r IN SELECT id, run FROM tasks WHERE state NOT IN (3, 4, 5, 7) LOOP
    BEGIN
      j := r.run::jsonb;
      IF jsonb_typeof(j) <> 'object' THEN CONTINUE; END IF;
      IF j ->> 'status' = 'paused' THEN
        t := CASE WHEN jsonb_typeof(j #> '{pause,triggerAtMs}') = 'number'
                  THEN greatest(trunc((j #>> '{pause,triggerAtMs}')::numeric)::bigint, 0) ELSE 0 END;
        o := CASE WHEN jsonb_typeof(j #> '{pause,timeoutAtMs}') = 'number'
                  THEN greatest(trunc((j #>> '{pause,timeoutAtMs}')::numeric)::bigint, 0) ELSE 0 END;
        UPDATE tasks SET wake_at_ms = CASE WHEN t > 0 AND o > 0 THEN least(t, o)
                                           ELSE greatest(t, o) END WHERE id = r.id;
      ELSIF left(j ->> 'status', 8) = 'waiting-' AND NOT (j ? 'waitingOn') THEN
        UPDATE tasks SET wake_at_ms =
          CASE WHEN jsonb_typeof(j #> '{interrupt,expiresAt}') = 'number'
               THEN greatest(trunc((j #>> '{interrupt,expiresAt}')::numeric)::bigint, 0) ELSE 0 END
          WHERE id = r.id;
      END IF;
    EXCEPTION WHEN others THEN NULL;
    END;
  END LOOP;
END $$;
CREATE INDEX tasks_runnable ON tasks(id) WHERE wake_at_ms IS NULL AND state NOT IN (3, 4, 5, 7);
CREATE INDEX tasks_wake ON tasks(wake_at_ms, id) WHERE wake_at_ms > 0;
)sql",
  };
  return steps;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int LatestVersion() { return static_cast<int>(Steps().size()); }

core::Result<int> CurrentVersion(Connection& db) {
  auto exists = db.Exec("SELECT to_regclass('a2ad_schema') IS NOT NULL", {}, "read the schema version");
  if (!exists) return std::move(exists).error();
  if (exists->Text(0, 0) != "t") return 0;
  auto v = db.Exec("SELECT coalesce(max(version), 0) FROM a2ad_schema WHERE component = 'core'",
                   {}, "read the schema version");
  if (!v) return std::move(v).error();
  return static_cast<int>(v->Int(0, 0));
}

core::Result<int> ComponentVersion(Connection& db, std::string_view component) {
  auto exists =
      db.Exec("SELECT to_regclass('a2ad_schema') IS NOT NULL", {}, "read the schema version");
  if (!exists) return std::move(exists).error();
  if (exists->Text(0, 0) != "t") return 0;
  auto v = db.Exec("SELECT coalesce(max(version), 0) FROM a2ad_schema WHERE component = $1",
                   Params().Add(component), "read a component's version");
  if (!v) return std::move(v).error();
  return static_cast<int>(v->Int(0, 0));
}

core::Result<int> Migrate(Connection& db, const std::vector<ComponentMigrations>& components) {
  for (const ComponentMigrations& c : components) {
    if (c.component.empty() || c.component == "core")
      return core::Error(core::ErrorCode::kInvalidParams,
                         "a component needs a name of its own (not '" + c.component + "')");
    for (size_t i = 0; i < c.postgresql.size(); ++i)
      if (c.postgresql[i].version != static_cast<int>(i) + 1 || c.postgresql[i].sql == nullptr)
        return core::Error(core::ErrorCode::kInvalidParams,
                           "the PostgreSQL migrations of component '" + c.component +
                               "' must be versions 1..N in order, each with its SQL");
  }
  auto fail = [&](core::Error e) -> core::Result<int> {
    (void)db.Run("ROLLBACK", "roll back the migration");
    return e;
  };
  if (auto ok = db.Run("BEGIN", "migrate"); !ok) return std::move(ok).error();
  if (auto ok = db.Run(kLock, "take the migration lock"); !ok) return fail(std::move(ok).error());
  if (auto ok = db.Run("CREATE TABLE IF NOT EXISTS a2ad_schema (component text NOT NULL,"
                       " version integer NOT NULL, applied_at_ms bigint NOT NULL,"
                       " PRIMARY KEY (component, version))",
                       "create a2ad_schema");
      !ok)
    return fail(std::move(ok).error());
  auto current = CurrentVersion(db);
  if (!current) return fail(std::move(current).error());
  if (*current > LatestVersion())
    return fail(core::Error(core::ErrorCode::kInternal,
                            "the database's schema is version " + std::to_string(*current) +
                                ", newer than this build's " + std::to_string(LatestVersion()) +
                                ": run a newer a2ad"));
  for (int v = *current + 1; v <= LatestVersion(); ++v) {
    if (auto ok = db.Run(Steps()[v - 1], "migrate to version " + std::to_string(v)); !ok)
      return fail(std::move(ok).error());
    Params p;
    p.Add(int64_t{v}).Add(NowMs());
    if (auto ok = db.ExecOnce("INSERT INTO a2ad_schema VALUES ('core', $1, $2)", p,
                              "record version " + std::to_string(v));
        !ok)
      return fail(std::move(ok).error());
  }
  // The extensions' tables, which may reference the core's.
  for (const ComponentMigrations& c : components) {
    const int latest = static_cast<int>(c.postgresql.size());
    auto at = ComponentVersion(db, c.component);
    if (!at) return fail(std::move(at).error());
    if (*at > latest)
      return fail(core::Error(core::ErrorCode::kInternal,
                              "component '" + c.component + "' is at version " +
                                  std::to_string(*at) + ", newer than this build knows (" +
                                  std::to_string(latest) + "): run a newer a2ad",
                              {{"component", c.component}}));
    for (int v = *at + 1; v <= latest; ++v) {
      const std::string what =
          "migrate component '" + c.component + "' to version " + std::to_string(v);
      if (auto ok = db.Run(c.postgresql[v - 1].sql, what); !ok) return fail(std::move(ok).error());
      Params p;
      p.Add(c.component).Add(int64_t{v}).Add(NowMs());
      if (auto ok = db.ExecOnce("INSERT INTO a2ad_schema VALUES ($1, $2, $3)", p, what); !ok)
        return fail(std::move(ok).error());
    }
  }
  if (auto ok = db.Run("COMMIT", "commit the migration"); !ok) return fail(std::move(ok).error());
  return LatestVersion();
}

}  // namespace a2ad::storage::pg
