#pragma once
// PushStore: push notification configs and the delivery outbox (ARCHITECTURE.md
// "Durability model"; issue 5). Outbox rows that belong to a task's state change are written
// by TaskStore::Commit in the SAME transaction as the snapshot (TaskCommit::outbox), so a
// push is never lost (the change committed => its rows exist) and never invented (the change
// failed => no rows). Configs given inline with message/send are written the same way
// (TaskCommit::push_configs). Everything else goes through this interface.
//
// Implementations: MemoryTaskStore (tests; one object is both stores) and SqlitePushStore
// (storage/sqlite, same database file as SqliteTaskStore). Only app/ names a concrete class.
// All members are thread-safe. Blocking: the SQLite implementation does small point reads
// and writes on its own connection.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::storage {

/// A task's push config, with the raw token and credentials (needed to deliver; stored
/// only here, never in the task snapshot).
struct PushConfigRecord {
  std::string task_id;
  protocol::PushNotificationConfig config;  // config.id is never empty here
  int64_t created_at_ms = 0;
};

enum class OutboxState { kPending = 0, kDelivered = 1, kDead = 2 };

/// One notification to deliver at least once.
struct OutboxRow {
  std::string id;         // stable event id: the receiver de-duplicates on it
  std::string kind;       // "a2a" (a task push config) or "webhook" (an OpenWOP subscription)
  std::string task_id;    // the task (= run) it is about
  std::string target_id;  // the push config id (or webhook id)
  std::string url;        // destination when enqueued; vetted again at every attempt
  std::string body;       // the exact bytes POSTed (content-free: no inputs/outputs/secrets)
  std::string content_type;
  int64_t created_at_ms = 0;
  int64_t next_attempt_at_ms = 0;  // due when <= now (pending rows only)
  int32_t attempts = 0;            // attempts made so far
  OutboxState state = OutboxState::kPending;
  std::string last_error;      // why the last attempt failed ("" if none)
  int64_t finished_at_ms = 0;  // when delivered or dead-lettered
  std::string traceparent;     // the run's (core/trace.hpp): the delivery is a span of it
  friend bool operator==(const OutboxRow&, const OutboxRow&) = default;
};

/// An OpenWOP webhook subscription (DIGEST §6.2): run events of `events` types in the
/// tenant are POSTed to `url`, signed with HMAC-SHA256 under `secret`.
struct WebhookRecord {
  std::string id;
  std::string tenant_id;
  std::string url;
  std::vector<std::string> events;  // RunEventTypes ("run.completed", ...)
  std::string secret;
  int64_t created_at_ms = 0;
  friend bool operator==(const WebhookRecord&, const WebhookRecord&) = default;
};

class PushStore {
 public:
  virtual ~PushStore() = default;

  /// Upserts by (task_id, config.id). kInvalidParams for an empty id; kUnavailable after
  /// Close of the owning store.
  virtual core::Result<void> PutConfig(const PushConfigRecord& record) = 0;
  virtual core::Result<std::optional<PushConfigRecord>> GetConfig(std::string_view task_id,
                                                                  std::string_view config_id) = 0;
  /// Ordered by created_at_ms, then id.
  virtual core::Result<std::vector<PushConfigRecord>> ListConfigs(std::string_view task_id) = 0;
  /// true if it existed.
  virtual core::Result<bool> DeleteConfig(std::string_view task_id, std::string_view config_id) = 0;
  /// Every config of a task that is not in a terminal state (to warm an in-memory cache at
  /// startup: terminal tasks produce no more pushes).
  virtual core::Result<std::vector<PushConfigRecord>> AllConfigs() = 0;

  /// Adds rows outside a task commit (OpenWOP webhooks). kConflict on a duplicate id.
  virtual core::Result<void> Enqueue(const std::vector<OutboxRow>& rows) = 0;
  /// Pending rows with next_attempt_at_ms <= now_ms, oldest due first, at most `limit`.
  virtual core::Result<std::vector<OutboxRow>> DueOutbox(int64_t now_ms, size_t limit) = 0;
  /// The earliest next_attempt_at_ms of a pending row, or nullopt when none is pending.
  virtual core::Result<std::optional<int64_t>> NextDueAt() = 0;
  /// Stores attempts, state, next_attempt_at_ms, last_error and finished_at_ms of the row
  /// with row.id. kInvalidParams (not found) if there is no such row.
  virtual core::Result<void> UpdateOutbox(const OutboxRow& row) = 0;
  /// UpdateOutbox for several rows in one transaction (rows not found are skipped).
  virtual core::Result<void> UpdateOutboxBatch(const std::vector<OutboxRow>& rows) = 0;
  /// The rows of one task, in creation order (observability: the API shows dead letters).
  virtual core::Result<std::vector<OutboxRow>> ListOutbox(std::string_view task_id) = 0;
  /// Dead-lettered rows, newest first, at most `limit`.
  virtual core::Result<std::vector<OutboxRow>> ListDead(size_t limit) = 0;

  /// Webhook subscriptions. PutWebhook: kConflict on a duplicate id.
  virtual core::Result<void> PutWebhook(const WebhookRecord& record) = 0;
  virtual core::Result<std::optional<WebhookRecord>> GetWebhook(std::string_view id) = 0;
  /// true if it existed.
  virtual core::Result<bool> DeleteWebhook(std::string_view id) = 0;
  virtual core::Result<std::vector<WebhookRecord>> AllWebhooks() = 0;
};

}  // namespace a2ad::storage
