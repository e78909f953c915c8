#pragma once
// Signed interrupt tokens (DIGEST §4.7): the bearer credential for GET/POST
// /v1/interrupts/{token}. token = base64url(claims JSON) "." base64url(HMAC-SHA256(secret,
// base64url(claims JSON))); claims {runId, nodeId, interruptId, expiresAt (epoch ms), intent,
// kid}. The secret lives in the data directory (created once, 0600).
//
// Open fails with kInternal naming the key file (shorter than 32 bytes, not writable) or
// when no random bytes can be drawn.
//
// Thread safety: an InterruptTokens is immutable once made; Mint and Verify may be called
// from any thread at once.
#include <cstdint>
#include <filesystem>
#include <string>

#include "a2ad/core/result.hpp"

namespace a2ad::workflow {

struct TokenClaims {
  std::string run_id;
  std::string node_id;
  std::string interrupt_id;
  int64_t expires_at_ms = 0;
  std::string intent = "resolve";  // "resolve" (GET+POST) | "inspect" (GET only)
};

class InterruptTokens {
 public:
  /// Loads the secret from `key_file`, creating it (32 random bytes) if missing.
  static core::Result<InterruptTokens> Open(const std::filesystem::path& key_file);
  /// A fixed secret (tests).
  explicit InterruptTokens(std::string secret, std::string kid = "k1")
      : secret_(std::move(secret)), kid_(std::move(kid)) {}

  std::string Mint(const TokenClaims& claims) const;
  /// Checks the MAC (constant time) and decodes the claims. Expiry is the caller's check
  /// (it answers 410, not 401). kInvalidParams for a malformed or forged token.
  core::Result<TokenClaims> Verify(std::string_view token) const;

 private:
  std::string secret_;
  std::string kid_;
};

}  // namespace a2ad::workflow
