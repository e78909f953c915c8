#pragma once
// Backend: one storage engine as the server uses it (issue 30): the task store, the push store
// and the API keys, and what operators need of it (readiness, counts for the metrics, close).
// The server picks one by its database URL (app/backends.hpp): SQLite in the data directory
// (the default) or PostgreSQL. Everything above storage/ sees only these interfaces.
//
// Thread safety: every member may be called from any thread; Close once, at shutdown.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/storage/push_store.hpp"
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
  /// Whether the store can be written now; `done` runs once, on any thread (readiness).
  virtual void CheckWritable(std::function<void(core::Result<void>)> done) = 0;
  /// Blocking: call it off the I/O threads.
  virtual core::Result<StoreCounts> Count() = 0;
  /// Drains accepted commits, then closes every connection.
  virtual void Close() = 0;
};

}  // namespace a2ad::storage
