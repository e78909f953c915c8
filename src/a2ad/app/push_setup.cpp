#include "a2ad/app/push_setup.hpp"

#include "a2ad/app/server_secrets.hpp"

namespace a2ad::app {

core::Result<std::unique_ptr<PushSetup>> OpenPush(const Config& config, storage::PushStore& store,
                                                  storage::ServerKeys* server_keys,
                                                  storage::TaskStore& tasks,
                                                  const core::Clock& clock, core::IdGenerator& ids,
                                                  const EgressSetup& egress) {
  auto setup = std::make_unique<PushSetup>();
  setup->store = &store;
  auto keys = OpenPushKeys(config, server_keys, clock, /*refresh=*/true);
  if (!keys) return std::move(keys).error();
  setup->keys = std::move(keys).value();
  setup->client = egress.push_client.get();
  setup->webhook_client = egress.webhook_client.get();
  setup->service =
      std::make_unique<push::PushService>(*setup->store, tasks, *egress.push_guard, clock, ids);
  setup->service->SetWebhookGuard(*egress.webhook_guard);
  PushSetup* raw = setup.get();  // the worker exists once Start() ran, before any commit
  setup->task_store = std::make_unique<push::WakingTaskStore>(
      tasks,
      [raw] {
        if (raw->worker) raw->worker->WakeUp();
      },
      [raw](const std::string& task_id, const std::vector<std::string>& config_ids) {
        raw->service->Confirm(task_id, config_ids);
      });
  if (auto warmed = setup->service->WarmCache(); !warmed) return std::move(warmed).error();
  return setup;
}

void PushSetup::Connect(tasks::TaskServiceOptions& options) {
  push::PushService* svc = service.get();
  options.vet_push_config = [svc](protocol::PushNotificationConfig& c, const std::string& task_id) {
    return svc->Vet(c, task_id);
  };
  options.on_commit = [svc](const storage::TaskRecord* previous, storage::TaskCommit& commit) {
    svc->OnCommit(previous, commit);
  };
  // Several replicas: what another replica set is read when this one drives the run.
  options.refresh_task = [svc](const std::string& task_id) { svc->Refresh(task_id); };
  options.refresh_all = [svc] { svc->RefreshWebhooks(); };
}

void PushSetup::Start(boost::asio::any_io_executor io, const Config& config,
                      const core::Clock& clock, core::IdGenerator& ids, const std::string& issuer) {
  push::DeliveryOptions opts;
  opts.max_attempts = config.push_max_attempts;
  opts.base_backoff = std::chrono::milliseconds(config.push_backoff_ms);
  opts.max_backoff = std::chrono::milliseconds(config.push_max_backoff_ms);
  opts.poll_interval = std::chrono::milliseconds(config.push_poll_ms);
  opts.issuer = issuer;
  opts.token_lifetime_s = config.push_token_ttl_s;
  opts.connect_timeout = std::chrono::milliseconds(config.push_connect_timeout_ms);
  opts.total_timeout = std::chrono::milliseconds(config.push_timeout_ms);
  worker = std::make_shared<push::DeliveryWorker>(std::move(io), *store, *client, *keys, clock, ids,
                                                  opts);
  if (webhook_client) worker->SetWebhookClient(*webhook_client);
  worker->Start();
}

void PushSetup::Stop() {
  if (worker) worker->Stop();
  if (keys) keys->Stop();
}

}  // namespace a2ad::app
