// The registry of storage backends (backends.hpp).
#include "a2ad/app/backends.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdio>
#include <thread>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/postgres/pg_backend.hpp"
#include "a2ad/storage/postgres/pg_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_backend.hpp"

namespace a2ad::app {

std::string ReplicaId(const Config& config) {
  if (!config.replica_id.empty()) return config.replica_id;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  // The same replica restarted has the same id (its runs are adopted at once): the port it
  // listens on, or for any free port its data directory.
  auto listen = ParseListen(config.listen);
  if (listen && listen->port != 0) return std::string(host) + ":" + std::to_string(listen->port);
  std::error_code ec;
  const auto dir = std::filesystem::absolute(config.data_dir, ec);
  return std::string(host) + ":" + (ec ? config.data_dir : dir.lexically_normal().string());
}

namespace {

core::Result<std::unique_ptr<storage::Backend>> OpenSqlite(const Config& config,
                                                           const BackendOptions& o) {
  storage::SqliteOptions opts;
  opts.synchronous_full = config.sqlite_synchronous == "full";
  opts.migrate_on_open = o.migrate;
  opts.batch_observer = o.batch_observer;
  opts.components = o.components;
  auto b = storage::SqliteBackend::Open(config.data_dir, std::move(opts));
  if (!b) return std::move(b).error();
  return std::unique_ptr<storage::Backend>(std::move(b).value());
}

core::Result<std::unique_ptr<storage::Backend>> OpenPostgres(const Config& config,
                                                             const BackendOptions& o) {
  storage::PostgresOptions opts;
  opts.migrate_on_open = o.migrate;
  opts.batch_observer = o.batch_observer;
  opts.components = o.components;
  storage::ClusterOptions cluster;
  cluster.replica_id = ReplicaId(config);
  cluster.lease_ttl = std::chrono::milliseconds(config.lease_ttl_ms);
  auto b = storage::PostgresBackend::Open(config.database_url, std::move(opts), std::move(cluster));
  if (!b) return std::move(b).error();
  return std::unique_ptr<storage::Backend>(std::move(b).value());
}

int MigrateSqlite(const Config& config, const std::vector<storage::ComponentMigrations>& components) {
  const std::string path = storage::SqliteBackend::PathIn(config.data_dir);
  auto v = storage::SqliteTaskStore::Migrate(path);
  if (!v) {
    core::LogError(v.error().message);
    return 1;
  }
  std::printf("a2ad: %s is at schema version %d\n", path.c_str(), v.value());
  for (const auto& c : components) {  // the extensions' own tables (as `serve` applies them)
    auto cv = storage::SqliteTaskStore::MigrateComponent(path, c.component, c.sqlite);
    if (!cv) {
      core::LogError(cv.error().message);
      return 1;
    }
    std::printf("a2ad: component %s is at version %d\n", c.component.c_str(), cv.value());
  }
  return 0;
}

int MigratePostgres(const Config& config,
                    const std::vector<storage::ComponentMigrations>& components) {
  // The core schema and the extensions' tables in one transaction (pg_schema.hpp).
  auto v = storage::PostgresStore::Migrate(config.database_url, components);
  if (!v) {
    core::LogError(v.error().message);
    return 1;
  }
  std::printf("a2ad: PostgreSQL database %s is at schema version %d\n",
              storage::PostgresDatabaseName(config.database_url).c_str(), v.value());
  for (const auto& c : components) {
    auto cv = storage::PostgresStore::ComponentVersion(config.database_url, c.component);
    if (!cv) {
      core::LogError(cv.error().message);
      return 1;
    }
    std::printf("a2ad: component %s is at version %d\n", c.component.c_str(), cv.value());
  }
  return 0;
}

// One entry per engine.
struct Engine {
  const char* kind;
  bool (*takes)(const std::string& url);
  core::Result<std::unique_ptr<storage::Backend>> (*open)(const Config&, const BackendOptions&);
  int (*migrate)(const Config&, const std::vector<storage::ComponentMigrations>&);
};

const Engine kEngines[] = {
    {"sqlite", [](const std::string& url) { return url.empty(); }, OpenSqlite, MigrateSqlite},
    {"postgresql", [](const std::string& url) { return storage::pg::IsPostgresUrl(url); },
     OpenPostgres, MigratePostgres},
};

core::Result<const Engine*> EngineOf(const Config& config) {
  for (const Engine& e : kEngines)
    if (e.takes(config.database_url)) return &e;
  return core::Error(core::ErrorCode::kInvalidParams,
                     "--database-url: not a database a2ad knows; give a postgresql:// URL (or a "
                     "libpq keyword string such as 'host=/run/postgresql dbname=a2ad'), or leave "
                     "it unset for SQLite in --data-dir");
}

}  // namespace

core::Result<std::string> BackendKind(const Config& config) {
  auto e = EngineOf(config);
  if (!e) return std::move(e).error();
  return std::string((*e)->kind);
}

core::Result<std::unique_ptr<storage::Backend>> OpenBackend(const Config& config,
                                                            const BackendOptions& options) {
  auto engine = EngineOf(config);
  if (!engine) return std::move(engine).error();
  if (!config.database_url.empty()) {
    if (auto ok = storage::pg::CheckUrl(config.database_url); !ok) return std::move(ok).error();
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(options.wait_s);
  auto pause = std::chrono::milliseconds(250);
  for (;;) {
    auto b = (*engine)->open(config, options);
    if (b || b.error().code != core::ErrorCode::kUnavailable ||
        std::chrono::steady_clock::now() + pause > give_up)
      return b;
    core::LogWarn(b.error().message + "; trying again in " + std::to_string(pause.count()) +
                  " ms (--database-wait-s)");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(5000));
  }
}

int MigrateBackend(const Config& config,
                   const std::vector<storage::ComponentMigrations>& components) {
  auto engine = EngineOf(config);
  if (!engine) {
    core::LogError(engine.error().message);
    return 2;
  }
  return (*engine)->migrate(config, components);
}

}  // namespace a2ad::app
