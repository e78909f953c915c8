#pragma once
// Where API keys are kept (issue 14; core/api_key.hpp says what a key is). A record holds the
// SHA-256 of the key's secret, never the secret. Implementations: MemoryApiKeyStore (below,
// for tests) and sqlite::SqliteApiKeyStore (the api_keys table of the data directory's
// a2ad.db, schema version 7); only app/ names the SQLite one.
//
// Thread safety: every method may be called from any thread at once.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::storage {

struct ApiKeyRecord {
  std::string key_id;         // the id in the key's text (16 hex digits); unique
  std::string secret_sha256;  // lowercase hex SHA-256 of the secret
  std::string tenant;         // every call with the key is this tenant's
  std::vector<std::string> scopes;
  std::string name;  // optional label; "" for none
  int64_t created_at_ms = 0;
  int64_t expires_at_ms = 0;  // 0: never
  int64_t revoked_at_ms = 0;  // 0: not revoked
};

class ApiKeyStore {
 public:
  virtual ~ApiKeyStore() = default;
  /// Stores a new key. kConflict when its key id is taken.
  virtual core::Result<void> Insert(const ApiKeyRecord& record) = 0;
  /// The key with this id, revoked and expired ones included; nullopt when none.
  virtual core::Result<std::optional<ApiKeyRecord>> Find(std::string_view key_id) = 0;
  /// Every key, oldest first.
  virtual core::Result<std::vector<ApiKeyRecord>> List() = 0;
  /// Marks the key revoked at `now_ms` (a key revoked before keeps its first time). false
  /// when there is no such key.
  virtual core::Result<bool> Revoke(std::string_view key_id, int64_t now_ms) = 0;
  /// Whether any key was ever created (revoked ones count: their server stays authenticated).
  virtual core::Result<bool> Any() = 0;
};

/// Keys in memory (tests).
class MemoryApiKeyStore final : public ApiKeyStore {
 public:
  core::Result<void> Insert(const ApiKeyRecord& record) override {
    std::lock_guard lock(mu_);
    if (!keys_.emplace(record.key_id, record).second)
      return core::Error(core::ErrorCode::kConflict, "api key id already taken");
    order_.push_back(record.key_id);
    return core::Ok{};
  }
  core::Result<std::optional<ApiKeyRecord>> Find(std::string_view key_id) override {
    std::lock_guard lock(mu_);
    auto it = keys_.find(std::string(key_id));
    if (it == keys_.end()) return std::optional<ApiKeyRecord>();
    return std::optional<ApiKeyRecord>(it->second);
  }
  core::Result<std::vector<ApiKeyRecord>> List() override {
    std::lock_guard lock(mu_);
    std::vector<ApiKeyRecord> out;
    for (const auto& id : order_) out.push_back(keys_.at(id));
    return out;
  }
  core::Result<bool> Revoke(std::string_view key_id, int64_t now_ms) override {
    std::lock_guard lock(mu_);
    auto it = keys_.find(std::string(key_id));
    if (it == keys_.end()) return false;
    if (it->second.revoked_at_ms == 0) it->second.revoked_at_ms = now_ms;
    return true;
  }
  core::Result<bool> Any() override {
    std::lock_guard lock(mu_);
    return !keys_.empty();
  }

 private:
  std::mutex mu_;
  std::map<std::string, ApiKeyRecord> keys_;
  std::vector<std::string> order_;
};

}  // namespace a2ad::storage
