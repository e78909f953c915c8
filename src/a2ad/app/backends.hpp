#pragma once
// The storage backends a2ad knows, chosen by the database URL (issue 30). Each engine is one
// folder under storage/ with a storage::Backend, and one entry in the registry of
// backends.cpp; nothing else in the server names an engine (extensions' tables go through the
// backend too: storage/sql.hpp).
//
// Thread safety: call from the main thread.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/app/config.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/storage/backend.hpp"
#include "a2ad/storage/schema_migrations.hpp"

namespace a2ad::app {

struct BackendOptions {
  /// Apply pending migrations (serve, migrate, keys); false: refuse a database that needs them.
  bool migrate = true;
  /// Keep trying a database that cannot be reached for this long (serve), else fail at once.
  int64_t wait_s = 0;
  /// Commit batches written (metrics): size, seconds.
  std::function<void(size_t, double)> batch_observer;
  /// Extensions' own tables (each engine applies its own list of their steps).
  std::vector<storage::ComponentMigrations> components;
};

/// This replica's name (--replica-id; default "<host name>:<listen port>", or the data directory
/// for port 0): unique among the replicas on one database, in its logs, spans and /metrics.
std::string ReplicaId(const Config& config);

/// "sqlite" or "postgresql": the engine config.database_url names. kInvalidParams (naming
/// the forms known) for a URL no engine takes.
core::Result<std::string> BackendKind(const Config& config);

/// Opens config's backend (SQLite: config.data_dir, which must exist; else the URL). Errors
/// say what to do; none carries the URL's credentials.
core::Result<std::unique_ptr<storage::Backend>> OpenBackend(const Config& config,
                                                            const BackendOptions& options);

/// Brings config's database to its latest schema and prints one line per schema (`a2ad
/// migrate`). Exit status.
int MigrateBackend(const Config& config, const std::vector<storage::ComponentMigrations>& components);

}  // namespace a2ad::app
