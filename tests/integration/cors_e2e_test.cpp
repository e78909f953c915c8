// CORS through the real binary (issue 18): with --cors-origin a browser page of that origin
// may call a2ad (its preflight answered before authentication, the answer's headers exposed);
// another origin's preflight is refused; without the flag nothing changes. The same in a real
// browser: tests/interop/cors_browser.test.mjs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;

constexpr const char* kApp = "http://app.example.test:5173";

class Cors : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-cors"); }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(std::vector<std::string> flags) {
    server_ = testing::ServerProcess::Start(testing::A2adBinary(), (dir_ / "data").string(),
                                            std::move(flags));
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_.port);
  }
  testing::ClientResponse Preflight(const std::string& origin, const std::string& path,
                                    const std::string& headers) {
    return client_->Request("OPTIONS", path, "",
                            {{"Origin", origin},
                             {"Access-Control-Request-Method", "POST"},
                             {"Access-Control-Request-Headers", headers}});
  }
  fs::path dir_;
  testing::ServerProcess server_;
  std::unique_ptr<testing::HttpClient> client_;
};

TEST_F(Cors, APreflightOfAConfiguredOriginIsAnsweredWithWhatItMaySend) {
  Start({"--cors-origin", std::string(kApp) + ",https://other.example.test"});
  auto r = Preflight(kApp, "/v1/a2a", "content-type, Authorization, A2A-Version, x-not-read");
  EXPECT_EQ(r.status, 204) << r.body;
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), kApp);
  EXPECT_NE(r.Header("Access-Control-Allow-Methods").find("POST"), std::string::npos);
  // The headers a2ad reads, in the browser's lowercase; one it does not read is left out.
  EXPECT_EQ(r.Header("Access-Control-Allow-Headers"), "content-type, authorization, a2a-version");
  EXPECT_EQ(r.Header("Access-Control-Max-Age"), "600");
  EXPECT_EQ(r.Header("Vary"), "Origin");
  EXPECT_EQ(r.Header("Access-Control-Allow-Credentials"), "");
  // The same on every surface, matched without regard to case.
  EXPECT_EQ(Preflight("HTTP://APP.example.test:5173", "/a2a/rest/message:send", "content-type")
                .status,
            204);
  EXPECT_EQ(Preflight("https://other.example.test", "/v1/runs", "content-type").status, 204);
}

TEST_F(Cors, ACallOfAConfiguredOriginGetsTheHeadersABrowserNeeds) {
  Start({"--cors-origin", kApp});
  auto r = client_->Request(
      "POST", "/v1/a2a",
      R"({"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message",
          "role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}})",
      {{"Origin", kApp}, {"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), kApp);
  EXPECT_NE(r.Header("Access-Control-Expose-Headers").find("WWW-Authenticate"), std::string::npos);
  EXPECT_EQ(r.Header("Vary"), "Origin");
  // Errors too (a browser reads a refusal's body only with the header).
  auto missing = client_->Request("GET", "/v1/runs/nope", "", {{"Origin", kApp}});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Header("Access-Control-Allow-Origin"), kApp);
}

TEST_F(Cors, AnotherOriginGetsNoHeadersAndItsPreflightIsRefused) {
  Start({"--cors-origin", kApp});
  auto r = Preflight("https://evil.example.test", "/v1/a2a", "content-type");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.Json().at("error").as_string(), "cors_origin_not_allowed") << r.body;
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), "");
  auto card = client_->Request("GET", "/.well-known/agent-card.json", "",
                               {{"Origin", "https://evil.example.test"}});
  EXPECT_EQ(card.status, 200);
  EXPECT_EQ(card.Header("Access-Control-Allow-Origin"), "");
}

TEST_F(Cors, APreflightNeedsNoCredentialButTheCallDoes) {
  // A key turns authentication on; the browser's preflight carries none.
  const std::string key_file = (dir_ / "key.txt").string();
  fs::create_directories(dir_ / "data");
  ASSERT_EQ(std::system((testing::A2adBinary() + " keys create --data-dir " +
                         (dir_ / "data").string() +
                         " --tenant t --scopes tasks:read > " + key_file)
                            .c_str()),
            0);
  Start({"--cors-origin", "*"});
  auto pre = Preflight("https://anyone.example.test", "/a2a/rest/tasks", "authorization");
  EXPECT_EQ(pre.status, 204) << pre.body;
  EXPECT_EQ(pre.Header("Access-Control-Allow-Origin"), "*");
  auto refused = client_->Request("GET", "/a2a/rest/tasks", "",
                                  {{"Origin", "https://anyone.example.test"}});
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.Header("Access-Control-Allow-Origin"), "*");
}

TEST_F(Cors, WithoutTheFlagNothingChanges) {
  Start({});
  auto r = Preflight(kApp, "/v1/a2a", "content-type");
  EXPECT_EQ(r.status, 405) << r.body;
  EXPECT_EQ(r.Header("Access-Control-Allow-Origin"), "");
  auto card = client_->Request("GET", "/.well-known/agent-card.json", "", {{"Origin", kApp}});
  EXPECT_EQ(card.Header("Access-Control-Allow-Origin"), "");
}

TEST_F(Cors, AValueThatIsNotAnOriginStopsStartup) {
  const std::string cmd = testing::A2adBinary() + " serve --listen 127.0.0.1:0 --data-dir " +
                          (dir_ / "data").string() +
                          " --cors-origin https://app.example.test/path 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[1024];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 2) << out;
  EXPECT_NE(out.find("--cors-origin 'https://app.example.test/path': expected * or an origin"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace a2ad
