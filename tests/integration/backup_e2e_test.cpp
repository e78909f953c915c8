// `a2ad backup` through the real binary (issue 18): taken while the server serves and keeps
// writing, the copy is a complete data directory; serving it restores every task acknowledged
// before the backup began, and a run that waited at a gate in the copy is answered there and
// completes (its interrupt token, signed with the copied secret, still verifies).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "http_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;


json::object Message(const std::string& id, const std::string& skill) {
  return json::object{
      {"message", json::object{{"kind", "message"},
                               {"role", "user"},
                               {"messageId", id},
                               {"parts", json::array{json::object{{"kind", "text"}, {"text", id}}}},
                               {"metadata", json::object{{"skillId", skill}}}}}};
}

class Backup : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-backup"); }
  void TearDown() override {
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Serve(const fs::path& data) {
    server_ = testing::ServerProcess::Start(
        testing::A2adBinary(), data.string(),
        {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows", "--conformance-fixtures"});
  }
  fs::path dir_;
  testing::ServerProcess server_;
};

TEST_F(Backup, ACopyTakenWhileServingRestoresEveryAcknowledgedTask) {
  Serve(dir_ / "data");
  testing::HttpClient client("127.0.0.1", server_.port);
  auto gate = client.Rpc("message/send", Message("gate", "conformance-approval"));
  const std::string gate_id(gate.at("result").at("id").as_string());
  ASSERT_EQ(gate.at("result").at("status").at("state"), "input-required");
  const std::string token(client.Request("GET", "/v1/runs/" + gate_id)
                              .Json()
                              .at("interrupt")
                              .at("interruptToken")
                              .as_string());
  std::set<std::string> before;
  for (int i = 0; i < 50; ++i) {
    auto r = client.Rpc("message/send", Message("m" + std::to_string(i), "echo"));
    before.insert(std::string(r.at("result").at("id").as_string()));
  }
  // Writers keep going during the backup.
  std::atomic<bool> stop{false};
  std::atomic<int> during{0};
  std::thread writer([&] {
    testing::HttpClient w("127.0.0.1", server_.port);
    for (int i = 0; !stop; ++i) {
      w.Rpc("message/send", Message("w" + std::to_string(i), "echo"));
      ++during;
    }
  });
  EXPECT_TRUE(testing::WaitFor([&] { return during >= 20; }, std::chrono::seconds(60)));
  int code = -1;
  const std::string out = testing::RunCommand(testing::A2adBinary() + " backup --data-dir " +
                                  (dir_ / "data").string() + " --to " + (dir_ / "copy").string(),
                              &code);
  stop = true;
  writer.join();
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("task(s), schema version"), std::string::npos) << out;
  EXPECT_GT(during.load(), 20);
  // Owner-only: the copy holds secrets.
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "copy" / "a2ad.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir_ / "copy" / "interrupt-token.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // The original is gone (killed); the copy is served.
  server_.Kill(SIGKILL);
  server_.pid = -1;
  fs::remove_all(dir_ / "data");
  Serve(dir_ / "copy");
  testing::HttpClient restored("127.0.0.1", server_.port);
  for (const auto& id : before) {
    auto t = restored.Rpc("tasks/get", json::object{{"id", id}});
    ASSERT_TRUE(t.as_object().contains("result")) << id << ": " << t;
    EXPECT_EQ(t.at("result").at("status").at("state"), "completed");
  }
  // The gate waits in the copy, and its token (signed with the copied secret) answers it.
  auto answered = restored.Request("POST", "/v1/interrupts/" + token,
                                   R"({"resumeValue":{"action":"accept"}})");
  ASSERT_EQ(answered.status, 200) << answered.body;
  const json::value run =
      testing::PollUntil([&] { return restored.Request("GET", "/v1/runs/" + gate_id).Json(); },
                         [](const json::value& r) { return r.at("status") == "completed"; });
  EXPECT_EQ(run.at("status"), "completed") << run;
}

TEST_F(Backup, RefusesAnExistingTargetAndAMissingDatabase) {
  fs::create_directories(dir_ / "data");
  int code = -1;
  std::string out = testing::RunCommand(testing::A2adBinary() + " backup --data-dir " + (dir_ / "data").string() +
                            " --to " + (dir_ / "copy").string(),
                        &code);
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("no a2ad.db in"), std::string::npos) << out;
  fs::create_directories(dir_ / "full");
  std::FILE* f = std::fopen((dir_ / "full" / "x").c_str(), "w");
  std::fclose(f);
  Serve(dir_ / "data");
  out = testing::RunCommand(testing::A2adBinary() + " backup --data-dir " + (dir_ / "data").string() + " --to " +
                (dir_ / "full").string(),
            &code);
  EXPECT_EQ(code, 2);
  EXPECT_NE(out.find("exists and is not an empty directory"), std::string::npos) << out;
}

}  // namespace
}  // namespace a2ad
