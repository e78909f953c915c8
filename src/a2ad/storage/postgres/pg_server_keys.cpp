// PostgresStore's server keys (storage/server_keys.hpp): named secrets in server_keys, key rings
// in server_key_rings and server_ring_keys (pg_schema.hpp, version 2). Every call runs on a
// pooled connection: a statement, or a transaction of a few.
//
// A ring's change locks its server_key_rings row (SELECT ... FOR UPDATE, after making the row
// if the ring has none: INSERT ... ON CONFLICT DO NOTHING waits for another transaction
// inserting the same row, then finds it), so changes of one ring by any number of servers run
// one after the other, each seeing the one before; each bumps the row's version. A ring is read
// in one statement (the version and the keys in one snapshot).
#include <chrono>
#include <string>
#include <utility>

#include "a2ad/storage/postgres/pg_store_impl.hpp"

namespace a2ad::storage {
namespace {

using pg::Params;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Runs `body` between BEGIN and COMMIT on `c`; rolls back when it (or COMMIT) fails.
template <class T, class F>
core::Result<T> InTransaction(pg::Connection& c, std::string_view what, F&& body) {
  if (auto begun = c.Run("BEGIN", what); !begun) return std::move(begun).error();
  core::Result<T> r = body();
  if (r) {
    if (auto done = c.Run("COMMIT", what); !done) r = std::move(done).error();
  }
  if (!r && !c.Broken()) (void)c.Run("ROLLBACK", what);
  return r;
}

class PgKeyRing final : public KeyRing {
 public:
  PgKeyRing(PostgresStore::Impl& impl, std::string ring) : impl_(impl), ring_(std::move(ring)) {}

  std::string Where() const override { return "the database's key ring '" + ring_ + "'"; }

  core::Result<int64_t> Version() override {
    static const std::string sql = "SELECT version FROM server_key_rings WHERE ring = $1";
    return impl_.WithReader([&](pg::Connection& c) -> core::Result<int64_t> {
      auto rows = c.Exec(sql, Params().Add(ring_), "read a key ring's version");
      if (!rows) return std::move(rows).error();
      return rows->size() == 0 ? int64_t{0} : rows->Int(0, 0);
    });
  }

  core::Result<RingSnapshot> Load() override {
    static const std::string sql =
        "SELECT r.version, k.kid, k.private_key, k.created_at_ms, k.retired_at_ms"
        " FROM server_key_rings r LEFT JOIN server_ring_keys k ON k.ring = r.ring"
        " WHERE r.ring = $1 ORDER BY k.created_at_ms, k.kid";
    return impl_.WithReader([&](pg::Connection& c) -> core::Result<RingSnapshot> {
      auto rows = c.Exec(sql, Params().Add(ring_), "read a key ring");
      if (!rows) return std::move(rows).error();
      RingSnapshot out;
      for (int i = 0; i < rows->size(); ++i) {
        out.version = rows->Int(i, 0);
        if (rows->IsNull(i, 1)) continue;  // the ring without keys
        RingKey k;
        k.kid = std::string(rows->Text(i, 1));
        k.private_pem = std::string(rows->Text(i, 2));
        k.created_at_ms = rows->Int(i, 3);
        k.retired_at_ms = rows->Int(i, 4);
        out.keys.push_back(std::move(k));
      }
      return out;
    });
  }

  core::Result<bool> Rotate(const RingKey& fresh, bool only_if_none_active,
                            int64_t purge_before_ms) override {
    static const std::string make_row =
        "INSERT INTO server_key_rings(ring, version) VALUES ($1, 0) ON CONFLICT (ring) DO NOTHING";
    static const std::string lock =
        "SELECT version FROM server_key_rings WHERE ring = $1 FOR UPDATE";
    static const std::string active =
        "SELECT count(*) FROM server_ring_keys WHERE ring = $1 AND retired_at_ms = 0";
    static const std::string retire =
        "UPDATE server_ring_keys SET retired_at_ms = $2 WHERE ring = $1 AND retired_at_ms = 0";
    static const std::string insert =
        "INSERT INTO server_ring_keys(ring, kid, private_key, created_at_ms, retired_at_ms)"
        " VALUES ($1, $2, $3, $4, 0)";
    static const std::string purge =
        "DELETE FROM server_ring_keys WHERE ring = $1 AND retired_at_ms <> 0 AND retired_at_ms < "
        "$2";
    static const std::string bump =
        "UPDATE server_key_rings SET version = version + 1 WHERE ring = $1";
    return impl_.WithReader([&](pg::Connection& c) -> core::Result<bool> {
      return InTransaction<bool>(c, "rotate a key ring", [&]() -> core::Result<bool> {
        if (auto r = c.Exec(make_row, Params().Add(ring_), "make a key ring"); !r)
          return std::move(r).error();
        if (auto r = c.Exec(lock, Params().Add(ring_), "lock a key ring"); !r)
          return std::move(r).error();
        if (only_if_none_active) {
          auto n = c.Exec(active, Params().Add(ring_), "count a key ring's active keys");
          if (!n) return std::move(n).error();
          if (n->Int(0, 0) > 0) return false;
        }
        if (auto r = c.Exec(retire, Params().Add(ring_).Add(fresh.created_at_ms),
                            "retire a key ring's active key");
            !r)
          return std::move(r).error();
        if (auto r = c.Exec(
                insert,
                Params().Add(ring_).Add(fresh.kid).Add(fresh.private_pem).Add(fresh.created_at_ms),
                "store a new key");
            !r)
          return std::move(r).error();
        if (auto r = c.Exec(purge, Params().Add(ring_).Add(purge_before_ms), "delete old keys"); !r)
          return std::move(r).error();
        if (auto r = c.Exec(bump, Params().Add(ring_), "bump a key ring's version"); !r)
          return std::move(r).error();
        return true;
      });
    });
  }

  core::Result<size_t> Purge(int64_t before_ms) override {
    // One statement: the keys go and the version moves in one snapshot.
    static const std::string sql =
        "WITH gone AS (DELETE FROM server_ring_keys WHERE ring = $1 AND retired_at_ms <> 0"
        " AND retired_at_ms < $2 RETURNING kid),"
        " bumped AS (UPDATE server_key_rings SET version = version + 1"
        " WHERE ring = $1 AND EXISTS (SELECT 1 FROM gone) RETURNING 1)"
        " SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM bumped)";
    return impl_.WithReader([&](pg::Connection& c) -> core::Result<size_t> {
      auto rows = c.Exec(sql, Params().Add(ring_).Add(before_ms), "delete old keys");
      if (!rows) return std::move(rows).error();
      return static_cast<size_t>(rows->Int(0, 0));
    });
  }

 private:
  PostgresStore::Impl& impl_;
  const std::string ring_;
};

}  // namespace

core::Result<std::string> PostgresStore::Impl::Keys::Secret(
    const std::string& name, const std::function<core::Result<std::string>()>& make) {
  static const std::string insert =
      "INSERT INTO server_keys(name, value, created_at_ms) VALUES ($1, $2, $3)"
      " ON CONFLICT (name) DO NOTHING";
  static const std::string select = "SELECT value FROM server_keys WHERE name = $1";
  return impl_.WithReader([&](pg::Connection& c) -> core::Result<std::string> {
    auto got = c.Exec(select, Params().Add(name), "read a server key");
    if (!got) return std::move(got).error();
    if (got->size() == 1) return std::string(got->Text(0, 0));
    auto made = make();
    if (!made) return std::move(made).error();
    // Whoever inserts first wins; everyone reads the winner's.
    auto put = c.Exec(insert, Params().Add(name).Add(*made).Add(NowMs()), "store a server key");
    if (!put) return std::move(put).error();
    got = c.Exec(select, Params().Add(name), "read a server key");
    if (!got) return std::move(got).error();
    if (got->size() != 1)
      return core::Error(core::ErrorCode::kInternal, "server key " + name + " vanished");
    return std::string(got->Text(0, 0));
  });
}

std::unique_ptr<KeyRing> PostgresStore::Impl::Keys::Ring(const std::string& name) {
  return std::make_unique<PgKeyRing>(impl_, name);
}

}  // namespace a2ad::storage
