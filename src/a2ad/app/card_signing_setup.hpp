#pragma once
// Where the agent card's signing key (protocol/card_signature.hpp; A2A §8.4) comes from:
// - `--card-signing-key FILE`: that PEM private key, EC on P-256 (ES256), PKCS#8 ("BEGIN
//   PRIVATE KEY") or SEC1 ("BEGIN EC PRIVATE KEY"), unencrypted. Read once at start. Give
//   every replica behind one public URL the same file: then they all sign with one key and
//   list one kid. A warning is logged when the file is readable by group or others.
// - otherwise, with a store that keeps the server's keys (PostgreSQL: storage::Backend::Keys(),
//   server_secrets.hpp), its secret "card-signing-key" (PKCS#8 PEM), made by whichever server
//   needs it first: every replica on the database signs with it and lists one kid.
// - otherwise `<data-dir>/card-signing-key.pem`: made (PKCS#8, mode 0600) on the first start
//   and read on every later one, so the key, and its kid (the RFC 7638 thumbprint), stay the
//   same across restarts. Two processes starting on one empty data directory at once agree on
//   one key (it is put in place with link(2), which never replaces a file).
// - `--no-card-signing`: no key; the card is served without `signatures`.
// a2ad always has a data directory or a database, so there is no per-process key.
//
// Thread safety: call from the composition root (RunServer) before serving; no shared state.
#include <optional>
#include <string>

#include "a2ad/app/config.hpp"
#include "a2ad/core/es256.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/storage/server_keys.hpp"

namespace a2ad::app {

/// The file under the data directory that holds the generated key.
inline constexpr const char* kCardSigningKeyFile = "card-signing-key.pem";

/// The secret of ServerKeys that holds the generated key.
inline constexpr const char* kCardSigningKeySecret = "card-signing-key";

/// The key that signs the card, or nullopt when `config.card_signing` is false; `server_keys`
/// is the backend's (Backend::Keys(), null on SQLite).
/// kInvalidParams naming `--card-signing-key FILE` when that file cannot be read or is not an
/// unencrypted EC P-256 private key (a configuration error: exit 2); kInternal naming the
/// file when the data directory's key cannot be made, or is there and does not read (it is
/// never replaced: that would change the kid; remove it by hand to make a new one); the
/// store's error, or kInternal, when the database's key cannot be had or does not read.
core::Result<std::optional<core::Es256PrivateKey>> OpenCardSigningKey(
    const Config& config, storage::ServerKeys* server_keys);

}  // namespace a2ad::app
