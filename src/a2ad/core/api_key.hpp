#pragma once
// API keys (issue 14; OpenWOP DIGEST §6.4): the text a caller presents, how its secret is
// kept at rest, and how a presented secret is compared.
//
// A key is shown once, as `a2ad_k_<key id>_<secret>`: the key id is 16 lowercase hex digits
// (8 random bytes; it names the key in `a2ad keys list` / `revoke` and is the stored row's
// primary key), the secret 32 random bytes from OpenSSL's CSPRNG, base64url without padding
// (43 characters; it may itself contain '_', so the key id ends at the first '_' after the
// prefix). Only SHA-256 of the secret is stored: a salted slow hash (bcrypt, argon2) is for
// low-entropy passwords an attacker can enumerate; 256 random bits cannot be enumerated, so a
// plain digest gives the same protection for a stolen database at a fraction of the cost per
// request. Presented secrets are hashed and compared with CRYPTO_memcmp (constant time).
//
// Thread safety: pure functions (NewApiKey reads the thread-safe CSPRNG).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace a2ad::core {

inline constexpr std::string_view kApiKeyPrefix = "a2ad_k_";

struct ApiKeyParts {
  std::string key_id;  // 16 lowercase hex digits
  std::string secret;  // base64url, 43 characters
};

/// A fresh key. Aborts if the CSPRNG cannot produce bytes (never a guessable key).
ApiKeyParts NewApiKey();
/// `a2ad_k_<key id>_<secret>`.
std::string FormatApiKey(const ApiKeyParts& key);
/// The parts of a presented key; nullopt unless it has the prefix, a 16-hex-digit key id and
/// a non-empty secret of base64url characters.
std::optional<ApiKeyParts> ParseApiKey(std::string_view text);
/// Lowercase hex SHA-256 of `secret` (what is stored).
std::string HashApiKeySecret(std::string_view secret);
/// Equal contents, compared in time independent of where they differ (CRYPTO_memcmp); the
/// lengths are not secret (both are digests).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

/// The credential a host presents when it calls itself (the `self` A2A peer,
/// app/calls_setup.hpp): `a2ad_s_<tenant, base64url>.<HMAC-SHA-256 of the tenant, base64url>`
/// under a key of 32 random bytes made at start and kept only in memory, so only the process
/// that made it can mint or check one, and a restart voids every one. It names the tenant of
/// the run that calls, whose task at the host is then that tenant's.
class SelfCredential {
 public:
  /// A fresh key. Aborts if the CSPRNG cannot produce bytes.
  SelfCredential();
  std::string For(std::string_view tenant) const;
  /// The tenant `presented` was made for by this key; nullopt for anything else.
  std::optional<std::string> TenantOf(std::string_view presented) const;

 private:
  std::string Mac(std::string_view tenant) const;
  std::string key_;
};
inline constexpr std::string_view kSelfCredentialPrefix = "a2ad_s_";

/// An expiry given on the command line: a duration from `now_ms` ("30d", "12h", "90m",
/// "3600s") or an RFC 3339 UTC time ("2027-01-31T00:00:00Z"). Epoch milliseconds; nullopt
/// when malformed or not in the future.
std::optional<int64_t> ParseExpiry(std::string_view text, int64_t now_ms);

}  // namespace a2ad::core
