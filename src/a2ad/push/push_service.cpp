#include "a2ad/push/push_service.hpp"

#include <openssl/rand.h>

#include <algorithm>

#include "a2ad/core/log.hpp"
#include "a2ad/core/sha256.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/push/signer.hpp"

namespace a2ad::push {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::TaskState;

Error WebhookUrlError(Error e) {
  const auto kind = net::EgressFailureOf(e);
  if (kind != net::EgressFailure::kRefused && kind != net::EgressFailure::kUnresolved) return e;
  e.message = "webhook " + e.message;
  std::erase_if(e.details,
                [](const core::ErrorDetail& d) { return d.first == net::kEgressDetail; });
  e.details.insert(e.details.begin(), {"reason", "webhook_url_rejected"});
  return e;
}

bool IsNotifiedState(TaskState s) {
  switch (s) {
    case TaskState::kInputRequired:
    case TaskState::kAuthRequired:
    case TaskState::kCompleted:
    case TaskState::kFailed:
    case TaskState::kCanceled:
    case TaskState::kRejected:
      return true;
    default:
      return false;
  }
}

PushBody BuildStatusBody(const protocol::Task& task, const std::string& wire_version,
                         const std::string& event_id) {
  // Content-free: state and time only (a status message may quote inputs or outputs); a
  // pause's state, times and handle (not its reason).
  json::object metadata{{"eventId", event_id}};
  if (const auto* p = task.metadata.if_contains("pause"); p && p->is_object()) {
    json::object pause;
    for (const char* k : {"state", "initiatedBy", "pausedAt", "pausedUntil", "resumeToken"})
      if (const auto* v = p->get_object().if_contains(k)) pause[k] = *v;
    metadata["pause"] = std::move(pause);
  }
  const int64_t ts = task.status.timestamp_ms;
  if (wire_version == "0.3") {
    json::object status{{"state", protocol::TaskStateLabel(task.status.state)}};
    if (ts) status["timestamp"] = core::FormatTimestamp(ts);
    json::object ev{{"kind", "status-update"},
                    {"taskId", task.id},
                    {"contextId", task.context_id},
                    {"status", std::move(status)},
                    {"final", protocol::IsTerminal(task.status.state) ||
                                  protocol::IsInterrupted(task.status.state)},
                    {"metadata", std::move(metadata)}};
    return {protocol::SerializeJson(ev), "application/json"};
  }
  json::object status{{"state", protocol::TaskStateName(task.status.state, protocol::Wire::kV10)}};
  if (ts) status["timestamp"] = core::FormatTimestamp(ts);
  json::object update{{"taskId", task.id},
                      {"contextId", task.context_id},
                      {"status", std::move(status)},
                      {"metadata", std::move(metadata)}};
  return {protocol::SerializeJson(json::object{{"statusUpdate", std::move(update)}}),
          "application/a2a+json"};
}

PushService::PushService(storage::PushStore& store, storage::TaskStore& tasks,
                         const net::UrlGuard& guard, const core::Clock& clock,
                         core::IdGenerator& ids)
    : store_(store), tasks_(tasks), guard_(guard), clock_(clock), ids_(ids) {}

Result<void> PushService::WarmCache() {
  auto all = store_.AllConfigs();
  if (!all) return std::move(all).error();
  for (const auto& r : *all) CachePut(r.task_id, r.config, /*stored=*/true);
  auto hooks = store_.AllWebhooks();
  if (!hooks) return std::move(hooks).error();
  std::lock_guard lock(mu_);
  for (auto& w : *hooks) {
    w.secret.clear();
    webhooks_[w.id] = std::move(w);
  }
  return core::Ok{};
}

void PushService::Refresh(const std::string& task_id) {
  uint64_t began = 0;
  {
    std::lock_guard lock(mu_);
    began = stored_gen_;
  }
  auto configs = store_.ListConfigs(task_id);
  if (!configs) return;  // kept as it was; the next refresh tries again
  std::lock_guard lock(mu_);
  auto& list = cache_[task_id];
  // What this process learned after the read began (a commit in flight, or confirmed since)
  // is newer than the read and stays as it is.
  auto newer = [began](const CachedConfig& c) { return c.stored_at == 0 || c.stored_at > began; };
  std::erase_if(list, [&](const CachedConfig& c) {
    // Deleted by another replica: known stored before the read, and not in it.
    return !newer(c) && std::none_of(configs->begin(), configs->end(),
                                     [&](const auto& r) { return r.config.id == c.id; });
  });
  for (const auto& r : *configs) {
    auto it = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.id == r.config.id; });
    CachedConfig entry{r.config.id, r.config.url, r.config.wire_version, ++stored_gen_};
    if (it == list.end())
      list.push_back(std::move(entry));
    else if (!newer(*it))
      *it = std::move(entry);
  }
  if (list.empty()) cache_.erase(task_id);
}

void PushService::Confirm(const std::string& task_id, const std::vector<std::string>& config_ids) {
  std::lock_guard lock(mu_);
  auto it = cache_.find(task_id);
  if (it == cache_.end()) return;
  for (auto& c : it->second)
    if (std::find(config_ids.begin(), config_ids.end(), c.id) != config_ids.end())
      c.stored_at = ++stored_gen_;
}

void PushService::RefreshWebhooks() {
  // A registration or deletion here while the store is read may be missing from what was
  // read (it writes the store, then the cache): the cache is replaced only by a read that no
  // such change overlapped. Registrations are rare, so a few reads settle it.
  constexpr int kReads = 8;
  for (int read = 1;; ++read) {
    uint64_t before = 0;
    {
      std::lock_guard lock(mu_);
      before = webhooks_gen_;
    }
    auto hooks = store_.AllWebhooks();
    if (!hooks) return;
    std::map<std::string, storage::WebhookRecord> fresh;
    for (auto& w : *hooks) {
      w.secret.clear();
      fresh[w.id] = std::move(w);
    }
    std::lock_guard lock(mu_);
    if (webhooks_gen_ != before && read < kReads) continue;
    if (webhooks_gen_ != before) {
      core::LogWarn(
          "webhooks: registrations kept changing while they were read again; the "
          "cache is left as it was until the next read");
      return;
    }
    webhooks_ = std::move(fresh);
    return;
  }
}

namespace {
std::string HexOf(const unsigned char* p, size_t n) {
  static const char* k = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += k[p[i] >> 4];
    out += k[p[i] & 15];
  }
  return out;
}

std::string SecretFingerprint(const std::string& secret) {
  return HexOf(core::Sha256Of(secret).data(), 4);
}

json::object WebhookBody(const std::string& tenant, const protocol::RunEvent& e) {
  json::object o;
  o["runId"] = e.run_id;
  o["workspaceId"] = tenant;
  o["event"] = protocol::RunEventToJson(e);
  return o;
}
}  // namespace

asio::awaitable<Result<WebhookRegistration>> PushService::RegisterWebhook(
    std::string url, std::vector<std::string> events, std::string tenant_id, std::string secret) {
  if (events.empty())
    co_return Error(ErrorCode::kInvalidParams, "events: expected at least one RunEventType",
                    {{"field", "events"}});
  for (const auto& e : events)
    if (e.empty() || e.size() > 128 || e.find(',') != std::string::npos)
      co_return Error(ErrorCode::kInvalidParams, "events: '" + e + "' is not a RunEventType",
                      {{"field", "events"}});
  if (secret.size() > 512)
    co_return Error(ErrorCode::kInvalidParams, "secret: longer than 512 characters",
                    {{"field", "secret"}});
  auto vetted = co_await (webhook_guard_ ? *webhook_guard_ : guard_).VetAtRegistration(url);
  if (!vetted) co_return WebhookUrlError(std::move(vetted).error());
  if (secret.empty()) {
    unsigned char raw[32];
    RAND_bytes(raw, sizeof raw);
    secret = HexOf(raw, sizeof raw);
  }
  storage::WebhookRecord w;
  w.id = ids_.Next();
  w.tenant_id = tenant_id.empty() ? kDefaultTenant : std::move(tenant_id);
  w.url = std::move(url);
  w.events = std::move(events);
  w.secret = secret;
  w.created_at_ms = clock_.NowMs();
  if (auto put = store_.PutWebhook(w); !put) co_return std::move(put).error();
  WebhookRegistration out{w.id, secret, SecretFingerprint(secret)};
  w.secret.clear();  // the cache never holds secrets
  std::lock_guard lock(mu_);
  webhooks_[w.id] = std::move(w);
  ++webhooks_gen_;
  co_return out;
}

Result<void> PushService::DeleteWebhook(const std::string& id, const std::string& tenant_id) {
  auto got = store_.GetWebhook(id);
  if (!got) return std::move(got).error();
  if (!got.value())
    return Error(ErrorCode::kInvalidParams, "webhook " + id + " not found", {{"webhookId", id}});
  const std::string tenant = tenant_id.empty() ? kDefaultTenant : tenant_id;
  if (got.value()->tenant_id != tenant)
    return Error(ErrorCode::kUnsupportedOperation, "webhook " + id + " belongs to another tenant",
                 {{"webhookId", id}});
  if (auto deleted = store_.DeleteWebhook(id); !deleted) return std::move(deleted).error();
  std::lock_guard lock(mu_);
  webhooks_.erase(id);
  ++webhooks_gen_;
  return core::Ok{};
}

std::vector<storage::WebhookRecord> PushService::ListWebhooks(const std::string& tenant_id) const {
  const std::string tenant = tenant_id.empty() ? kDefaultTenant : tenant_id;
  std::vector<storage::WebhookRecord> out;
  std::lock_guard lock(mu_);
  for (const auto& [id, w] : webhooks_)
    if (w.tenant_id == tenant) out.push_back(w);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.created_at_ms != b.created_at_ms ? a.created_at_ms < b.created_at_ms : a.id < b.id;
  });
  return out;
}

void PushService::CachePut(const std::string& task_id, const protocol::PushNotificationConfig& c,
                           bool stored) {
  std::lock_guard lock(mu_);
  auto& list = cache_[task_id];
  CachedConfig entry{c.id, c.url, c.wire_version, stored ? ++stored_gen_ : 0};
  auto it = std::find_if(list.begin(), list.end(), [&](const auto& e) { return e.id == c.id; });
  if (it != list.end())
    *it = std::move(entry);
  else
    list.push_back(std::move(entry));
}

asio::awaitable<Result<void>> PushService::Vet(protocol::PushNotificationConfig& config,
                                               const std::string& task_id) const {
  if (config.id.empty()) config.id = task_id;
  config.task_id = task_id;
  if (config.authentication) {
    std::string scheme = config.authentication->scheme;
    for (auto& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (config.authentication->credentials.empty() && scheme != "bearer")
      co_return Error(ErrorCode::kInvalidParams,
                      "pushNotificationConfig.authentication: scheme '" +
                          config.authentication->scheme +
                          "' without credentials is not supported; use Bearer (this server "
                          "signs a JWT, keys at /.well-known/jwks.json) or give credentials to "
                          "send as 'Authorization: <scheme> <credentials>'",
                      {{"field", "pushNotificationConfig.authentication"}});
  }
  auto vetted = co_await guard_.VetAtRegistration(config.url);
  if (!vetted) {
    Error e = WebhookUrlError(std::move(vetted).error());
    e.message = "pushNotificationConfig.url: " + e.message;
    e.details.emplace_back("field", "pushNotificationConfig.url");
    co_return e;
  }
  co_return core::Ok{};
}

Result<void> PushService::RequireTask(const std::string& task_id) {
  auto rec = tasks_.Get(task_id);
  if (!rec) return std::move(rec).error();
  if (!rec.value())
    return Error(ErrorCode::kTaskNotFound, "task " + task_id + " not found", {{"taskId", task_id}});
  return core::Ok{};
}

asio::awaitable<Result<protocol::PushNotificationConfig>> PushService::SetConfig(
    protocol::PushNotificationConfig config) {
  const std::string task_id = config.task_id;
  if (auto known = RequireTask(task_id); !known) co_return std::move(known).error();
  if (auto ok = co_await Vet(config, task_id); !ok) co_return std::move(ok).error();
  storage::PushConfigRecord rec;
  rec.task_id = task_id;
  rec.config = config;
  rec.created_at_ms = clock_.NowMs();
  if (write_config_) {
    if (auto put = co_await write_config_(std::move(rec)); !put) co_return std::move(put).error();
    co_return config;
  }
  if (auto put = store_.PutConfig(rec); !put) co_return std::move(put).error();
  if (auto now = tasks_.Get(task_id);
      now && now.value() && !protocol::IsTerminal(now.value()->task.status.state))
    CachePut(task_id, config, /*stored=*/true);  // a terminal task produces no more pushes
  co_return config;
}

Result<protocol::PushNotificationConfig> PushService::GetConfig(const std::string& task_id,
                                                                const std::string& config_id) {
  if (auto known = RequireTask(task_id); !known) return std::move(known).error();
  const std::string id = config_id.empty() ? task_id : config_id;
  auto got = store_.GetConfig(task_id, id);
  if (!got) return std::move(got).error();
  if (!got.value())
    return Error(ErrorCode::kTaskNotFound,  // A2A §3.1.8: TaskNotFoundError
                 "task " + task_id + " has no push notification config '" + id + "'",
                 {{"taskId", task_id}, {"pushNotificationConfigId", id}});
  return got.value()->config;
}

Result<std::vector<protocol::PushNotificationConfig>> PushService::ListConfigs(
    const std::string& task_id) {
  if (auto known = RequireTask(task_id); !known) return std::move(known).error();
  auto list = store_.ListConfigs(task_id);
  if (!list) return std::move(list).error();
  std::vector<protocol::PushNotificationConfig> out;
  for (auto& r : *list) out.push_back(std::move(r.config));
  return out;
}

Result<void> PushService::DeleteConfig(const std::string& task_id, const std::string& config_id) {
  if (auto known = RequireTask(task_id); !known) return std::move(known).error();
  const std::string id = config_id.empty() ? task_id : config_id;
  auto deleted = store_.DeleteConfig(task_id, id);
  if (!deleted) return std::move(deleted).error();
  std::lock_guard lock(mu_);
  if (auto it = cache_.find(task_id); it != cache_.end())
    std::erase_if(it->second, [&](const CachedConfig& c) { return c.id == id; });
  return core::Ok{};
}

void PushService::OnCommit(const storage::TaskRecord* previous, storage::TaskCommit& commit) {
  const std::string& task_id = commit.Record().task.id;
  // A task that was terminal already produces no more pushes: its configs are stored, not
  // cached. (A commit that ends the task with a config, inline or set, pushes that end.)
  if (!(previous && protocol::IsTerminal(previous->task.status.state)))
    for (const auto& c : commit.push_configs) CachePut(task_id, c.config, /*stored=*/false);
  AddWebhookRows(commit);
  const TaskState now = commit.Record().task.status.state;
  // A pause (the pause extension) is notified too: the task stays working, but a caller waits
  // for it as for input-required (metadata.pause says which pause).
  auto paused = [](const storage::TaskRecord& r) { return r.task.metadata.contains("pause"); };
  const bool newly_paused = paused(commit.Record()) && !(previous && paused(*previous));
  if (!newly_paused) {
    if (previous && previous->task.status.state == now) return;
    if (!IsNotifiedState(now)) return;
  }
  std::vector<CachedConfig> configs;
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(task_id);
    if (it == cache_.end()) return;
    configs = it->second;
    if (protocol::IsTerminal(now)) cache_.erase(it);  // no more pushes for this task
  }
  const int64_t at = clock_.NowMs();
  for (const auto& c : configs) {
    storage::OutboxRow row;
    row.id = ids_.Next();
    row.kind = "a2a";
    row.task_id = task_id;
    row.target_id = c.id;
    row.url = c.url;
    PushBody body = BuildStatusBody(commit.Record().task, c.wire_version, row.id);
    row.body = std::move(body.body);
    row.content_type = std::move(body.content_type);
    row.created_at_ms = at;
    row.next_attempt_at_ms = at;
    row.traceparent = storage::RunTraceparent(commit.Record());
    commit.outbox.push_back(std::move(row));
  }
}

void PushService::AddWebhookRows(storage::TaskCommit& commit) {
  std::vector<std::pair<std::string, std::string>> targets;  // (webhook id, url) per event
  const int64_t at = clock_.NowMs();
  const std::string& tenant = commit.Record().tenant;  // only the run's tenant's webhooks
  for (const auto& e : commit.events) {
    targets.clear();
    {
      std::lock_guard lock(mu_);
      for (const auto& [id, w] : webhooks_) {
        if (w.tenant_id != tenant) continue;
        if (std::find(w.events.begin(), w.events.end(), e.type) != w.events.end())
          targets.emplace_back(id, w.url);
      }
    }
    for (auto& [id, url] : targets) {
      storage::OutboxRow row;
      row.id = ids_.Next();
      row.kind = "webhook";
      row.task_id = commit.Record().task.id;
      row.target_id = id;
      row.url = url;
      row.body = protocol::SerializeJson(WebhookBody(tenant, e));
      row.content_type = "application/json";
      row.created_at_ms = at;
      row.next_attempt_at_ms = at;
      row.traceparent = storage::RunTraceparent(commit.Record());
      commit.outbox.push_back(std::move(row));
    }
  }
}

Result<std::vector<storage::OutboxRow>> PushService::Deliveries(const std::string& task_id) {
  if (auto known = RequireTask(task_id); !known) return std::move(known).error();
  auto rows = store_.ListOutbox(task_id);
  if (!rows) return std::move(rows).error();
  for (auto& r : *rows) r.body.clear();  // observability, not content
  return rows;
}

Result<storage::OutboxRow> PushService::Retry(const std::string& task_id,
                                              const std::string& delivery_id) {
  if (auto known = RequireTask(task_id); !known) return std::move(known).error();
  auto rows = store_.ListOutbox(task_id);
  if (!rows) return std::move(rows).error();
  auto it = std::find_if(rows->begin(), rows->end(),
                         [&](const storage::OutboxRow& r) { return r.id == delivery_id; });
  if (it == rows->end())
    return core::Error(core::ErrorCode::kInvalidParams,
                       "eventId: task " + task_id + " has no delivery '" + delivery_id + "'",
                       {{"field", "eventId"}});
  if (it->state != storage::OutboxState::kDead)
    return core::Error(core::ErrorCode::kConflict,
                       "delivery '" + delivery_id + "' is not dead-lettered (it is " +
                           (it->state == storage::OutboxState::kPending ? "pending" : "delivered") +
                           "): only a dead letter is sent again");
  storage::OutboxRow row = *it;
  row.state = storage::OutboxState::kPending;
  row.attempts = 0;
  row.next_attempt_at_ms = clock_.NowMs();
  row.finished_at_ms = 0;
  if (auto ok = store_.UpdateOutbox(row); !ok) return std::move(ok).error();
  WakeUp();
  row.body.clear();  // observability, not content
  return row;
}

}  // namespace a2ad::push
