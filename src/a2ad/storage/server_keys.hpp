#pragma once
// The server's own secrets, kept by the store when replicas share it (issue 30): every server
// started with one database URL signs and verifies with the same keys, each made once by
// whichever server needs it first, with no other shared file. Backend::Keys() gives them; an
// engine that replicas do not share (SQLite) gives none, and the secrets stay files of the data
// directory, as their users keep them (interrupt-token.key, peer-push.key,
// card-signing-key.pem, keys/).
//
// Two kinds:
// - a named secret (Secret): one text value per name, made once and never changed (the HMAC
//   keys of interrupt and peer-push tokens, the agent card's signing key);
// - a key ring (KeyRing): signing keys that rotate (push::KeyStore, the push JWT keys): one
//   active key, retired keys kept until the tokens they signed have expired, and a version
//   that moves with every change so that a reader can tell cheaply that another process
//   rotated. push/key_directory.hpp is the same ring as files.
//
// Thread safety: every member may be called from any thread; every call blocks (a file or a
// database round trip): keep them off the I/O threads, or rare.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::storage {

/// One key of a ring.
struct RingKey {
  std::string kid;
  std::string private_pem;  // the private key, PEM (PKCS#8)
  int64_t created_at_ms = 0;
  int64_t retired_at_ms = 0;  // 0: the active key
};

/// A ring as read at one instant.
struct RingSnapshot {
  int64_t version = 0;        // what Version() said at that instant
  std::vector<RingKey> keys;  // oldest first (created_at_ms, then kid)
};

class KeyRing {
 public:
  virtual ~KeyRing() = default;
  /// Where the keys are, for messages (never a credential).
  virtual std::string Where() const = 0;
  /// A number that changes whenever the ring changes (0: an empty ring never written).
  /// Cheap: one stat, one indexed row.
  virtual core::Result<int64_t> Version() = 0;
  /// Every key, with the version they were read at (one snapshot).
  virtual core::Result<RingSnapshot> Load() = 0;
  /// One change, atomic where the engine can make it so (a transaction that waits for any
  /// other process's change of the same ring): unless `only_if_none_active` and the ring holds
  /// an active key, retires every active key at fresh.created_at_ms, stores `fresh` as the
  /// active key, and deletes the keys retired before `purge_before_ms`. Whether `fresh` was
  /// stored. Calls made at once by several processes leave exactly one active key.
  virtual core::Result<bool> Rotate(const RingKey& fresh, bool only_if_none_active,
                                    int64_t purge_before_ms) = 0;
  /// Deletes the keys retired before `before_ms`; how many.
  virtual core::Result<size_t> Purge(int64_t before_ms) = 0;
};

class ServerKeys {
 public:
  virtual ~ServerKeys() = default;
  /// The secret named `name`: the stored one, or else `make()`'s value, stored by this call
  /// (whoever stores first, in any process, wins; the others get the winner's value). Values
  /// are text (encode bytes: a database's text holds no NUL). `make`'s error is returned.
  virtual core::Result<std::string> Secret(
      const std::string& name, const std::function<core::Result<std::string>()>& make) = 0;
  /// The key ring named `name`; it may be used as long as this ServerKeys lives.
  virtual std::unique_ptr<KeyRing> Ring(const std::string& name) = 0;
};

}  // namespace a2ad::storage
