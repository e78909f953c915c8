#pragma once
// The push signing keys as files (storage/server_keys.hpp KeyRing), where a server whose store
// does not keep them (SQLite) has them: <dir>/ (0700) holds <kid>.pem (PKCS#8 private key,
// 0600) and <kid>.json ({kid, createdAtMs, retiredAtMs}, 0600; written after the .pem: a key
// without its .json is never loaded). The version is the directory's modification time, so a
// reader notices another process's rotation with one stat. A rotation writes the new key,
// then rewrites the retired keys' .json: two processes rotating one directory at the same
// instant may leave two active keys (the newest signs).
//
// Thread safety: the ring keeps no state of its own; concurrent calls see the files as they are.
#include <memory>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/server_keys.hpp"

namespace a2ad::push {

/// The ring in `dir`, created (0700) if missing. kInternal naming `dir` if it cannot be made.
core::Result<std::unique_ptr<storage::KeyRing>> OpenKeyDirectory(std::string dir);

}  // namespace a2ad::push
