// PostgresStore: opening, the reader pool, task reads, retention and closing. See
// postgres_store.hpp.
#include <chrono>
#include <string>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/page_cursor.hpp"
#include "a2ad/storage/postgres/pg_schema.hpp"
#include "a2ad/storage/postgres/pg_store_impl.hpp"
#include "a2ad/storage/stored_records.hpp"

namespace a2ad::storage {
namespace {

using pg::Params;
using pg::Rows;

core::Error Closed() { return core::Error(core::ErrorCode::kUnavailable, "task store is closed"); }

constexpr const char* kTaskColumns =
    "SELECT id, skill_id, created_at_ms, updated_at_ms, last_sequence, snapshot, run,"
    " coalesce(dedup_key, ''), tenant, owner FROM tasks";
constexpr int kTaskColumnCount = 10;  // of kTaskColumns (List's count follows them)

core::Result<TaskRecord> ReadTask(const Rows& rows, int i) {
  StoredTask t;
  t.id = rows.Text(i, 0);
  t.skill_id = rows.Text(i, 1);
  t.created_at_ms = rows.Int(i, 2);
  t.updated_at_ms = rows.Int(i, 3);
  t.last_sequence = rows.Int(i, 4);
  t.snapshot = rows.Text(i, 5);
  t.run = rows.Text(i, 6);
  t.dedup_key = rows.Text(i, 7);
  t.tenant = rows.Text(i, 8);
  t.owner = rows.Text(i, 9);
  return DecodeStoredTask(t);
}

}  // namespace

core::Result<std::optional<TaskRecord>> PostgresStore::Impl::OneTask(core::Result<Rows> rows) {
  if (!rows) return std::move(rows).error();
  if (rows->size() == 0) return std::optional<TaskRecord>{};
  auto r = ReadTask(*rows, 0);
  if (!r) {
    core::LogWarn("task store: " + r.error().message);
    return std::move(r).error();
  }
  return std::optional<TaskRecord>(std::in_place, std::move(*r));
}

const std::string& PostgresStore::Impl::GetTaskSql() {
  static const std::string sql = std::string(kTaskColumns) + " WHERE id = $1";
  return sql;
}

// ---- the pool ---------------------------------------------------------------------------

PostgresStore::Impl::Lease::~Lease() {
  if (!impl_ || !c_) return;
  std::lock_guard lock(impl_->pool_mu_);
  if (c_->Broken() || impl_->pool_closed_) {
    c_.reset();
    --impl_->open_;
  } else {
    impl_->idle_.push_back(std::move(c_));
  }
  impl_->pool_cv_.notify_all();
}

void PostgresStore::Impl::Lease::Drop() {
  if (!impl_ || !c_) return;
  c_.reset();
  std::lock_guard lock(impl_->pool_mu_);
  --impl_->open_;
  impl_->pool_cv_.notify_all();
}

core::Result<PostgresStore::Impl::Lease> PostgresStore::Impl::Borrow() {
  std::unique_lock lock(pool_mu_);
  bool waited = false;
  for (;;) {
    if (pool_closed_) return Closed();
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(c));
    }
    if (open_ < opts_.reader_connections) break;
    if (!waited) ++waits_;
    waited = true;
    pool_cv_.wait(lock);
  }
  ++open_;
  lock.unlock();
  auto c = pg::Connection::Open(url_, opts_.statement_timeout_ms);
  if (!c) {
    std::lock_guard relock(pool_mu_);
    --open_;
    pool_cv_.notify_all();
    errors_.fetch_add(1);
    return std::move(c).error();
  }
  return Lease(*this, std::move(c).value());
}

void PostgresStore::Impl::CloseReaders() {
  std::unique_lock lock(pool_mu_);
  pool_closed_ = true;
  pool_cv_.notify_all();
  pool_cv_.wait(lock, [&] { return open_ == idle_.size(); });  // every lease returned
  open_ -= idle_.size();
  idle_.clear();
}

// ---- opening and closing ----------------------------------------------------------------

PostgresStore::PostgresStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PostgresStore::~PostgresStore() { Close(); }

int PostgresStore::LatestSchemaVersion() { return pg::LatestVersion(); }

core::Result<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                                 PostgresOptions opts) {
  if (opts.reader_connections < 1 || opts.max_batch_commits < 1 || opts.prune_batch_tasks < 1 ||
      opts.statement_timeout_ms < 0)
    return core::Error(core::ErrorCode::kInvalidParams, "PostgreSQL store: bad options");
  auto c = pg::Connection::Open(url, opts.statement_timeout_ms);
  if (!c) return std::move(c).error();
  if (opts.migrate_on_open) {
    auto v = pg::Migrate(**c, opts.components);
    if (!v) return std::move(v).error();
  } else {
    auto v = pg::CurrentVersion(**c);
    if (!v) return std::move(v).error();
    if (*v != pg::LatestVersion())
      return core::Error(core::ErrorCode::kInternal,
                         "the database's schema is version " + std::to_string(*v) +
                             ", this build needs " + std::to_string(pg::LatestVersion()) +
                             (*v < pg::LatestVersion() ? ": run `a2ad migrate`" : ""));
    for (const ComponentMigrations& component : opts.components) {
      auto at = pg::ComponentVersion(**c, component.component);
      if (!at) return std::move(at).error();
      const int latest = static_cast<int>(component.postgresql.size());
      if (*at != latest)
        return core::Error(core::ErrorCode::kInternal,
                           "component '" + component.component + "' is at version " +
                               std::to_string(*at) + ", this build uses " +
                               std::to_string(latest) +
                               (*at < latest ? ": run `a2ad migrate`" : ""));
    }
  }
  auto impl = std::make_unique<Impl>(url, std::move(opts));
  impl->StartWriter();
  // The connection that migrated serves reads.
  {
    std::lock_guard lock(impl->pool_mu_);
    impl->idle_.push_back(std::move(c).value());
    impl->open_ = 1;
  }
  return std::unique_ptr<PostgresStore>(new PostgresStore(std::move(impl)));
}

void PostgresStore::Close() {
  if (!impl_) return;
  impl_->StopWriter();
  impl_->gets_.Stop();
  impl_->CloseReaders();
}

// ---- tasks ------------------------------------------------------------------------------

void PostgresStore::Commit(TaskCommit commit, CommitCallback done) {
  impl_->Commit(std::move(commit), std::move(done));
}

core::Result<std::optional<TaskRecord>> PostgresStore::Get(std::string_view task_id) {
  return impl_->WithReader([&](pg::Connection& c) {
    return Impl::OneTask(c.Exec(Impl::GetTaskSql(), Params().Add(task_id), "read a task"));
  });
}

void PostgresStore::QueueGet(std::string task_id, GetCallback done) {
  impl_->gets_.Push(std::move(task_id), std::move(done));
}

core::Result<std::optional<TaskRecord>> PostgresStore::FindByDedupKey(std::string_view tenant,
                                                                      std::string_view key) {
  static const std::string sql = std::string(kTaskColumns) + " WHERE tenant = $1 AND dedup_key = $2";
  if (key.empty()) return std::optional<TaskRecord>{};
  return impl_->WithReader([&](pg::Connection& c) {
    return Impl::OneTask(c.Exec(sql, Params().Add(tenant).Add(key), "find a task by its key"));
  });
}

core::Result<TaskPage> PostgresStore::List(const TaskQuery& query) {
  auto cursor = StartPage(query);
  if (!cursor) return std::move(cursor).error();
  // The filters, shared by the count and the page; the cursor only by the page.
  std::string where = " WHERE true";
  Params params;
  int n = 0;
  auto next = [&] { return "$" + std::to_string(++n); };
  if (!query.all_tenants) {
    where += " AND tenant = " + next();
    params.Add(query.tenant);
  }
  if (!query.owner.empty()) {
    where += " AND owner = " + next();
    params.Add(query.owner);
  }
  if (!query.context_id.empty()) {
    where += " AND context_id = " + next();
    params.Add(query.context_id);
  }
  if (!query.skill_id.empty()) {
    where += " AND skill_id = " + next();
    params.Add(query.skill_id);
  }
  if (query.state) {
    where += " AND state = " + next();
    params.Add(static_cast<int64_t>(*query.state));
  }
  if (query.updated_at_or_after_ms) {
    where += " AND updated_at_ms >= " + next();
    params.Add(*query.updated_at_or_after_ms);
  }
  std::string page_where = where;
  if (*cursor) {
    page_where += " AND (updated_at_ms, id) < (" + next();
    page_where += ", " + next() + ")";
    params.Add((*cursor)->updated_at_ms).Add((*cursor)->task_id);
  }
  const std::string limit = next();
  params.Add(static_cast<int64_t>(query.page_size) + 1);
  // One statement, so the count and the page read one snapshot; with no page rows, one row
  // of NULLs carries the count.
  const std::string sql = "SELECT p.*, total.n FROM (SELECT count(*) AS n FROM tasks" + where +
                          ") total LEFT JOIN LATERAL (" + kTaskColumns + page_where +
                          " ORDER BY updated_at_ms DESC, id DESC LIMIT " + limit +
                          ") p ON true ORDER BY p.updated_at_ms DESC, p.id DESC";
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<TaskPage> {
    auto rows = c.Exec(sql, params, "list tasks");
    if (!rows) return std::move(rows).error();
    TaskPage page;
    const int count = rows->size();
    int taken = 0;
    std::string last_id;
    int64_t last_updated = 0;
    bool more = false;
    for (int i = 0; i < count; ++i) {
      page.total_size = static_cast<int32_t>(rows->Int(i, kTaskColumnCount));
      if (rows->IsNull(i, 0)) continue;  // no page: the row carries the count alone
      if (taken == query.page_size) {
        more = true;
        continue;
      }
      ++taken;
      last_id = std::string(rows->Text(i, 0));
      last_updated = rows->Int(i, 3);
      auto r = ReadTask(*rows, i);
      if (r) {
        page.records.push_back(std::move(r).value());
      } else {
        core::LogWarn("task store: " + r.error().message);
        page.unreadable.push_back(last_id);
      }
    }
    if (more) page.next_page_token = EncodePageToken({last_updated, last_id});
    return page;
  });
}

core::Result<std::vector<protocol::RunEvent>> PostgresStore::ReadEvents(std::string_view task_id,
                                                                        int64_t after_sequence,
                                                                        size_t limit) {
  static const std::string sql =
      "SELECT sequence, event_id, type, node_id, timestamp_ms, payload FROM task_events"
      " WHERE task_id = $1 AND sequence > $2 ORDER BY sequence LIMIT $3";
  if (limit == 0) return std::vector<protocol::RunEvent>{};
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<std::vector<protocol::RunEvent>> {
    auto rows = c.Exec(sql,
                       Params().Add(task_id).Add(after_sequence).Add(
                           static_cast<int64_t>(std::min<size_t>(limit, INT64_MAX))),
                       "read events");
    if (!rows) return std::move(rows).error();
    std::vector<protocol::RunEvent> out;
    out.reserve(rows->size());
    for (int i = 0; i < rows->size(); ++i) {
      protocol::RunEvent e;
      e.run_id = std::string(task_id);
      e.sequence = rows->Int(i, 0);
      e.event_id = std::string(rows->Text(i, 1));
      e.type = std::string(rows->Text(i, 2));
      e.node_id = std::string(rows->Text(i, 3));
      e.timestamp_ms = rows->Int(i, 4);
      auto payload = DecodeEventPayload(task_id, e.sequence, rows->Text(i, 5));
      if (!payload) return std::move(payload).error();
      e.payload = std::move(payload).value();
      out.push_back(std::move(e));
    }
    return out;
  });
}

core::Result<size_t> PostgresStore::PruneEvents(int64_t terminal_before_ms) {
  // First every commit accepted before this call.
  std::mutex mu;
  std::condition_variable cv;
  bool reached = false;
  if (!impl_->Enqueue([&](pg::Connection*) {
        std::lock_guard lock(mu);
        reached = true;
        cv.notify_all();
      }))
    return Closed();
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return reached; });
  }
  static const std::string batch =
      "WITH c AS (SELECT id, last_sequence FROM tasks WHERE state IN (3, 4, 5, 7)"
      " AND pruned_through < last_sequence AND updated_at_ms < $1 ORDER BY updated_at_ms"
      " LIMIT $2 FOR UPDATE SKIP LOCKED),"
      " d AS (DELETE FROM task_events e USING c WHERE e.task_id = c.id"
      " AND e.sequence <= c.last_sequence RETURNING 1),"
      " u AS (UPDATE tasks t SET pruned_through = c.last_sequence FROM c WHERE t.id = c.id"
      " RETURNING 1)"
      " SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM u)";
  size_t deleted = 0;
  for (;;) {
    auto step = impl_->WithReader([&](pg::Connection& c) {
      return c.Exec(batch,
                    Params().Add(terminal_before_ms).Add(
                        static_cast<int64_t>(impl_->opts_.prune_batch_tasks)),
                    "prune events");
    });
    if (!step) return std::move(step).error();
    deleted += static_cast<size_t>(step->Int(0, 0));
    if (step->Int(0, 1) == 0) return deleted;
  }
}

// ---- operations -------------------------------------------------------------------------

ApiKeyStore& PostgresStore::ApiKeys() { return impl_->api_keys_; }

core::Result<StoreCounts> PostgresStore::Count() {
  static const std::string sql =
      "SELECT 0, state, count(*) FROM tasks GROUP BY state"
      " UNION ALL SELECT 1, 0, count(*) FROM task_events"
      " UNION ALL SELECT 2, state, count(*) FROM push_outbox WHERE state IN (0, 2) GROUP BY state";
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<StoreCounts> {
    auto rows = c.Exec(sql, {}, "count");
    if (!rows) return std::move(rows).error();
    StoreCounts out;
    for (int i = 0; i < rows->size(); ++i) {
      const int64_t kind = rows->Int(i, 0), key = rows->Int(i, 1), n = rows->Int(i, 2);
      if (kind == 0) out.tasks_by_state[key] = n;
      if (kind == 1) out.events = n;
      if (kind == 2) (key == 0 ? out.outbox_pending : out.outbox_dead) = n;
    }
    return out;
  });
}

core::Result<void> PostgresStore::Ping() {
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<void> {
    auto rows = c.Exec("SELECT 1", {}, "ping");
    if (!rows) return std::move(rows).error();
    return core::Ok{};
  });
}

void PostgresStore::CheckWritable(CommitCallback done) {
  auto shared = std::make_shared<CommitCallback>(std::move(done));
  const bool queued = impl_->Enqueue([shared](pg::Connection* c) {
    if (!c) {
      (*shared)(core::Error(core::ErrorCode::kUnavailable, "the database is unavailable",
                            {{"database", "postgresql"}}));
      return;
    }
    auto rows = c->Exec("SELECT 1", {}, "check the database");
    if (!rows) {
      (*shared)(std::move(rows).error());
      return;
    }
    (*shared)(core::Ok{});
  });
  if (!queued) (*shared)(Closed());
}

core::Result<std::string> PostgresStore::ServerKey(const std::string& name,
                                                   const std::function<std::string()>& make) {
  return impl_->keys_.Secret(name, [&]() -> core::Result<std::string> { return make(); });
}

ServerKeys& PostgresStore::Keys() { return impl_->keys_; }

PostgresStore::PoolStats PostgresStore::Pool() const {
  std::lock_guard lock(impl_->pool_mu_);
  PoolStats s;
  s.open = impl_->open_;
  s.in_use = impl_->open_ - impl_->idle_.size();
  s.waits = impl_->waits_;
  s.errors = impl_->errors_.load();
  return s;
}

core::Result<std::optional<std::vector<std::string>>> PostgresStore::UnfinishedRunsWaitingFor(
    std::string_view tenant, std::string_view name) {
  // The partial index tasks_waiting_on_event (schema step 4).
  static const std::string sql =
      "SELECT id FROM tasks WHERE tenant = $1 AND waits_for_event = $2"
      " AND state NOT IN (3, 4, 5, 7) ORDER BY id LIMIT 10000";
  return impl_->WithReader(
      [&](pg::Connection& c) -> core::Result<std::optional<std::vector<std::string>>> {
        auto rows = c.Exec(sql, pg::Params().Add(tenant).Add(name), "find the runs waiting for an event");
        if (!rows) return std::move(rows).error();
        std::vector<std::string> ids;
        ids.reserve(static_cast<size_t>(rows->size()));
        for (int i = 0; i < rows->size(); ++i) ids.emplace_back(rows->Text(i, 0));
        return std::optional<std::vector<std::string>>(std::move(ids));
      });
}


core::Result<TaskPage> PostgresStore::ListRunnable(std::string_view after_id, size_t limit) {
  // The partial index tasks_runnable (schema step 5): the runs in flight, not the parked.
  static const std::string sql = std::string(kTaskColumns) +
                                 " WHERE wake_at_ms IS NULL AND state NOT IN (3, 4, 5, 7)"
                                 " AND id > $1 ORDER BY id LIMIT $2";
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<TaskPage> {
    auto rows = c.Exec(sql, pg::Params().Add(after_id).Add(static_cast<int64_t>(limit)),
                       "list the runs to start");
    if (!rows) return std::move(rows).error();
    TaskPage page;
    for (int i = 0; i < rows->size(); ++i) {
      auto r = ReadTask(*rows, i);
      if (r) {
        page.records.push_back(std::move(r).value());
      } else {
        core::LogWarn("task store: " + r.error().message);
        page.unreadable.emplace_back(rows->Text(i, 0));
      }
    }
    if (limit > 0 && static_cast<size_t>(rows->size()) == limit)
      page.next_page_token = std::string(rows->Text(rows->size() - 1, 0));
    return page;
  });
}

core::Result<std::vector<Wake>> PostgresStore::ListWakes(int64_t after_ms,
                                                         std::string_view after_id, size_t limit,
                                                         std::string_view holder) {
  // The partial index tasks_wake (schema step 5); with a holder, only the runs it leases.
  static const std::string any =
      "SELECT id, wake_at_ms FROM tasks WHERE wake_at_ms > 0 AND (wake_at_ms, id) > ($1, $2)"
      " ORDER BY wake_at_ms, id LIMIT $3";
  static const std::string held =
      "SELECT t.id, t.wake_at_ms, l.epoch FROM tasks t JOIN run_leases l ON l.task_id = t.id"
      " WHERE t.wake_at_ms > 0 AND (t.wake_at_ms, t.id) > ($1, $2) AND l.holder = $4"
      " ORDER BY t.wake_at_ms, t.id LIMIT $3";
  pg::Params params;
  params.Add(after_ms).Add(after_id).Add(static_cast<int64_t>(limit));
  if (!holder.empty()) params.Add(holder);
  return impl_->WithReader([&](pg::Connection& c) -> core::Result<std::vector<Wake>> {
    auto rows = c.Exec(holder.empty() ? any : held, params, "list the parked runs' wake times");
    if (!rows) return std::move(rows).error();
    std::vector<Wake> wakes;
    wakes.reserve(static_cast<size_t>(rows->size()));
    for (int i = 0; i < rows->size(); ++i)
      wakes.push_back(
          Wake{std::string(rows->Text(i, 0)), rows->Int(i, 1), holder.empty() ? 0 : rows->Int(i, 2)});
    return wakes;
  });
}

}  // namespace a2ad::storage
