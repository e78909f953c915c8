#pragma once
// PushService: the push-config operations of both wire versions and the producer of outbox
// rows (issue 5). One delivery engine (delivery_worker.hpp) serves every way in.
//
// Configs: several per task, each with an id (default: the task id, as the SDKs do);
// set/create upserts. Every URL passes the SSRF guard (net/url_guard.hpp) when it is set (a
// clear kInvalidParams otherwise) and again at each delivery. At set time a host name that
// does not resolve right now is accepted (UrlGuard::VetAtRegistration: an A2A client may
// register a public name this machine cannot resolve yet); its deliveries then fail and retry
// like those to any unreachable host. A literal private or loopback address, an internal
// name, or a name that resolves to a non-public address is refused at once.
// Authentication to the webhook:
//   - none, or scheme "Bearer" without credentials: `Authorization: Bearer <JWT>` signed
//     by this server (signer.hpp);
//   - any HTTP scheme WITH credentials: `Authorization: <scheme> <credentials>` as the
//     config asks (WIRE.md §16.1), and our JWT moves to `X-A2A-Push-JWT`;
//   - another scheme without credentials (Basic, HMAC, mTLS, ...): refused (kInvalidParams),
//     since we could not honour it.
//
// Outbox: OnCommit runs inside TaskService's commit, under the task's lock, and must not
// block: it reads only the in-memory cache of each task's configs (warmed from the store at
// startup, kept current by every set/delete and by configs arriving inside commits). When a
// commit moves the task into a notified state (input-required, auth-required, completed,
// failed, canceled, rejected) it adds one row per config of the task: a content-free status
// update in the config's wire version (v0.3 `status-update` with `final`, v1.0 StreamResponse
// `{"statusUpdate": ...}`), no message, artifacts, inputs or outputs. A commit whose events
// pass through several states notifies the state it ends in.
//
// OpenWOP webhooks (DIGEST §6.2) use the same outbox: every committed run event whose type a
// subscription of the run's tenant lists becomes a row (kind "webhook", body {runId,
// workspaceId, event}); the worker signs it with HMAC-SHA256 v1 instead of a JWT.
//
// Thread safety: every member may be called from any thread.
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/storage/push_store.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::push {

/// A refusal of the egress guard in push's words (unchanged on the wire since issue 5):
/// message "webhook URL '<url>' refused: <why>", detail reason "webhook_url_rejected" (the
/// REST error code) in place of the guard's egress kind. Other errors pass unchanged.
core::Error WebhookUrlError(core::Error guard_error);

/// The states that produce a push.
bool IsNotifiedState(protocol::TaskState s);

/// The exact body POSTed for a status change, and its content type (WIRE.md §16.2).
struct PushBody {
  std::string body;
  std::string content_type;
};
PushBody BuildStatusBody(const protocol::Task& task, const std::string& wire_version,
                         const std::string& event_id);

/// The answer to an OpenWOP webhook registration (DIGEST §6.2): the secret is shown once.
struct WebhookRegistration {
  std::string webhook_id;
  std::string secret;
  std::string secret_fingerprint;  // first 8 hex of SHA-256(secret)
};

/// The tenant of a webhook registered without one, and of every run created without a
/// tenant (storage::kDefaultTenant). A webhook receives only its own tenant's runs' events.
inline constexpr const char* kDefaultTenant = "default";

class PushService {
 public:
  PushService(storage::PushStore& store, storage::TaskStore& tasks, const net::UrlGuard& guard,
              const core::Clock& clock, core::IdGenerator& ids);

  /// Loads every stored config into the cache. Call once before serving.
  core::Result<void> WarmCache();
  /// Several replicas: `task_id`'s configs read again from the store (another replica may
  /// have set or deleted one). A cached config missing from the store is forgotten if it was
  /// known to be stored before the read began (read, or Confirm-ed); one from a commit still
  /// in flight is kept. Blocking.
  void Refresh(const std::string& task_id);
  /// The commit that wrote `config_ids` of `task_id` is durable (WakingTaskStore). Never blocks.
  void Confirm(const std::string& task_id, const std::vector<std::string>& config_ids);
  void RefreshWebhooks();

  /// Vets a config (URL guard, authentication) and fills a missing id with `task_id`.
  /// For inline configs of message/send (which TaskService writes in the creating commit)
  /// and for SetConfig. kInvalidParams saying why.
  boost::asio::awaitable<core::Result<void>> Vet(protocol::PushNotificationConfig& config,
                                                 const std::string& task_id) const;

  /// tasks/pushNotificationConfig/set, CreateTaskPushNotificationConfig. kTaskNotFound,
  /// kInvalidParams. Returns the stored config (with its id).
  boost::asio::awaitable<core::Result<protocol::PushNotificationConfig>> SetConfig(
      protocol::PushNotificationConfig config);
  /// kTaskNotFound for an unknown task and for an unknown config id (named in the message;
  /// A2A §3.1.8 answers a missing config with TaskNotFoundError).
  core::Result<protocol::PushNotificationConfig> GetConfig(const std::string& task_id,
                                                           const std::string& config_id);
  core::Result<std::vector<protocol::PushNotificationConfig>> ListConfigs(
      const std::string& task_id);
  /// Idempotent (v1.0 MUST): deleting an absent config succeeds. kTaskNotFound.
  core::Result<void> DeleteConfig(const std::string& task_id, const std::string& config_id);

  /// POST /v1/webhooks. `events` non-empty RunEventTypes; `secret` "" = generated.
  /// kInvalidParams (bad field, or the URL refused: message starts "webhook URL").
  boost::asio::awaitable<core::Result<WebhookRegistration>> RegisterWebhook(
      std::string url, std::vector<std::string> events, std::string tenant_id, std::string secret);
  /// DELETE /v1/webhooks/{id}. kInvalidParams "not found" (absent), kUnsupportedOperation
  /// (another tenant's subscription: never deleted).
  core::Result<void> DeleteWebhook(const std::string& id, const std::string& tenant_id);
  /// The subscriptions of `tenant_id` ("" = the default tenant), oldest first, without secrets.
  std::vector<storage::WebhookRecord> ListWebhooks(const std::string& tenant_id) const;

  /// The TaskService hook (TaskServiceOptions::on_commit). Adds outbox rows to `commit`;
  /// caches commit.push_configs. Never blocks.
  void OnCommit(const storage::TaskRecord* previous, storage::TaskCommit& commit);

  /// How SetConfig writes a config: as a commit of its task (TaskService::WritePushConfig),
  /// so that it is ordered with the task's transitions: a config acknowledged while the task
  /// is not terminal sees every later transition (OnCommit caches it from the commit). Unset
  /// (tests of this class alone): written to the store directly and cached.
  using ConfigWriter =
      std::function<boost::asio::awaitable<core::Result<void>>(storage::PushConfigRecord)>;
  void SetConfigWriter(ConfigWriter writer) { write_config_ = std::move(writer); }

  /// The guard webhook URLs are vetted with (--webhook-allow-http / --webhook-allowlist);
  /// unset: the push configs' guard. Call before serving.
  void SetWebhookGuard(const net::UrlGuard& guard) { webhook_guard_ = &guard; }

  /// Called after rows were committed (the worker polls anyway; this only wakes it early).
  void SetWakeUp(std::function<void()> wake) { wake_ = std::move(wake); }
  void WakeUp() const {
    if (wake_) wake_();
  }

  /// The outbox rows of a task (delivery state, attempts, dead letters). kTaskNotFound.
  core::Result<std::vector<storage::OutboxRow>> Deliveries(const std::string& task_id);

  /// A dead-lettered delivery of `task_id` sent again: due now, its attempts counted afresh
  /// (the retry schedule starts over), the worker woken. Returns the row as it is now (its
  /// body cleared). kTaskNotFound; kInvalidParams (field eventId): no such delivery of the
  /// task; kConflict: the delivery is not dead-lettered (pending or delivered).
  core::Result<storage::OutboxRow> Retry(const std::string& task_id, const std::string& delivery_id);

 private:
  struct CachedConfig {
    std::string id;
    std::string url;
    std::string wire_version;
    uint64_t stored_at = 0;  // stored_gen_ when known to be in the store; 0: in flight
  };
  core::Result<void> RequireTask(const std::string& task_id);
  void AddWebhookRows(storage::TaskCommit& commit);
  /// `stored`: read from the store (or written to it) rather than cached from a commit.
  void CachePut(const std::string& task_id, const protocol::PushNotificationConfig& c,
                bool stored);

  storage::PushStore& store_;
  storage::TaskStore& tasks_;
  const net::UrlGuard& guard_;
  const net::UrlGuard* webhook_guard_ = nullptr;
  const core::Clock& clock_;
  core::IdGenerator& ids_;
  std::function<void()> wake_;
  ConfigWriter write_config_;
  mutable std::mutex mu_;
  std::map<std::string, std::vector<CachedConfig>, std::less<>> cache_;  // task id -> configs
  uint64_t stored_gen_ = 0;  // guarded by mu_: counts what was learned to be stored
  std::map<std::string, storage::WebhookRecord> webhooks_;  // id -> subscription (no secret)
  uint64_t webhooks_gen_ = 0;  // guarded by mu_: counts registrations and deletions here
};

}  // namespace a2ad::push
