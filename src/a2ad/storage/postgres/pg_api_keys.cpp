// PostgresStore's API keys (storage/api_key_store.hpp): the api_keys table, one statement per
// call on a pooled connection.
#include <string>
#include <utility>

#include "a2ad/storage/postgres/pg_store_impl.hpp"

namespace a2ad::storage {
namespace {

using pg::Params;
using pg::Rows;

const std::string kColumns =
    "SELECT key_id, secret_sha256, tenant, scopes, name, created_at_ms, expires_at_ms,"
    " revoked_at_ms FROM api_keys";

ApiKeyRecord ReadKey(const Rows& r, int i) {
  ApiKeyRecord k;
  k.key_id = std::string(r.Text(i, 0));
  k.secret_sha256 = std::string(r.Text(i, 1));
  k.tenant = std::string(r.Text(i, 2));
  std::string_view scopes = r.Text(i, 3);
  while (!scopes.empty()) {
    const size_t comma = std::min(scopes.find(','), scopes.size());
    if (comma > 0) k.scopes.emplace_back(scopes.substr(0, comma));
    scopes.remove_prefix(std::min(comma + 1, scopes.size()));
  }
  k.name = std::string(r.Text(i, 4));
  k.created_at_ms = r.Int(i, 5);
  k.expires_at_ms = r.Int(i, 6);
  k.revoked_at_ms = r.Int(i, 7);
  return k;
}

}  // namespace

core::Result<void> PostgresStore::Impl::ApiKeys::Insert(const ApiKeyRecord& r) {
  static const std::string sql =
      "INSERT INTO api_keys(key_id, secret_sha256, tenant, scopes, name, created_at_ms,"
      " expires_at_ms, revoked_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
  std::string scopes;
  for (const auto& s : r.scopes) scopes += (scopes.empty() ? "" : ",") + s;
  return impl_.WithReader([&](pg::Connection& c) -> core::Result<void> {
    auto put = c.Exec(sql,
                      Params().Add(r.key_id).Add(r.secret_sha256).Add(r.tenant).Add(scopes)
                          .Add(r.name).Add(r.created_at_ms).Add(r.expires_at_ms)
                          .Add(r.revoked_at_ms),
                      "insert an api key");
    if (put) return core::Ok{};
    if (put.error().code == core::ErrorCode::kConflict)
      return core::Error(core::ErrorCode::kConflict, "api key id already taken");
    return std::move(put).error();
  });
}

core::Result<std::optional<ApiKeyRecord>> PostgresStore::Impl::ApiKeys::Find(
    std::string_view key_id) {
  static const std::string sql = kColumns + " WHERE key_id = $1";
  return impl_.WithReader([&](pg::Connection& c) -> core::Result<std::optional<ApiKeyRecord>> {
    auto rows = c.Exec(sql, Params().Add(key_id), "read an api key");
    if (!rows) return std::move(rows).error();
    if (rows->size() == 0) return std::optional<ApiKeyRecord>{};
    return std::optional<ApiKeyRecord>(ReadKey(*rows, 0));
  });
}

core::Result<std::vector<ApiKeyRecord>> PostgresStore::Impl::ApiKeys::List() {
  static const std::string sql = kColumns + " ORDER BY created_at_ms, key_id";
  return impl_.WithReader([&](pg::Connection& c) -> core::Result<std::vector<ApiKeyRecord>> {
    auto rows = c.Exec(sql, {}, "list api keys");
    if (!rows) return std::move(rows).error();
    std::vector<ApiKeyRecord> out;
    for (int i = 0; i < rows->size(); ++i) out.push_back(ReadKey(*rows, i));
    return out;
  });
}

core::Result<bool> PostgresStore::Impl::ApiKeys::Revoke(std::string_view key_id, int64_t now_ms) {
  // One statement: the key's row, revoked now unless it was before.
  static const std::string sql =
      "UPDATE api_keys SET revoked_at_ms = CASE WHEN revoked_at_ms = 0 THEN $2"
      " ELSE revoked_at_ms END WHERE key_id = $1";
  return impl_.WithReader([&](pg::Connection& c) -> core::Result<bool> {
    auto done = c.Exec(sql, Params().Add(key_id).Add(now_ms), "revoke an api key");
    if (!done) return std::move(done).error();
    return done->Affected() > 0;
  });
}

core::Result<bool> PostgresStore::Impl::ApiKeys::Any() {
  return impl_.WithReader([&](pg::Connection& c) -> core::Result<bool> {
    auto rows = c.Exec("SELECT EXISTS (SELECT 1 FROM api_keys)", {}, "count api keys");
    if (!rows) return std::move(rows).error();
    return rows->Text(0, 0) == "t";
  });
}

}  // namespace a2ad::storage
