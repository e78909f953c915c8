#pragma once
// MemoryTaskStore: a TaskStore in process memory, for unit tests (STYLE.md #2). Nothing
// survives the object. Same contract as every TaskStore (task_store.hpp) and the same
// page-token format as the SQL backends (page_cursor.hpp).
//
// Thread safety: every member may be called from any thread (one mutex; see the class).
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "a2ad/storage/push_store.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

/// Thread-safe: one mutex guards all state. Commit applies the change and then runs
/// `done` synchronously on the calling thread, outside the lock, before returning.
/// List sorts every match per call: fine for tests, not for large data sets. PruneEvents
/// runs in one step under the mutex (no batches: test data sets are small).
/// Also the PushStore of tests: TaskCommit's push configs and outbox rows land here.
class MemoryTaskStore final : public TaskStore, public PushStore {
 public:
  MemoryTaskStore() = default;

  void Commit(TaskCommit commit, CommitCallback done) override;
  core::Result<std::optional<TaskRecord>> Get(std::string_view task_id) override;
  /// Always answers (a map under a mutex never waits for long), with the run.
  std::optional<core::Result<std::optional<TaskRecord>>> TryGet(std::string_view task_id,
                                                                bool /*with_run*/) override {
    return Get(task_id);
  }
  core::Result<std::optional<TaskRecord>> FindByDedupKey(std::string_view tenant,
                                                         std::string_view key) override;
  core::Result<TaskPage> List(const TaskQuery& query) override;
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                           int64_t after_sequence,
                                                           size_t limit) override;
  core::Result<size_t> PruneEvents(int64_t terminal_before_ms) override;
  core::Result<std::optional<std::vector<std::string>>> UnfinishedRunsWaitingFor(
      std::string_view tenant, std::string_view name) override;
  core::Result<TaskPage> ListRunnable(std::string_view after_id, size_t limit) override;
  core::Result<std::vector<Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                            size_t limit, std::string_view holder) override;
  void Close() override;

  // PushStore
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

 private:
  struct Entry {
    TaskRecord record;
    // events[i].sequence == first_sequence + i. Retention drops the whole log, so the
    // sequences continue from the record's last_sequence, not from the log's size.
    std::vector<protocol::RunEvent> events;
    int64_t first_sequence = 0;
  };

  core::Result<void> Apply(TaskCommit& commit);

  std::mutex mu_;
  std::map<std::string, Entry, std::less<>> tasks_;
  // (tenant, dedup key) -> task id
  std::map<std::pair<std::string, std::string>, std::string, std::less<>> dedup_;
  bool closed_ = false;
  std::map<std::pair<std::string, std::string>, PushConfigRecord> configs_;  // (task, id)
  std::vector<OutboxRow> outbox_;
  std::map<std::string, WebhookRecord, std::less<>> webhooks_;  // insertion order
};

}  // namespace a2ad::storage
