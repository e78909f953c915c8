#include "a2ad/app/push_setup.hpp"

#include <filesystem>

#include "a2ad/core/log.hpp"

namespace a2ad::app {

namespace {
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}
}  // namespace

core::Result<std::unique_ptr<PushSetup>> OpenPush(const Config& config, const std::string& db_path,
                                                  storage::TaskStore& tasks,
                                                  const core::Clock& clock,
                                                  core::IdGenerator& ids) {
  auto setup = std::make_unique<PushSetup>();
  auto store = storage::SqlitePushStore::Open(db_path);
  if (!store) return std::move(store).error();
  setup->store = std::move(store).value();
  auto keys = push::KeyStore::Open((std::filesystem::path(config.data_dir) / "keys").string(),
                                   clock, config.push_token_ttl_s * 1000);
  if (!keys) return std::move(keys).error();
  setup->keys = std::move(keys).value();
  setup->resolver = std::make_unique<push::SystemResolver>();
  push::GuardPolicy policy;
  policy.allow_http = config.push_allow_http;
  policy.allow_list = SplitList(config.push_allowlist);
  auto guard = push::UrlGuard::Create(policy, *setup->resolver);
  if (!guard) return std::move(guard).error();
  setup->guard = std::make_unique<push::UrlGuard>(std::move(guard).value());
  if (!policy.allow_list.empty())
    core::LogWarn("push: the SSRF allow-list is ON (" + config.push_allowlist +
                  "): webhooks may reach these private addresses; for development and tests "
                  "only");
  if (policy.allow_http)
    core::LogWarn("push: plain http webhooks are allowed; for development and tests only");
  push::WebhookClientOptions client_opts;
  client_opts.connect_timeout = std::chrono::milliseconds(config.push_connect_timeout_ms);
  client_opts.total_timeout = std::chrono::milliseconds(config.push_timeout_ms);
  client_opts.ca_file = config.push_ca_file;
  try {
    setup->client = std::make_unique<push::WebhookClient>(client_opts);
  } catch (const std::exception& e) {
    return core::Error(core::ErrorCode::kInvalidParams,
                       "--push-ca-file '" + config.push_ca_file + "': " + e.what());
  }
  setup->service =
      std::make_unique<push::PushService>(*setup->store, tasks, *setup->guard, clock, ids);
  PushSetup* raw = setup.get();  // the worker exists once Start() ran, before any commit
  setup->task_store = std::make_unique<push::WakingTaskStore>(tasks, [raw] {
    if (raw->worker) raw->worker->WakeUp();
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
  worker = std::make_shared<push::DeliveryWorker>(std::move(io), *store, *guard, *client, *keys,
                                                  clock, ids, opts);
  worker->Start();
}

void PushSetup::Stop() {
  if (worker) worker->Stop();
  if (store) store->Close();
}

}  // namespace a2ad::app
