#pragma once
// Internal to storage_postgres: the statements that write push configs and outbox rows, and
// their parameters, shared by the writer (rows written in a task's commit, pg_writer.cpp) and
// the push store's own calls (pg_push.cpp).
#include <string>

#include "a2ad/storage/postgres/pg_connection.hpp"
#include "a2ad/storage/push_store.hpp"

namespace a2ad::storage::pg {

/// Upserts by (task_id, config_id); 8 parameters (ConfigParams).
inline const std::string kUpsertConfig =
    "INSERT INTO push_configs(task_id, config_id, url, token, auth_scheme, auth_credentials,"
    " wire_version, created_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
    " ON CONFLICT (task_id, config_id) DO UPDATE SET url = excluded.url, token = excluded.token,"
    " auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials,"
    " wire_version = excluded.wire_version";

/// 14 parameters (OutboxParams).
inline const std::string kInsertOutbox =
    "INSERT INTO push_outbox(id, kind, task_id, target_id, url, body, content_type,"
    " created_at_ms, next_attempt_at_ms, attempts, state, last_error, finished_at_ms,"
    " traceparent) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)";

/// A config without authentication stores a NULL scheme and "" credentials.
inline Params ConfigParams(const PushConfigRecord& cfg) {
  Params q;
  q.Add(cfg.task_id).Add(cfg.config.id).Add(cfg.config.url).Add(cfg.config.token);
  if (cfg.config.authentication)
    q.Add(cfg.config.authentication->scheme).Add(cfg.config.authentication->credentials);
  else
    q.Null().Add(std::string_view(""));
  q.Add(cfg.config.wire_version).Add(cfg.created_at_ms);
  return q;
}

inline Params OutboxParams(const OutboxRow& o) {
  Params q;
  q.Add(o.id).Add(o.kind).Add(o.task_id).Add(o.target_id).Add(o.url).Add(o.body)
      .Add(o.content_type).Add(o.created_at_ms).Add(o.next_attempt_at_ms)
      .Add(int64_t{o.attempts}).Add(static_cast<int64_t>(o.state)).Add(o.last_error)
      .Add(o.finished_at_ms).Add(o.traceparent);
  return q;
}

}  // namespace a2ad::storage::pg
