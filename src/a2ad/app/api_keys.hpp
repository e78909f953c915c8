#pragma once
// The server's credential source (API keys in the data directory, issue 14) and its safe
// defaults. Internal to app/.
//
// Thread safety: call from the main thread.
#include <memory>
#include <string>
#include <vector>

#include "a2ad/app/config.hpp"
#include "a2ad/storage/api_key_store.hpp"

namespace a2ad::app {

/// True for "localhost" and loopback IPv4/IPv6 literals (127.0.0.0/8, ::1).
bool IsLoopbackHost(const std::string& host);

/// Checks the server may serve with the keys of `keys` (the backend's). With no key in it, no mutual TLS
/// (Config::MutualTls) and no OIDC issuer (Config::OidcEnabled), the server is in development
/// mode: allowed (and logged once, as a warning) when every host in `hosts` is a loopback address
/// or config.insecure_no_auth is set; else kInvalidParams saying why and what to do (the caller
/// exits 2). kInternal when the store cannot be read.
core::Result<void> CheckServerKeys(const Config& config, const std::vector<std::string>& hosts,
                                   storage::ApiKeyStore& keys);

}  // namespace a2ad::app
