#include "a2ad/app/server_secrets.hpp"

#include <openssl/rand.h>

#include <filesystem>

#include "a2ad/core/encoding.hpp"

namespace a2ad::app {
using core::Error;
using core::ErrorCode;

core::Result<workflow::InterruptTokens> OpenTokenSecret(storage::ServerKeys* keys,
                                                        const std::string& data_dir,
                                                        const std::string& name) {
  if (!keys)
    return workflow::InterruptTokens::Open(std::filesystem::path(data_dir) / (name + ".key"));
  auto stored = keys->Secret(name, [&]() -> core::Result<std::string> {
    std::string secret(32, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(secret.data()), 32) != 1)
      return Error(ErrorCode::kInternal, "no randomness for the " + name + " secret");
    return core::Base64UrlEncode(secret);
  });
  if (!stored) {
    core::Error e = std::move(stored).error();
    e.message = "the " + name + " secret in the database: " + e.message;
    return e;
  }
  auto secret = core::Base64UrlDecode(*stored);
  if (!secret || secret->size() < 32)
    return Error(ErrorCode::kInternal,
                 "the " + name + " secret in the database is not 32 bytes or more of base64url");
  return workflow::InterruptTokens(std::move(secret).value());
}

core::Result<std::unique_ptr<push::KeyStore>> OpenPushKeys(const Config& config,
                                                           storage::ServerKeys* keys,
                                                           const core::Clock& clock, bool refresh) {
  const int64_t lifetime_ms = config.push_token_ttl_s * 1000;
  if (!keys)
    return push::KeyStore::Open((std::filesystem::path(config.data_dir) / "keys").string(), clock,
                                lifetime_ms);
  push::KeyStoreOptions options;
  options.token_lifetime_ms = lifetime_ms;
  options.refresh_ms = refresh ? config.push_key_refresh_ms : 0;
  return push::KeyStore::Open(keys->Ring(kPushKeyRing), clock, options);
}

}  // namespace a2ad::app
