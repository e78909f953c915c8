// PostgresStore beyond the store contracts (which run on it in task_store_contract_test and
// friends): faults (a statement timeout, connections cut by the server, a server that cannot be
// reached), what error text says, concurrent migrations and the shared server keys.
#include "a2ad/storage/postgres/postgres_store.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "a2ad/storage/postgres/pg_connection.hpp"
#include "pg_cluster.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using storage_test::CommitSync;
using storage_test::Create;

// A session of our own on `url`, for what the test does to the store's database.
class Admin {
 public:
  explicit Admin(const std::string& url) : c_(PQconnectdb(url.c_str())) {
    EXPECT_EQ(PQstatus(c_), CONNECTION_OK) << PQerrorMessage(c_);
  }
  ~Admin() { PQfinish(c_); }
  std::string Run(const std::string& sql) {
    PGresult* r = PQexec(c_, sql.c_str());
    const auto st = PQresultStatus(r);
    EXPECT_TRUE(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(c_);
    std::string first = PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "";
    PQclear(r);
    return first;
  }
  // Ends every other session on the store's database (what a server restart or a proxy that
  // drops idle connections does to them).
  void CutStoreConnections() {
    Run("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()");
  }

 private:
  PGconn* c_;
};

std::unique_ptr<PostgresStore> MustOpen(const std::string& url, PostgresOptions opts = {}) {
  auto s = PostgresStore::Open(url, std::move(opts));
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(s).value() : nullptr;
}

TEST(PostgresStore, ConnectionsCutByTheServerAreMadeAgainWithoutFailingAnything) {
  const std::string url = test::FreshPgDatabase();
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(CommitSync(*store, Create("t-1")).ok());
  ASSERT_TRUE(store->Get("t-1").ok());
  Admin admin(url);
  admin.CutStoreConnections();
  // The writer's and the readers' connections are gone; the next calls notice and reconnect.
  EXPECT_TRUE(CommitSync(*store, Create("t-2")).ok());
  auto got = store->Get("t-1");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(got->has_value());
  EXPECT_EQ(admin.Run("SELECT count(*) FROM tasks"), "2");
  store->Close();
}

TEST(PostgresStore, AnUnreachableDatabaseFailsCallsAsUnavailableAndTheyWorkOnceItIsBack) {
  const std::string url = test::FreshPgDatabase();
  auto store = MustOpen(url);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(CommitSync(*store, Create("before")).ok());
  const std::string db = Admin(url).Run("SELECT current_database()");
  // No new connection is let in, and the open ones are cut: the database is away. (From a
  // session on another database of the cluster.)
  Admin elsewhere(test::FreshPgDatabase());
  elsewhere.Run("ALTER DATABASE \"" + db + "\" ALLOW_CONNECTIONS false");
  elsewhere.Run("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" +
                db + "'");
  auto refused = CommitSync(*store, Create("during"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, core::ErrorCode::kUnavailable) << refused.error().message;
  auto read = store->Get("before");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, core::ErrorCode::kUnavailable);
  EXPECT_EQ(read.error().Detail("database"), "postgresql");
  {
    std::promise<core::Result<void>> p;
    store->CheckWritable([&p](core::Result<void> r) { p.set_value(std::move(r)); });
    EXPECT_FALSE(p.get_future().get().ok());
  }
  elsewhere.Run("ALTER DATABASE \"" + db + "\" ALLOW_CONNECTIONS true");
  EXPECT_TRUE(CommitSync(*store, Create("after")).ok());
  auto again = store->Get("before");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->has_value());
  EXPECT_FALSE(store->Get("during")->has_value());  // refused, so never written
  std::promise<core::Result<void>> p;
  store->CheckWritable([&p](core::Result<void> r) { p.set_value(std::move(r)); });
  EXPECT_TRUE(p.get_future().get().ok());
  store->Close();
}

TEST(PostgresStore, AStatementPastItsTimeoutIsCancelledAndTheStoreGoesOn) {
  const std::string url = test::FreshPgDatabase();
  PostgresOptions opts;
  opts.statement_timeout_ms = 200;
  auto store = MustOpen(url, opts);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(CommitSync(*store, Create("t-1")).ok());
  Admin admin(url);
  admin.Run("BEGIN");
  admin.Run("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE");  // every statement on tasks waits
  auto timed_out = CommitSync(*store, Create("t-2"));
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.error().code, core::ErrorCode::kUnavailable);
  EXPECT_EQ(timed_out.error().Detail("sqlstate"), "57014") << timed_out.error().message;
  auto read = store->Get("t-1");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().Detail("sqlstate"), "57014");
  admin.Run("COMMIT");
  EXPECT_TRUE(CommitSync(*store, Create("t-2")).ok());
  EXPECT_TRUE(store->Get("t-1").ok());
  store->Close();
}

TEST(PostgresStore, AServerThatCannotBeReachedIsUnavailableAndNoCredentialIsSaid) {
  // A port nothing listens on (bound, then closed), a password in the URL.
  const std::string url = "postgresql://a2ad:hunter2-secret@127.0.0.1:9/db?connect_timeout=2";
  auto s = PostgresStore::Open(url);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, core::ErrorCode::kUnavailable);
  const std::string& m = s.error().message;
  EXPECT_NE(m.find("cannot connect to PostgreSQL"), std::string::npos) << m;
  EXPECT_EQ(m.find("hunter2"), std::string::npos) << m;
  EXPECT_EQ(m.find("127.0.0.1"), std::string::npos) << m;
  auto bad = PostgresStore::Open("postgresql://a2ad@127.0.0.1:5432/db?nonsense_option=1");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, core::ErrorCode::kInvalidParams) << bad.error().message;
}

// A server that accepts the TCP connection and never answers (a hung host, a proxy with
// nothing behind it): libpq would wait for its first reply forever. Connecting gives up after
// the URL's connect_timeout when it names one, else after the default.
TEST(PostgresStore, AServerThatNeverAnswersIsGivenUpOnAfterTheConnectTimeout) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string base =
      "postgresql://a2ad@127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/db";
  auto timed = [](const std::string& url) {
    const auto start = std::chrono::steady_clock::now();
    auto opened = std::async(std::launch::async, [url] { return pg::Connection::Open(url, 0); });
    // Bounded: without a timeout the connection would wait until the listener closes below.
    const bool done = opened.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
    return std::make_tuple(
        done, std::move(opened),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  {
    auto [done, opened, seconds] = timed(base + "?connect_timeout=1");
    ASSERT_TRUE(done);
    auto r = opened.get();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, core::ErrorCode::kUnavailable);
    EXPECT_LT(seconds, pg::Connection::kDefaultConnectTimeoutS - 1);  // the URL's value won
  }
  auto [done, opened, seconds] = timed(base);
  ::close(listener);  // ends a connection still waiting (the test then fails on `done`)
  ASSERT_TRUE(done) << "no connect timeout: still waiting after 20 s";
  auto r = opened.get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, core::ErrorCode::kUnavailable);
  EXPECT_GE(seconds, pg::Connection::kDefaultConnectTimeoutS - 1);
}

TEST(PostgresStore, LibpqMessagesAreCutToTheirReason) {
  EXPECT_EQ(pg::Redact("connection to server at \"db.internal\" (10.1.2.3), port 5432 failed: "
                       "Connection refused\n\tIs the server running on that host?\n"),
            "Connection refused");
  EXPECT_EQ(pg::Redact("connection to server at \"h\" (10.0.0.1), port 5432 failed: FATAL:  "
                       "password authentication failed for user \"bob\"\n"),
            "FATAL:  password authentication failed for user \"…\"");
  EXPECT_EQ(pg::Redact(""), "no reason given");
}

TEST(PostgresStore, TextPostgreSqlCannotStoreIsRefusedAsInvalid) {
  auto store = MustOpen(test::FreshPgDatabase());
  ASSERT_NE(store, nullptr);
  auto refused = CommitSync(*store, Create(std::string("nul\0id", 6)));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, core::ErrorCode::kInvalidParams) << refused.error().message;
  EXPECT_TRUE(CommitSync(*store, Create("fine")).ok());  // the batch's other commits go on
  store->Close();
}

TEST(PostgresStore, ReplicasStartingAtOnceMigrateOnceAndShareTheServerKeys) {
  const std::string url = test::FreshPgDatabase();
  std::vector<std::future<core::Result<int>>> migrations;
  for (int i = 0; i < 4; ++i)
    migrations.push_back(std::async(std::launch::async, [&] { return PostgresStore::Migrate(url); }));
  for (auto& m : migrations) {
    auto v = m.get();
    ASSERT_TRUE(v) << v.error().message;
    EXPECT_EQ(*v, PostgresStore::LatestSchemaVersion());
  }
  Admin admin(url);
  EXPECT_EQ(admin.Run("SELECT count(*) FROM a2ad_schema"),
            std::to_string(PostgresStore::LatestSchemaVersion()));
  auto a = MustOpen(url);
  auto b = MustOpen(url);
  ASSERT_TRUE(a && b);
  std::atomic<int> made{0};
  auto make = [&] { return "key-" + std::to_string(++made); };
  auto from_a = a->ServerKey("push-jwt", make);
  auto from_b = b->ServerKey("push-jwt", make);
  ASSERT_TRUE(from_a && from_b);
  EXPECT_EQ(*from_a, "key-1");
  EXPECT_EQ(*from_b, "key-1");  // the first one made, read by the other
  a->Close();
  b->Close();
}

// Events go in INSERTs of up to 500 rows; those of up to 4 rows are prepared statements, the
// others are sent once. Every size must land, in order, in the pipelined pass and the careful
// one (a refused commit in the batch sends it the careful way).
TEST(PostgresStore, CommitsOfEveryEventCountLandWholeAndInOrder) {
  auto store = MustOpen(test::FreshPgDatabase());
  ASSERT_NE(store, nullptr);
  for (int n : {1, 4, 5, 500, 1203}) {
    const std::string id = "t-" + std::to_string(n);
    ASSERT_TRUE(CommitSync(*store, Create(id, "ctx-1", protocol::TaskState::kSubmitted, 1000, n)).ok()) << n;
    auto events = store->ReadEvents(id, -1, 5000);
    ASSERT_TRUE(events.ok()) << events.error().message;
    ASSERT_EQ(events->size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) EXPECT_EQ((*events)[i].sequence, i);
  }
  // A refused commit beside another (in one batch when they meet in the queue: then the
  // careful pass) fails alone.
  std::promise<core::Result<void>> refused, fine;
  store->Commit(Create("t-1", "ctx-1", protocol::TaskState::kSubmitted, 1000, 3), [&](core::Result<void> r) { refused.set_value(r); });
  store->Commit(Create("t-new", "ctx-1", protocol::TaskState::kSubmitted, 1000, 600), [&](core::Result<void> r) { fine.set_value(r); });
  EXPECT_EQ(refused.get_future().get().error().code, core::ErrorCode::kConflict);
  EXPECT_TRUE(fine.get_future().get().ok());
  EXPECT_EQ(store->ReadEvents("t-new", -1, 5000)->size(), 600u);
  store->Close();
}

// A commit's callback is the caller's code: one that throws is logged (storage/writer_batch.hpp),
// and the writer goes on with the next commits instead of taking the process down.
TEST(PostgresStore, ACommitCallbackThatThrowsIsLoggedAndTheWriterGoesOn) {
  auto store = MustOpen(test::FreshPgDatabase());
  ASSERT_NE(store, nullptr);
  store->Commit(Create("t-throws", "ctx-1", protocol::TaskState::kSubmitted, 1000, 1),
                [](core::Result<void>) { throw std::runtime_error("a caller's bug"); });
  EXPECT_TRUE(
      CommitSync(*store, Create("t-after", "ctx-1", protocol::TaskState::kSubmitted, 1000, 1))
          .ok());
  auto got = store->Get("t-throws");
  EXPECT_TRUE(got.ok() && got->has_value()) << "the commit whose callback threw still landed";
  store->Close();
}

TEST(PostgresStore, ANewerSchemaIsRefused) {
  const std::string url = test::FreshPgDatabase();
  ASSERT_TRUE(PostgresStore::Migrate(url));
  Admin(url).Run("INSERT INTO a2ad_schema VALUES ('core', 99, 0)");
  auto s = PostgresStore::Open(url);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("newer"), std::string::npos) << s.error().message;
}

}  // namespace
}  // namespace a2ad::storage
