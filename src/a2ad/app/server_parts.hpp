// The composition root, as a list of components (userver's component list, in small).
//
// `a2ad serve` is the components of kComponents (server.cpp), each made in list order by its
// step: a step reads the Config and the parts made before it, adds its own parts to the
// Server, and fills its Component's hooks. Once all are made they are started in list order;
// SIGINT/SIGTERM stops them in reverse order, the I/O loop ends when every one is drained (or
// --shutdown-grace-ms runs out), and they are closed in reverse order. A backend or a surface is
// one step and one entry.
//
// Ownership: Server owns every part; members are declared in the order they are made, so they
// are destroyed in the reverse order (a part outlives the parts made after it, which may point
// into it). Threads: steps and start run on the main thread before the I/O threads; stop on an
// I/O thread (the signal handler); drained on an I/O thread; close on the main thread after the
// I/O threads joined.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "a2ad/app/calls_setup.hpp"
#include "a2ad/app/config.hpp"
#include "a2ad/app/egress_setup.hpp"
#include "a2ad/app/health.hpp"
#include "a2ad/app/otlp_exporter.hpp"
#include "a2ad/app/push_setup.hpp"
#include "a2ad/app/replica_work.hpp"
#include "a2ad/app/tls_setup.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/es256.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/effects/host_effects.hpp"
#include "a2ad/ext/extension_module.hpp"
#include "a2ad/storage/backend.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/agent_card.hpp"
#include "a2ad/transport/a2a/grpc/grpc_binding.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/auth/oidc_verifier.hpp"
#include "a2ad/transport/http/cors.hpp"
#include "a2ad/transport/http/http_server.hpp"
#include "a2ad/transport/openwop/openwop_api.hpp"
#include "a2ad/transport/router.hpp"
#include "a2ad/workflow/interrupt_token.hpp"

namespace a2ad::app {

/// A component's place in the server's lifecycle; an unset hook does nothing.
struct Component {
  std::string name;
  std::function<core::Result<void>()> start;  // serving begins (list order)
  std::function<void()> stop;                 // shutting down: take no new work (reverse)
  std::function<bool()> drained;              // stop's work is done (unset: at once)
  std::function<void()> close;                // the I/O threads ended (reverse order)
};

struct Server {
  Server(const Config& c, ext::ExtensionModules m) : config(c), modules(std::move(m)) {}
  const Config& config;
  // telemetry
  std::unique_ptr<OtlpExporter> otlp;
  std::optional<transport::CorsPolicy> cors;
  ListenAddress listen;
  std::unique_ptr<ServingTls> tls;  // null: plain HTTP
  // store
  transport::ExtensionRegistry extensions;
  std::unique_ptr<storage::Backend> backend;
  storage::ServerKeys* server_keys = nullptr;  // the backend's, or null (files)
  std::optional<core::Es256PrivateKey> card_key;
  HealthState health;
  // The extension modules (ext/extension_module.hpp), walked by the store, tasks, surfaces and
  // work steps; their services live as long as the store.
  ext::ExtensionModules modules;
  // auth
  size_t threads = 1;
  std::optional<boost::asio::io_context> io;
  core::SystemClock clock;
  std::unique_ptr<core::IdGenerator> ids;
  tasks::TaskServiceOptions svc_opts;
  std::unique_ptr<EgressSetup> egress;
  std::unique_ptr<transport::OidcVerifier> oidc;
  std::unique_ptr<tasks::ReadExecutor> key_reads;
  std::unique_ptr<transport::Authenticator> authenticator;
  // push, tasks
  std::unique_ptr<PushSetup> push;
  std::unique_ptr<tasks::TaskService> service;
  // http
  const std::string jsonrpc_path = "/v1/a2a";
  std::unique_ptr<transport::Router> router;  // made by the surfaces step
  std::unique_ptr<transport::HttpServer> http;
  uint16_t port = 0;
  transport::AgentCardConfig card;
  // workflows
  std::optional<workflow::InterruptTokens> tokens;
  std::unique_ptr<CallsSetup> calls;
  std::unique_ptr<effects::HostEffects> host_effects;
  size_t loaded_workflows = 0;
  // surfaces
  std::unique_ptr<transport::OpenwopApi> openwop;
  transport::StreamOptions stream_opts;
  bool v10_only = false;
  // grpc
  std::unique_ptr<transport::GrpcBinding> grpc;
  std::thread grpc_stop;
  std::atomic<bool> grpc_stopped = false;
  // retention
  std::mutex maint_mu;
  std::condition_variable maint_cv;
  bool maint_stop = false;
  std::thread maintenance;
  // replicas
  std::unique_ptr<ReplicaWork> replicas;
};

/// A component's step: makes its parts and sets its hooks; 0, or the exit code to end with
/// (2: the configuration is wrong, 1: something failed), having logged why.
using Step = int (*)(Server&, Component&);

// server_base.cpp
int TelemetryStep(Server& s, Component& self);
int StoreStep(Server& s, Component& self);
int AuthStep(Server& s, Component& self);
// server_service.cpp
int PushStep(Server& s, Component& self);
int TasksStep(Server& s, Component& self);
int HttpStep(Server& s, Component& self);
int WorkflowsStep(Server& s, Component& self);
// server_surfaces.cpp
int SurfacesStep(Server& s, Component& self);
int GrpcStep(Server& s, Component& self);
int CardsStep(Server& s, Component& self);
int WorkStep(Server& s, Component& self);
int ReplicasStep(Server& s, Component& self);
int ServingStep(Server& s, Component& self);

/// The exit code of a startup error: 2 for kInvalidParams (the configuration), else 1.
inline int ExitCodeOf(const core::Error& e) {
  return e.code == core::ErrorCode::kInvalidParams ? 2 : 1;
}

bool EnsureDir(const std::string& dir);

}  // namespace a2ad::app
