#pragma once
// SqliteBackend: the embedded default (storage/backend.hpp), every store on <data_dir>/a2ad.db.
//
// Thread safety: as Backend.
#include <memory>
#include <string>

#include "a2ad/storage/backend.hpp"
#include "a2ad/storage/sqlite/sqlite_api_key_store.hpp"
#include "a2ad/storage/sqlite/sqlite_push_store.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"

namespace a2ad::storage {

class SqliteBackend final : public Backend {
 public:
  /// The database file of `data_dir`.
  static std::string PathIn(const std::string& data_dir);
  /// Opens (creating and migrating, per `opts`) <data_dir>/a2ad.db; the directory must exist.
  static core::Result<std::unique_ptr<SqliteBackend>> Open(const std::string& data_dir,
                                                           SqliteOptions opts);
  ~SqliteBackend() override;

  const char* Kind() const override { return "sqlite"; }
  std::string Where() const override;
  TaskStore& Tasks() override { return *tasks_; }
  PushStore& Push() override { return *push_; }
  ApiKeyStore& ApiKeys() override { return *keys_; }
  /// None: on SQLite the server's keys are files of the data directory (server_keys.hpp).
  ServerKeys* Keys() override { return nullptr; }
  void CheckWritable(std::function<void(core::Result<void>)> done) override;
  core::Result<StoreCounts> Count() override;
  void Close() override;
  /// On the task store's writer (SqliteTaskStore::Write), a reader (Read) and its participant.
  void Write(sql::Job job, TaskStore::CommitCallback done) override;
  core::Result<void> Read(const sql::Job& job) override;
  void SetCommitParticipant(CommitParticipant participant) override;
  /// ComponentMigrations::sqlite, on a connection of its own (SqliteTaskStore::MigrateComponent).
  core::Result<int> MigrateComponent(const ComponentMigrations& component) override;

  /// The task store itself, for what only SQLite offers.
  SqliteTaskStore& sqlite() { return *tasks_; }

 private:
  SqliteBackend() = default;
  std::string path_;
  std::unique_ptr<SqliteTaskStore> tasks_;
  std::unique_ptr<SqlitePushStore> push_;
  std::unique_ptr<sqlite::SqliteApiKeyStore> keys_;
  bool closed_ = false;
};

}  // namespace a2ad::storage
