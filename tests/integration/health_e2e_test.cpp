// Health through the real binary (issue 18): /readyz and what it checks (a write to the
// database now, the restart's recovery, every workflow of the directory loaded); /healthz
// stays the process's liveness; a read-only or damaged database stops startup with a message
// that says what is wrong and what to do, and nothing is served.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

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

class Health : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-health");
    fs::create_directories(dir_ / "data");
    fs::create_directories(dir_ / "workflows");
  }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::permissions(dir_, fs::perms::all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  void Start() {
    server_ = testing::ServerProcess::Start(testing::A2adBinary(), (dir_ / "data").string(),
                                            {"--workflows-dir", (dir_ / "workflows").string()});
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_.port);
  }
  // `a2ad serve` on a free port as a user the file permissions apply to (nobody, when the
  // tests run as root), until it exits (at most `seconds`): its exit code and what it printed.
  Command Serve(int seconds = 10) {
    const std::string as =
        getuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
    return RunCommand(as + "timeout " + std::to_string(seconds) + " " + testing::A2adBinary() +
                      " serve --listen 127.0.0.1:0 --data-dir " + (dir_ / "data").string());
  }
  fs::path dir_;
  testing::ServerProcess server_;
  std::unique_ptr<testing::HttpClient> client_;
};

TEST_F(Health, ReadyzSaysReadyWithWhatItChecked) {
  std::ofstream(dir_ / "workflows" / "noop.json") << R"({"id":"noop","name":"n","version":"1.0.0",
    "nodes":[{"id":"n","typeId":"core.noop","name":"n","position":{"x":0,"y":0},"config":{},"inputs":{}}],
    "edges":[],"triggers":[],"variables":[],"metadata":{},"settings":{}})";
  Start();
  auto r = client_->Request("GET", "/readyz");
  ASSERT_EQ(r.status, 200) << r.body;
  json::value body = json::parse(r.body);
  EXPECT_EQ(body.at("ready"), true);
  EXPECT_EQ(body.at("checks").at("database").at("ok"), true);
  EXPECT_EQ(body.at("checks").at("recovery").at("ok"), true);
  EXPECT_EQ(body.at("checks").at("workflows").at("loaded"), 1);
  EXPECT_EQ(client_->Request("GET", "/healthz").status, 200);
}

TEST_F(Health, AWorkflowThatDoesNotLoadMakesItUnready) {
  std::ofstream(dir_ / "workflows" / "broken.json") << R"({"id":"broken"})";
  Start();
  auto r = client_->Request("GET", "/readyz");
  ASSERT_EQ(r.status, 503) << r.body;
  json::value body = json::parse(r.body);
  EXPECT_EQ(body.at("ready"), false);
  EXPECT_EQ(body.at("checks").at("workflows").at("ok"), false);
  EXPECT_EQ(body.at("checks").at("workflows").at("refused"), 1);
  EXPECT_NE(json::serialize(body).find("a2ad validate"), std::string::npos) << r.body;
  EXPECT_EQ(body.at("checks").at("database").at("ok"), true);
  EXPECT_EQ(client_->Request("GET", "/healthz").status, 200) << "alive, though not ready";
}

TEST_F(Health, AReadOnlyDatabaseStopsStartupSayingWhatToDo) {
  // A database made by a first start, then made read-only (file and directory).
  fs::permissions(dir_ / "data", fs::perms::all, fs::perm_options::add);
  Command first = Serve(2);  // makes it (and its keys), as the user the second start runs as
  ASSERT_TRUE(fs::exists(dir_ / "data" / "a2ad.db")) << first.out;
  fs::permissions(dir_ / "data" / "a2ad.db",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read,
                  fs::perm_options::replace);
  fs::permissions(dir_ / "data", fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  Command c = Serve();
  EXPECT_EQ(c.exit_code, 1) << c.out;
  EXPECT_EQ(c.out.find("a2ad: serving"), std::string::npos) << "nothing is served: " << c.out;
  EXPECT_NE(c.out.find("cannot write"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("writable by the user a2ad runs as"), std::string::npos) << c.out;
}

TEST_F(Health, ADamagedDatabaseStopsStartupSayingWhatToDo) {
  std::ofstream(dir_ / "data" / "a2ad.db") << std::string(8192, 'x');
  fs::permissions(dir_ / "data", fs::perms::all, fs::perm_options::add);
  fs::permissions(dir_ / "data" / "a2ad.db", fs::perms::all, fs::perm_options::add);
  Command c = Serve();
  EXPECT_EQ(c.exit_code, 1) << c.out;
  EXPECT_EQ(c.out.find("a2ad: serving"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("is not a readable a2ad database"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("restore a backup"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace a2ad

namespace a2ad {
namespace {

TEST_F(Health, ProbesTakeGetAndHeadAndAHeadAnswerHasNoBody) {
  Start();
  for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
    auto post = client_->Request("POST", path, "{}");
    EXPECT_EQ(post.status, 405) << path;
    EXPECT_EQ(post.Header("Allow"), "GET, HEAD") << path;
  }
  // A HEAD answer has the GET's head (its Content-Length) and no body: on the kept-alive
  // connection the next answer is read whole, not after a stray body.
  auto head = client_->Request("HEAD", "/healthz");
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.Header("Content-Length"), "15");
  auto next = client_->Request("GET", "/healthz");
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, R"({"status":"ok"})");
}

}  // namespace
}  // namespace a2ad
