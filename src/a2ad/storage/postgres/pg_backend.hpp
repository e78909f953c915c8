#pragma once
// PostgresBackend: every store on one PostgreSQL database (storage/backend.hpp), chosen by a
// postgresql:// URL (or a libpq keyword string).
//
// Thread safety: as Backend.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/storage/backend.hpp"
#include "a2ad/storage/postgres/pg_cluster.hpp"
#include "a2ad/storage/postgres/postgres_store.hpp"

namespace a2ad::storage {

class PostgresBackend final : public Backend {
 public:
  /// `cluster`: this process as a replica (its leases are taken in its name).
  static core::Result<std::unique_ptr<PostgresBackend>> Open(const std::string& url,
                                                             PostgresOptions opts,
                                                             ClusterOptions cluster = {});
  ~PostgresBackend() override { Close(); }

  const char* Kind() const override { return "postgresql"; }
  /// "PostgreSQL database <name>": no host, user or password.
  std::string Where() const override { return where_; }
  TaskStore& Tasks() override { return *store_; }
  PushStore& Push() override { return *store_; }
  ApiKeyStore& ApiKeys() override { return store_->ApiKeys(); }
  /// In the database: every replica on it shares them.
  ServerKeys* Keys() override { return &store_->Keys(); }
  Cluster* Replicas() override { return cluster_.get(); }
  void CheckWritable(std::function<void(core::Result<void>)> done) override {
    store_->CheckWritable(std::move(done));
  }
  core::Result<StoreCounts> Count() override { return store_->Count(); }
  void Close() override {
    if (cluster_) cluster_->Stop();
    if (store_) store_->Close();
  }
  void Write(sql::Job job, TaskStore::CommitCallback done) override {
    store_->Write(std::move(job), std::move(done));
  }
  core::Result<void> Read(const sql::Job& job) override { return store_->Read(job); }
  void SetCommitParticipant(CommitParticipant participant) override {
    store_->SetCommitParticipant(std::move(participant));
  }
  /// ComponentMigrations::postgresql, on a connection of its own.
  core::Result<int> MigrateComponent(const ComponentMigrations& component) override {
    return PostgresStore::MigrateComponent(url_, component);
  }

  PostgresStore& postgres() { return *store_; }

 private:
  PostgresBackend() = default;
  std::unique_ptr<PostgresStore> store_;
  std::unique_ptr<PgCluster> cluster_;
  std::string where_;
  std::string url_;  // with its credentials: never logged
};

/// The database name `url` names ("" when it names none: libpq's default, the user's name).
std::string PostgresDatabaseName(const std::string& url);

/// `url` as libpq's environment variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE,
/// PGSSLMODE, ...): how a2ad hands the database to pg_dump without putting a password on a
/// command line. Empty when `url` does not parse.
std::vector<std::pair<std::string, std::string>> PostgresEnvironment(const std::string& url);

}  // namespace a2ad::storage
