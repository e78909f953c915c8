// The serving components (server_parts.hpp): the surfaces and the router, gRPC, the cards,
// the background work, and accepting connections.
#include <algorithm>
#include <cstdio>

#include "a2ad/app/health.hpp"
#include "a2ad/app/metrics_setup.hpp"
#include "a2ad/app/peer_push.hpp"
#include "a2ad/app/server_parts.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/protocol/card_signature.hpp"
#include "a2ad/protocol/jws.hpp"
#include "a2ad/push/signer.hpp"

#ifndef A2AD_VERSION
#define A2AD_VERSION "0.0.0"
#endif

namespace a2ad::app {

// The OpenWOP REST surface, the extension modules' surfaces (their A2A extensions and routes)
// and the router over the three A2A bindings; the modules stop taking work at shutdown.
int SurfacesStep(Server& s, Component& self) {
  const Config& config = s.config;
  tasks::TaskService& service = *s.service;
  transport::OpenwopApiOptions ow_opts;
  ow_opts.base_url = s.card.base_url;
  ow_opts.version = A2AD_VERSION;
  ow_opts.body_limit = config.body_limit;
  ow_opts.heartbeat = std::chrono::milliseconds(config.stream_heartbeat_ms);
  ow_opts.queue_limit = config.stream_queue_limit;
  ow_opts.push_notifications = config.push_notifications;
  ow_opts.streaming = config.streaming;
  ow_opts.webhooks = true;
  ow_opts.sample_seams = config.conformance_fixtures;
  if (config.a2a_versions == "1.0") ow_opts.a2a_versions = {"1.0"};
  ow_opts.push_config_of = [&s](const std::string& task_id) -> std::optional<boost::json::object> {
    auto configs = s.push->service->ListConfigs(task_id);
    if (!configs || configs->empty()) return std::nullopt;
    const auto& c = configs->front();
    boost::json::object pc{{"url", c.url}};
    if (!c.token.empty()) pc["tokenFingerprint"] = push::TokenFingerprint(c.token);
    return pc;
  };
  const workflow::InterruptTokens& token_keys = *s.tokens;
  s.openwop = std::make_unique<transport::OpenwopApi>(
      service, s.clock,
      [&token_keys](std::string_view t) -> core::Result<transport::InterruptTokenInfo> {
        auto c = token_keys.Verify(t);
        if (!c) return std::move(c).error();
        return transport::InterruptTokenInfo{c->run_id, c->node_id, c->interrupt_id, c->intent,
                                             c->expires_at_ms};
      },
      ow_opts);
  s.stream_opts.heartbeat = std::chrono::milliseconds(config.stream_heartbeat_ms);
  s.stream_opts.queue_limit = config.stream_queue_limit;
  s.card.push_notifications = config.push_notifications;
  s.card.streaming = config.streaming;
  // The modules' work (e.g. OPT's runner) starts with the work (WorkStep).
  self.stop = [&s] { s.modules.Stop(); };
  self.close = [&s] { s.modules.Close(); };
  const ext::SurfaceContext module_ctx{.service = service,
                                       .io = s.io->get_executor(),
                                       .clock = s.clock,
                                       .ids = *s.ids,
                                       .stream_queue_limit = config.stream_queue_limit};
  auto module_routes = s.modules.MakeSurfaces(module_ctx, s.extensions);
  if (!module_routes) {
    core::LogError(module_routes.error().message);
    return ExitCodeOf(module_routes.error());
  }
  transport::AgentCardConfig& card = s.card;
  card.extensions = s.extensions.CardEntries();
  card.mtls = config.MutualTls();
  card.oidc_discovery_url = config.OidcDiscoveryUrl();
  // The card says what the server does: the security it reads and the extended card once a
  // caller can authenticate (the router switches to those forms when the first key exists).
  card.extended_card = s.authenticator->Enabled();
  s.v10_only = config.a2a_versions == "1.0";
  s.stream_opts.serve_v03 = !s.v10_only;
  card.serves_v03 = !s.v10_only;
  s.router = std::make_unique<transport::Router>(
      service, transport::BuildAgentCard(card, service.skills()), s.stream_opts, s.jsonrpc_path,
      s.openwop.get(), &s.extensions);
  transport::Router& router = *s.router;
  router.EnablePush(*s.push->service, *s.push->keys, *s.push->store, config.push_notifications);
  if (!config.streaming) router.DisableStreaming();
  if (config.conformance_fixtures)  // the OpenWOP test seams, off unless asked for
    router.EnableSampleSeams(std::make_unique<transport::SampleSeams>(
        s.push->service.get(), [&s](int executors) {
          return effects::ProbeConcurrentClaim(s.host_effects->claims(), s.io->get_executor(),
                                               executors);
        }));
  s.authenticator->SetSelfCredential(&s.calls->self_credential);
  router.SetAuthenticator(s.authenticator.get());
  router.SetReadiness(MakeReadinessProbe(*s.backend, s.health, config.data_dir));
  router.SetCors(std::move(*s.cors));
  if (s.config.console) router.EnableConsole();
  router.SetMetrics(SetUpMetrics(*s.backend, *s.service, A2AD_VERSION));
  router.AddSelfAuthenticatingRoute(
      std::string(kPeerPushPath), [&s](const transport::HttpRequest& r) {
        return s.calls->peer_push.Receive(*s.service, r, s.clock.NowMs());
      });
  for (auto& route : module_routes.value()) router.AddRoute(std::move(route));
  return 0;
}

// gRPC (A2A 1.0 and 0.3): its own listener over the same operation table; the card lists it.
// It stops on its own thread: its calls finish on the I/O threads, which keep running until it
// is done (drained).
int GrpcStep(Server& s, Component& self) {
  const Config& config = s.config;
  if (config.grpc_listen.empty()) return 0;
  auto where = ParseListen(config.grpc_listen);
  if (!where) {
    core::LogError("--grpc-listen: " + where.error().message);
    return 2;
  }
  s.grpc = std::make_unique<transport::GrpcBinding>(s.router->operations(), s.io->get_executor(),
                                                    &s.extensions, !s.v10_only,
                                                    s.authenticator.get());
  auto grpc_port = s.grpc->Listen(where->host, where->port, s.tls ? &s.tls->pem : nullptr);
  if (!grpc_port) {
    core::LogError(grpc_port.error().message);
    return 1;
  }
  const std::string host =
      where->host.find(':') != std::string::npos ? "[" + where->host + "]" : where->host;
  s.card.grpc_address = host + ":" + std::to_string(grpc_port.value());
  core::LogInfo("serving A2A gRPC on " + s.card.grpc_address);
  self.stop = [&s] {
    s.grpc_stop = std::thread([&s] {
      s.grpc->Shutdown();
      s.grpc_stopped = true;
    });
  };
  self.drained = [&s] { return s.grpc_stopped.load(); };
  self.close = [&s] {
    if (s.grpc_stop.joinable()) s.grpc_stop.join();
    s.grpc.reset();
  };
  return 0;
}

// The agent cards: both shapes (agent_card.hpp), without security (development mode) and with
// it, and the extended card (only an authenticated caller gets it); each signed (its own
// signatures: card_signature.hpp). The cards do not change while serving.
int CardsStep(Server& s, Component&) {
  using transport::CardAudience;
  using transport::CardForm;
  auto forms = [&](bool secured, CardAudience audience) {
    transport::AgentCardConfig c = s.card;
    c.declare_security = secured;
    c.extended_card = secured;
    return transport::Router::CardForms{
        transport::BuildAgentCard(c, s.service->skills(), CardForm::kV03, audience),
        transport::BuildAgentCard(c, s.service->skills(), CardForm::kV10, audience)};
  };
  transport::Router::CardForms open_cards = forms(false, CardAudience::kPublic);
  transport::Router::CardForms secured_cards = forms(true, CardAudience::kPublic);
  transport::Router::CardForms extended_cards = forms(true, CardAudience::kExtended);
  if (s.card_key) {
    const core::Es256PrivateKey& key = *s.card_key;
    const std::string jku = s.card.base_url + "/.well-known/jwks.json";
    for (auto* set : {&open_cards, &secured_cards, &extended_cards})
      for (auto* form : {&set->v03, &set->v10})
        if (auto attached = protocol::AttachCardSignature(*form, key, jku); !attached) {
          core::LogError(attached.error().message);
          return 1;
        }
    const std::string kid = protocol::JwkThumbprint(key.public_key());
    s.router->PublishKey(protocol::PublicJwk(key.public_key(), kid));
    core::LogInfo("agent card signed (ES256, kid " + kid + ")");
  }
  s.router->SetCards(open_cards, secured_cards, s.v10_only,
                     [&s] { return s.authenticator->Enabled(); });
  s.router->SetExtendedCards(extended_cards.v03, extended_cards.v10);
  return 0;
}

// The background work, started before connections are accepted: push deliveries, the
// re-drive of unfinished runs, the extension modules' work (OPT's outbox), and event
// retention (a thread pruning the logs of tasks terminal for longer than the window; their
// snapshots stay, and a resubscribe with an older cursor gets the snapshot marked
// historyCompacted). Running executions are not waited for at shutdown: every step they
// committed is durable and is re-driven from there.
int WorkStep(Server& s, Component& self) {
  self.start = [&s]() -> core::Result<void> {
    const Config& config = s.config;
    s.push->Start(s.io->get_executor(), config, s.clock, *s.ids, s.card.base_url);
    // Parked runs are woken at their times (a gate's timeout, a pause's timer) by one timer.
    s.service->StartWakes();
    // With several replicas the runs are adopted by their leases instead (ReplicasStep).
    auto recovered = s.service->RecoverUnfinished(s.backend->Replicas() == nullptr);
    if (!recovered)
      return core::Error(recovered.error().code, "recovery failed: " + recovered.error().message);
    if (recovered.value())
      core::LogInfo("re-driving " + std::to_string(recovered.value()) + " unfinished task(s)");
    if (auto started = s.modules.Start(); !started) return started;
    s.health.workflows_loaded = s.loaded_workflows;
    s.health.recovered = true;
    if (config.event_retention_s <= 0) return {};
    const auto every =
        std::chrono::seconds(std::clamp<int64_t>(config.event_retention_s / 10, 1, 300));
    s.maintenance = std::thread([&s, every] {
      core::SetThreadName("a2ad-retention");
      std::unique_lock lock(s.maint_mu);
      while (!s.maint_cv.wait_for(lock, every, [&] { return s.maint_stop; })) {
        lock.unlock();
        auto pruned =
            s.backend->Tasks().PruneEvents(s.clock.NowMs() - s.config.event_retention_s * 1000);
        if (!pruned)
          core::LogWarn("event retention: " + pruned.error().message);
        else if (pruned.value() > 0)
          core::LogInfo("event retention: pruned " + std::to_string(pruned.value()) +
                        " events of finished tasks");
        lock.lock();
      }
    });
    return {};
  };
  self.close = [&s] {
    {
      std::lock_guard lock(s.maint_mu);
      s.maint_stop = true;
    }
    s.maint_cv.notify_all();
    if (s.maintenance.joinable()) s.maintenance.join();
  };
  return 0;
}

// Several replicas on one database (replica_work.hpp): started once the work is, before
// connections are accepted; leaving (every lease given up) once the I/O threads ended.
int ReplicasStep(Server& s, Component& self) {
  storage::Cluster* cluster = s.backend->Replicas();
  if (!cluster) return 0;
  // Registered before any work starts: what it claims (push deliveries) is a live replica's.
  if (auto ok = cluster->Heartbeat(); !ok) {
    core::LogError("replica: cannot register: " + ok.error().message);
    return 1;
  }
  s.replicas = std::make_unique<ReplicaWork>(*cluster, *s.service,
                                             std::chrono::milliseconds(s.config.lease_ttl_ms));
  self.start = [&s] { return s.replicas->Start(); };
  self.stop = [&s] { s.replicas->Stop(); };  // draining: adopt nothing more
  self.close = [&s] { s.replicas->Leave(); };
  return 0;
}

// Accepting connections, last; the first to stop.
int ServingStep(Server& s, Component& self) {
  self.start = [&s]() -> core::Result<void> {
    s.http->Start();
    core::LogInfo("listening on " + s.listen.host + ":" + std::to_string(s.port) +
                  (s.tls ? " (HTTPS" + std::string(s.tls->client_map ? ", mutual TLS)" : ")") : "") +
                  " with " + std::to_string(s.threads) + " thread(s); data in " +
                  s.backend->Where());
    std::printf("a2ad: serving %s/.well-known/agent-card.json\n", s.card.base_url.c_str());
    std::fflush(stdout);
    return {};
  };
  self.stop = [&s] { s.http->Stop(); };
  return 0;
}

}  // namespace a2ad::app
