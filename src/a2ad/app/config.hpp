#pragma once
// Server configuration: flags of `a2ad serve`, each with an A2AD_* environment variable.
// The Run* functions are the `a2ad` subcommands: each runs on the calling thread until it is
// done and returns the process exit code.
//
// Thread safety: the structs are plain values and ParseListen is pure. Call the Run*
// functions from the main thread, one at a time: RunServer sets process-wide state (log
// level, allocator tuning, the calling thread's name), and RunServer
// handle SIGINT/SIGTERM until they return.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/transport/http/listen_address.hpp"

namespace a2ad::app {

struct Config {
  std::string listen = "127.0.0.1:8080";  // host:port or [v6]:port; port 0 = any free port
  std::string data_dir = "./data";        // holds a2ad.db (SQLite, WAL) and the keys
  // The storage backend (app/backends.hpp): "" for SQLite in data_dir; a postgresql:// URL
  // (or libpq keyword string) for PostgreSQL.
  std::string database_url;
  // serve: how long to keep trying a database that cannot be reached at start (then exit 1).
  int64_t database_wait_s = 30;
  // Several replicas on one database (PostgreSQL; storage/cluster.hpp): this replica's name
  // ("" = <host name>:<listen port>), and how long a dead replica's runs wait before another
  // looks at them (heartbeats every third of it; the recovery bound is this plus at most
  // 1.2 s plus the re-drive: app/replica_work.hpp).
  std::string replica_id;
  int64_t lease_ttl_ms = 8000;
  std::string workflows_dir = "./workflows";
  std::string public_url;  // base URL in the agent card; default http://<listen>
  std::string log_level = "info";
  std::string log_format = "text";  // text | json (core/log.hpp)
  std::vector<std::string> cors_origins;  // transport/http/cors.hpp; empty: no CORS
  std::string otlp_endpoint;              // app/otlp_exporter.hpp; empty: no export
  std::vector<std::string> otlp_headers;  // NAME=VALUE, sent with every export
  std::string otlp_service_name = "a2ad";
  size_t threads = 0;                     // I/O threads; 0 = hardware cores
  size_t body_limit = size_t{1024} * 1024;  // request body bytes; past it: 413
  int64_t blocking_timeout_ms = 30000;    // longest wait of a blocking message/send
  int64_t shutdown_grace_ms = 10000;      // in-flight work gets this long on SIGTERM
  int64_t echo_delay_ms = 0;              // the built-in echo skill works this long
  int64_t stream_heartbeat_ms = 15000;    // `: keep-alive` on streams idle this long
  size_t stream_queue_limit = 1024;       // events queued per stream before it is cut
  std::string a2a_versions = "0.3,1.0";   // A2A versions served: "0.3,1.0" or "1.0"
  std::string grpc_listen;                // host:port of the gRPC binding; "" = off
  int64_t interrupt_token_ttl_s = 86400;  // lifetime of signed interrupt tokens
  // The skill of a message that names none; "" (the default): such a message is refused,
  // saying which skills there are and how to name one.
  std::string default_skill;
  // The built-in `tck` skill (tasks/builtin/tck_executor.hpp): the agent the A2A conformance
  // kit expects. Registered only when set; the CLI then makes it the default skill unless
  // --default-skill is given.
  bool tck_skill = false;
  int64_t event_retention_s =
      7LL * 24 * 3600;  // events of terminal tasks kept this long; 0 = forever
  // A task keeps its creation key (a first message's messageId, an Idempotency-Key) this
  // long: a send with it is a retry answered with that task (tasks/accepted_messages.hpp);
  // 0 = forever.
  int64_t idempotency_retention_s = 24LL * 3600;
  // The A2A capabilities the agent declares and serves (--no-streaming,
  // --no-push-notifications): off, the card says false and the operations are refused.
  bool streaming = true;
  bool push_notifications = true;
  // Slow and greedy clients (transport::HttpServerOptions): a request body must arrive
  // within body_timeout_ms of its head (else 408); a connection past max_connections, or
  // past max_connections_per_address from one client IP address, is answered 503.
  int64_t body_timeout_ms = 30000;
  size_t max_connections = 10000;
  size_t max_connections_per_address = 256;
  // --trusted-proxies: CIDRs of reverse proxies (transport/http/forwarded.hpp); "" none.
  std::string trusted_proxies;
  // --forwarded-header: which header those proxies set (auto | forwarded | x-forwarded-for).
  std::string forwarded_header = "auto";
  // The agent card signature (A2A §8.4; app/card_signing_setup.hpp): signed unless
  // card_signing is false, with the PEM key in card_signing_key, else with the key made in
  // <data_dir>/card-signing-key.pem on the first start.
  bool card_signing = true;
  std::string card_signing_key;
  // "normal": a commit survives the process being killed; "full": it also survives power
  // loss (one fsync per batch of commits). storage::SqliteOptions::synchronous_full.
  std::string sqlite_synchronous = "normal";

  // Also serve the OpenWOP conformance fixtures of <workflows_dir>/conformance/ (the
  // conformance suite's workflows and test seams); off: only the workflows of the directory.
  bool conformance_fixtures = false;

  // The operator console at /console/ (transport/console/console_routes.hpp); --no-console: off.
  bool console = true;

  // The OPT extension's limits (ext/opt; docs/OPT.md), declared in the card.
  int opt_max_plans_per_objective = 20;
  int opt_max_tasks_per_plan = 100;

  // Egress (net/; DIGEST §6.3): every outbound call (push, webhooks, ...). The CLI's
  // --push-allow-http, --push-allowlist and --push-ca-file are aliases of these.
  bool egress_allow_http = false;  // plain http:// destinations (development only)
  std::string egress_allowlist;    // comma-separated CIDRs/hosts that skip the SSRF ranges
  // The same, for A2A push notification configs only and for OpenWOP webhooks only (each
  // also gets what egress_* allows): a push config's scheme stays checked while webhooks
  // may reach a plain-http receiver, and the other way round.
  bool push_allow_http = false;
  std::string push_allowlist;
  bool webhook_allow_http = false;
  std::string webhook_allowlist;
  std::string egress_ca_file;      // extra CA bundle (PEM) trusted for https destinations

  // A2A peers that workflows call (core.a2a.invoke `peer`; issue 16): "NAME=URL" each, URL
  // the peer's card or its base URL. Credentials come from the environment (effects/).
  std::vector<std::string> a2a_peers;

  // Push notifications (issue 5; push/).
  int push_max_attempts = 8;       // then the delivery is dead-lettered
  int64_t push_backoff_ms = 1000;  // first retry delay (doubles, with jitter)
  int64_t push_max_backoff_ms = 300000;
  int64_t push_connect_timeout_ms = 5000;
  int64_t push_timeout_ms = 10000;  // one attempt, connect to response
  int64_t push_poll_ms = 1000;      // outbox check interval (new rows wake the worker at once)
  int64_t push_token_ttl_s = 300;   // lifetime of push JWTs (and of retired keys in the JWKS)
  // With a database that keeps the keys (PostgreSQL; app/server_secrets.hpp): how often the
  // server checks whether another process rotated the push signing keys.
  int64_t push_key_refresh_ms = 5000;

  // Authentication (issue 14; transport/auth/auth.hpp): on as soon as an API key exists in the
  // data directory. Without one, a non-loopback --listen / --grpc-listen refuses to start
  // (exit 2) unless this is set.
  bool insecure_no_auth = false;
  // Rate limits per principal (transport/auth/auth.hpp Authenticator::Throttle): requests per
  // second sustained, and the burst a caller may spend at once. 0 = off (the default).
  double rate_limit = 0;
  int64_t rate_burst = 0;  // 0 = max(1, rate_limit)

  // TLS (issue 14; transport/http/tls_context.hpp): with tls_cert and tls_key (PEM files) the HTTP
  // listener serves HTTPS and the gRPC listener TLS, and the default public URL is https://.
  // With tls_client_ca, client certificates are asked for on both and verified against it
  // (mutual TLS); tls_client_map (transport/auth/client_cert_auth.hpp) maps a verified
  // certificate's subject to a principal, and turns authentication on. Cert, key and CA that
  // cannot be read, and a client CA without a map (or a map without a CA), refuse to start.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string tls_client_map;
  int64_t tls_handshake_timeout_ms = 10000;  // a connection's TLS handshake; then it is closed

  /// Whether the listeners serve TLS.
  bool Tls() const { return !tls_cert.empty(); }
  /// Whether client certificates authenticate callers (the agent card's mTLS security scheme).
  bool MutualTls() const { return Tls() && !tls_client_ca.empty(); }

  // Bearer JWTs of an OpenID Connect issuer (issue 14; transport/auth/oidc_verifier.hpp). An
  // issuer turns authentication on whatever the key store holds; the audience is then
  // required. jwks_url "" = discovery (<issuer>/.well-known/openid-configuration -> jwks_uri).
  // A token without the tenant claim is refused unless oidc_default_tenant is set.
  std::string oidc_issuer;
  std::string oidc_audience;
  std::string oidc_jwks_url;
  std::string oidc_tenant_claim = "tenant";
  std::string oidc_scope_claim = "scope";  // also `scp` when this is `scope` and it is absent
  std::string oidc_principal_claim = "sub";
  std::string oidc_default_tenant;
  int64_t oidc_leeway_s = 60;

  /// Whether callers may authenticate with the issuer's JWTs (the agent card's
  /// securitySchemes read this and OidcDiscoveryUrl).
  bool OidcEnabled() const { return !oidc_issuer.empty(); }
  /// The issuer's discovery document, an A2A OpenIdConnectSecurityScheme's `openIdConnectUrl`;
  /// "" without an issuer.
  std::string OidcDiscoveryUrl() const {
    if (oidc_issuer.empty()) return "";
    std::string base = oidc_issuer;
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/.well-known/openid-configuration";
  }
};

/// `a2ad keys create`.
struct KeysCreateConfig {
  std::string tenant;
  std::vector<std::string> scopes;
  std::string name;
  std::string expires;  // "" never; a duration (30d, 12h, 90m, 3600s) or RFC 3339 UTC
};

/// `a2ad doctor` (app/doctor.cpp).
struct DoctorConfig {
  bool repair = false;
  std::string export_path;
};

using transport::ListenAddress;
using transport::ParseListen;

/// Runs the server until SIGINT/SIGTERM. Prints one line to stdout when ready:
/// "a2ad: serving <base>/.well-known/agent-card.json". Returns the process exit code.
int RunServer(const Config& config);

/// Applies schema migrations to <data_dir>/a2ad.db and prints the resulting version.
int RunMigrate(const Config& config);

/// `a2ad doctor`: checks every stored record, prints what does not read; with `repair`
/// repairs or sets aside (storage/sqlite/sqlite_doctor.hpp). Exit code 0: every record
/// reads (or everything damaged was repaired or set aside); 1: problems remain; 2: the
/// database could not be examined.
int RunDoctor(const Config& config, const DoctorConfig& doctor);
/// `a2ad backup --to NEWDIR`: a copy of config.data_dir safe while the server serves it (the
/// database by SQLite's online backup, then the key files); serving NEWDIR restores it.
int RunBackup(const Config& config, const std::string& to);
/// `a2ad validate FILE...`: prints each workflow that loads ("ok") and each refusal (the file,
/// the field, why); 0 when all load, 1 otherwise.
int RunValidate(const std::vector<std::string>& files);

/// `a2ad keys rotate`: a new push signing key under <data_dir>/keys; the old one stays in
/// the JWKS until its tokens expire. Prints the new kid.
int RunKeysRotate(const Config& config);

/// `a2ad keys create`: a new API key of config.data_dir (a2ad.db, made and migrated when
/// missing); prints the key, once, on stdout (the only place it is ever shown) and a summary
/// on stderr. Exit code 0; 2 for bad arguments; 1 when the store fails.
int RunKeysCreate(const Config& config, const KeysCreateConfig& create);
/// `a2ad keys list`: one line per key (id, state, tenant, times, name, scopes), no secret.
int RunKeysList(const Config& config);
/// `a2ad keys revoke ID`: a running server refuses the key from its next request (it reads
/// the key at every request). Exit code 1 for an unknown id.
int RunKeysRevoke(const Config& config, const std::string& key_id);

}  // namespace a2ad::app
