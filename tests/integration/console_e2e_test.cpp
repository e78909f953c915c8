// The operator console's routes through the real binary (issue 33; console_routes.hpp): the
// page at any path under /console/, its hashed assets cached for a year and gzipped when
// accepted, a strict Content-Security-Policy on every answer, public while the API needs a
// key, 404 for an asset the build does not have, 405 for a write, off with --no-console.
// And GET /v1/runs's filters, which the console's task list uses: workflow, A2A state,
// context and changed-since, all in the store, with the total count.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

class Console : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-console");
    fs::create_directories(dir_ / "data");
  }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows"};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = testing::ServerProcess::Start(testing::A2adBinary(), (dir_ / "data").string(), args);
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_.port);
  }
  std::string CreateKey(const std::string& tenant, const std::string& scopes) {
    const std::string cmd = testing::A2adBinary() + " keys create --data-dir " +
                            (dir_ / "data").string() + " --tenant " + tenant + " --scopes " +
                            scopes + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[512];
    for (size_t n; p && (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (p) pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
  }
  testing::ClientResponse Get(const std::string& target,
                              std::vector<std::pair<std::string, std::string>> headers = {}) {
    return client_->Request("GET", target, "", std::move(headers));
  }
  std::string StartRun(const std::string& workflow, const std::string& inputs) {
    auto r = client_->Request("POST", "/v1/runs",
                              R"({"workflowId":")" + workflow + R"(","inputs":)" + inputs + "}",
                              {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 201) << r.body;
    return std::string(r.Json().at("runId").as_string());
  }

  fs::path dir_;
  testing::ServerProcess server_;
  std::unique_ptr<testing::HttpClient> client_;
};

TEST_F(Console, ThePageAndItsAssetsAreServedWithAStrictPolicy) {
  Start();
  auto redirect = Get("/console");
  EXPECT_EQ(redirect.status, 308);
  EXPECT_EQ(redirect.Header("Location"), "/console/");

  auto page = Get("/console/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.Header("Cache-Control"), "no-cache");
  const std::string csp = page.Header("Content-Security-Policy");
  EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
  EXPECT_EQ(page.Header("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(page.Header("Referrer-Policy"), "no-referrer");
  // No inline script: the page loads its bundle from this origin.
  EXPECT_EQ(page.body.find("<script>"), std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page.body, m, std::regex(R"re(src="(/console/assets/[^"]+\.js)")re")))
      << page.body;
  const std::string script = m[1];

  // Any page path is the page (the browser routes): a reload of a task keeps its place.
  auto deep = Get("/console/tasks/some-task-id");
  EXPECT_EQ(deep.status, 200);
  EXPECT_EQ(deep.body, page.body);

  auto js = Get(script);
  ASSERT_EQ(js.status, 200);
  EXPECT_EQ(js.Header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.Header("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_FALSE(js.Header("Content-Security-Policy").empty());
  EXPECT_TRUE(js.Header("Content-Encoding").empty());
  auto gz = Get(script, {{"Accept-Encoding", "br, gzip"}});
  ASSERT_EQ(gz.status, 200);
  EXPECT_EQ(gz.Header("Content-Encoding"), "gzip");
  EXPECT_EQ(gz.Header("Vary"), "Accept-Encoding");
  ASSERT_GE(gz.body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz.body[0]), 0x1f);  // gzip's magic
  EXPECT_LT(gz.body.size(), js.body.size());
  EXPECT_TRUE(Get(script, {{"Accept-Encoding", "gzip;q=0"}}).Header("Content-Encoding").empty());

  auto missing = Get("/console/assets/index-old.js");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.Json().at("error"), "not_found");
  auto post = client_->Request("POST", "/console/", "{}");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.Header("Allow"), "GET, HEAD");
  auto head = client_->Request("HEAD", "/console/");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());

  // Every path is the page, but one label of the metrics: a client cannot grow them.
  for (int i = 0; i < 5; ++i) Get("/console/made-up-" + std::to_string(i));
  const std::string metrics = Get("/metrics").body;
  EXPECT_NE(metrics.find(R"(a2ad_http_requests_total{operation="console",status="200"})"),
            std::string::npos);
  EXPECT_EQ(metrics.find("made-up"), std::string::npos);
}

TEST_F(Console, IsPublicWhileTheApiNeedsAKeyAndOffWithNoConsole) {
  const std::string key = CreateKey("acme", "tasks:read,runs:read");
  ASSERT_FALSE(key.empty());
  Start();
  EXPECT_EQ(Get("/console/").status, 200);  // the files hold no data
  EXPECT_EQ(Get("/v1/runs").status, 401);   // what the page reads does
  auto me = Get("/v1/me", {{"X-API-Key", key}});
  ASSERT_EQ(me.status, 200);
  EXPECT_EQ(me.Json().at("tenant"), "acme");
  server_.Kill(SIGKILL);
  Start({"--no-console"});
  EXPECT_EQ(Get("/console/").status, 401);  // an unknown path of the API, then
  auto off = Get("/console/", {{"X-API-Key", key}});
  EXPECT_EQ(off.status, 404);
  EXPECT_EQ(off.Json().at("error"), "not_found");
}

TEST_F(Console, TheRunListFiltersInTheStoreAndCounts) {
  Start();
  const std::string d1 = StartRun("long-delay", "{}");
  const std::string d2 = StartRun("long-delay", "{}");
  const std::string b1 = StartRun("await-event", "{}");
  auto list = [&](const std::string& query) { return Get("/v1/runs?" + query).Json().as_object(); };
  auto ids = [](const json::object& page) {
    std::vector<std::string> out;
    for (const auto& r : page.at("runs").as_array())
      out.emplace_back(r.at("runId").as_string());
    return out;
  };
  // Two pages of the long-delay runs, one at a time, newest first, counted.
  auto first = list("workflowId=long-delay&pageSize=1");
  EXPECT_EQ(first.at("totalSize"), 2);
  ASSERT_EQ(ids(first).size(), 1u);
  EXPECT_FALSE(first.at("runs").at(0).at("updatedAt").as_string().empty());
  auto second = list("workflowId=long-delay&pageSize=1&pageToken=" +
                     std::string(first.at("nextPageToken").as_string()));
  ASSERT_EQ(ids(second).size(), 1u);
  EXPECT_NE(ids(first)[0], ids(second)[0]);
  EXPECT_FALSE(second.contains("nextPageToken"));
  // A2A state: the long-delay runs work (a timer), await-event parks (a pause reads working).
  EXPECT_EQ(list("state=working").at("totalSize"), 3);
  EXPECT_EQ(list("state=completed").at("totalSize"), 0);
  // Context: each run is its own.
  const std::string ctx = std::string(
      Get("/a2a/rest/tasks/" + b1, {{"A2A-Version", "1.0"}}).Json().at("contextId").as_string());
  EXPECT_EQ(ids(list("contextId=" + ctx)), std::vector<std::string>{b1});
  // Changed since: none after a time to come; all since a time past.
  EXPECT_EQ(list("updatedSince=2999-01-01T00:00:00Z").at("totalSize"), 0);
  EXPECT_EQ(list("updatedSince=2000-01-01T00:00:00Z").at("totalSize"), 3);
  // Refusals name the parameter.
  for (const char* bad : {"state=paused", "updatedSince=yesterday", "status=asleep", "pageSize=0"}) {
    auto r = Get(std::string("/v1/runs?") + bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.Json().at("error"), "validation_error") << bad;
    EXPECT_EQ(std::string(r.Json().at("message").as_string())
                  .find(std::string(bad).substr(0, std::string(bad).find('='))),
              0u)
        << r.body;
  }
  (void)d1;
  (void)d2;
}

}  // namespace
}  // namespace a2ad
