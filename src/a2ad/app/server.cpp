#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "a2ad/net/cidr.hpp"
#include "a2ad/app/api_keys.hpp"
#include "a2ad/app/backends.hpp"
#include "a2ad/app/activity_log.hpp"
#include "a2ad/app/calls_setup.hpp"
#include "a2ad/app/health.hpp"
#include "a2ad/app/metrics_setup.hpp"
#include "a2ad/app/otlp_exporter.hpp"
#include "a2ad/app/card_signing_setup.hpp"
#include "a2ad/app/config.hpp"
#include "a2ad/app/egress_setup.hpp"
#include "a2ad/app/oidc_setup.hpp"
#include "a2ad/app/peer_push.hpp"
#include "a2ad/app/push_setup.hpp"
#include "a2ad/app/server_secrets.hpp"
#include "a2ad/app/tls_setup.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/effects/host_effects.hpp"
#include "a2ad/ext/opt/opt_extension.hpp"
#include "a2ad/ext/opt/opt_feed.hpp"
#include "a2ad/ext/opt/opt_runner.hpp"
#include "a2ad/ext/pause/pause_extension.hpp"
#include "a2ad/protocol/card_signature.hpp"
#include "a2ad/protocol/jws.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/builtin/tck_executor.hpp"
#include "a2ad/tasks/builtin/ticker_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/agent_card.hpp"
#include "a2ad/transport/grpc/grpc_binding.hpp"
#include "a2ad/transport/http_server.hpp"
#include "a2ad/transport/openwop_api.hpp"
#include "a2ad/transport/router.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/executor.hpp"

#ifndef A2AD_VERSION
#define A2AD_VERSION "0.0.0"
#endif

namespace a2ad::app {
namespace asio = boost::asio;

core::Result<ListenAddress> ParseListen(const std::string& text) {
  ListenAddress out;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return core::Error(core::ErrorCode::kInvalidParams,
                         "--listen '" + text + "': expected [v6-address]:port");
    out.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos)
      return core::Error(core::ErrorCode::kInvalidParams,
                         "--listen '" + text + "': expected host:port");
    out.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (out.host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoul(port) > 65535)
    return core::Error(core::ErrorCode::kInvalidParams,
                       "--listen '" + text + "': expected host:port with a port 0-65535");
  out.port = static_cast<uint16_t>(std::stoul(port));
  return out;
}

namespace {
// glibc returns the free top of a thread's heap to the kernel (madvise) as soon as it
// exceeds 128 KiB. Here memory is allocated on the I/O threads and freed on the store's
// writer thread, so the heaps shrank and regrew about twice per request: each shrink an
// madvise with a TLB shootdown across cores, each regrowth page faults (bench/RESULTS.md,
// "What the profile showed"). Keep up to 16 MiB free per heap instead; allocations of
// 1 MiB and more still get their own mapping.
void TuneAllocator() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 16 << 20);
#endif
}

bool EnsureDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    core::LogError("cannot create data directory '" + dir + "': " + ec.message());
    return false;
  }
  return true;
}
}  // namespace

int RunMigrate(const Config& config) {
  if (!EnsureDir(config.data_dir)) return 1;
  // The extensions' own tables too (what `serve` applies when it opens the store).
  return MigrateBackend(config, {ext::opt::OptStore::Migrations()});
}

int RunKeysRotate(const Config& config) {
  if (!EnsureDir(config.data_dir)) return 1;
  core::SystemClock clock;
  // The keys are the database's when it keeps them (server_secrets.hpp); SQLite's are files,
  // rotated without opening a2ad.db.
  std::unique_ptr<storage::Backend> backend;
  if (!config.database_url.empty()) {
    auto opened = OpenBackend(config, BackendOptions{});
    if (!opened) {
      core::LogError("cannot open the database: " + opened.error().message);
      return opened.error().code == core::ErrorCode::kInvalidParams ? 2 : 1;
    }
    backend = std::move(opened).value();
  }
  int status = 0;
  {
    auto keys = OpenPushKeys(config, backend ? backend->Keys() : nullptr, clock, false);
    auto kid = keys ? (*keys)->Rotate() : core::Result<std::string>(keys.error());
    if (!kid) {
      core::LogError(kid.error().message);
      status = 1;
    } else {
      std::printf("a2ad: new push signing key %s in %s; retired keys stay in the JWKS for %lld s\n",
                  kid->c_str(), (*keys)->where().c_str(),
                  static_cast<long long>(config.push_token_ttl_s));
    }
  }
  if (backend) backend->Close();
  return status;
}

int RunServer(const Config& config) {
  core::LogLevel level;
  if (!core::ParseLogLevel(config.log_level, level)) {
    core::LogError("--log-level '" + config.log_level +
                   "': expected trace|debug|info|warn|error|off");
    return 2;
  }
  core::SetLogLevel(level);
  core::LogFormat log_format = core::LogFormat::kText;
  if (!core::ParseLogFormat(config.log_format, log_format)) {
    core::LogError("--log-format '" + config.log_format + "': expected text or json");
    return 2;
  }
  core::SetLogFormat(log_format);
  auto cors = transport::CorsPolicy::Make(config.cors_origins);
  if (!cors) {
    core::LogError(cors.error().message);
    return 2;
  }
  // Traces: spans go to the OTLP exporter when an endpoint is set (core/trace.hpp). The sink
  // is cleared (sink_off) before the exporter flushes and stops, both after everything else.
  std::unique_ptr<OtlpExporter> otlp;
  if (!config.otlp_endpoint.empty()) {
    OtlpOptions o;
    o.endpoint = config.otlp_endpoint;
    for (const auto& h : config.otlp_headers) {
      const size_t eq = h.find('=');
      if (eq == std::string::npos || eq == 0) {
        core::LogError("--otlp-header '" + h + "': expected NAME=VALUE");
        return 2;
      }
      o.headers.emplace_back(h.substr(0, eq), h.substr(eq + 1));
    }
    o.service_name = config.otlp_service_name;
    o.service_version = A2AD_VERSION;
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    o.instance_id = std::string(host) + ":" + std::to_string(::getpid());
    auto started = OtlpExporter::Start(std::move(o));
    if (!started) {
      core::LogError(started.error().message);
      return 2;
    }
    otlp = std::move(started).value();
    core::SetSpanSink([e = otlp.get()](core::SpanData span) { e->Add(std::move(span)); });
    core::LogInfo("traces: exporting spans over OTLP/HTTP to " + otlp->url());
  }
  struct SinkOff {
    ~SinkOff() { core::SetSpanSink({}); }
  } sink_off;
  TuneAllocator();
  auto listen = ParseListen(config.listen);
  if (!listen) {
    core::LogError(listen.error().message);
    return 2;
  }
  // TLS first: a certificate or key that cannot be read is a startup error (exit 2).
  auto tls = OpenServingTls(config);
  if (!tls) {
    core::LogError(tls.error().message);
    return 2;
  }
  if (!EnsureDir(config.data_dir)) return 1;
  // The A2A extensions served (their operations, card entries and tables): the pause
  // extension is registered once the task service exists (below).
  transport::ExtensionRegistry extensions;
  // The store (app/backends.hpp): SQLite in the data directory, or the --database-url.
  BackendOptions backend_options;
  backend_options.wait_s = config.database_wait_s;
  backend_options.batch_observer = StoreBatchObserver();  // commit batch metrics
  backend_options.components = extensions.Migrations();
  // The OPT extension's tables, before its extension can be made (it needs the store).
  backend_options.components.push_back(ext::opt::OptStore::Migrations());
  auto opened = OpenBackend(config, backend_options);
  if (!opened) {
    const std::string advice = DatabaseAdvice(opened.error(), config.data_dir);
    core::LogError("cannot open the task store: " + opened.error().message +
                   (advice.empty() ? "" : "; " + advice));
    return opened.error().code == core::ErrorCode::kInvalidParams ? 2 : 1;
  }
  storage::Backend& backend = **opened;
  storage::TaskStore* store = &backend.Tasks();
  // The server's secrets: the database's when it keeps them (every replica on it alike), else
  // files of the data directory (server_secrets.hpp).
  storage::ServerKeys* const server_keys = backend.Keys();
  auto card_key = OpenCardSigningKey(config, server_keys);
  if (!card_key) {
    core::LogError(card_key.error().message);
    return card_key.error().code == core::ErrorCode::kInvalidParams ? 2 : 1;
  }
  HealthState health;  // what /readyz reports
  ext::opt::Limits opt_limits;
  opt_limits.max_plans_per_objective = config.opt_max_plans_per_objective;
  opt_limits.max_tasks_per_plan = config.opt_max_tasks_per_plan;
  // Objectives (ext/opt): their store (its tables in the backend's database, migrated with it
  // above) follows the tasks linked to plan tasks, in the tasks' own commits; its feed streams
  // their events (objectives/subscribe).
  auto opt_store = std::make_unique<ext::opt::OptStore>(backend, opt_limits);
  opt_store->FollowTasks();
  auto opt_feed = std::make_unique<ext::opt::OptFeed>(*opt_store);
  // Who may call (transport/auth.hpp): the API keys of the data directory and the OIDC
  // issuer's JWTs; with neither, only loopback is served (or everyone, with
  // --insecure-no-auth).
  std::vector<std::string> hosts{listen->host};
  if (!config.grpc_listen.empty()) {
    auto where = ParseListen(config.grpc_listen);
    if (where) hosts.push_back(where->host);
  }
  auto api_keys = CheckServerKeys(config, hosts, backend.ApiKeys());
  if (!api_keys) {
    core::LogError(api_keys.error().message);
    return api_keys.error().code == core::ErrorCode::kInvalidParams ? 2 : 1;
  }

  const size_t threads =
      config.threads ? config.threads : std::max<size_t>(1, std::thread::hardware_concurrency());
  asio::io_context io(static_cast<int>(threads));
  core::SystemClock clock;
  auto ids = core::MakeUuidV7Generator(clock);
  tasks::TaskServiceOptions svc_opts;
  svc_opts.blocking_timeout = std::chrono::milliseconds(config.blocking_timeout_ms);
  svc_opts.default_skill = config.default_skill;
  svc_opts.idempotency_retention = std::chrono::seconds(config.idempotency_retention_s);
  // A message carrying opt/v1/objective creates or joins that objective.
  svc_opts.prepare_new_task = ext::opt::MakeOptMessageHook(*opt_store, clock);
  auto egress = OpenEgress(config);  // every outbound call: one guard, one client
  if (!egress) {
    core::LogError("egress: " + egress.error().message);
    return 2;
  }
  // Bearer JWTs of an OIDC issuer, its keys fetched through the same egress client.
  auto oidc = OpenOidc(config, *(*egress)->client, clock, io.get_executor());
  if (!oidc) {
    core::LogError(oidc.error().message);
    return 2;
  }
  // A database server's key lookups leave the I/O threads (a slow database never stalls them).
  std::unique_ptr<tasks::ReadExecutor> key_reads;
  if (std::string_view(backend.Kind()) != "sqlite") key_reads = std::make_unique<tasks::ReadExecutor>(2);
  transport::Authenticator authenticator(backend.ApiKeys(), clock, oidc->get());
  authenticator.SetBlockingReads(key_reads.get());
  if (config.rate_limit > 0) {
    const double burst = config.rate_burst > 0 ? static_cast<double>(config.rate_burst)
                                               : std::max(1.0, config.rate_limit);
    authenticator.SetRateLimiter(std::make_unique<core::RateLimiter>(config.rate_limit, burst));
    core::LogInfo("rate limit: " + std::to_string(config.rate_limit) +
                  " requests/s per caller, "
                  "bursts of " +
                  std::to_string(static_cast<int64_t>(burst)));
  }
  if (*tls && (*tls)->client_map) authenticator.SetClientCertificates((*tls)->client_map.get());
  auto push = OpenPush(config, backend.Push(), server_keys, *store, clock, *ids, **egress);
  if (!push) {
    core::LogError("push notifications: " + push.error().message);
    return 2;
  }
  (*push)->Connect(svc_opts);
  // Without A2A push notifications an inline config of message/send is refused too.
  if (!config.push_notifications) svc_opts.vet_push_config = nullptr;
  // The activity log rides on the same hook: a run's start, gates and end.
  svc_opts.on_commit = [push_hook = std::move(svc_opts.on_commit)](
                           const storage::TaskRecord* previous, storage::TaskCommit& commit) {
    if (push_hook) push_hook(previous, commit);
    LogActivity(previous, commit);
  };
  tasks::TaskService service(*(*push)->task_store, clock, *ids, io.get_executor(), svc_opts);
  // Push configs set by the push-config methods are commits of their task (ordered with its
  // transitions, so none is missed: push_service.hpp).
  (*push)->service->SetConfigWriter([&service](storage::PushConfigRecord r) {
    return service.WritePushConfig(std::move(r));
  });
  service.RegisterSkill(
      {"echo",
       "Echo",
       "Answers with a task that completes with one artifact echoing the "
       "message's parts.",
       {"echo", "test"},
       {"hello"}},
      std::make_shared<tasks::EchoExecutor>(std::chrono::milliseconds(config.echo_delay_ms)));
  service.RegisterSkill({"ticker",
                         "Ticker",
                         "Streams an artifact in chunks, one per tick, then completes. Send a data "
                         "part {\"ticks\": N, \"intervalMs\": M} (defaults 10 and 1000).",
                         {"streaming", "test"},
                         {"{\"ticks\": 5, \"intervalMs\": 500}"}},
                        std::make_shared<tasks::TickerExecutor>());
  if (config.tck_skill)
    service.RegisterSkill({"tck",
                           "TCK Conformance",
                           "The agent the A2A conformance kit (a2a-tck) expects: acts on the "
                           "messageId prefix of each message (tck-complete-task, "
                           "tck-artifact-text, tck-input-required, tck-stream-001, ...).",
                           {"tck", "test"},
                           {"tck-complete-task-1"}},
                          std::make_shared<tasks::TckExecutor>());
  // The A2A JSON-RPC endpoint; the server's own errors (400, 408, 413, 431, 503) are
  // JSON-RPC shaped there and OpenWOP envelopes elsewhere.
  const std::string jsonrpc_path = "/v1/a2a";
  transport::HttpServerOptions http_opts;
  http_opts.body_limit = config.body_limit;
  http_opts.body_timeout = std::chrono::milliseconds(config.body_timeout_ms);
  http_opts.max_connections = config.max_connections;
  http_opts.max_connections_per_address = config.max_connections_per_address;
  {
    auto proxies = net::ParseCidrList(config.trusted_proxies);
    if (!proxies) {
      core::LogError("--trusted-proxies: " + proxies.error().message);
      return 1;
    }
    http_opts.trusted_proxies = std::move(proxies).value();
  }
  http_opts.transport_error = transport::SurfaceTransportErrors(jsonrpc_path);
  if (*tls) {
    http_opts.tls = (*tls)->context;
    http_opts.handshake_timeout = std::chrono::milliseconds(config.tls_handshake_timeout_ms);
  }
  std::unique_ptr<transport::Router> router;
  transport::HttpServer server(
      io, [&router](transport::HttpRequest r) { return router->Handle(std::move(r)); }, http_opts);
  auto port = server.Listen(listen->host, listen->port);
  if (!port) {
    core::LogError(port.error().message);
    return 1;
  }
  transport::AgentCardConfig card;
  card.version = A2AD_VERSION;
  if (!config.public_url.empty()) {
    card.base_url = config.public_url;
    while (!card.base_url.empty() && card.base_url.back() == '/') card.base_url.pop_back();
  } else {
    std::string host =
        listen->host.find(':') != std::string::npos ? "[" + listen->host + "]" : listen->host;
    card.base_url = (*tls ? "https://" : "http://") + host + ":" + std::to_string(port.value());
  }
  // Workflows: each valid definition becomes a skill; a refused file is logged and skipped.
  auto tokens = OpenTokenSecret(server_keys, config.data_dir, kInterruptTokenSecret);
  if (!tokens) {
    core::LogError(tokens.error().message);
    return 1;
  }
  // Calls out of workflow nodes (core.http, core.a2a.invoke) through the same egress client
  // (the self peer through its own); peers following-by-push push to the receiver.
  auto calls = OpenCalls(config, server_keys, listen->host, port.value(), card.base_url, environ);
  if (!calls) {
    core::LogError(calls.error().message);
    return calls.error().code == core::ErrorCode::kInvalidParams ? 2 : 1;
  }
  (*calls)->effects.grpc = (*egress)->grpc_peers.get();  // peers over gRPC, same guard
  effects::HostEffects host_effects(*(*egress)->calls_client, (*calls)->effects);
  workflow::EngineOptions engine_opts;
  engine_opts.public_url = card.base_url;
  engine_opts.token_ttl_ms = config.interrupt_token_ttl_s * 1000;
  size_t loaded_workflows = 0;
  if (!config.workflows_dir.empty()) {
    // The OpenWOP conformance fixtures (<dir>/conformance/) only when asked for.
    std::vector<std::filesystem::path> dirs{config.workflows_dir};
    if (config.conformance_fixtures)
      dirs.push_back(std::filesystem::path(config.workflows_dir) / "conformance");
    auto loaded = workflow::LoadWorkflowDirs(dirs);
    for (const auto& why : loaded.refusals) core::LogWarn("workflow refused: " + why);
    health.workflows_refused = loaded.refusals.size();
    for (auto& wf : loaded.workflows) {
      auto shared = std::make_shared<const workflow::Workflow>(std::move(wf));
      tasks::SkillInfo info{shared->id,         shared->name,     shared->description,
                            shared->tags,       shared->examples, shared->version,
                            shared->definition, shared->is_public};
      service.RegisterSkill(
          std::move(info), std::make_shared<workflow::WorkflowExecutor>(
                               shared, service, tokens.value(), clock, engine_opts, &host_effects));
      ++loaded_workflows;
    }
    core::LogInfo("serving " + std::to_string(loaded_workflows) + " workflow(s) from '" +
                  config.workflows_dir + "'" +
                  (config.conformance_fixtures ? " (and its conformance fixtures)" : ""));
  }
  // A default skill that does not exist would refuse every message naming none: refuse to
  // start instead, naming what there is.
  if (!config.default_skill.empty()) {
    const auto& skills = service.skills();
    if (std::none_of(skills.begin(), skills.end(),
                     [&](const tasks::SkillInfo& s) { return s.id == config.default_skill; })) {
      std::string available;
      for (const auto& s : skills) available += (available.empty() ? "" : ", ") + s.id;
      core::LogError("--default-skill '" + config.default_skill +
                     "': no such skill is loaded; the skills are: " + available);
      return 1;
    }
  }
  transport::OpenwopApiOptions ow_opts;
  ow_opts.base_url = card.base_url;
  ow_opts.version = A2AD_VERSION;
  ow_opts.body_limit = config.body_limit;
  ow_opts.heartbeat = std::chrono::milliseconds(config.stream_heartbeat_ms);
  ow_opts.queue_limit = config.stream_queue_limit;
  ow_opts.push_notifications = config.push_notifications;
  ow_opts.streaming = config.streaming;
  ow_opts.webhooks = true;
  ow_opts.sample_seams = config.conformance_fixtures;
  if (config.a2a_versions == "1.0") ow_opts.a2a_versions = {"1.0"};
  ow_opts.push_config_of =
      [&push](const std::string& task_id) -> std::optional<boost::json::object> {
    auto configs = (*push)->service->ListConfigs(task_id);
    if (!configs || configs->empty()) return std::nullopt;
    const auto& c = configs->front();
    boost::json::object pc{{"url", c.url}};
    if (!c.token.empty()) pc["tokenFingerprint"] = push::TokenFingerprint(c.token);
    return pc;
  };
  const workflow::InterruptTokens& token_keys = tokens.value();
  transport::OpenwopApi openwop(
      service, clock,
      [&token_keys](std::string_view t) -> core::Result<transport::InterruptTokenInfo> {
        auto c = token_keys.Verify(t);
        if (!c) return std::move(c).error();
        return transport::InterruptTokenInfo{c->run_id, c->node_id, c->interrupt_id, c->intent,
                                             c->expires_at_ms};
      },
      ow_opts);
  transport::StreamOptions stream_opts;
  stream_opts.heartbeat = std::chrono::milliseconds(config.stream_heartbeat_ms);
  stream_opts.queue_limit = config.stream_queue_limit;
  card.push_notifications = config.push_notifications;
  card.streaming = config.streaming;
  extensions.Register(ext::pause::MakePauseExtension(service));
  // Plans executed as runs (ext/opt/opt_runner.hpp): the store's outbox, worked once recovery
  // has re-driven the runs that were going.
  auto opt_runner =
      std::make_unique<ext::opt::OptRunner>(*opt_store, service, io.get_executor(), clock);
  opt_store->SetListener({[feed = opt_feed.get()](const std::string& id) { feed->Poke(id); },
                          [runner = opt_runner.get()] { runner->Wake(); }});
  {
    ext::opt::OptExtensionDeps opt_deps;
    opt_deps.store = opt_store.get();
    opt_deps.feed = opt_feed.get();
    opt_deps.ids = ids.get();
    opt_deps.clock = &clock;
    opt_deps.check_skill = [&service](const std::string& skill,
                                      const boost::json::object& inputs) {
      return service.CheckRunInputs(skill, inputs);
    };
    opt_deps.stream_queue_limit = config.stream_queue_limit;
    extensions.Register(ext::opt::MakeOptExtension(std::move(opt_deps)));
  }
  card.extensions = extensions.CardEntries();
  card.mtls = config.MutualTls();
  card.oidc_discovery_url = config.OidcDiscoveryUrl();
  // The card says what the server does: the security it reads and the extended card once a
  // caller can authenticate (the router switches to those forms when the first key exists).
  card.extended_card = authenticator.Enabled();
  const bool v10_only = config.a2a_versions == "1.0";
  stream_opts.serve_v03 = !v10_only;
  card.serves_v03 = !v10_only;
  router = std::make_unique<transport::Router>(service,
                                               transport::BuildAgentCard(card, service.skills()),
                                               stream_opts, jsonrpc_path, &openwop, &extensions);
  router->EnablePush(*(*push)->service, *(*push)->keys, *(*push)->store,
                     config.push_notifications);
  if (!config.streaming) router->DisableStreaming();
  if (config.conformance_fixtures)  // the OpenWOP test seams, off unless asked for
    router->EnableSampleSeams(std::make_unique<transport::SampleSeams>(
        (*push)->service.get(), [&host_effects, &io](int executors) {
          return effects::ProbeConcurrentClaim(host_effects.claims(), io.get_executor(), executors);
        }));
  authenticator.SetSelfCredential(&(*calls)->self_credential);
  router->SetAuthenticator(&authenticator);
  router->SetReadiness(MakeReadinessProbe(backend, health, config.data_dir));
  router->SetCors(std::move(cors).value());
  router->SetMetrics(SetUpMetrics(backend, A2AD_VERSION));
  router->AddSelfAuthenticatingRoute(
      std::string(kPeerPushPath),
      [&pp = (*calls)->peer_push, &service, &clock](const transport::HttpRequest& r) {
        return pp.Receive(service, r, clock.NowMs());
      });
  // gRPC (A2A 1.0 and 0.3): its own listener over the same operation table; the card lists it.
  std::unique_ptr<transport::GrpcBinding> grpc;
  if (!config.grpc_listen.empty()) {
    auto where = ParseListen(config.grpc_listen);
    if (!where) {
      core::LogError("--grpc-listen: " + where.error().message);
      return 2;
    }
    grpc = std::make_unique<transport::GrpcBinding>(router->operations(), io.get_executor(),
                                                    &extensions, !v10_only, &authenticator);
    auto grpc_port = grpc->Listen(where->host, where->port, *tls ? &(*tls)->pem : nullptr);
    if (!grpc_port) {
      core::LogError(grpc_port.error().message);
      return 1;
    }
    const std::string host =
        where->host.find(':') != std::string::npos ? "[" + where->host + "]" : where->host;
    card.grpc_address = host + ":" + std::to_string(grpc_port.value());
    core::LogInfo("serving A2A gRPC on " + card.grpc_address);
  }
  using transport::CardAudience;
  using transport::CardForm;
  // Both shapes (agent_card.hpp), without security (development mode) and with it, and the
  // extended card (with it: only an authenticated caller gets it); each signed (its own
  // signatures: card_signature.hpp). The cards do not change while serving.
  auto forms = [&](bool secured, CardAudience audience) {
    transport::AgentCardConfig c = card;
    c.declare_security = secured;
    c.extended_card = secured;
    return transport::Router::CardForms{
        transport::BuildAgentCard(c, service.skills(), CardForm::kV03, audience),
        transport::BuildAgentCard(c, service.skills(), CardForm::kV10, audience)};
  };
  transport::Router::CardForms open_cards = forms(false, CardAudience::kPublic);
  transport::Router::CardForms secured_cards = forms(true, CardAudience::kPublic);
  transport::Router::CardForms extended_cards = forms(true, CardAudience::kExtended);
  if (card_key->has_value()) {
    const core::Es256PrivateKey& key = **card_key;
    const std::string jku = card.base_url + "/.well-known/jwks.json";
    for (auto* set : {&open_cards, &secured_cards, &extended_cards})
      for (auto* form : {&set->v03, &set->v10})
        if (auto attached = protocol::AttachCardSignature(*form, key, jku); !attached) {
          core::LogError(attached.error().message);
          return 1;
        }
    const std::string kid = protocol::JwkThumbprint(key.public_key());
    router->PublishKey(protocol::PublicJwk(key.public_key(), kid));
    core::LogInfo("agent card signed (ES256, kid " + kid + ")");
  }
  router->SetCards(open_cards, secured_cards, v10_only,
                   [&authenticator] { return authenticator.Enabled(); });
  router->SetExtendedCards(extended_cards.v03, extended_cards.v10);
  (*push)->Start(io.get_executor(), config, clock, *ids, card.base_url);

  auto recovered = service.RecoverUnfinished();
  if (!recovered) {
    core::LogError("recovery failed: " + recovered.error().message);
    return 1;
  }
  if (recovered.value())
    core::LogInfo("re-driving " + std::to_string(recovered.value()) + " unfinished task(s)");
  opt_runner->Start();
  health.workflows_loaded = loaded_workflows;
  health.recovered = true;

  server.Start();
  core::LogInfo("listening on " + listen->host + ":" + std::to_string(port.value()) +
                (*tls ? " (HTTPS" + std::string((*tls)->client_map ? ", mutual TLS)" : ")") : "") +
                " with " + std::to_string(threads) + " thread(s); data in " + backend.Where());
  std::printf("a2ad: serving %s/.well-known/agent-card.json\n", card.base_url.c_str());
  std::fflush(stdout);

  // Ordered shutdown: stop accepting -> let in-flight requests finish (bounded) -> stop the
  // loop -> close the store (drains its writer). Running executions are not waited for:
  // every step they committed is durable and a restart re-drives them from there.
  std::thread grpc_stop;
  std::atomic<bool> grpc_stopped = false;
  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer drain(io);
  auto deadline = std::make_shared<std::chrono::steady_clock::time_point>();
  std::function<void()> poll = [&] {
    if ((server.open_connections() == 0 && (!grpc || grpc_stopped)) ||
        std::chrono::steady_clock::now() >= *deadline) {
      io.stop();
      return;
    }
    drain.expires_after(std::chrono::milliseconds(20));
    drain.async_wait([&](boost::system::error_code) { poll(); });
  };
  signals.async_wait([&](boost::system::error_code ec, int sig) {
    if (ec) return;
    core::LogInfo(std::string("received ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                  "; shutting down");
    *deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(config.shutdown_grace_ms);
    server.Stop();
    service.StopAccepting();
    opt_runner->Stop();
    // gRPC stops on its own thread: its calls finish on the I/O threads, which keep running
    // until it is done (poll waits for grpc_stopped).
    if (grpc)
      grpc_stop = std::thread([&] {
        grpc->Shutdown();
        grpc_stopped = true;
      });
    poll();
  });

  // Retention: a background thread prunes the event logs of tasks terminal for longer than
  // the window (their snapshots stay; a resubscribe with an older cursor gets the snapshot
  // marked historyCompacted). Off the I/O threads: pruning waits for the store's writer.
  std::mutex maint_mu;
  std::condition_variable maint_cv;
  bool maint_stop = false;
  std::thread maintenance;
  if (config.event_retention_s > 0) {
    const auto every =
        std::chrono::seconds(std::clamp<int64_t>(config.event_retention_s / 10, 1, 300));
    maintenance = std::thread([&, every] {
      core::SetThreadName("a2ad-retention");
      std::unique_lock lock(maint_mu);
      while (!maint_cv.wait_for(lock, every, [&] { return maint_stop; })) {
        lock.unlock();
        auto pruned = store->PruneEvents(clock.NowMs() - config.event_retention_s * 1000);
        if (!pruned)
          core::LogWarn("event retention: " + pruned.error().message);
        else if (pruned.value() > 0)
          core::LogInfo("event retention: pruned " + std::to_string(pruned.value()) +
                        " events of finished tasks");
        lock.lock();
      }
    });
  }

  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i)
    pool.emplace_back([&io, i] {
      core::SetThreadName("a2ad-io-" + std::to_string(i));
      io.run();
    });
  core::SetThreadName("a2ad-io-0");
  io.run();
  for (auto& t : pool) t.join();
  if (grpc_stop.joinable()) grpc_stop.join();
  grpc.reset();
  {
    std::lock_guard lock(maint_mu);
    maint_stop = true;
  }
  maint_cv.notify_all();
  if (maintenance.joinable()) maintenance.join();
  (*push)->Stop();
  backend.Close();
  core::LogInfo("stopped");
  return 0;
}

}  // namespace a2ad::app
