#pragma once
// ApiKeyStore over the api_keys table (schema version 7) of a2ad.db: Find, the lookup of every
// authenticated request, on a small pool of read-only connections (sqlite_reader_pool.hpp), so
// that the I/O threads do not queue for one; the rest (writes, `a2ad keys`) on a connection of
// its own under a mutex.
// Open requires the schema to be current (the task store's Open or `a2ad migrate` made it
// so). Reads see keys created and revoked by other processes (`a2ad keys` while the server
// runs) at their next call.
//
// Any() without a read: a server without keys (development mode) asks Any() at every request,
// and a read transaction per request costs more than a small request does. So a file next to
// the database, `<path>-keys`, says "keys may exist" when its first byte is not 0: Insert
// writes "1" there (unless it is there) before the key's row is written, and Open does when it
// finds keys without it (a database copied or restored from elsewhere). The file is made with
// the database's permission bits. A store that finds no keys at Open makes the file one 0
// byte long if it is empty or absent, and maps that byte (shared), which is the page another
// process's Insert writes: while it is 0, no Insert has run since Open, in any process, and
// Any() answers false without a system call, reading the table only once per
// `foreign_check` (a key written by other means, an older a2ad or the sqlite3 shell, is seen
// that late, and so is a key whose Insert made a new file after this one was deleted); once
// it is not 0, Any() reads. Where the byte cannot be mapped (a read-only directory), Any()
// reads it from the file at every call instead (an absent file says no key was made, an
// empty one, as an older a2ad leaves it, that keys may exist). Once keys are seen, Any()
// answers true without either (keys are revoked, never deleted). Deleting the file is
// harmless, and so is a data directory where Open cannot make it while keys exist: Open saw
// them. Like SQLite's `-shm` beside it, the file is mapped: it must not be truncated under a
// running server without keys (that read would stop it with SIGBUS).
//
// Thread safety: every method may be called from any thread at once.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "a2ad/storage/api_key_store.hpp"

namespace a2ad::storage::sqlite {

class Connection;
class ReaderPool;

class SqliteApiKeyStore final : public ApiKeyStore {
 public:
  /// Opens `path` (an a2ad.db at the latest schema version); creates `<path>-keys` if it finds
  /// keys without it. kInternal naming the problem.
  static core::Result<std::unique_ptr<SqliteApiKeyStore>> Open(
      const std::string& path, std::chrono::milliseconds foreign_check = std::chrono::seconds(1));
  ~SqliteApiKeyStore() override;

  /// Marks `<path>-keys` first; kInternal (and no key written) if it cannot.
  core::Result<void> Insert(const ApiKeyRecord& record) override;
  core::Result<std::optional<ApiKeyRecord>> Find(std::string_view key_id) override;
  core::Result<std::vector<ApiKeyRecord>> List() override;
  core::Result<bool> Revoke(std::string_view key_id, int64_t now_ms) override;
  core::Result<bool> Any() override;

 private:
  SqliteApiKeyStore(std::unique_ptr<Connection> db, const std::string& path,
                    std::chrono::milliseconds foreign_check);
  core::Result<bool> AnyRow();  // under mu_; notes keys seen
  core::Result<void> Mark();    // writes "1" at the start of marker_ (made if absent), if not there
  static constexpr int kNoFile = -1;  // FileByte: marker_ does not exist
  static constexpr int kUnread = -2;  // FileByte: empty, or it cannot be read
  int FileByte() const;               // marker_'s first byte, read from the file (0-255)
  void MapFlag();               // maps marker_'s first byte into flag_ (made 0 if absent)
  int OpenMarker(int flags) const;  // opens marker_, made if absent; -1 and errno if not
  bool Marked() const;          // marker_ says keys may exist

  std::mutex mu_;
  std::unique_ptr<Connection> db_;
  const std::string marker_;             // "<path>-keys", above
  std::unique_ptr<ReaderPool> lookups_;  // Find's connections
  const std::chrono::milliseconds foreign_check_;
  std::atomic<bool> keys_seen_{false};
  std::atomic<int64_t> next_read_ms_{0};  // steady clock: Any()'s next read without the file
  void* flag_ = nullptr;                  // marker_'s first byte, mapped; null: read per call
};

}  // namespace a2ad::storage::sqlite
