// The server on PostgreSQL (issue 30), what only a database server can do to it: go away while
// requests are served and come back, be unreachable at start. The behaviours both backends
// share (SIGKILL durability, gates, pause, push, idempotent retries) run on PostgreSQL as the
// `.postgres` variants of their own tests (a2ad_test ... ALSO_POSTGRES).
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/core/encoding.hpp"
#include "http_client.hpp"
#include "pg_cluster.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;


// `url` with a password put in (the throwaway cluster trusts everyone, so any password works):
// it must never be written anywhere.
std::string WithPassword(const std::string& url) {
  const std::string scheme = "postgresql://a2ad";
  EXPECT_EQ(url.rfind(scheme, 0), 0u) << url;
  return scheme + ":pw-do-not-log" + url.substr(scheme.size());
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string Send(HttpClient& c, const std::string& id, int* status = nullptr,
                 std::string* retry_after = nullptr) {
  json::object body{{"message", json::object{{"messageId", id},
                                             {"role", "ROLE_USER"},
                                             {"parts", json::array{json::object{{"text", id}}}}}}};
  auto r = c.Request("POST", "/a2a/rest/message:send", json::serialize(body),
                     {{"Content-Type", "application/json"}, {"A2A-Version", "1.0"}});
  if (status) *status = r.status;
  if (retry_after) *retry_after = r.Header("Retry-After");
  if (r.status != 200) return "";
  return std::string(r.Json().at("task").at("id").as_string());
}

// The kid of the agent card's signature (its protected header).
std::string CardKid(HttpClient& c) {
  const json::value card = c.Request("GET", "/.well-known/agent-card.json").Json();
  const auto header =
      core::Base64UrlDecode(card.at("signatures").at(0).at("protected").as_string());
  return std::string(json::parse(header.value_or("{}")).at("kid").as_string());
}


class PostgresE2e : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-pg-e2e"); }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  ServerProcess server_;
};

TEST_F(PostgresE2e, TheDatabaseGoingAwayIsA503WithRetryAfterAndNothingAcknowledgedIsLost) {
  const std::string url = test::FreshPgDatabase();
  const std::string log = (dir_ / "server.log").string();
  fs::create_directories(dir_ / "workflows");  // none: /readyz is about the database alone
  server_ = ServerProcess::Start(testing::A2adBinary(), (dir_ / "data").string(),
                                 {"--database-url", WithPassword(url), "--workflows-dir",
                                  (dir_ / "workflows").string()},
                                 log);
  HttpClient c("127.0.0.1", server_.port);
  std::vector<std::string> acknowledged;
  for (int i = 0; i < 20; ++i) {
    acknowledged.push_back(Send(c, "before-" + std::to_string(i)));
    ASSERT_NE(acknowledged.back(), "");
  }
  EXPECT_EQ(c.Request("GET", "/readyz").status, 200);

  // The database refuses new connections and cuts the server's (a restart, a failover).
  const std::string db = test::PgQuery(url, "SELECT current_database()");
  const std::string admin = test::FreshPgDatabase();
  test::PgQuery(admin, "ALTER DATABASE \"" + db + "\" ALLOW_CONNECTIONS false");
  test::PgQuery(admin, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" +
                 db + "'");
  int status = 0;
  std::string retry_after;
  EXPECT_EQ(Send(c, "during", &status, &retry_after), "");
  EXPECT_EQ(status, 503);
  EXPECT_EQ(retry_after, "1");
  auto rpc = c.Request(
      "POST", "/v1/a2a",
      json::serialize(json::object{{"jsonrpc", "2.0"},
                                   {"id", 1},
                                   {"method", "GetTask"},
                                   {"params", json::object{{"id", acknowledged.front()}}}}),
      {{"Content-Type", "application/json"}, {"A2A-Version", "1.0"}});
  EXPECT_EQ(rpc.status, 503) << rpc.body;
  EXPECT_EQ(rpc.Json().at("error").at("code").as_int64(), -32603) << rpc.body;
  EXPECT_NE(rpc.body.find("retry later"), std::string::npos) << rpc.body;
  EXPECT_EQ(rpc.body.find("PostgreSQL"), std::string::npos) << rpc.body;  // stays in the log
  auto ready = c.Request("GET", "/readyz");
  EXPECT_EQ(ready.status, 503) << ready.body;

  // Back: the server reconnects by itself.
  test::PgQuery(admin, "ALTER DATABASE \"" + db + "\" ALLOW_CONNECTIONS true");
  EXPECT_NE(Send(c, "after"), "");
  EXPECT_EQ(c.Request("GET", "/readyz").status, 200);
  // The pool's gauges, and the failures the outage caused.
  const std::string metrics = c.Request("GET", "/metrics").body;
  EXPECT_NE(metrics.find("a2ad_db_pool_connections{state=\"idle\"}"), std::string::npos);
  EXPECT_EQ(metrics.find("a2ad_db_errors 0\n"), std::string::npos) << metrics;
  for (const auto& id : acknowledged) {
    auto got = c.Request("GET", "/a2a/rest/tasks/" + id, "", {{"A2A-Version", "1.0"}});
    EXPECT_EQ(got.status, 200) << id;
  }
  EXPECT_EQ(test::PgQuery(url, "SELECT count(*) FROM tasks WHERE snapshot LIKE '%during%'"), "0");
  server_.Kill(SIGTERM);
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("PostgreSQL"), std::string::npos);  // the log has the reasons...
  EXPECT_EQ(text.find("pw-do-not-log"), std::string::npos);  // ...never the password
}

TEST_F(PostgresE2e, AnUnreachableDatabaseAtStartIsRetriedThenTheServerExits) {
  const auto start = std::chrono::steady_clock::now();
  int code = -1;
  const std::string text = testing::RunCommand(
      testing::A2adBinary() + " serve --listen 127.0.0.1:0 --data-dir " + (dir_ / "data").string() +
          " --database-url 'postgresql://a2ad:pw-do-not-log@127.0.0.1:9/a2ad?connect_timeout=1'"
          " --database-wait-s 2",
      &code);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(code, 1) << text;
  EXPECT_GE(took, 1.5);  // it kept trying for --database-wait-s
  EXPECT_NE(text.find("cannot connect to PostgreSQL"), std::string::npos) << text;
  EXPECT_NE(text.find("trying again"), std::string::npos) << text;
  EXPECT_EQ(text.find("pw-do-not-log"), std::string::npos) << text;
  EXPECT_EQ(text.find("127.0.0.1:9"), std::string::npos) << text;
}

TEST_F(PostgresE2e, AUrlNoEngineTakesIsRefusedWithWhatToGive) {
  int code = -1;
  const std::string text = testing::RunCommand(
      testing::A2adBinary() + " serve --listen 127.0.0.1:0 --data-dir " + (dir_ / "data").string() +
          " --database-url mysql://root@db/a2ad",
      &code);
  EXPECT_EQ(code, 2) << text;
  EXPECT_NE(text.find("postgresql://"), std::string::npos) << text;
}

// The operator's commands on PostgreSQL: migrate, keys, doctor and backup (pg_dump), and a
// restore (pg_restore) that serves what was backed up.
TEST_F(PostgresE2e, MigrateKeysDoctorAndBackupWorkOnPostgreSql) {
  const std::string url = test::FreshPgDatabase();
  const std::string a2ad = testing::A2adBinary();
  const std::string data = (dir_ / "data").string();
  const std::string common = " --data-dir " + data + " --database-url '" + url + "'";
  int code = -1;
  std::string out = testing::RunCommand(a2ad + " migrate" + common, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("is at schema version"), std::string::npos) << out;

  out = testing::RunCommand(a2ad + " keys create --tenant acme --scopes admin" + common, &code);
  ASSERT_EQ(code, 0) << out;
  const auto at = out.find("a2ad_k_");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string key = out.substr(at, out.find_first_of(" \n", at) - at);

  fs::create_directories(dir_ / "workflows");
  server_ = ServerProcess::Start(a2ad, data,
                                 {"--database-url", url, "--workflows-dir",
                                  (dir_ / "workflows").string()});
  std::vector<std::string> ids;
  std::string card_kid;
  {
    HttpClient c("127.0.0.1", server_.port);
    card_kid = CardKid(c);
    EXPECT_EQ(c.Request("GET", "/a2a/rest/tasks", "", {{"A2A-Version", "1.0"}}).status, 401);
    for (int i = 0; i < 3; ++i) {
      json::object body{{"message", json::object{{"messageId", "k-" + std::to_string(i)},
                                                 {"role", "ROLE_USER"},
                                                 {"parts", json::array{json::object{{"text", "x"}}}}}}};
      auto r = c.Request("POST", "/a2a/rest/message:send", json::serialize(body),
                         {{"Content-Type", "application/json"},
                          {"A2A-Version", "1.0"},
                          {"X-API-Key", key}});
      ASSERT_EQ(r.status, 200) << r.body;
      ids.emplace_back(r.Json().at("task").at("id").as_string());
    }
  }
  server_.Kill(SIGTERM);

  out = testing::RunCommand(a2ad + " doctor" + common, &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("checked: 3 tasks"), std::string::npos) << out;
  test::PgQuery(url, "UPDATE tasks SET snapshot = '{\"id\":' WHERE id = '" + ids[1] + "'");
  out = testing::RunCommand(a2ad + " doctor" + common, &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("damaged: task " + ids[1] + ", snapshot"), std::string::npos) << out;
  // (Left damaged: the backup carries it as it is.)

  const std::string backup = (dir_ / "backup").string();
  out = testing::RunCommand(a2ad + " backup --to " + backup + common, &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(fs::exists(dir_ / "backup" / "a2ad.pgdump")) << out;
  // The server's keys are in the database (so in the dump), not files beside it.
  EXPECT_FALSE(fs::exists(dir_ / "backup" / "card-signing-key.pem")) << out;
  EXPECT_EQ(out.find("postgresql://"), std::string::npos) << out;  // no URL printed
  // Restore into an empty database and serve it with the copied directory.
  const std::string restored = test::FreshPgDatabase();
  out = testing::RunCommand("pg_restore --no-owner --dbname '" + restored + "' " + backup + "/a2ad.pgdump", &code);
  ASSERT_EQ(code, 0) << out;
  server_ = ServerProcess::Start(a2ad, backup,
                                 {"--database-url", restored, "--workflows-dir",
                                  (dir_ / "workflows").string()});
  HttpClient c("127.0.0.1", server_.port);
  // The restored database signs the card with the same key (the kid of the same header).
  EXPECT_EQ(CardKid(c), card_kid);
  for (const std::string& id : {ids[0], ids[2]}) {
    auto got = c.Request("GET", "/a2a/rest/tasks/" + id, "", {{"A2A-Version", "1.0"}, {"X-API-Key", key}});
    EXPECT_EQ(got.status, 200) << got.body;
  }
  auto damaged = c.Request("GET", "/a2a/rest/tasks/" + ids[1], "", {{"A2A-Version", "1.0"}, {"X-API-Key", key}});
  EXPECT_EQ(damaged.status, 500) << damaged.body;  // quarantined in place: named, not served
  EXPECT_NE(damaged.body.find("a2ad doctor"), std::string::npos) << damaged.body;
}

}  // namespace
}  // namespace a2ad
