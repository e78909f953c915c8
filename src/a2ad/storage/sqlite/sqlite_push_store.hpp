#pragma once
// SqlitePushStore: PushStore (push_store.hpp) on the same SQLite file as SqliteTaskStore
// (schema version 4, sqlite_schema.hpp). It has its own read-write connection, guarded by a
// mutex; its writes are short single-row statements that take SQLite's write lock between
// the task store's group commits (busy_timeout waits for it). Open it after
// SqliteTaskStore::Open has migrated the file.
//
// Thread safety: every member, Close included, may be called from any thread (the mutex
// serializes them on the connection). WritePushRows uses only the connection it is given
// (one thread at a time, sqlite_connection.hpp).
#include <memory>
#include <mutex>
#include <string>

#include "a2ad/storage/push_store.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

namespace sqlite {
class Connection;
/// Writes commit.push_configs and commit.outbox inside the caller's open transaction (used
/// by SqliteTaskStore's writer for TaskCommit).
core::Result<void> WritePushRows(Connection& db, const std::vector<PushConfigRecord>& configs,
                                 const std::vector<OutboxRow>& outbox);
/// The push configs of unfinished tasks (AllConfigs, read at every start).
extern const char* const kActiveConfigsQuery;
}  // namespace sqlite

class SqlitePushStore final : public PushStore {
 public:
  /// kInternal if the file cannot be opened or is below schema version 4.
  static core::Result<std::unique_ptr<SqlitePushStore>> Open(const std::string& path,
                                                             int busy_timeout_ms = 5000);
  ~SqlitePushStore() override;

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
  /// Closes the connection; later calls return kUnavailable.
  void Close();

 private:
  core::Result<void> UpdateOutboxLocked(const OutboxRow& row);
  explicit SqlitePushStore(std::unique_ptr<sqlite::Connection> db);
  std::mutex mu_;
  std::unique_ptr<sqlite::Connection> db_;
};

}  // namespace a2ad::storage
