#pragma once
// PostgresStore: the task store and push store on a PostgreSQL server (issue 30), for a team
// that needs a2ad's data on a database server rather than in one file. Contract:
// task_store.hpp and push_store.hpp; the schema is described in pg_schema.hpp.
//
// Writes: ONE writer thread with its own connection, fed by a FIFO queue, so one replica's
// commits are applied in call order. The writer takes every queued commit (up to
// PostgresOptions::max_batch_commits) and applies them in one transaction (group commit: one
// COMMIT, one WAL flush, for the batch). The sequence check is the database's: a task is
// created by an INSERT that a duplicate id or idempotency key refuses, and changed by an
// UPDATE ... WHERE last_sequence = expected, so a writer that is behind is refused (kConflict),
// never merged, whichever replica it runs on. If a statement of the batch fails (a duplicate
// outbox id, a value PostgreSQL cannot store), the transaction is rolled back and the batch
// written again with a savepoint per commit: that commit alone fails. If COMMIT fails, every
// commit of the batch fails. Callbacks run on the writer thread, in call order, afterwards.
// JSON is serialized on the calling thread; the writer does only SQL.
//
// Reads: a pool of connections (PostgresOptions::reader_connections, opened on demand;
// callers wait when all are busy). Each read is one statement, so one snapshot; a read sees
// every commit whose callback has run. A read that fails because its connection was lost is
// tried once more on a new connection. QueueGet (tasks/get's path) does not take a thread of
// the caller's: one thread sends the gets queued meanwhile (up to 32) in one pipeline on a
// pooled connection, one round trip for all, and answers each as its row is read; a get whose
// statement failed or whose connection was lost is asked again alone, as Get would be.
//
// Extensions' tables (backend.hpp, "components"): Write is a job of the writer queue, in a
// transaction of its own (BEGIN .. COMMIT on the writer's connection); Read runs on a pooled
// connection in one REPEATABLE READ READ ONLY transaction, so its statements share a snapshot;
// the commit participant is called in each batch's transaction before its COMMIT, inside a
// savepoint that is rolled back (and logged) if it throws or a statement of it failed, so it
// never fails the batch. Components are migrated with the core schema (pg_schema.hpp).
//
// Faults: the server unreachable or the connection lost: the call fails with kUnavailable (a
// commit so failed was not acknowledged; whether it was written is unknown to the caller,
// whose retry then meets the sequence check) and the next call connects again. A statement
// that runs past PostgresOptions::statement_timeout_ms is cancelled by the server:
// kUnavailable. Messages never carry the URL, a host, a user or a password (pg_connection.hpp).
//
// Thread safety: every member may be called from any thread (PruneEvents and Close not from
// a commit callback).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/storage/backend.hpp"
#include "a2ad/storage/push_store.hpp"
#include "a2ad/storage/schema_migrations.hpp"
#include "a2ad/storage/server_keys.hpp"
#include "a2ad/storage/sql.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

struct PostgresOptions {
  /// Most connections reads use at once. At least 1.
  size_t reader_connections = 4;
  /// Most commits applied in one transaction. At least 1.
  size_t max_batch_commits = 256;
  /// The server cancels a statement that runs longer (0: never).
  int statement_timeout_ms = 30000;
  /// Most terminal tasks one PruneEvents transaction prunes.
  size_t prune_batch_tasks = 200;
  /// Open() applies pending migrations. If false, a database below the latest version is
  /// refused (run `a2ad migrate`).
  bool migrate_on_open = true;
  /// Extensions' own tables (storage/schema_migrations.hpp): Open() brings each component to
  /// the last version of its PostgreSQL list after the core schema (with migrate_on_open
  /// false, a component below it is refused like the core schema).
  std::vector<ComponentMigrations> components;
  /// Called after each batch of commits is settled, with its size and how long writing it
  /// took (metrics). Runs on the writer thread.
  std::function<void(size_t batch_size, double seconds)> batch_observer;
  /// Called with the size of each batch of queued gets (QueueGet: one pipeline when more than
  /// one), before it is sent. Runs on the gets' thread.
  std::function<void(size_t gets)> get_batch_observer;
  /// The holder (cluster.hpp) a creating commit with take_lease gives the run's lease to.
  std::string lease_holder;
  std::string replica_id;  // its replica (a claim of an earlier process of it is taken over)
};

class PostgresStore final : public TaskStore, public PushStore {
 public:
  /// Connects to `url` (pg_connection.hpp: a libpq URI or keyword string), migrates (see
  /// PostgresOptions::migrate_on_open) and starts the writer. kInvalidParams for a URL that
  /// does not parse or bad options; kUnavailable if the server cannot be reached; kInternal
  /// if the schema is newer than this build or a migration fails.
  static core::Result<std::unique_ptr<PostgresStore>> Open(const std::string& url,
                                                           PostgresOptions opts = {});
  /// Brings the database at `url` to the latest schema, and then `components`, in one
  /// transaction (pg_schema.hpp); returns the core schema's version (`a2ad migrate`).
  static core::Result<int> Migrate(const std::string& url,
                                   const std::vector<ComponentMigrations>& components = {});
  static int LatestSchemaVersion();
  /// Brings the core schema and then `component` to their latest versions; returns the
  /// component's. May run while servers use the database (the advisory lock orders it).
  static core::Result<int> MigrateComponent(const std::string& url,
                                            const ComponentMigrations& component);
  /// The version of `component` recorded in the database at `url` (0: never migrated).
  static core::Result<int> ComponentVersion(const std::string& url, std::string_view component);

  ~PostgresStore() override;

  // TaskStore. After Close(), Commit's `done` runs inline with kUnavailable.
  void Commit(TaskCommit commit, CommitCallback done) override;
  core::Result<std::optional<TaskRecord>> Get(std::string_view task_id) override;
  bool QueuesGets() const override { return true; }
  void QueueGet(std::string task_id, GetCallback done) override;
  core::Result<std::optional<TaskRecord>> FindByDedupKey(std::string_view tenant,
                                                         std::string_view key) override;
  core::Result<TaskPage> List(const TaskQuery& query) override;
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                           int64_t after_sequence,
                                                           size_t limit) override;
  /// Waits for the commits accepted before it, then deletes in transactions of at most
  /// PostgresOptions::prune_batch_tasks tasks each, on a reader connection (commits go on
  /// meanwhile; each task's row is locked while its events are deleted).
  core::Result<size_t> PruneEvents(int64_t terminal_before_ms) override;
  core::Result<std::optional<std::vector<std::string>>> UnfinishedRunsWaitingFor(
      std::string_view tenant, std::string_view name) override;
  core::Result<TaskPage> ListRunnable(std::string_view after_id, size_t limit) override;
  core::Result<std::vector<Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                            size_t limit, std::string_view holder) override;
  void Close() override;

  // PushStore.
  core::Result<void> PutConfig(const PushConfigRecord& record) override;
  core::Result<std::optional<PushConfigRecord>> GetConfig(std::string_view task_id,
                                                          std::string_view config_id) override;
  core::Result<std::vector<PushConfigRecord>> ListConfigs(std::string_view task_id) override;
  core::Result<bool> DeleteConfig(std::string_view task_id, std::string_view config_id) override;
  core::Result<std::vector<PushConfigRecord>> AllConfigs() override;
  core::Result<void> Enqueue(const std::vector<OutboxRow>& rows) override;
  core::Result<std::vector<OutboxRow>> DueOutbox(int64_t now_ms, size_t limit) override;
  core::Result<std::optional<int64_t>> NextDueAt() override;
  core::Result<void> UpdateOutbox(const OutboxRow& row) override;
  core::Result<void> UpdateOutboxBatch(const std::vector<OutboxRow>& rows) override;
  core::Result<std::vector<OutboxRow>> ListOutbox(std::string_view task_id) override;
  core::Result<std::vector<OutboxRow>> ListDead(size_t limit) override;
  core::Result<void> PutWebhook(const WebhookRecord& record) override;
  core::Result<std::optional<WebhookRecord>> GetWebhook(std::string_view id) override;
  core::Result<bool> DeleteWebhook(std::string_view id) override;
  core::Result<std::vector<WebhookRecord>> AllWebhooks() override;

  // ---- for the server's operations ------------------------------------------------------
  /// The API keys (table api_keys); lives as long as the store.
  ApiKeyStore& ApiKeys();
  /// What the metrics count (backend.hpp). Blocking.
  core::Result<StoreCounts> Count();
  /// Whether the database answers now (one statement on a pooled connection). Blocking.
  core::Result<void> Ping();
  /// Whether the writer can reach the database now: a statement on its connection, queued
  /// behind the commits accepted before; `done` runs on the writer thread (readiness).
  void CheckWritable(CommitCallback done);
  /// The server secret named `name`: the stored one, or `make()`'s value stored by this call if
  /// none is stored yet (whichever replica asks first makes it; the others read it).
  core::Result<std::string> ServerKey(const std::string& name,
                                      const std::function<std::string()>& make);
  /// The server's secrets and key rings (storage/server_keys.hpp; tables server_keys,
  /// server_key_rings and server_ring_keys, pg_schema.hpp), each call on a pooled connection;
  /// lives as long as the store.
  ServerKeys& Keys();
  /// Pool figures for the metrics: connections open and in use, callers that had to wait,
  /// and statements that failed.
  struct PoolStats {
    size_t open = 0, in_use = 0;
    uint64_t waits = 0, errors = 0;
  };
  PoolStats Pool() const;

  // ---- an extension's own tables (see "Extensions' tables" above; backend.hpp) ---------
  void Write(sql::Job job, CommitCallback done);
  core::Result<void> Read(const sql::Job& job);
  void SetCommitParticipant(CommitParticipant participant);

  class Impl;

 private:
  explicit PostgresStore(std::unique_ptr<Impl> impl);
  /// A change-feed payload of this process: `line` after the "@<holder>" its feed skips.
  std::string FeedLine(std::string_view line) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace a2ad::storage
