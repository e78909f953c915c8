// The push signing keys in a database that replicas share (issue 30; storage/server_keys.hpp,
// push/signer.hpp): KeyStores of several "servers" (each with a PostgresStore of its own on one
// database) sign with one key and publish one JWKS, see each other's rotations within their
// refresh interval, agree on one first key when they start at once, and never leave two
// active keys however many rotate at once.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <boost/json.hpp>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/push/signer.hpp"
#include "a2ad/storage/postgres/postgres_store.hpp"
#include "pg_cluster.hpp"
#include "wait_for.hpp"

namespace a2ad::push {
namespace {
namespace json = boost::json;

constexpr int64_t kLifetimeMs = 300000;


// A server's view of the database: its own store and KeyStore on the ring "push".
struct Replica {
  std::unique_ptr<storage::PostgresStore> store;
  std::unique_ptr<KeyStore> keys;
  ~Replica() {
    if (keys) keys->Stop();
    if (store) store->Close();
  }
};

std::unique_ptr<Replica> Open(const std::string& url, const core::Clock& clock,
                              int64_t refresh_ms = 0) {
  auto r = std::make_unique<Replica>();
  auto store = storage::PostgresStore::Open(url);
  EXPECT_TRUE(store) << store.error().message;
  if (!store) return nullptr;
  r->store = std::move(store).value();
  KeyStoreOptions o;
  o.token_lifetime_ms = kLifetimeMs;
  o.refresh_ms = refresh_ms;
  auto keys = KeyStore::Open(r->store->Keys().Ring("push"), clock, o);
  EXPECT_TRUE(keys) << keys.error().message;
  if (!keys) return nullptr;
  r->keys = std::move(keys).value();
  return r;
}

json::object Claims(const core::Clock& clock, const std::string& jti) {
  const int64_t now = clock.NowMs() / 1000;
  return json::object{{"iss", "https://a2ad.example"},
                      {"aud", "https://hooks.example/push"},
                      {"iat", now},
                      {"exp", now + 300},
                      {"jti", jti}};
}

std::string ActiveKid(KeyStore& keys) {
  for (const KeyInfo& k : keys.keys())
    if (k.retired_at_ms == 0) return k.kid;
  return "";
}

TEST(SharedPushKeys, TwoServersOnOneDatabaseSignWithOneKeyAndPublishOneJwks) {
  const std::string url = test::FreshPgDatabase();
  core::SystemClock clock;
  auto a = Open(url, clock, 100);
  auto b = Open(url, clock, 100);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->keys->Jwks(), b->keys->Jwks());
  ASSERT_EQ(a->keys->keys().size(), 1u);
  EXPECT_EQ(ActiveKid(*a->keys), ActiveKid(*b->keys));
  // A token one signs verifies with the JWKS the other publishes.
  auto token = a->keys->Sign(Claims(clock, "jti-1"));
  ASSERT_TRUE(token) << token.error().message;
  VerifyOptions vo;
  vo.issuer = "https://a2ad.example";
  JwtVerifier verifier(vo, clock);
  ASSERT_TRUE(verifier.SetJwks(b->keys->Jwks()));
  EXPECT_TRUE(verifier.Verify(*token));
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM server_ring_keys WHERE ring = 'push'"), "1");
}

TEST(SharedPushKeys, ARotationByAnotherProcessIsSeenWithinTheRefreshInterval) {
  const std::string url = test::FreshPgDatabase();
  core::SystemClock clock;
  auto server = Open(url, clock, 100);
  ASSERT_TRUE(server);
  const std::string old_kid = ActiveKid(*server->keys);
  std::string new_kid;
  {
    auto cli = Open(url, clock);  // `a2ad keys rotate --database-url URL`
    ASSERT_TRUE(cli);
    auto kid = cli->keys->Rotate();
    ASSERT_TRUE(kid) << kid.error().message;
    new_kid = *kid;
  }
  ASSERT_NE(new_kid, old_kid);
  // Within the interval, the server signs with the new key and still publishes the old one.
  ASSERT_TRUE(testing::WaitFor([&] { return ActiveKid(*server->keys) == new_kid; }));
  auto token = server->keys->Sign(Claims(clock, "jti-2"));
  ASSERT_TRUE(token);
  EXPECT_EQ(JwtKid(*token), new_kid);
  const std::string jwks = server->keys->Jwks();
  EXPECT_NE(jwks.find(old_kid), std::string::npos) << jwks;
  EXPECT_NE(jwks.find(new_kid), std::string::npos) << jwks;
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM server_ring_keys WHERE retired_at_ms = 0"), "1");
}

TEST(SharedPushKeys, ServersStartingAtOnceOnAnEmptyDatabaseMakeOneKey) {
  const std::string url = test::FreshPgDatabase();
  ASSERT_TRUE(storage::PostgresStore::Migrate(url));  // the race is about the keys, not the schema
  core::SystemClock clock;
  constexpr int kServers = 8;
  std::vector<std::future<std::unique_ptr<Replica>>> starting;
  for (int i = 0; i < kServers; ++i)
    starting.push_back(std::async(std::launch::async, [&] { return Open(url, clock); }));
  std::vector<std::unique_ptr<Replica>> servers;
  std::set<std::string> kids;
  for (auto& s : starting) {
    servers.push_back(s.get());
    ASSERT_TRUE(servers.back());
    kids.insert(ActiveKid(*servers.back()->keys));
  }
  EXPECT_EQ(kids.size(), 1u);
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM server_ring_keys"), "1");
}

TEST(SharedPushKeys, RotationsAtOnceLeaveExactlyOneActiveKey) {
  const std::string url = test::FreshPgDatabase();
  core::SystemClock clock;
  constexpr int kRotators = 6;
  std::vector<std::unique_ptr<Replica>> replicas;
  for (int i = 0; i < kRotators; ++i) {
    replicas.push_back(Open(url, clock));
    ASSERT_TRUE(replicas.back());
  }
  std::vector<std::future<core::Result<std::string>>> rotations;
  for (auto& r : replicas)
    rotations.push_back(
        std::async(std::launch::async, [k = r->keys.get()] { return k->Rotate(); }));
  std::set<std::string> made;
  for (auto& f : rotations) {
    auto kid = f.get();
    ASSERT_TRUE(kid) << kid.error().message;
    made.insert(*kid);
  }
  EXPECT_EQ(made.size(), static_cast<size_t>(kRotators));
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM server_ring_keys WHERE retired_at_ms = 0"), "1");
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM server_ring_keys"), std::to_string(kRotators + 1));
  // Every replica ends with the same active key: the last rotation's.
  const std::string active = test::PgQuery(url, "SELECT kid FROM server_ring_keys WHERE retired_at_ms = 0");
  for (auto& r : replicas)  // refresh_ms 0: each call checks the ring's version
    EXPECT_EQ(ActiveKid(*r->keys), active);
}

TEST(SharedPushKeys, RetiredKeysLeaveTheJwksAndTheDatabaseOnceTheirTokensHaveExpired) {
  const std::string url = test::FreshPgDatabase();
  core::ManualClock clock;
  auto server = Open(url, clock, 50);
  ASSERT_TRUE(server);
  const std::string old_kid = ActiveKid(*server->keys);
  ASSERT_TRUE(server->keys->Rotate());
  EXPECT_NE(server->keys->Jwks().find(old_kid), std::string::npos);
  clock.Advance(kLifetimeMs + 2 * 60000);
  EXPECT_EQ(server->keys->Jwks().find(old_kid), std::string::npos);  // at once, from memory
  // The refreshing thread deletes it from the database (and every replica reloads).
  EXPECT_TRUE(testing::WaitFor([&] {
    return test::PgQuery(url, "SELECT count(*) FROM server_ring_keys WHERE kid = '" + old_kid + "'") == "0";
  }));
  EXPECT_EQ(server->keys->keys().size(), 1u);
}

TEST(SharedPushKeys, NamedSecretsAreMadeOnceAndAMakerErrorIsReturned) {
  const std::string url = test::FreshPgDatabase();
  auto a = storage::PostgresStore::Open(url);
  auto b = storage::PostgresStore::Open(url);
  ASSERT_TRUE(a && b);
  auto failed = (*a)->Keys().Secret("s", []() -> core::Result<std::string> {
    return core::Error(core::ErrorCode::kInternal, "no randomness");
  });
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message, "no randomness");
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM server_keys"), "0");
  auto one =
      (*a)->Keys().Secret("s", []() -> core::Result<std::string> { return std::string("first"); });
  auto two =
      (*b)->Keys().Secret("s", []() -> core::Result<std::string> { return std::string("second"); });
  ASSERT_TRUE(one && two);
  EXPECT_EQ(*one, "first");
  EXPECT_EQ(*two, "first");
  (*a)->Close();
  (*b)->Close();
}

}  // namespace
}  // namespace a2ad::push
