// The OpenWOP host test seams (transport/openwop/sample_seams.hpp, the push-config seam) through the
// real binary: off unless --conformance-fixtures, and with it what the conformance suite's
// webhook-tenant-isolation and idempotency-concurrent-claim scenarios drive.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad::seams_test {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using testing::ServerProcess;

class SampleSeams : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-seams"); }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(bool seams) {
    std::vector<std::string> flags{"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows"};
    if (seams) flags.push_back("--conformance-fixtures");
    server_ = ServerProcess::Start(testing::A2adBinary(), dir_.string(), flags);
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_.port);
  }
  testing::ClientResponse Post(const std::string& path, const std::string& body) {
    return client_->Request("POST", path, body, {{"Content-Type", "application/json"}});
  }
  testing::ClientResponse Surface(const std::string& tenant, const std::string& op,
                                  json::object args = {}) {
    json::object body{
        {"tenantId", tenant}, {"surface", "webhooks"}, {"op", op}, {"args", std::move(args)}};
    return Post("/v1/host/sample/test/surface", json::serialize(body));
  }
  static std::vector<std::string> Ids(const testing::ClientResponse& list) {
    std::vector<std::string> ids;
    const json::value body = list.Json();
    for (const auto& w : body.at("webhooks").as_array())
      ids.emplace_back(w.at("webhookId").as_string());
    return ids;
  }

  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<testing::HttpClient> client_;
};

constexpr const char* kClaim = "/v1/host/sample/test/idempotency/concurrent-claim";

TEST_F(SampleSeams, AreUnknownPathsWithoutConformanceFixtures) {
  Start(false);
  EXPECT_EQ(Post(kClaim, "{}").status, 404);
  EXPECT_EQ(
      Post("/v1/host/sample/test/surface", R"({"tenantId":"a","surface":"webhooks","op":"list"})")
          .status,
      404);
  EXPECT_EQ(Post("/v1/host/sample/a2a/tasks/push-config",
                 R"({"taskId":"x","url":"https://169.254.169.254/"})")
                .status,
            404);
  EXPECT_EQ(Post("/v1/host/sample/a2a/tasks/start", R"({"scenario":"paused-at-approval"})").status,
            404);
}

TEST_F(SampleSeams, ConcurrentClaimReportsOneIdentityAndOneDeliveryAtEveryConcurrency) {
  Start(true);
  for (const char* body :
       {"{}", R"({"executors":2})", R"({"executors":5})", R"({"executors":32})"}) {
    auto r = Post(kClaim, body);
    ASSERT_EQ(r.status, 200) << body << " " << r.body;
    const json::value out = r.Json();
    const int64_t attempted = out.at("attempted").as_int64();
    EXPECT_GE(attempted, 2);
    EXPECT_EQ(out.at("delivered").as_int64(), 1) << r.body;
    const auto& ids = out.at("mintedIds").as_array();
    ASSERT_EQ(static_cast<int64_t>(ids.size()), attempted);
    for (const auto& id : ids) EXPECT_EQ(id, out.at("logicalInvocationId"));
  }
  // Two probes are two runs: two identities.
  EXPECT_NE(Post(kClaim, "{}").Json().at("logicalInvocationId"),
            Post(kClaim, "{}").Json().at("logicalInvocationId"));
  for (const char* bad : {R"({"executors":1})", R"({"executors":33})", R"({"executors":"2"})",
                          R"({"executors":2.5})"}) {
    auto r = Post(kClaim, bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.Json().at("error"), "validation_error") << r.body;
  }
  EXPECT_EQ(Post(kClaim, "[1]").status, 400);
  EXPECT_EQ(client_->Request("GET", kClaim).status, 405);
}

TEST_F(SampleSeams, WebhooksSurfaceKeepsEachTenantsSubscriptionsToItself) {
  Start(true);
  auto reg =
      Surface("tenant-a", "register",
              {{"url", "https://example.com/hook"}, {"events", json::array{"run.completed"}}});
  ASSERT_EQ(reg.status, 200) << reg.body;
  const std::string id(reg.Json().at("webhookId").as_string());
  EXPECT_FALSE(reg.Json().as_object().contains("secret"));  // the seam never shows it
  auto in_a = Surface("tenant-a", "list");
  ASSERT_EQ(in_a.status, 200) << in_a.body;
  EXPECT_EQ(Ids(in_a), std::vector<std::string>{id});
  EXPECT_TRUE(Ids(Surface("tenant-b", "list")).empty());
  // Tenant B cannot remove it, and is told it does not exist.
  auto foreign = Surface("tenant-b", "unregister", {{"webhookId", id}});
  EXPECT_EQ(foreign.status, 404);
  EXPECT_EQ(foreign.Json().at("error"), "subscription_not_found");
  EXPECT_EQ(Ids(Surface("tenant-a", "list")), std::vector<std::string>{id});
  // The public route of the default tenant does not reach it either (not found).
  EXPECT_EQ(client_->Request("DELETE", "/v1/webhooks/" + id).status, 404);
  auto gone = Surface("tenant-a", "unregister", {{"webhookId", id}});
  EXPECT_EQ(gone.status, 200) << gone.body;
  EXPECT_TRUE(Ids(Surface("tenant-a", "list")).empty());
  EXPECT_EQ(Surface("tenant-a", "unregister", {{"webhookId", id}}).status, 404);
}

TEST_F(SampleSeams, SurfaceRefusesWhatItDoesNotServeInTheEnvelope) {
  Start(true);
  auto kv = Post("/v1/host/sample/test/surface",
                 R"({"tenantId":"a","surface":"kv","op":"set","args":{"k":"v"}})");
  EXPECT_EQ(kv.status, 404);  // what the suite reads as "not exposed"
  EXPECT_EQ(kv.Json().at("error"), "surface_not_supported");
  auto op = Surface("a", "drop");
  EXPECT_EQ(op.status, 400);
  EXPECT_EQ(op.Json().at("error"), "validation_error");
  EXPECT_EQ(Post("/v1/host/sample/test/surface", R"({"surface":"webhooks","op":"list"})").status,
            400);
  EXPECT_EQ(Post("/v1/host/sample/test/surface", "not json").status, 400);
  auto hostile = Surface(
      "a", "register",
      {{"url", "https://169.254.169.254/latest"}, {"events", json::array{"run.completed"}}});
  EXPECT_EQ(hostile.status, 400);
  EXPECT_EQ(hostile.Json().at("error"), "webhook_url_rejected");
  auto no_events = Surface("a", "register", {{"url", "https://example.com/h"}});
  EXPECT_EQ(no_events.status, 400);
  // The server is still up and answering.
  EXPECT_EQ(client_->Request("GET", "/healthz").status, 200);
}

}  // namespace
}  // namespace a2ad::seams_test
