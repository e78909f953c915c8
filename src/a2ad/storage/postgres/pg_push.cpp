// PostgresStore as the PushStore (push_store.hpp): configs, the outbox and webhooks. Each call
// is one statement on a pooled connection (UpdateOutboxBatch: one transaction).
#include <string>
#include <utility>

#include "a2ad/storage/postgres/pg_push_rows.hpp"
#include "a2ad/storage/postgres/pg_store_impl.hpp"

namespace a2ad::storage {
namespace {

using pg::Params;
using pg::Rows;

const std::string kConfigColumns =
    "SELECT task_id, config_id, url, token, auth_scheme, auth_credentials, wire_version,"
    " created_at_ms FROM push_configs";
const std::string kOutboxColumns =
    "SELECT id, kind, task_id, target_id, url, body, content_type, created_at_ms,"
    " next_attempt_at_ms, attempts, state, last_error, finished_at_ms, traceparent"
    " FROM push_outbox";
const std::string kWebhookColumns =
    "SELECT id, tenant_id, url, events, secret, created_at_ms FROM push_webhooks";
// An outcome gives the row's claim up (a retry is anyone's). A replica whose claim was taken
// over (it was thought dead) writes nothing: the new claimer's outcome stands.
const std::string kUpdateOutbox =
    "UPDATE push_outbox SET attempts = $2, state = $3, next_attempt_at_ms = $4,"
    " last_error = $5, finished_at_ms = $6, claimed_by = NULL, claim_expires_ms = 0"
    " WHERE id = $1 AND (claimed_by IS NULL OR claimed_by = $7)";

std::string S(std::string_view v) { return std::string(v); }

PushConfigRecord ReadConfig(const Rows& r, int i) {
  PushConfigRecord c;
  c.task_id = S(r.Text(i, 0));
  c.config.task_id = c.task_id;
  c.config.id = S(r.Text(i, 1));
  c.config.url = S(r.Text(i, 2));
  c.config.token = S(r.Text(i, 3));
  if (!r.IsNull(i, 4))
    c.config.authentication = protocol::AuthenticationInfo{S(r.Text(i, 4)), S(r.Text(i, 5))};
  c.config.wire_version = S(r.Text(i, 6));
  c.created_at_ms = r.Int(i, 7);
  return c;
}

OutboxRow ReadOutbox(const Rows& r, int i) {
  OutboxRow o;
  o.id = S(r.Text(i, 0));
  o.kind = S(r.Text(i, 1));
  o.task_id = S(r.Text(i, 2));
  o.target_id = S(r.Text(i, 3));
  o.url = S(r.Text(i, 4));
  o.body = S(r.Text(i, 5));
  o.content_type = S(r.Text(i, 6));
  o.created_at_ms = r.Int(i, 7);
  o.next_attempt_at_ms = r.Int(i, 8);
  o.attempts = static_cast<int32_t>(r.Int(i, 9));
  o.state = static_cast<OutboxState>(r.Int(i, 10));
  o.last_error = S(r.Text(i, 11));
  o.finished_at_ms = r.Int(i, 12);
  o.traceparent = S(r.Text(i, 13));
  return o;
}

WebhookRecord ReadWebhook(const Rows& r, int i) {
  WebhookRecord w;
  w.id = S(r.Text(i, 0));
  w.tenant_id = S(r.Text(i, 1));
  w.url = S(r.Text(i, 2));
  std::string_view events = r.Text(i, 3);
  while (!events.empty()) {
    const size_t comma = std::min(events.find(','), events.size());
    if (comma > 0) w.events.emplace_back(events.substr(0, comma));
    events.remove_prefix(std::min(comma + 1, events.size()));
  }
  w.secret = S(r.Text(i, 4));
  w.created_at_ms = r.Int(i, 5);
  return w;
}

template <class Row, class ReadRow>
core::Result<std::vector<Row>> All(core::Result<Rows> rows, ReadRow read) {
  if (!rows) return std::move(rows).error();
  std::vector<Row> out;
  out.reserve(rows->size());
  for (int i = 0; i < rows->size(); ++i) out.push_back(read(*rows, i));
  return out;
}

Params UpdateParams(const OutboxRow& o, const std::string& holder) {
  Params q;
  q.Add(o.id)
      .Add(int64_t{o.attempts})
      .Add(static_cast<int64_t>(o.state))
      .Add(o.next_attempt_at_ms)
      .Add(o.last_error)
      .Add(o.finished_at_ms)
      .Add(holder);
  return q;
}

}  // namespace

core::Result<void> PostgresStore::PutConfig(const PushConfigRecord& r) {
  if (r.task_id.empty() || r.config.id.empty())
    return core::Error(core::ErrorCode::kInvalidParams, "push config: task id and id required");
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<void> {
    auto put = c.Exec(pg::kUpsertConfig, pg::ConfigParams(r), "write a push config");
    if (put) return core::Ok{};
    if (put.error().Detail("sqlstate") == "23503")  // no such task
      return core::Error(core::ErrorCode::kTaskNotFound, "task " + r.task_id + " not found",
                         {{"taskId", r.task_id}});
    return std::move(put).error();
  });
}

core::Result<std::optional<PushConfigRecord>> PostgresStore::GetConfig(std::string_view task_id,
                                                                       std::string_view config_id) {
  static const std::string sql = kConfigColumns + " WHERE task_id = $1 AND config_id = $2";
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<std::optional<PushConfigRecord>> {
    auto rows = c.Exec(sql, Params().Add(task_id).Add(config_id), "read a push config");
    if (!rows) return std::move(rows).error();
    if (rows->size() == 0) return std::optional<PushConfigRecord>{};
    return std::optional<PushConfigRecord>(ReadConfig(*rows, 0));
  });
}

core::Result<std::vector<PushConfigRecord>> PostgresStore::ListConfigs(std::string_view task_id) {
  static const std::string sql =
      kConfigColumns + " WHERE task_id = $1 ORDER BY created_at_ms, config_id";
  return impl_->WithReader([&](pg::Connection& c) {
    return All<PushConfigRecord>(c.Exec(sql, Params().Add(task_id), "list push configs"),
                                 ReadConfig);
  });
}

// A deletion is announced on the change feed in its own transaction (storage/cluster.hpp), so
// a replica that caches the task's configs forgets this one at once: "<task id> -1" (a change
// beside the task; its sequence stays) for a config, "*" (read everything again) for a
// webhook, which belongs to no task. The writing holder's own feed skips it ("@<holder>").
std::string PostgresStore::FeedLine(std::string_view line) const {
  return "@" + impl_->opts_.lease_holder + "\n" + std::string(line);
}

core::Result<bool> PostgresStore::DeleteConfig(std::string_view task_id,
                                               std::string_view config_id) {
  static const std::string sql =
      "WITH d AS (DELETE FROM push_configs WHERE task_id = $1 AND config_id = $2 RETURNING 1)"
      " SELECT pg_notify('a2ad_feed', $3) FROM d";
  const std::string line = FeedLine(std::string(task_id) + " -1");
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<bool> {
    auto done = c.Exec(sql, Params().Add(task_id).Add(config_id).Add(line), "delete a push config");
    if (!done) return std::move(done).error();
    return done->size() > 0;
  });
}

core::Result<std::vector<PushConfigRecord>> PostgresStore::AllConfigs() {
  static const std::string sql =
      kConfigColumns +
      " WHERE EXISTS (SELECT 1 FROM tasks WHERE tasks.id = push_configs.task_id"
      " AND tasks.state NOT IN (3, 4, 5, 7)) ORDER BY task_id, created_at_ms, config_id";
  return impl_->WithReader([&](pg::Connection& c) {
    return All<PushConfigRecord>(c.Exec(sql, {}, "read the push configs"), ReadConfig);
  });
}

core::Result<void> PostgresStore::Enqueue(const std::vector<OutboxRow>& rows) {
  if (rows.empty()) return core::Ok{};
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<void> {
    if (auto b = c.Run("BEGIN", "enqueue"); !b) return b;
    for (const OutboxRow& o : rows) {
      if (auto put = c.Exec(pg::kInsertOutbox, pg::OutboxParams(o), "insert outbox row " + o.id); !put) {
        (void)c.Run("ROLLBACK", "roll back an enqueue");
        return std::move(put).error();
      }
    }
    return c.Run("COMMIT", "commit an enqueue");
  });
}

// Due rows are claimed by the replica that reads them (several replicas on one database:
// storage/cluster.hpp), so no two deliver one row at a time: a row is this replica's to
// deliver unless a live replica claimed it (a claim of a dead one, of an earlier process of
// this replica id, or older than ten minutes is taken over). Rows another replica is
// claiming right now are skipped. Its outcome (UpdateOutbox) gives the claim up.
core::Result<std::vector<OutboxRow>> PostgresStore::DueOutbox(int64_t now_ms, size_t limit) {
  static const std::string sql =
      "WITH due AS (SELECT o.id FROM push_outbox o"
      " WHERE o.state = 0 AND o.next_attempt_at_ms <= $1"
      " AND (o.claimed_by IS NULL OR o.claimed_by = $3 OR o.claim_expires_ms <= $1"
      "  OR NOT EXISTS (SELECT 1 FROM replicas r WHERE r.holder = o.claimed_by"
      "   AND r.expires_at >= clock_timestamp() AND NOT (r.replica_id = $4 AND r.started_at <"
      "    coalesce((SELECT me.started_at FROM replicas me WHERE me.holder = $3), '-infinity'))))"
      " ORDER BY o.next_attempt_at_ms, o.id LIMIT $2 FOR UPDATE SKIP LOCKED),"
      " claimed AS (UPDATE push_outbox o SET claimed_by = $3, claim_expires_ms = $1 + 600000"
      " FROM due WHERE o.id = due.id RETURNING o.*)"
      " SELECT id, kind, task_id, target_id, url, body, content_type, created_at_ms,"
      " next_attempt_at_ms, attempts, state, last_error, finished_at_ms, traceparent"
      " FROM claimed ORDER BY next_attempt_at_ms, id";
  return impl_->WithReader([&](pg::Connection& c) {
    return All<OutboxRow>(c.Exec(sql,
                                 Params()
                                     .Add(now_ms)
                                     .Add(static_cast<int64_t>(limit))
                                     .Add(impl_->opts_.lease_holder)
                                     .Add(impl_->opts_.replica_id),
                                 "claim due pushes"),
                          ReadOutbox);
  });
}

core::Result<std::optional<int64_t>> PostgresStore::NextDueAt() {
  static const std::string sql = "SELECT min(next_attempt_at_ms) FROM push_outbox WHERE state = 0";
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<std::optional<int64_t>> {
    auto rows = c.Exec(sql, {}, "read the next due push");
    if (!rows) return std::move(rows).error();
    if (rows->IsNull(0, 0)) return std::optional<int64_t>{};
    return std::optional<int64_t>(rows->Int(0, 0));
  });
}

core::Result<void> PostgresStore::UpdateOutbox(const OutboxRow& row) {
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<void> {
    auto done = c.Exec(kUpdateOutbox, UpdateParams(row, impl_->opts_.lease_holder),
                       "update outbox row " + row.id);
    if (!done) return std::move(done).error();
    if (done->Affected() == 0)
      return core::Error(core::ErrorCode::kInvalidParams, "outbox row " + row.id + " not found");
    return core::Ok{};
  });
}

core::Result<void> PostgresStore::UpdateOutboxBatch(const std::vector<OutboxRow>& rows) {
  if (rows.empty()) return core::Ok{};
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<void> {
    if (auto b = c.Run("BEGIN", "update outbox rows"); !b) return b;
    for (const OutboxRow& o : rows) {
      if (auto done = c.Exec(kUpdateOutbox, UpdateParams(o, impl_->opts_.lease_holder),
                             "update outbox row " + o.id);
          !done) {
        (void)c.Run("ROLLBACK", "roll back outbox updates");
        return std::move(done).error();
      }
    }
    return c.Run("COMMIT", "commit outbox updates");
  });
}

core::Result<std::vector<OutboxRow>> PostgresStore::ListOutbox(std::string_view task_id) {
  static const std::string sql = kOutboxColumns + " WHERE task_id = $1 ORDER BY created_at_ms, id";
  return impl_->WithReader([&](pg::Connection& c) {
    return All<OutboxRow>(c.Exec(sql, Params().Add(task_id), "list a task's pushes"), ReadOutbox);
  });
}

core::Result<std::vector<OutboxRow>> PostgresStore::ListDead(size_t limit) {
  static const std::string sql =
      kOutboxColumns + " WHERE state = 2 ORDER BY finished_at_ms DESC, id LIMIT $1";
  return impl_->WithReader([&](pg::Connection& c) {
    return All<OutboxRow>(c.Exec(sql, Params().Add(static_cast<int64_t>(limit)), "list dead pushes"),
                          ReadOutbox);
  });
}

core::Result<void> PostgresStore::PutWebhook(const WebhookRecord& r) {
  static const std::string sql =
      "WITH w AS (INSERT INTO push_webhooks(id, tenant_id, url, events, secret, created_at_ms)"
      " VALUES ($1, $2, $3, $4, $5, $6) RETURNING 1) SELECT pg_notify('a2ad_feed', $7) FROM w";
  std::string events;
  for (const auto& e : r.events) events += (events.empty() ? "" : ",") + e;
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<void> {
    auto put = c.Exec(sql,
                      Params().Add(r.id).Add(r.tenant_id).Add(r.url).Add(events).Add(r.secret).Add(
                          r.created_at_ms).Add(FeedLine("*")),
                      "insert webhook " + r.id);
    if (!put) return std::move(put).error();
    return core::Ok{};
  });
}

core::Result<std::optional<WebhookRecord>> PostgresStore::GetWebhook(std::string_view id) {
  static const std::string sql = kWebhookColumns + " WHERE id = $1";
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<std::optional<WebhookRecord>> {
    auto rows = c.Exec(sql, Params().Add(id), "read a webhook");
    if (!rows) return std::move(rows).error();
    if (rows->size() == 0) return std::optional<WebhookRecord>{};
    return std::optional<WebhookRecord>(ReadWebhook(*rows, 0));
  });
}

core::Result<bool> PostgresStore::DeleteWebhook(std::string_view id) {
  static const std::string sql =
      "WITH d AS (DELETE FROM push_webhooks WHERE id = $1 RETURNING 1)"
      " SELECT pg_notify('a2ad_feed', $2) FROM d";
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<bool> {
    auto done = c.Exec(sql, Params().Add(id).Add(FeedLine("*")), "delete a webhook");
    if (!done) return std::move(done).error();
    return done->size() > 0;
  });
}

core::Result<std::vector<WebhookRecord>> PostgresStore::AllWebhooks() {
  static const std::string sql = kWebhookColumns + " ORDER BY created_at_ms, id";
  return impl_->WithReader([&](pg::Connection& c) {
    return All<WebhookRecord>(c.Exec(sql, {}, "read the webhooks"), ReadWebhook);
  });
}

}  // namespace a2ad::storage
