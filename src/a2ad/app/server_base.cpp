// The first components (server_parts.hpp): telemetry, the store, who may call.
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "a2ad/app/api_keys.hpp"
#include "a2ad/app/backends.hpp"
#include "a2ad/app/card_signing_setup.hpp"
#include "a2ad/app/metrics_setup.hpp"
#include "a2ad/app/oidc_setup.hpp"
#include "a2ad/app/server_parts.hpp"
#include "a2ad/core/log.hpp"

#ifndef A2AD_VERSION
#define A2AD_VERSION "0.0.0"
#endif

namespace a2ad::app {
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
}  // namespace

bool EnsureDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    core::LogError("cannot create data directory '" + dir + "': " + ec.message());
    return false;
  }
  return true;
}

// Logs, traces, the listen address and TLS: what is wrong here is a startup error (exit 2).
int TelemetryStep(Server& s, Component& self) {
  const Config& config = s.config;
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
  s.cors = std::move(cors).value();
  // Traces: spans go to the OTLP exporter when an endpoint is set (core/trace.hpp). The sink
  // is cleared before the exporter flushes and stops, both after everything else (close).
  self.close = [&s] {
    core::SetSpanSink({});
    s.otlp.reset();
  };
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
    o.instance_id = ReplicaId(config);  // <host name>:<port> unless --replica-id says
    auto started = OtlpExporter::Start(std::move(o));
    if (!started) {
      core::LogError(started.error().message);
      return 2;
    }
    s.otlp = std::move(started).value();
    core::SetSpanSink([e = s.otlp.get()](core::SpanData span) { e->Add(std::move(span)); });
    core::LogInfo("traces: exporting spans over OTLP/HTTP to " + s.otlp->url());
  }
  TuneAllocator();
  auto listen = ParseListen(config.listen);
  if (!listen) {
    core::LogError(listen.error().message);
    return 2;
  }
  s.listen = std::move(listen).value();
  // TLS first: a certificate or key that cannot be read is a startup error (exit 2).
  auto tls = OpenServingTls(config);
  if (!tls) {
    core::LogError(tls.error().message);
    return 2;
  }
  s.tls = std::move(tls).value();
  return EnsureDir(config.data_dir) ? 0 : 1;
}

// The store (app/backends.hpp): SQLite in the data directory, or the --database-url, with the
// extension modules' tables; the server's keys it keeps; the modules' node kinds, and their
// services over the store.
int StoreStep(Server& s, Component& self) {
  const Config& config = s.config;
  BackendOptions backend_options;
  backend_options.wait_s = config.database_wait_s;
  backend_options.batch_observer = StoreBatchObserver();  // commit batch metrics
  backend_options.components = s.modules.Migrations();
  auto opened = OpenBackend(config, backend_options);
  if (!opened) {
    const std::string advice = DatabaseAdvice(opened.error(), config.data_dir);
    core::LogError("cannot open the task store: " + opened.error().message +
                   (advice.empty() ? "" : "; " + advice));
    return ExitCodeOf(opened.error());
  }
  s.backend = std::move(opened).value();
  self.close = [&s] { s.backend->Close(); };
  // The server's secrets: the database's when it keeps them (every replica on it alike), else
  // files of the data directory (server_secrets.hpp).
  s.server_keys = s.backend->Keys();
  auto card_key = OpenCardSigningKey(config, s.server_keys);
  if (!card_key) {
    core::LogError(card_key.error().message);
    return ExitCodeOf(card_key.error());
  }
  s.card_key = std::move(card_key).value();
  // Their node kinds before the first workflow is read (the workflows step), which seals the
  // registry.
  if (auto kinds = s.modules.RegisterNodeKinds(); !kinds) {
    core::LogError(kinds.error().message);
    return ExitCodeOf(kinds.error());
  }
  if (auto services = s.modules.OpenServices({*s.backend, s.clock}); !services) {
    core::LogError(services.error().message);
    return ExitCodeOf(services.error());
  }
  return 0;
}

// Who may call (transport/auth/auth.hpp): the API keys in the store and the OIDC issuer's JWTs;
// with neither, only loopback is served (or everyone, with --insecure-no-auth). Also the I/O
// context and the egress client every outbound call goes through.
int AuthStep(Server& s, Component&) {
  const Config& config = s.config;
  std::vector<std::string> hosts{s.listen.host};
  if (!config.grpc_listen.empty()) {
    auto where = ParseListen(config.grpc_listen);
    if (where) hosts.push_back(where->host);
  }
  auto api_keys = CheckServerKeys(config, hosts, s.backend->ApiKeys());
  if (!api_keys) {
    core::LogError(api_keys.error().message);
    return ExitCodeOf(api_keys.error());
  }
  s.threads =
      config.threads ? config.threads : std::max<size_t>(1, std::thread::hardware_concurrency());
  s.io.emplace(static_cast<int>(s.threads));
  s.ids = core::MakeUuidV7Generator(s.clock);
  auto egress = OpenEgress(config);
  if (!egress) {
    core::LogError("egress: " + egress.error().message);
    return 2;
  }
  s.egress = std::move(egress).value();
  // Bearer JWTs of an OIDC issuer, its keys fetched through the same egress client.
  auto oidc = OpenOidc(config, *s.egress->client, s.clock, s.io->get_executor());
  if (!oidc) {
    core::LogError(oidc.error().message);
    return 2;
  }
  s.oidc = std::move(oidc).value();
  // A database server's key lookups leave the I/O threads (a slow database never stalls them).
  if (std::string_view(s.backend->Kind()) != "sqlite")
    s.key_reads = std::make_unique<tasks::ReadExecutor>(2);
  s.authenticator =
      std::make_unique<transport::Authenticator>(s.backend->ApiKeys(), s.clock, s.oidc.get());
  s.authenticator->SetBlockingReads(s.key_reads.get());
  if (config.rate_limit > 0) {
    const double burst = config.rate_burst > 0 ? static_cast<double>(config.rate_burst)
                                               : std::max(1.0, config.rate_limit);
    s.authenticator->SetRateLimiter(std::make_unique<core::RateLimiter>(config.rate_limit, burst));
    core::LogInfo("rate limit: " + std::to_string(config.rate_limit) +
                  " requests/s per caller, bursts of " +
                  std::to_string(static_cast<int64_t>(burst)));
  }
  if (s.tls && s.tls->client_map) s.authenticator->SetClientCertificates(s.tls->client_map.get());
  return 0;
}

}  // namespace a2ad::app
