#pragma once
// Backend: one storage engine as the server uses it (issue 30): the task store, the push store
// and the API keys, and what operators need of it (readiness, counts for the metrics, close).
// The server picks one by its database URL (app/backends.hpp): SQLite in the data directory
// (the default) or PostgreSQL. Everything above storage/ sees only these interfaces. An engine
// that replicas share also keeps the server's keys (Keys(), server_keys.hpp).
//
// Extensions' own tables (components: schema_migrations.hpp, e.g. the OPT extension's
// objectives) live in the same database and are used through sql.hpp's handle, with the same
// statements on every engine: Write runs a change on the store's writer, ordered with the task
// commits; Read runs reads in one snapshot; a commit participant writes in the transaction of
// the task commits themselves. A component's tables are brought to their latest version when
// the backend is opened (the options' components) or by MigrateComponent.
//
// Thread safety: every member may be called from any thread; Close once, at shutdown.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/storage/cluster.hpp"
#include "a2ad/storage/push_store.hpp"
#include "a2ad/storage/schema_migrations.hpp"
#include "a2ad/storage/server_keys.hpp"
#include "a2ad/storage/sql.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

/// What the metrics show of a store, read at scrape time.
struct StoreCounts {
  std::map<int64_t, int64_t> tasks_by_state;  // protocol::TaskState -> tasks
  int64_t events = 0;                         // rows of the event log (after retention)
  int64_t outbox_pending = 0;
  int64_t outbox_dead = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  /// "sqlite" or "postgresql".
  virtual const char* Kind() const = 0;
  /// Where the data is, for the log: a file path, or the database without its credentials.
  virtual std::string Where() const = 0;
  virtual TaskStore& Tasks() = 0;
  virtual PushStore& Push() = 0;
  virtual ApiKeyStore& ApiKeys() = 0;
  /// The server's secrets and signing keys, when the engine keeps them (server_keys.hpp): a
  /// database that replicas share. nullptr: they are files of the data directory (SQLite).
  /// Lives as long as the backend.
  virtual ServerKeys* Keys() = 0;
  /// Leases and the change feed of several replicas (cluster.hpp), when the engine is shared
  /// by them; nullptr: one process holds every run. Lives as long as the backend.
  virtual Cluster* Replicas() { return nullptr; }
  /// Whether the store can be written now; `done` runs once, on any thread (readiness).
  virtual void CheckWritable(std::function<void(core::Result<void>)> done) = 0;
  /// Blocking: call it off the I/O threads.
  virtual core::Result<StoreCounts> Count() = 0;
  /// Drains accepted commits, then closes every connection.
  virtual void Close() = 0;

  // ---- components' tables -------------------------------------------------------------
  /// Runs `job` on the store's writer in a transaction of its own, queued in call order with
  /// the task commits: it sees every commit accepted before it. An error from `job` or from
  /// COMMIT rolls the transaction back and is given to `done`, which runs once afterwards on
  /// the writer thread and must not block. A database that cannot be reached: kUnavailable.
  /// After Close(), `done` runs inline with kUnavailable.
  virtual void Write(sql::Job job, TaskStore::CommitCallback done) = 0;
  /// Runs `job` in one read-only transaction (every statement sees one snapshot, which holds
  /// every commit whose callback has run); blocks the caller: call it off the I/O threads.
  /// kUnavailable after Close().
  virtual core::Result<void> Read(const sql::Job& job) = 0;
  /// Sets the participant in task commits (sql.hpp). Once, before serving.
  virtual void SetCommitParticipant(CommitParticipant participant) = 0;
  /// Brings `component`'s tables to the last version of this engine's list; returns it. May
  /// run while the store serves. kInvalidParams for a list not 1..N; kInternal if the database
  /// holds a newer version (nothing changed) or a step fails (rolled back).
  virtual core::Result<int> MigrateComponent(const ComponentMigrations& component) = 0;
};

}  // namespace a2ad::storage
