// The serve flags this change added, through the real binary: --a2a-versions 1.0 (the strict
// card for everyone, 0.3 methods refused), --tck-skill (the conformance skill, default skill
// when none is named), and what bad values of them get (a clear message, exit 2 or CLI11's
// usage error, no server).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
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

class ServeFlags : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-flags"); }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(std::vector<std::string> flags) {
    server_ = ServerProcess::Start(kBinary, dir_.string(), std::move(flags));
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  json::object Card(std::vector<std::pair<std::string, std::string>> headers = {}) {
    return client_->Request("GET", "/.well-known/agent-card.json", "", std::move(headers))
        .Json()
        .as_object();
  }

  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(ServeFlags, ByDefaultBothVersionsAndTheStrictCardOnlyOnRequest) {
  Start({});
  EXPECT_TRUE(Card().contains("url"));
  EXPECT_FALSE(Card({{"A2A-Version", "1.0"}}).contains("url"));
  auto r = client_->Rpc("tasks/get", json::object{{"id", "x"}});
  EXPECT_EQ(r.at("error").at("code"), -32001) << r;  // served: an unknown task
  const json::object card = Card();
  for (const auto& s : card.at("skills").as_array()) EXPECT_NE(s.at("id"), "tck");
}

TEST_F(ServeFlags, OneZeroOnlyServesTheStrictCardAndRefusesZeroThreeMethods) {
  Start({"--a2a-versions", "1.0"});
  const json::object card = Card();
  EXPECT_FALSE(card.contains("url"));
  EXPECT_FALSE(card.contains("additionalInterfaces"));
  for (const auto& i : card.at("supportedInterfaces").as_array())
    EXPECT_EQ(i.at("protocolVersion"), "1.0") << i;
  auto r = client_->Rpc("tasks/get", json::object{{"id", "x"}});
  EXPECT_EQ(r.at("error").at("code"), -32009) << r;
  r = client_->Rpc("GetTask", json::object{{"id", "x"}}, "1.0");
  EXPECT_EQ(r.at("error").at("code"), -32001) << r;
}

TEST_F(ServeFlags, TheTckSkillIsServedAndIsTheDefault) {
  Start({"--tck-skill"});
  bool listed = false;
  const json::object card = Card();
  for (const auto& s : card.at("skills").as_array()) listed |= s.at("id") == "tck";
  EXPECT_TRUE(listed);
  // No skillId: the tck skill answers, here with a Message (tck-message-response).
  auto r = client_->Rpc(
      "SendMessage",
      json::object{{"message", json::object{{"messageId", "tck-message-response-flags"},
                                            {"role", "ROLE_USER"},
                                            {"parts", json::array{json::object{{"text", "hi"}}}}}}},
      "1.0");
  EXPECT_EQ(r.at("result").at("message").at("parts").at(0).at("text"), "Direct message response")
      << r;
}

TEST_F(ServeFlags, BadValuesAreRefusedWithAMessageAndNoServer) {
  const std::string base = kBinary + " serve --listen 127.0.0.1:0 --data-dir " + dir_.string();
  Command c = RunCommand(base + " --grpc-listen not-an-address");
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("--grpc-listen"), std::string::npos) << c.out;
  c = RunCommand(base + " --a2a-versions 2.0");
  EXPECT_NE(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("--a2a-versions"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace a2ad
