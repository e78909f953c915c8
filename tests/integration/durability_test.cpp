// Durability of the real server binary: SIGKILL after N acknowledged sends loses nothing;
// tasks acknowledged but unfinished at the kill are re-driven after restart; SIGTERM
// shuts down cleanly.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string_view>
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

class Durability : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-dur"); }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(std::vector<std::string> extra = {}, const std::string& log_file = "") {
    server_ = ServerProcess::Start(kBinary, dir_.string(), std::move(extra), log_file);
  }
  std::string Log() const {
    std::ifstream in(dir_ / "server.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  fs::path dir_;
  ServerProcess server_;
};

json::object Params(const std::string& text, bool blocking) {
  return json::object{
      {"message",
       json::object{{"kind", "message"},
                    {"role", "user"},
                    {"messageId", "m-" + text},
                    {"parts", json::array{json::object{{"kind", "text"}, {"text", text}}}}}},
      {"configuration", json::object{{"blocking", blocking}}}};
}

TEST_F(Durability, SigkillAfterNSendsLosesNoCommittedTask) {
  Start();
  constexpr int kN = 300;
  std::map<std::string, json::value> acknowledged;  // task id -> task as returned
  {
    HttpClient c("127.0.0.1", server_.port);
    for (int i = 0; i < kN; ++i) {
      auto r = c.Rpc("message/send", Params("t" + std::to_string(i), true));
      ASSERT_TRUE(r.as_object().contains("result")) << json::serialize(r);
      auto& task = r.at("result");
      ASSERT_EQ(task.at("status").at("state"), "completed");
      acknowledged[std::string(task.at("id").as_string())] = task;
    }
  }
  server_.Kill(SIGKILL);

  Start();  // same data dir
  HttpClient c("127.0.0.1", server_.port);
  for (const auto& [id, before] : acknowledged) {
    auto r = c.Rpc("tasks/get", json::object{{"id", id}});
    ASSERT_TRUE(r.as_object().contains("result")) << id << ": " << json::serialize(r);
    EXPECT_EQ(r.at("result"), before) << id;
  }
  auto list = c.Rpc("ListTasks", json::object{{"pageSize", 1}}, "1.0");
  EXPECT_EQ(list.at("result").at("totalSize"), kN);
}

TEST_F(Durability, TasksAcknowledgedButUnfinishedAtTheKillAreReDriven) {
  Start({"--echo-delay-ms", "60000"});  // every execution is mid-work when the kill comes
  std::vector<std::string> ids;
  {
    HttpClient c("127.0.0.1", server_.port);
    for (int i = 0; i < 200; ++i) {
      auto r = c.Rpc("message/send", Params("nb" + std::to_string(i), false));
      ASSERT_TRUE(r.as_object().contains("result")) << json::serialize(r);
      ids.emplace_back(r.at("result").at("id").as_string());
    }
  }
  {
    HttpClient c("127.0.0.1", server_.port);
    auto r = c.Rpc("tasks/get", json::object{{"id", ids.back()}});
    auto state = r.at("result").at("status").at("state");
    ASSERT_TRUE(state == "submitted" || state == "working")
        << json::serialize(state);  // unfinished
  }
  server_.Kill(SIGKILL);

  Start();
  HttpClient c("127.0.0.1", server_.port);
  for (const auto& id : ids) {
    const json::value task = testing::PollUntil(  // recovery runs in the background
        [&] {
          return c.Rpc("tasks/get", json::object{{"id", id}}).at("result");
        },
        [](const json::value& t) { return t.at("status").at("state") == "completed"; });
    ASSERT_EQ(task.at("status").at("state"), "completed") << id;
    ASSERT_EQ(task.at("artifacts").as_array().size(), 1u) << id;  // executed once, not twice
  }
}

TEST_F(Durability, CancelOfAWorkingTaskOverHttp) {
  Start({"--echo-delay-ms", "60000"});
  HttpClient c("127.0.0.1", server_.port);
  std::string id(c.Rpc("message/send", Params("slow", false)).at("result").at("id").as_string());
  auto canceled = c.Rpc("tasks/cancel", json::object{{"id", id}});
  EXPECT_EQ(canceled.at("result").at("status").at("state"), "canceled")
      << json::serialize(canceled);
  server_.Kill(SIGKILL);
  Start();
  HttpClient c2("127.0.0.1", server_.port);
  auto r = c2.Rpc("tasks/get", json::object{{"id", id}});
  EXPECT_EQ(r.at("result").at("status").at("state"), "canceled");
  EXPECT_FALSE(r.at("result").as_object().contains("artifacts"));
}

TEST_F(Durability, SigtermShutsDownCleanlyAndKeepsEverything) {
  Start();
  std::string id;
  {
    HttpClient c("127.0.0.1", server_.port);
    id = c.Rpc("message/send", Params("bye", true)).at("result").at("id").as_string();
  }
  ::kill(server_.pid, SIGTERM);
  EXPECT_EQ(server_.WaitExit(), 0);
  Start();
  HttpClient c("127.0.0.1", server_.port);
  auto r = c.Rpc("tasks/get", json::object{{"id", id}});
  EXPECT_EQ(r.at("result").at("status").at("state"), "completed");
}

TEST_F(Durability, MigrateCreatesTheSchemaAndIsIdempotent) {
  std::string cmd =
      kBinary + " migrate --data-dir " + dir_.string() + " > " + (dir_ / "out").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_TRUE(fs::exists(dir_ / "a2ad.db"));
}

TEST_F(Durability, BadFlagsExitWithAClearError) {
  std::string cmd = kBinary + " serve --listen nonsense --data-dir " + dir_.string() + " 2> " +
                    (dir_ / "err").string();
  int rc = std::system(cmd.c_str());
  EXPECT_NE(rc, 0);
  cmd = kBinary + " serve --sqlite-synchronous sometimes --data-dir " + dir_.string() + " 2> " +
        (dir_ / "err").string();
  EXPECT_NE(std::system(cmd.c_str()), 0);
  std::ifstream err(dir_ / "err");
  const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("--sqlite-synchronous"), std::string::npos) << text;
  EXPECT_NE(text.find("normal"), std::string::npos) << text;
}

// Power-loss durability is one flag; acknowledged tasks survive a SIGKILL with it as well.
TEST_F(Durability, SynchronousFullIsUsedAndKeepsTasksAcrossASigkill) {
  if (const char* b = std::getenv("A2AD_TEST_BACKEND"); b && std::string_view(b) == "postgres")
    GTEST_SKIP() << "--sqlite-synchronous is SQLite's (PostgreSQL has its synchronous_commit)";
  Start({"--sqlite-synchronous", "full"}, (dir_ / "server.log").string());
  std::vector<std::string> ids;
  {
    HttpClient c("127.0.0.1", server_.port);
    for (int i = 0; i < 20; ++i)
      ids.push_back(std::string(c.Rpc("message/send", Params("f" + std::to_string(i), true))
                                    .at("result")
                                    .at("id")
                                    .as_string()));
  }
  EXPECT_NE(Log().find("synchronous=full"), std::string::npos) << Log();
  server_.Kill(SIGKILL);
  Start({}, (dir_ / "server.log").string());
  EXPECT_NE(Log().find("synchronous=normal"), std::string::npos) << Log();
  HttpClient c("127.0.0.1", server_.port);
  for (const auto& id : ids)
    EXPECT_EQ(c.Rpc("tasks/get", json::object{{"id", id}}).at("result").at("status").at("state"),
              "completed");
}

}  // namespace
}  // namespace a2ad
