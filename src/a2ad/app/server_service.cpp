// The task components (server_parts.hpp): push, the task service and its skills, the HTTP
// listener, the workflows.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "a2ad/app/activity_log.hpp"
#include "a2ad/app/server_parts.hpp"
#include "a2ad/app/server_secrets.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/net/cidr.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/builtin/tck_executor.hpp"
#include "a2ad/tasks/builtin/ticker_executor.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/workflow_executor.hpp"

#ifndef A2AD_VERSION
#define A2AD_VERSION "0.0.0"
#endif

namespace a2ad::app {

// A2A push notifications and OpenWOP webhooks: their store, keys, service and worker. The
// worker starts with the work (WorkStep) and stops before the store closes.
int PushStep(Server& s, Component& self) {
  const Config& config = s.config;
  auto push = OpenPush(config, s.backend->Push(), s.server_keys, s.backend->Tasks(), s.clock,
                       *s.ids, *s.egress);
  if (!push) {
    core::LogError("push notifications: " + push.error().message);
    return 2;
  }
  s.push = std::move(push).value();
  self.close = [&s] { s.push->Stop(); };
  s.push->Connect(s.svc_opts);
  // Without A2A push notifications an inline config of message/send is refused too.
  if (!config.push_notifications) s.svc_opts.vet_push_config = nullptr;
  // The activity log rides on the same hook: a run's start, gates and end.
  s.svc_opts.on_commit = [push_hook = std::move(s.svc_opts.on_commit)](
                             const storage::TaskRecord* previous, storage::TaskCommit& commit) {
    if (push_hook) push_hook(previous, commit);
    LogActivity(previous, commit);
  };
  return 0;
}

// The task service and the built-in skills. Shutting down, it accepts no new message.
int TasksStep(Server& s, Component& self) {
  const Config& config = s.config;
  s.svc_opts.cluster = s.backend->Replicas();  // several replicas: runs held by leases
  s.svc_opts.blocking_timeout = std::chrono::milliseconds(config.blocking_timeout_ms);
  s.svc_opts.default_skill = config.default_skill;
  s.svc_opts.idempotency_retention = std::chrono::seconds(config.idempotency_retention_s);
  s.modules.ConfigureTasks(s.svc_opts);  // e.g. OPT: a message may join an objective
  s.service = std::make_unique<tasks::TaskService>(*s.push->task_store, s.clock, *s.ids,
                                                   s.io->get_executor(), s.svc_opts);
  tasks::TaskService& service = *s.service;
  self.stop = [&service] { service.StopAccepting(); };
  // Push configs set by the push-config methods are commits of their task (ordered with its
  // transitions, so none is missed: push_service.hpp).
  s.push->service->SetConfigWriter(
      [&service](storage::PushConfigRecord r) { return service.WritePushConfig(std::move(r)); });
  service.RegisterSkill(
      {"echo",
       "Echo",
       "Answers with a task that completes with one artifact echoing the message's parts.",
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
  return 0;
}

// The HTTP listener, bound now (its port is in the card) and accepting once everything is
// started (ServingStep). Its requests go to the router the surfaces step makes.
int HttpStep(Server& s, Component& self) {
  const Config& config = s.config;
  // The server's own errors (400, 408, 413, 431, 503) are JSON-RPC shaped on the A2A
  // JSON-RPC endpoint and OpenWOP envelopes elsewhere.
  transport::HttpServerOptions http_opts;
  http_opts.body_limit = config.body_limit;
  http_opts.body_timeout = std::chrono::milliseconds(config.body_timeout_ms);
  http_opts.max_connections = config.max_connections;
  http_opts.max_connections_per_address = config.max_connections_per_address;
  auto proxies = net::ParseCidrList(config.trusted_proxies);
  if (!proxies) {
    core::LogError("--trusted-proxies: " + proxies.error().message);
    return 1;
  }
  http_opts.trusted_proxies = std::move(proxies).value();
  http_opts.forwarded_header = transport::ParseForwardedHeader(config.forwarded_header)
                                   .value_or(transport::ForwardedHeader::kAuto);
  http_opts.transport_error = transport::SurfaceTransportErrors(s.jsonrpc_path);
  if (s.tls) {
    http_opts.tls = s.tls->context;
    http_opts.handshake_timeout = std::chrono::milliseconds(config.tls_handshake_timeout_ms);
  }
  s.http = std::make_unique<transport::HttpServer>(
      *s.io, [&s](transport::HttpRequest r) { return s.router->Handle(std::move(r)); },
      http_opts);
  auto port = s.http->Listen(s.listen.host, s.listen.port);
  if (!port) {
    core::LogError(port.error().message);
    return 1;
  }
  s.port = port.value();
  self.drained = [&s] { return s.http->open_connections() == 0; };
  transport::AgentCardConfig& card = s.card;
  card.version = A2AD_VERSION;
  if (!config.public_url.empty()) {
    card.base_url = config.public_url;
    while (!card.base_url.empty() && card.base_url.back() == '/') card.base_url.pop_back();
  } else {
    const std::string& h = s.listen.host;
    std::string host = h.find(':') != std::string::npos ? "[" + h + "]" : h;
    card.base_url = (s.tls ? "https://" : "http://") + host + ":" + std::to_string(s.port);
  }
  return 0;
}

// Workflows: each valid definition becomes a skill (a refused file is logged and skipped),
// its calls out (core.http, core.a2a.invoke) through the egress client.
int WorkflowsStep(Server& s, Component&) {
  const Config& config = s.config;
  auto tokens = OpenTokenSecret(s.server_keys, config.data_dir, kInterruptTokenSecret);
  if (!tokens) {
    core::LogError(tokens.error().message);
    return 1;
  }
  s.tokens.emplace(std::move(tokens).value());
  // Calls out of workflow nodes through the same egress client (the self peer through its
  // own); peers following-by-push push to the receiver.
  auto calls =
      OpenCalls(config, s.server_keys, s.listen.host, s.port, s.card.base_url, environ);
  if (!calls) {
    core::LogError(calls.error().message);
    return ExitCodeOf(calls.error());
  }
  s.calls = std::move(calls).value();
  s.calls->effects.grpc = s.egress->grpc_peers.get();  // peers over gRPC, same guard
  s.host_effects = std::make_unique<effects::HostEffects>(*s.egress->calls_client, s.calls->effects);
  workflow::EngineOptions engine_opts;
  engine_opts.public_url = s.card.base_url;
  engine_opts.token_ttl_ms = config.interrupt_token_ttl_s * 1000;
  tasks::TaskService& service = *s.service;
  if (!config.workflows_dir.empty()) {
    // The OpenWOP conformance fixtures (<dir>/conformance/) only when asked for.
    std::vector<std::filesystem::path> dirs{config.workflows_dir};
    if (config.conformance_fixtures)
      dirs.push_back(std::filesystem::path(config.workflows_dir) / "conformance");
    auto loaded = workflow::LoadWorkflowDirs(dirs);
    for (const auto& why : loaded.refusals) core::LogWarn("workflow refused: " + why);
    s.health.workflows_refused = loaded.refusals.size();
    for (auto& wf : loaded.workflows) {
      auto shared = std::make_shared<const workflow::Workflow>(std::move(wf));
      tasks::SkillInfo info{shared->id,         shared->name,     shared->description,
                            shared->tags,       shared->examples, shared->version,
                            shared->definition, shared->is_public};
      service.RegisterSkill(std::move(info), std::make_shared<workflow::WorkflowExecutor>(
                                                 shared, service, *s.tokens, s.clock,
                                                 engine_opts, s.host_effects.get()));
      ++s.loaded_workflows;
    }
    core::LogInfo("serving " + std::to_string(s.loaded_workflows) + " workflow(s) from '" +
                  config.workflows_dir + "'" +
                  (config.conformance_fixtures ? " (and its conformance fixtures)" : ""));
  }
  // A default skill that does not exist would refuse every message naming none: refuse to
  // start instead, naming what there is.
  if (!config.default_skill.empty()) {
    const auto& skills = service.skills();
    if (std::none_of(skills.begin(), skills.end(),
                     [&](const tasks::SkillInfo& k) { return k.id == config.default_skill; })) {
      std::string available;
      for (const auto& k : skills) available += (available.empty() ? "" : ", ") + k.id;
      core::LogError("--default-skill '" + config.default_skill +
                     "': no such skill is loaded; the skills are: " + available);
      return 1;
    }
  }
  return 0;
}

}  // namespace a2ad::app
