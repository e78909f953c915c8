#pragma once
// Where the server's secrets are (issue 30). With a store that keeps them
// (storage::Backend::Keys(): PostgreSQL), they are in the database, so that every server started
// with one database URL signs and verifies alike whatever its data directory; otherwise they are
// files of the data directory, as they always were:
//
//   what                      in the database                 as a file
//   interrupt tokens' HMAC    secret "interrupt-token"        <data-dir>/interrupt-token.key
//   peer-push tokens' HMAC    secret "peer-push"              <data-dir>/peer-push.key
//   push JWT signing keys     key ring "push"                 <data-dir>/keys/
//   agent card signing key    secret "card-signing-key"       <data-dir>/card-signing-key.pem
//                             (card_signing_setup.hpp; --card-signing-key FILE is always a file)
//
// A secret in the database is made once, by whichever server needs it first, and never changes
// (the HMAC keys: 32 random bytes, stored base64url; the card key: PKCS#8 PEM). The push keys
// rotate (push/signer.hpp); a server sees another's rotation within --push-key-refresh-ms.
//
// Thread safety: call from the composition root (or a CLI command) on one thread.
#include <memory>
#include <string>

#include "a2ad/app/config.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/storage/server_keys.hpp"
#include "a2ad/workflow/interrupt_token.hpp"

namespace a2ad::app {

inline constexpr const char* kInterruptTokenSecret = "interrupt-token";
inline constexpr const char* kPeerPushSecret = "peer-push";
inline constexpr const char* kPushKeyRing = "push";

/// The tokens MACed with secret `name` (kInterruptTokenSecret, kPeerPushSecret): from `keys`
/// when given, else the file <data_dir>/<name>.key (made if missing). kInternal naming the
/// secret or file that cannot be read, made, or is shorter than 32 bytes.
core::Result<workflow::InterruptTokens> OpenTokenSecret(storage::ServerKeys* keys,
                                                        const std::string& data_dir,
                                                        const std::string& name);

/// The push signing keys: the ring kPushKeyRing of `keys` when given (checked for another's
/// rotation every config.push_key_refresh_ms if `refresh`, else on every call), else the
/// directory <data_dir>/keys.
core::Result<std::unique_ptr<push::KeyStore>> OpenPushKeys(const Config& config,
                                                           storage::ServerKeys* keys,
                                                           const core::Clock& clock, bool refresh);

}  // namespace a2ad::app
