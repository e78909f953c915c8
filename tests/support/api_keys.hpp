#pragma once
// API keys for tests: a new key of `tenant` with `scopes` stored in `store`, returned as the
// text a client sends (`Bearer <it>`). Header-only: the tests that use it link storage.
//
// Thread safety: as the store's Insert.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "a2ad/core/api_key.hpp"
#include "a2ad/storage/api_key_store.hpp"

namespace a2ad::testing {

inline std::string AddApiKey(storage::ApiKeyStore& store, const std::string& tenant,
                             std::vector<std::string> scopes, int64_t expires_at_ms = 0) {
  const core::ApiKeyParts k = core::NewApiKey();
  storage::ApiKeyRecord r;
  r.key_id = k.key_id;
  r.secret_sha256 = core::HashApiKeySecret(k.secret);
  r.tenant = tenant;
  r.scopes = std::move(scopes);
  r.expires_at_ms = expires_at_ms;
  EXPECT_TRUE(store.Insert(r));
  return core::FormatApiKey(k);
}

}  // namespace a2ad::testing
