// The `a2a` command-line client end to end (issue 16): a campaign-brief approval driven only
// with `a2a` commands against the real server over loopback (send --wait, approve, get), a
// rejection, and the documented exit codes (1: the agent refused; 3: unreachable); watch on
// the agent's stream across a SIGKILL and restart of the server; send --stream; push listen's
// retried JWKS fetch; the same approval over the agent's gRPC interface (--binding grpc).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "http_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad::cli_test {
namespace fs = std::filesystem;
namespace json = boost::json;

struct Ran {
  int code = -1;
  std::string out;
};

// Runs `a2a ARGS` (a shell command line), capturing stdout; stderr goes to `err` (a file).
Ran A2a(const std::string& args, const std::string& err = "/dev/null") {
  const std::string cmd = std::string(A2AD_BINARY_DIR) + "/src/a2ad/cli/a2a " + args + " 2>" + err;
  Ran r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class A2aCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-cli");
    server_ = testing::ServerProcess::Start(
        testing::A2adBinary(), dir_.string(),
        {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows", "--grpc-listen",
         "127.0.0.1:0"});
    url_ = "http://127.0.0.1:" + std::to_string(server_.port);
  }
  void TearDown() override {
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  // A campaign brief sent with --wait: the task JSON, at its approval gate.
  json::object SendBrief() {
    Ran r = A2a("send " + url_ +
                " --skill campaign-brief --data '{\"prompt\":\"spring launch\"}' --wait --json");
    EXPECT_EQ(r.code, 0) << r.out;
    return json::parse(r.out).as_object();
  }
  static std::vector<json::value> JsonLines(const std::string& out) {
    std::vector<json::value> lines;
    size_t start = 0;
    for (size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1)
      lines.push_back(json::parse(out.substr(start, nl - start)));
    return lines;
  }
  fs::path dir_;
  testing::ServerProcess server_;
  std::string url_;
};

TEST_F(A2aCli, ACampaignBriefIsApprovedWithA2aCommandsOnly) {
  Ran card = A2a("card " + url_);
  ASSERT_EQ(card.code, 0);
  EXPECT_NE(card.out.find("A2A 1.0 over JSON-RPC"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("skill campaign-brief"), std::string::npos) << card.out;
  EXPECT_NE(card.out.find("signed, signature verified"), std::string::npos) << card.out;
  json::object task = SendBrief();
  ASSERT_EQ(task.at("state"), "input-required") << json::serialize(task);
  const std::string id(task.at("id").as_string());
  Ran approve = A2a("approve " + url_ + " " + id + " --feedback 'ship it'");
  EXPECT_EQ(approve.code, 0) << approve.out;
  EXPECT_NE(approve.out.find("Approval needed"), std::string::npos)
      << "the question is shown first: " << approve.out;
  json::object done;
  for (int i = 0; i < 200; ++i) {
    done = json::parse(A2a("get " + url_ + " " + id + " --json").out).as_object();
    if (done.at("state") == "completed") break;
  }
  EXPECT_EQ(done.at("state"), "completed");
  EXPECT_NE(json::serialize(done.at("artifacts")).find("\"decision\":\"accept\""),
            std::string::npos);
}

TEST_F(A2aCli, ARejectionFailsTheTaskAndTheExitCodesSayWhatHappened) {
  const std::string id(SendBrief().at("id").as_string());
  EXPECT_EQ(A2a("reject " + url_ + " " + id).code, 0);
  json::object done;
  for (int i = 0; i < 200; ++i) {
    done = json::parse(A2a("get " + url_ + " " + id + " --json").out).as_object();
    if (done.at("state") == "failed") break;
  }
  EXPECT_EQ(done.at("state"), "failed");
  EXPECT_EQ(A2a("approve " + url_ + " " + id).code, 1) << "not waiting for input any more";
  EXPECT_EQ(A2a("get " + url_ + " no-such-task").code, 1) << "the agent's JSON-RPC error";
  EXPECT_EQ(A2a("get http://127.0.0.1:1 x").code, 3) << "unreachable";
  EXPECT_EQ(A2a("send " + url_).code, 2) << "usage";
}

TEST_F(A2aCli, PauseResumeWatchAndList) {
  Ran sent = A2a("send " + url_ + " --skill long-delay --data '{\"delayMs\":1500}' --json");
  ASSERT_EQ(sent.code, 0) << sent.out;
  const std::string id(json::parse(sent.out).at("id").as_string());
  Ran paused = A2a("pause " + url_ + " " + id);
  ASSERT_EQ(paused.code, 0);
  EXPECT_NE(paused.out.find("task " + id + ": paused-by-client"), std::string::npos)
      << paused.out;
  // Read without the extension, a paused task is still shown paused (issue 35).
  EXPECT_NE(A2a("get " + url_ + " " + id).out.find(": paused-by-client"), std::string::npos);
  EXPECT_NE(A2a("list " + url_).out.find(id + "  paused-by-client  long-delay"),
            std::string::npos);
  EXPECT_NE(A2a("list " + url_ + " --state paused").out.find(id), std::string::npos);
  EXPECT_EQ(A2a("list " + url_ + " --state working").out.find(id), std::string::npos);
  Ran resumed = A2a("resume " + url_ + " " + id);
  ASSERT_EQ(resumed.code, 0);
  EXPECT_NE(resumed.out.find("task " + id + ": working"), std::string::npos) << resumed.out;
  EXPECT_EQ(A2a("resume " + url_ + " " + id).code, 1) << "not paused any more";
  // watch, piped: one JSON line per change, until the task ends.
  Ran watched = A2a("watch " + url_ + " " + id + " --json --every-ms 100");
  EXPECT_EQ(watched.code, 0);
  auto lines = JsonLines(watched.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().at("state"), "completed");
  size_t artifacts = 0;
  for (const auto& l : lines) artifacts += l.at("newArtifacts").as_array().size();
  EXPECT_EQ(artifacts, 1u) << watched.out;
  Ran listed = A2a("list " + url_);
  EXPECT_EQ(listed.code, 0);
  EXPECT_NE(listed.out.find(id + "  completed"), std::string::npos) << listed.out;
}

TEST_F(A2aCli, PushConfigsSetListAndDelete) {
  Ran sent = A2a("send " + url_ + " --skill long-delay --data '{\"delayMs\":60000}' --json");
  const std::string id(json::parse(sent.out).at("id").as_string());
  // The agent's egress guard refuses a loopback webhook: exit 1.
  EXPECT_EQ(A2a("push set " + url_ + " " + id + " http://127.0.0.1:9/hook").code, 1);
  Ran set = A2a("push set " + url_ + " " + id + " https://push.invalid/hook --id c1 --token tok");
  ASSERT_EQ(set.code, 0) << set.out;
  EXPECT_EQ(json::parse(set.out).at("id"), "c1");
  Ran listed = A2a("push list " + url_ + " " + id);
  EXPECT_EQ(json::parse(listed.out).at("configs").as_array().size(), 1u) << listed.out;
  EXPECT_EQ(A2a("push delete " + url_ + " " + id + " c1").code, 0);
  EXPECT_EQ(json::parse(A2a("push list " + url_ + " " + id).out).at("configs").as_array().size(),
            0u);
  EXPECT_EQ(A2a("cancel " + url_ + " " + id).code, 0);
}

TEST_F(A2aCli, WatchFollowsTheStreamAndReattachesAfterTheServerIsKilled) {
  Ran sent = A2a("send " + url_ + " --skill long-delay --data '{\"delayMs\":2500}' --json");
  ASSERT_EQ(sent.code, 0) << sent.out;
  const std::string id(json::parse(sent.out).at("id").as_string());
  const std::string err = (dir_ / "watch.err").string();
  auto watching = std::async(std::launch::async, [&] {
    return A2a("watch " + url_ + " " + id + " --json --every-ms 200", err);
  });
  {  // the watch follows the task's stream (the server counts it) before the server dies
    testing::HttpClient probe("127.0.0.1", server_.port);
    EXPECT_TRUE(testing::WaitFor([&] {
      return std::regex_search(probe.Request("GET", "/metrics").body,
                               std::regex("\na2ad_streams_open [1-9]"));
    }));
  }
  const uint16_t port = server_.port;
  server_.Kill(SIGKILL);  // the watch's stream drops mid-task
  server_ =
      testing::ServerProcess::Start(testing::A2adBinary(), dir_.string(),
                                    {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows",
                                     "--listen", "127.0.0.1:" + std::to_string(port)});
  Ran watched = watching.get();
  EXPECT_EQ(watched.code, 0) << watched.out;
  auto lines = JsonLines(watched.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front().at("state"), "working");
  EXPECT_EQ(lines.back().at("state"), "completed");
  size_t artifacts = 0;
  for (const auto& l : lines) artifacts += l.at("newArtifacts").as_array().size();
  EXPECT_EQ(artifacts, 1u) << "the artifact, once: " << watched.out;
  std::stringstream stderr_text;
  stderr_text << std::ifstream(err).rdbuf();
  EXPECT_NE(stderr_text.str().find("re-attaching"), std::string::npos)
      << "it was following the stream: " << stderr_text.str();
}

TEST_F(A2aCli, SendStreamPrintsTheAgentsEventsToTheEnd) {
  Ran r = A2a("send " + url_ + " --skill long-delay --data '{\"delayMs\":300}' --stream --json");
  EXPECT_EQ(r.code, 0) << r.out;
  auto lines = JsonLines(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines.back().at("state"), "completed");
  EXPECT_FALSE(lines.front().at("taskId").as_string().empty());
}

// Issue 35: an approver's first hour with the CLI. list shows skill and age, hides the steps
// other runs started (the brief's drafting task) unless --all, and filters; inbox shows what
// waits on a person with what may be answered; answer takes several questions; approve and
// answer follow the task to where the answer takes it; history is the run's timeline.
TEST_F(A2aCli, AnApproversQueueListFiltersAnswersAndHistory) {
  const std::string brief(SendBrief().at("id").as_string());
  Ran clar = A2a("send " + url_ + " 'Plan the launch email' --skill clarify-then-confirm --wait --json");
  ASSERT_EQ(clar.code, 0) << clar.out;
  const std::string ask(json::parse(clar.out).at("id").as_string());
  Ran listed = A2a("list " + url_);
  EXPECT_NE(listed.out.find(brief + "  input-required  campaign-brief  "), std::string::npos)
      << listed.out;
  EXPECT_EQ(listed.out.find("brief-drafter"), std::string::npos) << listed.out;
  EXPECT_NE(A2a("list " + url_ + " --all").out.find("brief-drafter"), std::string::npos);
  Ran filtered = A2a("list " + url_ + " --skill clarify-then-confirm --state input-required");
  EXPECT_NE(filtered.out.find(ask), std::string::npos) << filtered.out;
  EXPECT_EQ(filtered.out.find(brief), std::string::npos) << filtered.out;
  EXPECT_EQ(A2a("list " + url_ + " --since 1d").out.find(ask) != std::string::npos, true);
  EXPECT_EQ(A2a("list " + url_ + " --since yesterday").code, 2);
  Ran inbox = A2a("inbox " + url_);
  EXPECT_EQ(inbox.code, 0);
  EXPECT_NE(inbox.out.find(brief + "  campaign-brief  waiting "), std::string::npos) << inbox.out;
  EXPECT_NE(inbox.out.find("answer: accept, reject"), std::string::npos) << inbox.out;
  EXPECT_NE(inbox.out.find("answer: audience=?, deadline=?"), std::string::npos) << inbox.out;
  EXPECT_LT(inbox.out.find(ask), inbox.out.find(brief)) << "newest first: " << inbox.out;
  const std::string err = (dir_ / "answer.err").string();
  EXPECT_EQ(A2a("answer " + url_ + " " + ask + " developers", err).code, 2);
  std::stringstream why;
  why << std::ifstream(err).rdbuf();
  EXPECT_NE(why.str().find("--set audience=... --set deadline=..."), std::string::npos)
      << why.str();
  Ran answered =
      A2a("answer " + url_ + " " + ask + " --set audience=developers --set deadline=friday");
  EXPECT_EQ(answered.code, 0) << answered.out;
  EXPECT_NE(answered.out.find("task " + ask + ": completed"), std::string::npos) << answered.out;
  Ran approved = A2a("approve " + url_ + " " + brief);
  EXPECT_NE(approved.out.find("task " + brief + ": completed"), std::string::npos)
      << approved.out;
  EXPECT_NE(A2a("inbox " + url_).out.find("nothing waits on you"), std::string::npos);
  Ran history = A2a("history " + url_ + " " + brief);
  EXPECT_EQ(history.code, 0);
  EXPECT_NE(history.out.find("#0  a2a.task.submitted"), std::string::npos) << history.out;
  EXPECT_NE(history.out.find("interrupt.resolved  review  (action accept by anonymous)"),
            std::string::npos)
      << history.out;
  EXPECT_NE(history.out.find("run.completed"), std::string::npos) << history.out;
  EXPECT_EQ(A2a("history " + url_ + " no-such-run").code, 1);
  EXPECT_TRUE(A2a("--version").out.starts_with("a2a ")) << "a2a --version";
  Ran a2ad_version{};
  {
    FILE* p = popen((testing::A2adBinary() + " --version").c_str(), "r");
    char buf[256] = {};
    const size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    if (p) a2ad_version.code = WEXITSTATUS(pclose(p));
    a2ad_version.out.assign(buf, n);
  }
  EXPECT_EQ(a2ad_version.code, 0);
  EXPECT_TRUE(a2ad_version.out.starts_with("a2ad ")) << a2ad_version.out;
}

TEST_F(A2aCli, PushListenRetriesItsJwksThenSaysWhy) {
  const std::string err = (dir_ / "listen.err").string();
  Ran r = A2a("push listen --listen 127.0.0.1:0 --jwks-url http://127.0.0.1:1/jwks.json", err);
  EXPECT_EQ(r.code, 1);
  std::stringstream text;
  text << std::ifstream(err).rdbuf();
  EXPECT_NE(text.str().find("retrying"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("cannot load the JWKS after 5 attempts"), std::string::npos)
      << text.str();
}

TEST_F(A2aCli, TheSameApprovalOverTheAgentsGrpcInterface) {
  Ran card = A2a("card " + url_ + " --binding grpc");
  ASSERT_EQ(card.code, 0);
  EXPECT_NE(card.out.find("A2A 1.0 over gRPC at 127.0.0.1:"), std::string::npos) << card.out;
  Ran sent = A2a("send " + url_ +
                 " --binding grpc --skill campaign-brief --data '{\"prompt\":\"grpc launch\"}' "
                 "--wait --json");
  ASSERT_EQ(sent.code, 0) << sent.out;
  json::object task = json::parse(sent.out).as_object();
  ASSERT_EQ(task.at("state"), "input-required") << sent.out;
  const std::string id(task.at("id").as_string());
  Ran approve = A2a("approve " + url_ + " " + id + " --binding grpc");
  EXPECT_EQ(approve.code, 0) << approve.out;
  Ran got = A2a("get " + url_ + " " + id + " --binding grpc --json");
  ASSERT_EQ(got.code, 0) << got.out;
  EXPECT_EQ(json::parse(got.out).at("state"), "completed") << got.out;
  // The agent's refusal over gRPC: its status and message, exit code 1.
  Ran missing = A2a("get " + url_ + " no-such-task --binding grpc");
  EXPECT_EQ(missing.code, 1) << missing.out;
}

}  // namespace a2ad::cli_test
