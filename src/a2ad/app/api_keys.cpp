// `a2ad keys create|list|revoke` (API keys, issue 14) and the server's authentication setup:
// the key store of the data directory and the refusal to serve a non-loopback address
// without any credential source (app/config.hpp).
#include "a2ad/app/api_keys.hpp"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "a2ad/app/backends.hpp"
#include "a2ad/core/api_key.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/transport/auth/auth.hpp"

namespace a2ad::app {
namespace {

// The backend of the data directory or --database-url, made (and migrated) when missing.
core::Result<std::unique_ptr<storage::Backend>> OpenForCli(const Config& config) {
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec)
    return core::Error(core::ErrorCode::kInternal,
                       "cannot create data directory '" + config.data_dir + "': " + ec.message());
  return OpenBackend(config, BackendOptions{});
}

std::string Iso(int64_t ms) { return ms == 0 ? "-" : core::FormatTimestamp(ms); }

bool ValidScope(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789:_-.") == std::string_view::npos;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

int RunKeysCreate(const Config& config, const KeysCreateConfig& create) {
  if (create.tenant.empty() || create.tenant.size() > 128) {
    std::fprintf(stderr, "a2ad keys create: --tenant: a tenant id of 1..128 characters\n");
    return 2;
  }
  storage::ApiKeyRecord record;
  for (const auto& s : create.scopes) {
    if (!ValidScope(s)) {
      std::fprintf(stderr,
                   "a2ad keys create: --scopes: '%s' is not a scope (e.g. tasks:read, "
                   "tasks:write, push:manage, runs:read, runs:write, interrupts:resolve, admin)\n",
                   s.c_str());
      return 2;
    }
    // group:<name> and role:<name> are not checked by an operation but name what approval
    // gates may require of an approver (approverGroupRefs / approverRoleRefs,
    // workflow/approval_policy.hpp).
    const bool membership =
        (s.starts_with("group:") && s.size() > 6) || (s.starts_with("role:") && s.size() > 5);
    if (!membership && !transport::IsKnownScope(s))
      std::fprintf(stderr,
                   "a2ad keys create: warning: '%s' is not a scope a2ad checks; the key gets it "
                   "but it allows nothing\n",
                   s.c_str());
    record.scopes.push_back(s);
  }
  if (record.scopes.empty()) {
    std::fprintf(stderr, "a2ad keys create: --scopes: at least one scope\n");
    return 2;
  }
  const int64_t now = NowMs();
  if (!create.expires.empty()) {
    auto at = core::ParseExpiry(create.expires, now);
    if (!at) {
      std::fprintf(stderr,
                   "a2ad keys create: --expires '%s': expected a duration (30d, 12h, 90m, 3600s) "
                   "or a future RFC 3339 UTC time (2027-01-31T00:00:00Z)\n",
                   create.expires.c_str());
      return 2;
    }
    record.expires_at_ms = *at;
  }
  auto store = OpenForCli(config);
  if (!store) {
    std::fprintf(stderr, "a2ad keys create: %s\n", store.error().message.c_str());
    return 1;
  }
  const core::ApiKeyParts key = core::NewApiKey();
  record.key_id = key.key_id;
  record.secret_sha256 = core::HashApiKeySecret(key.secret);
  record.tenant = create.tenant;
  record.name = create.name;
  record.created_at_ms = now;
  if (auto put = (*store)->ApiKeys().Insert(record); !put) {
    std::fprintf(stderr, "a2ad keys create: %s\n", put.error().message.c_str());
    return 1;
  }
  // The only place the secret is ever shown: stdout, once.
  std::printf("%s\n", core::FormatApiKey(key).c_str());
  std::fprintf(stderr,
               "a2ad: created API key %s for tenant %s (expires %s); it is shown once, above: "
               "store it now\n",
               record.key_id.c_str(), record.tenant.c_str(), Iso(record.expires_at_ms).c_str());
  return 0;
}

int RunKeysList(const Config& config) {
  auto store = OpenForCli(config);
  if (!store) {
    std::fprintf(stderr, "a2ad keys list: %s\n", store.error().message.c_str());
    return 1;
  }
  auto keys = (*store)->ApiKeys().List();
  if (!keys) {
    std::fprintf(stderr, "a2ad keys list: %s\n", keys.error().message.c_str());
    return 1;
  }
  const int64_t now = NowMs();
  std::printf("%-16s  %-8s  %-16s  %-24s  %-24s  %-24s  %s\n", "KEY ID", "STATE", "TENANT",
              "CREATED", "EXPIRES", "NAME", "SCOPES");
  for (const auto& k : *keys) {
    std::string scopes;
    for (const auto& s : k.scopes) scopes += (scopes.empty() ? "" : ",") + s;
    const char* state = k.revoked_at_ms                               ? "revoked"
                        : (k.expires_at_ms && now >= k.expires_at_ms) ? "expired"
                                                                      : "active";
    std::printf("%-16s  %-8s  %-16s  %-24s  %-24s  %-24s  %s\n", k.key_id.c_str(), state,
                k.tenant.c_str(), Iso(k.created_at_ms).c_str(), Iso(k.expires_at_ms).c_str(),
                k.name.empty() ? "-" : k.name.c_str(), scopes.c_str());
  }
  return 0;
}

int RunKeysRevoke(const Config& config, const std::string& key_id) {
  // Accept the whole key too (an operator pasting it): only its id is used, nothing printed.
  std::string id = key_id;
  if (auto parts = core::ParseApiKey(key_id)) id = parts->key_id;
  auto store = OpenForCli(config);
  if (!store) {
    std::fprintf(stderr, "a2ad keys revoke: %s\n", store.error().message.c_str());
    return 1;
  }
  auto revoked = (*store)->ApiKeys().Revoke(id, NowMs());
  if (!revoked) {
    std::fprintf(stderr, "a2ad keys revoke: %s\n", revoked.error().message.c_str());
    return 1;
  }
  if (!*revoked) {
    std::fprintf(stderr, "a2ad keys revoke: no key with id '%s'\n", id.c_str());
    return 1;
  }
  std::printf("a2ad: revoked API key %s; a running server refuses it from its next request\n",
              id.c_str());
  return 0;
}

bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  return !ec && address.is_loopback();
}

core::Result<void> CheckServerKeys(const Config& config, const std::vector<std::string>& hosts,
                                   storage::ApiKeyStore& keys) {
  auto any = keys.Any();
  if (!any) return std::move(any).error();
  if (!*any && !config.MutualTls() && !config.OidcEnabled()) {  // certificates, tokens
    std::string exposed;
    for (const auto& h : hosts)
      if (!IsLoopbackHost(h)) exposed = h;
    const bool sqlite = config.database_url.empty();
    const std::string where = sqlite ? config.data_dir : "the database";
    const std::string how =
        sqlite ? "--data-dir " + config.data_dir : std::string("--database-url <the same URL>");
    if (!exposed.empty() && !config.insecure_no_auth)
      return core::Error(core::ErrorCode::kInvalidParams,
                         "refusing to serve " + exposed +
                             " (not a loopback address) without authentication: no API key "
                             "exists in " + where + ". Create one with `a2ad keys create " +
                             how + " --tenant T --scopes admin`, listen on 127.0.0.1, or pass "
                             "--insecure-no-auth to serve everyone without credentials");
    if (!exposed.empty())
      core::LogWarn("--insecure-no-auth: serving " + exposed +
                    " WITHOUT authentication; anyone who reaches it reads, answers and cancels "
                    "every task");
    else
      core::LogWarn(
          "no API keys: serving without authentication (development mode, loopback only); "
          "`a2ad keys create` turns authentication on");
  }
  return core::Ok{};
}

}  // namespace a2ad::app
