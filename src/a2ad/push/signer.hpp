#pragma once
// Proving a push came from us (issue 5; WIRE.md §16.3): every delivery carries
// `Authorization: Bearer <JWT>`, a compact JWS signed ES256 (ECDSA P-256 + SHA-256, RFC 7518
// §3.4: the signature is raw r||s, 64 bytes; core/es256.hpp) with header {alg, kid,
// typ:"JWT"} and claims iss, aud (the webhook URL), iat, exp, jti (unique per attempt),
// taskId (and eventId). Public keys are published as a JWKS (RFC 7517) at
// /.well-known/jwks.json (transport/router.hpp), which also lists the agent card's key.
//
// Keys live in a key ring (storage/server_keys.hpp): a directory, <data-dir>/keys/
// (key_directory.hpp: <kid>.pem and <kid>.json), or the database replicas share
// (storage::Backend::Keys(): every replica signs with the same key and publishes the same JWKS).
// Exactly one key is active (retiredAtMs 0). Rotation (`a2ad keys rotate`) makes a new active
// key and retires the old one; a retired key stays in the JWKS until every token it signed has
// expired (retiredAtMs + token lifetime + skew), then it is deleted. A running server notices a
// rotation done by another process: with the directory on its next Sign/Jwks call (one stat per
// call); with a database, within KeyStoreOptions::refresh_ms (a thread of the KeyStore checks
// the ring's version that often, so no Sign or Jwks call waits for the database).
//
// Receivers verify with JwtVerifier: signature against the JWKS by kid, alg pinned to
// ES256, iss/aud equality, iat/exp with a small skew, and jti never seen before.
//
// Thread safety: KeyStore and JwtVerifier lock internally: every member may be called from
// any thread at once. TokenFingerprint, HmacSha256Hex and JwtKid are pure. Both classes keep
// `clock` by reference: it must outlive them; the ring's store must outlive the KeyStore's
// refreshing (Stop()).
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/storage/server_keys.hpp"

namespace a2ad::push {

/// What A2ATaskState may carry instead of a push token (schema: tokenFingerprint, <= 32
/// chars): "sha256:" + the first 16 base64url characters of SHA-256(token) = 23 chars.
/// "" for an empty token. Never reversible; equal tokens give equal fingerprints.
std::string TokenFingerprint(std::string_view token);

/// Lowercase hex of SHA-256 HMAC (OpenWOP webhook signatures, DIGEST §6.2).
std::string HmacSha256Hex(std::string_view key, std::string_view data);

struct KeyInfo {
  std::string kid;
  int64_t created_at_ms = 0;
  int64_t retired_at_ms = 0;  // 0: the active key
};

struct KeyStoreOptions {
  /// How long a push JWT is valid: a retired key stays published that long (plus skew).
  int64_t token_lifetime_ms = 0;
  /// 0: every Sign/Jwks/keys call checks the ring's version first (a directory: one stat).
  /// > 0: calls use the keys held; a thread checks the ring's version every `refresh_ms` and
  /// reloads it when it moved, and deletes the keys whose tokens have all expired (a database).
  int64_t refresh_ms = 0;
};

class KeyStore {
 public:
  /// Opens the directory <dir> (key_directory.hpp), checked on every call.
  /// `token_lifetime_ms` bounds how long a retired key stays published.
  static core::Result<std::unique_ptr<KeyStore>> Open(std::string dir, const core::Clock& clock,
                                                      int64_t token_lifetime_ms);
  /// Loads every key of `ring`; stores the first key when there is no active one (on a shared
  /// ring, servers opening it at once agree on one). kInternal naming the key on an unreadable
  /// private key; the ring's errors.
  static core::Result<std::unique_ptr<KeyStore>> Open(std::unique_ptr<storage::KeyRing> ring,
                                                      const core::Clock& clock,
                                                      KeyStoreOptions options);
  ~KeyStore();

  /// Makes a new active key and retires the current one; deletes keys retired longer than
  /// the token lifetime (+ skew). Returns the new kid. Thread-safe; blocks on the ring.
  core::Result<std::string> Rotate();

  /// Compact JWS over `claims` with the active key. Thread-safe.
  core::Result<std::string> Sign(const boost::json::object& claims);

  /// {"keys":[{kty:"EC",crv:"P-256",x,y,kid,alg:"ES256",use:"sig"}, ...]}: the active key
  /// and the retired keys whose tokens may still be valid. Thread-safe.
  std::string Jwks();
  /// The members of Jwks()'s "keys" (protocol/jws.hpp PublicJwk), for a JWKS that also lists
  /// other keys (the router's /.well-known/jwks.json). Thread-safe.
  boost::json::array PublicJwks();

  /// The keys held (the retired ones whose tokens may still be valid included).
  std::vector<KeyInfo> keys();
  int64_t token_lifetime_ms() const { return token_lifetime_ms_; }
  /// Where the keys are (a directory, or the database's ring), for messages.
  std::string where() const { return ring_->Where(); }

  /// Stops the refreshing thread, if any (idempotent): before the ring's store closes.
  void Stop();

 private:
  struct Key;
  using Keys = std::vector<std::unique_ptr<Key>>;
  KeyStore(std::unique_ptr<storage::KeyRing> ring, const core::Clock& clock,
           KeyStoreOptions options);
  core::Result<void> LoadLocked();
  core::Result<void> ReloadIfChangedLocked();
  core::Result<Keys> Parse(const storage::RingSnapshot& snapshot) const;
  bool Expired(const KeyInfo& k, int64_t now_ms) const;
  void PurgeLocked();
  void RefreshLoop();
  void RefreshOnce();

  const std::unique_ptr<storage::KeyRing> ring_;
  const core::Clock& clock_;
  const int64_t token_lifetime_ms_;
  const int64_t refresh_ms_;
  std::mutex load_mu_;  // one loader or rotator at a time (held across the ring's I/O)
  std::mutex mu_;       // keys_ and version_ (never held across a database round trip)
  Keys keys_;           // oldest first
  int64_t version_ = 0;
  // The refreshing thread (refresh_ms_ > 0).
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  bool failing_ = false;  // the last refresh failed (logged once per streak)
  std::thread refresher_;
};

struct VerifyOptions {
  std::string issuer;    // expected iss; "" skips the check
  std::string audience;  // expected aud; "" skips the check
  int64_t skew_ms = 60000;
  int64_t max_age_ms = 5LL * 60000;  // iat older than this (plus skew) is stale
};

/// Verifies push JWTs against a JWKS. Thread-safe. Remembers every accepted jti until its
/// token expires (replay protection); a second token with a remembered jti is refused.
class JwtVerifier {
 public:
  JwtVerifier(VerifyOptions options, const core::Clock& clock);
  ~JwtVerifier();
  /// Replaces the known keys. kInvalidParams on a malformed JWKS.
  core::Result<void> SetJwks(std::string_view jwks_json);
  /// The verified claims, or kInvalidParams saying why the token is refused ("signature does
  /// not verify", "jti ... was already used (replay)", "expired", ...).
  core::Result<boost::json::object> Verify(std::string_view jwt);
  /// Whether `kid` is known (a receiver refetches the JWKS when it is not).
  bool HasKey(std::string_view kid);

 private:
  struct PublicKey;
  VerifyOptions options_;
  const core::Clock& clock_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<PublicKey>, std::less<>> keys_;
  std::map<std::string, int64_t, std::less<>> seen_jti_;  // jti -> exp ms
};

/// The kid named by a compact JWS header, or "" if unreadable (no verification).
std::string JwtKid(std::string_view jwt);

}  // namespace a2ad::push
