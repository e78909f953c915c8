// `a2ad`: serve, migrate, doctor, backup, keys create|list|revoke|rotate, push listen. Every flag has an
// A2AD_* environment variable.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#if A2AD_MIMALLOC
#include <mimalloc.h>
#endif

#include "a2ad/app/config.hpp"
#include "a2ad/cli/push_listen_options.hpp"
#include "a2ad/net/cidr.hpp"

namespace {

// All of main but its last resort (below).
int Main(int argc, char** argv) {
  a2ad::app::Config config;
  CLI::App app{"a2ad: an OpenWOP host that exposes itself as a durable A2A agent"};
  app.require_subcommand(1);
  std::string version = std::string("a2ad ") + A2AD_VERSION;
#if A2AD_MIMALLOC
  // Which allocator serves the process (and a reference that keeps mimalloc linked).
  version += " (allocator: mimalloc " + std::to_string(mi_version()) + ")";
#endif
  app.set_version_flag("--version", version);

  auto add_common = [&](CLI::App* sub) {
    sub->add_option("--data-dir", config.data_dir, "directory of the SQLite task store (a2ad.db)")
        ->envname("A2AD_DATA_DIR")
        ->capture_default_str();
    sub->add_option("--database-url", config.database_url,
                    "the database: a postgresql:// URL (or libpq keyword string; libpq's PG* "
                    "environment variables fill in the rest) for PostgreSQL; unset: SQLite in "
                    "--data-dir")
        ->envname("A2AD_DATABASE_URL");
    sub->add_option("--log-level", config.log_level, "trace|debug|info|warn|error|off")
        ->envname("A2AD_LOG_LEVEL")
        ->capture_default_str();
    sub->add_option("--log-format", config.log_format,
                    "text (a line of words and key=value fields) or json (one object per line)")
        ->envname("A2AD_LOG_FORMAT")
        ->check(CLI::IsMember({"text", "json"}))
        ->capture_default_str();
  };

  CLI::App* serve = app.add_subcommand("serve", "run the A2A server");
  add_common(serve);
  serve
      ->add_option("--listen", config.listen,
                   "address to listen on, host:port ([::1]:port for IPv6; port 0 = any free port)")
      ->envname("A2AD_LISTEN")
      ->capture_default_str();
  serve
      ->add_option("--workflows-dir", config.workflows_dir,
                   "directory of OpenWOP workflow JSON files")
      ->envname("A2AD_WORKFLOWS_DIR")
      ->capture_default_str();
  serve
      ->add_option(
          "--public-url", config.public_url,
          "base URL clients use to reach this server (agent card URLs); default http://<listen> "
          "(https:// with --tls-cert)")
      ->envname("A2AD_PUBLIC_URL");
  serve
      ->add_option("--cors-origin", config.cors_origins,
                   "browser origins that may call the server (CORS), https://app.example.com or "
                   "* for any; repeat or separate with commas; none by default")
      ->envname("A2AD_CORS_ORIGIN")
      ->delimiter(',');
  serve
      ->add_option("--otlp-endpoint", config.otlp_endpoint,
                   "export trace spans over OTLP/HTTP (JSON) to this collector, e.g. "
                   "http://127.0.0.1:4318 (/v1/traces is added to a URL without a path)")
      ->envname("A2AD_OTLP_ENDPOINT");
  serve
      ->add_option("--otlp-header", config.otlp_headers,
                   "NAME=VALUE header sent with every export (a collector's API key); repeatable")
      ->envname("A2AD_OTLP_HEADERS")
      ->delimiter(',');
  serve
      ->add_option("--otlp-service-name", config.otlp_service_name,
                   "service.name of the exported spans")
      ->envname("A2AD_OTLP_SERVICE_NAME")
      ->capture_default_str();
  serve->add_option("--threads", config.threads, "I/O threads (0 = one per core)")
      ->envname("A2AD_THREADS")
      ->capture_default_str();
  serve
      ->add_option("--body-limit", config.body_limit, "largest request body in bytes (413 past it)")
      ->envname("A2AD_BODY_LIMIT")
      ->capture_default_str();
  serve
      ->add_option("--body-timeout-ms", config.body_timeout_ms,
                   "time a request body has to arrive once its head is in (408 past it)")
      ->envname("A2AD_BODY_TIMEOUT_MS")
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}))
      ->capture_default_str();
  serve
      ->add_option("--max-connections", config.max_connections,
                   "open connections; one more is answered 503 with Retry-After and closed")
      ->envname("A2AD_MAX_CONNECTIONS")
      ->check(CLI::Range(size_t{1}, size_t{1} << 24))
      ->capture_default_str();
  serve
      ->add_option("--max-connections-per-address", config.max_connections_per_address,
                   "open connections from one client IP address; one more is answered 503")
      ->envname("A2AD_MAX_CONNECTIONS_PER_ADDRESS")
      ->check(CLI::Range(size_t{1}, size_t{1} << 24))
      ->capture_default_str();
  serve
      ->add_option("--trusted-proxies", config.trusted_proxies,
                   "reverse proxies / load balancers (CIDR,...): their connections are not "
                   "capped by address; each request counts against the client address they "
                   "forward (Forwarded for=, else X-Forwarded-For), read only from them")
      ->envname("A2AD_TRUSTED_PROXIES")
      ->check([](const std::string& v) -> std::string {
        auto parsed = a2ad::net::ParseCidrList(v);
        return parsed ? std::string() : parsed.error().message;
      });
  serve
      ->add_option("--forwarded-header", config.forwarded_header,
                   "the header the trusted proxies set with the client address: forwarded "
                   "(RFC 7239), x-forwarded-for, or auto (Forwarded if the request has it, else "
                   "X-Forwarded-For: behind a proxy that only appends X-Forwarded-For, a client "
                   "can choose its address; name the header)")
      ->envname("A2AD_FORWARDED_HEADER")
      ->check(CLI::IsMember({"auto", "forwarded", "x-forwarded-for"}))
      ->capture_default_str();
  serve
      ->add_option("--blocking-timeout-ms", config.blocking_timeout_ms,
                   "longest a blocking message/send waits before returning the working task")
      ->envname("A2AD_BLOCKING_TIMEOUT_MS")
      ->capture_default_str();
  serve
      ->add_option("--shutdown-grace-ms", config.shutdown_grace_ms,
                   "time in-flight requests get to finish on SIGINT/SIGTERM")
      ->envname("A2AD_SHUTDOWN_GRACE_MS")
      ->capture_default_str();

  serve
      ->add_option(
          "--echo-delay-ms", config.echo_delay_ms,
          "how long the built-in echo skill works before answering (try cancel and restarts)")
      ->envname("A2AD_ECHO_DELAY_MS")
      ->capture_default_str();

  serve
      ->add_option("--stream-heartbeat-ms", config.stream_heartbeat_ms,
                   "send a keep-alive comment on streams idle this long")
      ->envname("A2AD_STREAM_HEARTBEAT_MS")
      ->capture_default_str();
  serve
      ->add_option("--grpc-listen", config.grpc_listen,
                   "serve A2A over gRPC on host:port: lf.a2a.v1.A2AService (1.0) and "
                   "a2a.v1.A2AService (0.3) (port 0: a free one; listed in the card); off when "
                   "empty")
      ->envname("A2AD_GRPC_LISTEN");
  serve
      ->add_option("--a2a-versions", config.a2a_versions,
                   "A2A versions served: 0.3,1.0 (the card has both forms; a request with "
                   "A2A-Version: 1.x gets the 1.0 card) or 1.0 (the 1.0 card for every request; "
                   "0.3 methods, routes and RPCs answer VersionNotSupported)")
      ->envname("A2AD_A2A_VERSIONS")
      ->check(CLI::IsMember({"0.3,1.0", "1.0"}))
      ->capture_default_str();
  serve
      ->add_option("--stream-queue-limit", config.stream_queue_limit,
                   "events queued for one slow stream before it is closed (the client resumes "
                   "with Last-Event-ID)")
      ->envname("A2AD_STREAM_QUEUE_LIMIT")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  serve
      ->add_option("--default-skill", config.default_skill,
                   "skill (workflow id) of a message whose metadata names no skillId")
      ->envname("A2AD_DEFAULT_SKILL")
      ->capture_default_str();
  serve
      ->add_flag("!--no-console", config.console,
                 "do not serve the operator console at /console/ (served by default)")
      ->envname("A2AD_NO_CONSOLE");
  serve
      ->add_flag("--conformance-fixtures", config.conformance_fixtures,
                 "also serve the OpenWOP conformance fixtures of <workflows-dir>/conformance/ "
                 "(the conformance suite's workflows); off by default")
      ->envname("A2AD_CONFORMANCE_FIXTURES");
  serve
      ->add_flag("--tck-skill", config.tck_skill,
                 "add the built-in `tck` skill, the agent the A2A conformance kit (a2a-tck) "
                 "expects (acts on each message's messageId prefix), and make it the default "
                 "skill unless --default-skill is given; off by default")
      ->envname("A2AD_TCK_SKILL");
  serve
      ->add_option("--interrupt-token-ttl-s", config.interrupt_token_ttl_s,
                   "lifetime of signed interrupt tokens (capped at an interrupt's timeoutMs)")
      ->envname("A2AD_INTERRUPT_TOKEN_TTL_S")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  serve
      ->add_option("--event-retention-s", config.event_retention_s,
                   "keep the event logs of finished tasks this long (their snapshots stay "
                   "forever); 0 keeps them forever")
      ->envname("A2AD_EVENT_RETENTION_S")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();

  bool no_streaming = false, no_push = false;
  serve
      ->add_flag("--no-streaming", no_streaming,
                 "declare and serve no streaming (capabilities.streaming false: the streaming "
                 "A2A methods answer UnsupportedOperation)")
      ->envname("A2AD_NO_STREAMING");
  serve
      ->add_flag("--no-push-notifications", no_push,
                 "declare and serve no A2A push notifications (capabilities.pushNotifications "
                 "false: push configs are refused with PushNotificationNotSupported; OpenWOP "
                 "webhooks stay)")
      ->envname("A2AD_NO_PUSH_NOTIFICATIONS");
  serve
      ->add_option("--idempotency-retention-s", config.idempotency_retention_s,
                   "a first message's messageId (and an Idempotency-Key) stays bound to the "
                   "task it started this long: a send with it is a retry answered with that "
                   "task, whatever happened to it since; 0 keeps them forever")
      ->envname("A2AD_IDEMPOTENCY_RETENTION_S")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();

  serve
      ->add_option("--database-wait-s", config.database_wait_s,
                   "how long to keep trying a database that cannot be reached at start, "
                   "then exit with status 1")
      ->envname("A2AD_DATABASE_WAIT_S")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve
      ->add_option("--replica-id", config.replica_id,
                   "this replica's name among the replicas on one PostgreSQL database (unique "
                   "among them; in logs, spans and /metrics); default <host name>:<listen port>")
      ->envname("A2AD_REPLICA_ID");
  serve
      ->add_option("--lease-ttl-ms", config.lease_ttl_ms,
                   "several replicas: the runs of a replica that stopped answering are taken "
                   "over by another once this long has passed, within a further "
                   "min(this/4, 1 s) + 20% (the recovery bound: under 10 s by default); a "
                   "replica renews its registration every third of it")
      ->envname("A2AD_LEASE_TTL_MS")
      ->check(CLI::Range(int64_t{300}, int64_t{600000}))
      ->capture_default_str();
  serve
      ->add_option("--sqlite-synchronous", config.sqlite_synchronous,
                   "normal: an acknowledged task change survives the process being killed; "
                   "full: it also survives power loss and OS crashes (one fsync per batch of "
                   "commits)")
      ->envname("A2AD_SQLITE_SYNCHRONOUS")
      ->check(CLI::IsMember({"normal", "full"}))
      ->capture_default_str();

  // The Objective-Plan-Task extension (docs/OPT.md).
  serve
      ->add_option("--opt-max-plans-per-objective", config.opt_max_plans_per_objective,
                   "most plans of one objective (the OPT extension's maxPlansPerObjective)")
      ->envname("A2AD_OPT_MAX_PLANS_PER_OBJECTIVE")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  serve
      ->add_option("--opt-max-tasks-per-plan", config.opt_max_tasks_per_plan,
                   "most tasks of one plan (the OPT extension's maxTasksPerPlan)")
      ->envname("A2AD_OPT_MAX_TASKS_PER_PLAN")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();

  // The agent card signature (A2A §8.4).
  CLI::Option* card_key =
      serve
          ->add_option("--card-signing-key", config.card_signing_key,
                       "PEM file of the EC P-256 private key (unencrypted PKCS#8 or SEC1) that "
                       "signs the agent card (ES256); give replicas the same file. Default: a "
                       "key made on the first start in DATA_DIR/card-signing-key.pem")
          ->envname("A2AD_CARD_SIGNING_KEY");
  bool no_card_signing = false;
  serve
      ->add_flag("--no-card-signing", no_card_signing,
                 "serve the agent card without signatures (and no card key in the JWKS)")
      ->envname("A2AD_NO_CARD_SIGNING")
      ->excludes(card_key);

  // Egress (DIGEST §6.3): every outbound call (push notifications, webhooks, ...).
  serve
      ->add_flag("--egress-allow-http", config.egress_allow_http,
                 "allow plain http:// destinations for outbound calls (development only; logged "
                 "as a warning)")
      ->envname("A2AD_EGRESS_ALLOW_HTTP");
  serve
      ->add_option("--egress-allowlist", config.egress_allowlist,
                   "comma-separated CIDRs/hosts outbound calls may reach although private or "
                   "loopback (development and tests only; off by default, logged as a warning)")
      ->envname("A2AD_EGRESS_ALLOWLIST");
  serve
      ->add_option("--egress-ca-file", config.egress_ca_file,
                   "extra CA bundle (PEM) trusted for https destinations, next to the system "
                   "store")
      ->envname("A2AD_EGRESS_CA_FILE");
  serve
      ->add_option("--a2a-peer", config.a2a_peers,
                   "NAME=URL: an A2A agent workflows may call by name (core.a2a.invoke `peer`; "
                   "URL is its card or base URL, or `self` for this host; repeatable; a node "
                   "naming no peer uses 'default'; built in: drafter=self). Credentials: "
                   "A2AD_PEER_<NAME>_BEARER or _API_KEY")
      ->envname("A2AD_A2A_PEERS")
      ->delimiter(',');
  // Push configs and webhooks alone (each also gets what --egress-* allows).
  serve
      ->add_flag("--push-allow-http", config.push_allow_http,
                 "allow plain http:// URLs in A2A push notification configs only (development "
                 "only; --egress-allow-http allows them for every outbound call)")
      ->envname("A2AD_PUSH_ALLOW_HTTP");
  serve
      ->add_option("--push-allowlist", config.push_allowlist,
                   "CIDRs/hosts A2A push notification configs may reach although private or "
                   "loopback (development and tests only)")
      ->envname("A2AD_PUSH_ALLOWLIST");
  serve
      ->add_flag("--webhook-allow-http", config.webhook_allow_http,
                 "allow plain http:// URLs for OpenWOP webhooks only (development only)")
      ->envname("A2AD_WEBHOOK_ALLOW_HTTP");
  serve
      ->add_option("--webhook-allowlist", config.webhook_allowlist,
                   "CIDRs/hosts OpenWOP webhooks may reach although private or loopback "
                   "(development and tests only)")
      ->envname("A2AD_WEBHOOK_ALLOWLIST");
  // The spelling of issue 5, kept so existing scripts keep working.
  std::string alias_ca_file;
  serve
      ->add_option("--push-ca-file", alias_ca_file,
                   "alias of --egress-ca-file (kept for existing scripts)")
      ->envname("A2AD_PUSH_CA_FILE");

  // Push notifications (issue 5).
  serve
      ->add_option("--push-max-attempts", config.push_max_attempts,
                   "delivery attempts before a push is dead-lettered")
      ->envname("A2AD_PUSH_MAX_ATTEMPTS")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  serve
      ->add_option("--push-backoff-ms", config.push_backoff_ms,
                   "delay before the first retry (doubles per attempt, with jitter)")
      ->envname("A2AD_PUSH_BACKOFF_MS")
      ->check(CLI::Range(int64_t{1}, int64_t{86400000}))
      ->capture_default_str();
  serve->add_option("--push-max-backoff-ms", config.push_max_backoff_ms, "longest retry delay")
      ->envname("A2AD_PUSH_MAX_BACKOFF_MS")
      ->check(CLI::Range(int64_t{1}, int64_t{86400000}))
      ->capture_default_str();
  serve
      ->add_option("--push-connect-timeout-ms", config.push_connect_timeout_ms,
                   "connect timeout of one delivery attempt")
      ->envname("A2AD_PUSH_CONNECT_TIMEOUT_MS")
      ->check(CLI::Range(int64_t{1}, int64_t{600000}))
      ->capture_default_str();
  serve
      ->add_option("--push-timeout-ms", config.push_timeout_ms,
                   "total timeout of one delivery attempt (connect to response)")
      ->envname("A2AD_PUSH_TIMEOUT_MS")
      ->check(CLI::Range(int64_t{1}, int64_t{600000}))
      ->capture_default_str();
  serve->add_option("--push-poll-ms", config.push_poll_ms, "how often the outbox is checked")
      ->envname("A2AD_PUSH_POLL_MS")
      ->check(CLI::Range(int64_t{1}, int64_t{60000}))
      ->capture_default_str();
  serve
      ->add_option("--push-token-ttl-s", config.push_token_ttl_s,
                   "lifetime of push JWTs (retired keys stay in the JWKS this long)")
      ->envname("A2AD_PUSH_TOKEN_TTL_S")
      ->check(CLI::Range(int64_t{10}, int64_t{86400}))
      ->capture_default_str();
  serve
      ->add_option("--push-key-refresh-ms", config.push_key_refresh_ms,
                   "with --database-url: how often to look for push signing keys rotated by "
                   "another process (`a2ad keys rotate`, another replica)")
      ->envname("A2AD_PUSH_KEY_REFRESH_MS")
      ->check(CLI::Range(int64_t{100}, int64_t{3600000}))
      ->capture_default_str();

  serve
      ->add_flag("--insecure-no-auth", config.insecure_no_auth,
                 "serve a non-loopback address although no API key exists (everyone who reaches "
                 "it may do everything); without it such a server refuses to start. Keys turn "
                 "authentication on whatever this says")
      ->envname("A2AD_INSECURE_NO_AUTH");
  serve
      ->add_option("--rate-limit", config.rate_limit,
                   "requests per second each caller (API key) may make, sustained; past it: 429 "
                   "with Retry-After (gRPC RESOURCE_EXHAUSTED). 0 = no limit")
      ->envname("A2AD_RATE_LIMIT")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  serve
      ->add_option("--rate-burst", config.rate_burst,
                   "requests a caller may make at once before --rate-limit applies "
                   "(0 = the rate, at least 1)")
      ->envname("A2AD_RATE_BURST")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}))
      ->capture_default_str();

  // TLS and mutual TLS (issue 14).
  serve
      ->add_option("--tls-cert", config.tls_cert,
                   "PEM file of the server certificate (and its chain): serve HTTPS, and TLS on "
                   "--grpc-listen; needs --tls-key")
      ->envname("A2AD_TLS_CERT");
  serve->add_option("--tls-key", config.tls_key, "PEM file of the private key of --tls-cert")
      ->envname("A2AD_TLS_KEY");
  serve
      ->add_option("--tls-client-ca", config.tls_client_ca,
                   "PEM file of the CA(s) client certificates must chain to (mutual TLS): a "
                   "client certificate is asked for on HTTPS and gRPC and verified when sent; "
                   "needs --tls-client-map")
      ->envname("A2AD_TLS_CLIENT_CA");
  serve
      ->add_option("--tls-client-map", config.tls_client_map,
                   "JSON file mapping verified client certificate subjects to tenants and "
                   "scopes: [{\"subject\":\"CN=agent,O=Acme\",\"tenant\":\"acme\","
                   "\"scopes\":[\"tasks:read\"]}]")
      ->envname("A2AD_TLS_CLIENT_MAP");
  serve
      ->add_option("--tls-handshake-timeout-ms", config.tls_handshake_timeout_ms,
                   "time a new HTTPS connection has to complete its TLS handshake; then it is "
                   "closed")
      ->envname("A2AD_TLS_HANDSHAKE_TIMEOUT_MS")
      ->check(CLI::Range(int64_t{1}, int64_t{600000}))
      ->capture_default_str();

  // OpenID Connect bearer tokens (issue 14).
  serve
      ->add_option("--oidc-issuer", config.oidc_issuer,
                   "accept bearer JWTs of this OpenID Connect issuer (its exact `iss`, e.g. "
                   "https://login.example.com/realms/acme); turns authentication on")
      ->envname("A2AD_OIDC_ISSUER");
  serve
      ->add_option("--oidc-audience", config.oidc_audience,
                   "the `aud` a token must name (required with --oidc-issuer)")
      ->envname("A2AD_OIDC_AUDIENCE");
  serve
      ->add_option("--oidc-jwks-url", config.oidc_jwks_url,
                   "the issuer's JWKS (default: jwks_uri of "
                   "<issuer>/.well-known/openid-configuration)")
      ->envname("A2AD_OIDC_JWKS_URL");
  serve
      ->add_option("--oidc-tenant-claim", config.oidc_tenant_claim,
                   "the claim naming the caller's tenant")
      ->envname("A2AD_OIDC_TENANT_CLAIM")
      ->capture_default_str();
  serve
      ->add_option("--oidc-scope-claim", config.oidc_scope_claim,
                   "the claim holding the scopes (space-separated string or array; `scope` "
                   "falls back to `scp`)")
      ->envname("A2AD_OIDC_SCOPE_CLAIM")
      ->capture_default_str();
  serve
      ->add_option("--oidc-principal-claim", config.oidc_principal_claim,
                   "the claim naming the caller (its id is oidc:<value>)")
      ->envname("A2AD_OIDC_PRINCIPAL_CLAIM")
      ->capture_default_str();
  serve
      ->add_option("--oidc-default-tenant", config.oidc_default_tenant,
                   "the tenant of a token without the tenant claim (default: such tokens are "
                   "refused)")
      ->envname("A2AD_OIDC_DEFAULT_TENANT");
  serve
      ->add_option("--oidc-leeway-s", config.oidc_leeway_s,
                   "clock skew allowed on exp, nbf and iat, in seconds")
      ->envname("A2AD_OIDC_LEEWAY_S")
      ->check(CLI::Range(int64_t{0}, int64_t{3600}))
      ->capture_default_str();

  CLI::App* migrate = app.add_subcommand("migrate", "apply task store schema migrations and exit");
  add_common(migrate);

  a2ad::app::DoctorConfig doctor_cfg;
  CLI::App* doctor = app.add_subcommand(
      "doctor",
      "check that every stored task and event reads; --repair repairs what it can and sets the "
      "rest aside (stop the server first)");
  add_common(doctor);
  doctor->add_flag("--repair", doctor_cfg.repair,
                   "repair damaged records (Infinity/NaN -> null, rebuild a snapshot from its "
                   "event log) and set aside what cannot be repaired");
  doctor->add_option("--export", doctor_cfg.export_path,
                     "write every damaged and set-aside record, as stored, to this file (JSON "
                     "lines)");

  std::string backup_to;
  CLI::App* backup = app.add_subcommand(
      "backup",
      "copy the data directory (database and keys) to a new directory, safe while serving; "
      "restore by serving the copy");
  add_common(backup);
  backup->add_option("--to", backup_to, "the new directory")->required();

  CLI::App* keys = app.add_subcommand("keys", "API keys and push signing keys");
  keys->require_subcommand(1);
  a2ad::app::KeysCreateConfig create_cfg;
  CLI::App* create = keys->add_subcommand(
      "create",
      "make an API key (authentication turns on once one exists) and print it once on stdout");
  add_common(create);
  create->add_option("--tenant", create_cfg.tenant, "the tenant every call with the key acts for")
      ->required();
  create
      ->add_option("--scopes", create_cfg.scopes,
                   "comma-separated: tasks:read, tasks:write, push:manage, runs:read, "
                   "runs:write, interrupts:resolve, admin (every scope); group:<name> and "
                   "role:<name> make the key an approver that gates may require")
      ->delimiter(',')
      ->required();
  create->add_option("--name", create_cfg.name, "a label shown by `keys list`");
  create->add_option("--expires", create_cfg.expires,
                     "a duration (30d, 12h, 90m, 3600s) or an RFC 3339 UTC time; default never");
  CLI::App* list = keys->add_subcommand("list", "list API keys (never their secrets)");
  add_common(list);
  std::string revoke_id;
  CLI::App* revoke = keys->add_subcommand(
      "revoke", "revoke an API key; a running server refuses it from its next request");
  add_common(revoke);
  revoke->add_option("id", revoke_id, "the key id (as `keys list` shows it)")->required();
  CLI::App* rotate = keys->add_subcommand(
      "rotate",
      "make a new push signing key; the old one stays in the JWKS until its tokens expire");
  add_common(rotate);
  rotate->add_option("--push-token-ttl-s", config.push_token_ttl_s, "lifetime of push JWTs")
      ->envname("A2AD_PUSH_TOKEN_TTL_S")
      ->capture_default_str();

  a2ad::push_listen::Config listen_cfg;
  std::vector<std::string> validate_files;
  CLI::App* validate = app.add_subcommand(
      "validate", "check workflow definition files as the server loads them, and exit (1: one "
                  "was refused)");
  validate->add_option("files", validate_files, "WorkflowDefinition JSON files")->required();
  CLI::App* push = app.add_subcommand("push", "push notification client tools");
  push->require_subcommand(1);
  CLI::App* listen = a2ad::cli::AddPushListen(*push, listen_cfg);

  CLI11_PARSE(app, argc, argv);
  if (serve->parsed()) {
    config.card_signing = !no_card_signing;
    config.streaming = !no_streaming;
    config.push_notifications = !no_push;
    if (!alias_ca_file.empty()) {
      if (!config.egress_ca_file.empty() && config.egress_ca_file != alias_ca_file) {
        std::fprintf(stderr, "--egress-ca-file and --push-ca-file name different files\n");
        return 2;
      }
      config.egress_ca_file = alias_ca_file;
    }
    // The kit sends messages that name no skill: with --tck-skill they go to `tck`, unless a
    // default skill was chosen explicitly (flag or A2AD_DEFAULT_SKILL).
    if (config.tck_skill && serve->get_option("--default-skill")->empty())
      config.default_skill = "tck";
    return a2ad::app::RunServer(config);
  }
  if (rotate->parsed()) return a2ad::app::RunKeysRotate(config);
  if (create->parsed()) return a2ad::app::RunKeysCreate(config, create_cfg);
  if (list->parsed()) return a2ad::app::RunKeysList(config);
  if (revoke->parsed()) return a2ad::app::RunKeysRevoke(config, revoke_id);
  if (listen->parsed()) {
    listen_cfg.program = "a2ad";
    return a2ad::push_listen::Run(listen_cfg);
  }
  if (doctor->parsed()) return a2ad::app::RunDoctor(config, doctor_cfg);
  if (validate->parsed()) return a2ad::app::RunValidate(validate_files);
  if (backup->parsed()) return a2ad::app::RunBackup(config, backup_to);
  return a2ad::app::RunMigrate(config);
}

}  // namespace

// An exception that escapes ends the process with status 1 and a line on stderr saying what it
// was, rather than std::terminate.
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a2ad: ended by an exception: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "a2ad: ended by an unknown exception\n");
  }
  return 1;
}
