#pragma once
// ApiKeyStore over the api_keys table (schema version 7) of a2ad.db: its own connection,
// used under a mutex (a lookup is one primary-key read, well under the cost of a request).
// Open requires the schema to be current (the task store's Open or `a2ad migrate` made it
// so). Reads see keys created and revoked by other processes (`a2ad keys` while the server
// runs) at their next call.
//
// Thread safety: every method may be called from any thread at once.
#include <memory>
#include <mutex>
#include <string>

#include "a2ad/storage/api_key_store.hpp"

namespace a2ad::storage::sqlite {

class Connection;

class SqliteApiKeyStore final : public ApiKeyStore {
 public:
  /// Opens `path` (an a2ad.db at the latest schema version). kInternal naming the problem.
  static core::Result<std::unique_ptr<SqliteApiKeyStore>> Open(const std::string& path);
  ~SqliteApiKeyStore() override;

  core::Result<void> Insert(const ApiKeyRecord& record) override;
  core::Result<std::optional<ApiKeyRecord>> Find(std::string_view key_id) override;
  core::Result<std::vector<ApiKeyRecord>> List() override;
  core::Result<bool> Revoke(std::string_view key_id, int64_t now_ms) override;
  core::Result<bool> Any() override;

 private:
  explicit SqliteApiKeyStore(std::unique_ptr<Connection> db);
  std::mutex mu_;
  std::unique_ptr<Connection> db_;
};

}  // namespace a2ad::storage::sqlite
