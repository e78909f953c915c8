// Damaged rows on disk, against the real server binary and `a2ad doctor`: one unreadable
// record never fails a list, a restart or another task; the doctor lists, exports, repairs
// and sets aside; after the repair the tasks read as they did before the damage.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "http_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;

const std::string kBinary = testing::A2adBinary();

struct Command {
  int exit_code = -1;
  std::string out;
};

Command RunCommand(const std::string& command) {
  Command c;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return c;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) c.out.append(buf, n);
  const int status = pclose(p);
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

void Sql(const fs::path& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string message = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message << "\n" << sql;
}

json::object Send(const std::string& message_id, json::array parts, bool blocking) {
  return json::object{{"message", json::object{{"kind", "message"},
                                               {"role", "user"},
                                               {"messageId", message_id},
                                               {"parts", std::move(parts)}}},
                      {"configuration", json::object{{"blocking", blocking}}}};
}

json::array Text(const std::string& t) {
  return json::array{json::object{{"kind", "text"}, {"text", t}}};
}

class Quarantine : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-quarantine"); }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(std::vector<std::string> extra = {}) {
    server_ = ServerProcess::Start(kBinary, dir_.string(), std::move(extra),
                                   (dir_ / "server.log").string());
  }
  std::string Log() const {
    std::ifstream in(dir_ / "server.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  fs::path Db() const { return dir_ / "a2ad.db"; }
  Command Doctor(const std::string& args = "") {
    return RunCommand(kBinary + " doctor --data-dir " + dir_.string() + " " + args);
  }

  fs::path dir_;
  ServerProcess server_;
};

TEST_F(Quarantine, DamagedRowsCostOnlyTheirOwnTaskAndTheDoctorRepairsThem) {
  // Five finished tasks: A, W, I and P get damaged below, G stays good.
  Start();
  std::map<std::string, std::string> id;
  std::map<std::string, json::value> before;
  {
    HttpClient c("127.0.0.1", server_.port);
    for (const char* name : {"A", "W", "P", "G"}) {
      auto r = c.Rpc("message/send", Send(std::string("m-") + name, Text(name), true));
      ASSERT_EQ(r.at("result").at("status").at("state"), "completed") << json::serialize(r);
      id[name] = std::string(r.at("result").at("id").as_string());
      before[name] = r.at("result");
    }
    // I carries a number that a2ad up to 1c072fb would have stored as -Infinity.
    json::array parts = Text("i");
    parts.push_back(json::object{{"kind", "data"}, {"data", json::object{{"n", 424242}}}});
    auto r = c.Rpc("message/send", Send("m-I", parts, true));
    ASSERT_EQ(r.at("result").at("status").at("state"), "completed") << json::serialize(r);
    id["I"] = std::string(r.at("result").at("id").as_string());
  }
  server_.Kill(SIGKILL);
  Sql(Db(), "UPDATE tasks SET snapshot = '{\"id\": ' WHERE id = '" + id["A"] +
                "';"
                "UPDATE tasks SET snapshot = 'not json', run = '[' WHERE id = '" +
                id["W"] +
                "';"
                "UPDATE tasks SET snapshot = replace(snapshot, '424242', '-Infinity'),"
                "  run = replace(run, '424242', '-Infinity') WHERE id = '" +
                id["I"] +
                "';"
                "UPDATE task_events SET payload = replace(payload, '424242', '-Infinity')"
                "  WHERE task_id = '" +
                id["I"] +
                "';"
                "UPDATE tasks SET snapshot = '{}' WHERE id = '" +
                id["P"] +
                "';"
                "DELETE FROM task_events WHERE task_id = '" +
                id["P"] + "';");

  // The server starts (recovery skips what it cannot read) and serves everything else.
  ASSERT_NO_THROW(Start());
  {
    HttpClient c("127.0.0.1", server_.port);
    auto good = c.Rpc("tasks/get", json::object{{"id", id["G"]}});
    EXPECT_EQ(good.at("result"), before["G"]);
    for (const char* name : {"A", "W", "I", "P"}) {
      auto r = c.Rpc("tasks/get", json::object{{"id", id[name]}});
      ASSERT_TRUE(r.as_object().contains("error")) << name << ": " << json::serialize(r);
      const auto& err = r.at("error");
      EXPECT_EQ(err.at("code"), -32603) << name;
      const std::string message(err.at("message").as_string());
      EXPECT_NE(message.find("task " + id[name]), std::string::npos) << message;
      EXPECT_NE(message.find("a2ad doctor"), std::string::npos) << message;
      EXPECT_EQ(message.find(dir_.string()), std::string::npos) << "path leaked: " << message;
      EXPECT_NE(Log().find(std::string(err.at("data").at("errorId").as_string())),
                std::string::npos)
          << "the log keeps the details under the id the client got";
      auto rest = c.Request("GET", "/v1/runs/" + id[name]);
      EXPECT_EQ(rest.status, 500) << name;
      EXPECT_EQ(rest.Json().at("error"), "record_unreadable") << rest.body;
    }
    auto listed =
        c.Request("POST", "/v1/a2a", R"({"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}})",
                  {{"A2A-Version", "1.0"}});
    ASSERT_EQ(listed.status, 200);
    auto tasks = listed.Json().at("result").at("tasks").as_array();
    ASSERT_EQ(tasks.size(), 1u) << listed.body;
    EXPECT_EQ(tasks[0].at("id"), json::value(id["G"]));
    EXPECT_EQ(listed.Header("A2AD-Skipped-Unreadable"), "4");
    // A page that ends on an unreadable row still moves on past it.
    size_t seen = 0;
    std::string token;
    for (int pages = 0; pages < 10; ++pages) {
      json::object params{{"pageSize", 1}};
      if (!token.empty()) params["pageToken"] = token;
      auto page = c.Rpc("ListTasks", params, "1.0");
      seen += page.at("result").at("tasks").as_array().size();
      token = std::string(page.at("result").at("nextPageToken").as_string());
      if (token.empty()) break;
    }
    EXPECT_EQ(seen, 1u);
    EXPECT_TRUE(token.empty());
    auto runs = c.Request("GET", "/v1/runs");
    ASSERT_EQ(runs.status, 200) << runs.body;
    EXPECT_EQ(runs.Json().at("skippedUnreadable"), 4);
    EXPECT_EQ(runs.Json().at("runs").as_array().size(), 1u);
  }
  server_.Kill(SIGTERM);

  // The doctor lists the damage (exit 1), exports it, repairs and sets aside (exit 0).
  auto check = Doctor();
  EXPECT_EQ(check.exit_code, 1) << check.out;
  for (const char* name : {"A", "W", "I", "P"})
    EXPECT_NE(check.out.find("damaged: task " + id[name]), std::string::npos) << check.out;
  EXPECT_EQ(check.out.find("damaged: task " + id["G"]), std::string::npos) << check.out;

  const fs::path exported = dir_ / "damaged.jsonl";
  auto repair = Doctor("--repair --export " + exported.string());
  EXPECT_EQ(repair.exit_code, 0) << repair.out;
  EXPECT_NE(repair.out.find("repaired: task " + id["A"] + ": rebuilt from its event log"),
            std::string::npos)
      << repair.out;
  EXPECT_NE(repair.out.find("repaired: task " + id["W"] + ": rebuilt from its event log"),
            std::string::npos)
      << repair.out;
  EXPECT_NE(repair.out.find("repaired: task " + id["I"] + ": Infinity/NaN replaced with null"),
            std::string::npos)
      << repair.out;
  EXPECT_NE(repair.out.find("set aside: task " + id["P"]), std::string::npos) << repair.out;
  {
    std::ifstream in(exported);
    std::string line;
    size_t lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      auto v = testing::StrictJson(line, "export line");
      EXPECT_EQ(v.at("kind"), "damaged");
    }
    EXPECT_EQ(lines, 4u);
  }
  auto again = Doctor("--export " + exported.string());
  EXPECT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("every stored record reads"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("1 tasks set aside earlier"), std::string::npos) << again.out;

  // Served again: the rebuilt task is what it was; the set-aside one is gone.
  Start();
  HttpClient c("127.0.0.1", server_.port);
  EXPECT_EQ(c.Rpc("tasks/get", json::object{{"id", id["A"]}}).at("result"), before["A"]);
  auto i = c.Rpc("tasks/get", json::object{{"id", id["I"]}});
  ASSERT_TRUE(i.as_object().contains("result")) << json::serialize(i);
  EXPECT_NE(json::serialize(i).find("\"n\":null"), std::string::npos) << json::serialize(i);
  auto w = c.Rpc("tasks/get", json::object{{"id", id["W"]}});
  ASSERT_TRUE(w.as_object().contains("result")) << json::serialize(w);
  auto p = c.Rpc("tasks/get", json::object{{"id", id["P"]}});
  EXPECT_EQ(p.at("error").at("code"), -32001);
  auto list =
      c.Request("POST", "/v1/a2a", R"({"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}})",
                {{"A2A-Version", "1.0"}});
  EXPECT_EQ(list.Json().at("result").at("tasks").as_array().size(), 4u);
  EXPECT_EQ(list.Header("A2AD-Skipped-Unreadable"), "");
}

// A task found working at a restart whose record does not read is skipped by recovery (the
// server starts and logs it); the rest is recovered.
TEST_F(Quarantine, RecoveryStartsWithAnUnreadableUnfinishedTask) {
  Start({"--echo-delay-ms", "600000"});
  std::string damaged, healthy;
  {
    HttpClient c("127.0.0.1", server_.port);
    damaged = std::string(
        c.Rpc("message/send", Send("m-1", Text("one"), false)).at("result").at("id").as_string());
    healthy = std::string(
        c.Rpc("message/send", Send("m-2", Text("two"), false)).at("result").at("id").as_string());
  }
  server_.Kill(SIGKILL);
  Sql(Db(), "UPDATE tasks SET snapshot = '{\"id\":\"x\",' WHERE id = '" + damaged + "'");
  ASSERT_NO_THROW(Start());  // default echo delay: the healthy task now completes
  HttpClient c("127.0.0.1", server_.port);
  const json::value state = testing::PollUntil(
      [&] {
        return c.Rpc("tasks/get", json::object{{"id", healthy}})
            .at("result")
            .at("status")
            .at("state");
      },
      [](const json::value& s) { return s == "completed"; });
  EXPECT_EQ(state, "completed");
  EXPECT_NE(Log().find("recovery: task " + damaged + " is skipped"), std::string::npos) << Log();
}

}  // namespace
}  // namespace a2ad
