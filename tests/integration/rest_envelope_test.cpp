// Every REST route of the real server, walked with requests it must refuse: every non-2xx
// answer is OpenWOP's closed envelope {"error": "<snake_code>", "message": "...",
// "details"?: {...}} (DIGEST §2.3), never another shape, never an internal detail.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <filesystem>
#include <regex>

#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;

struct Probe {
  std::string method;
  std::string target;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers = {};
};

class RestEnvelope : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-envelope");
    server_ = ServerProcess::Start(testing::A2adBinary(), dir_.string(),
                                   {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows",
                                    "--body-limit", "4096", "--conformance-fixtures"});
  }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }

  // Asserts the closed envelope and returns the code.
  std::string ExpectEnvelope(const testing::ClientResponse& r, const Probe& p) {
    const std::string what = p.method + " " + p.target + " -> " + std::to_string(r.status) +
                             " " + r.body.substr(0, 300);
    EXPECT_GE(r.status, 400) << what;
    EXPECT_NE(r.Header("Content-Type").find("application/json"), std::string::npos) << what;
    json::value v;
    try {
      v = r.Json();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not JSON (" << e.what() << "): " << what;
      return "";
    }
    if (!v.is_object()) {
      ADD_FAILURE() << "not an object: " << what;
      return "";
    }
    const auto& o = v.as_object();
    for (const auto& kv : o)
      EXPECT_TRUE(kv.key() == "error" || kv.key() == "message" || kv.key() == "details")
          << "member '" << kv.key() << "' is not in the closed envelope: " << what;
    EXPECT_TRUE(o.contains("error") && o.at("error").is_string()) << what;
    EXPECT_TRUE(o.contains("message") && o.at("message").is_string()) << what;
    if (o.contains("details")) {
      EXPECT_TRUE(o.at("details").is_object()) << what;
    }
    if (!o.contains("error") || !o.at("error").is_string()) return "";
    const std::string code(o.at("error").as_string());
    EXPECT_TRUE(std::regex_match(code, std::regex("[a-z][a-z0-9_]*"))) << what;
    EXPECT_EQ(r.body.find(dir_.string()), std::string::npos) << "path leaked: " << what;
    return code;
  }

  fs::path dir_;
  ServerProcess server_;
};

TEST_F(RestEnvelope, EveryRouteRefusesInTheClosedEnvelope) {
  HttpClient c("127.0.0.1", server_.port);
  const std::string bad_json = R"({"workflowId": )";
  const std::string big_number = R"({"workflowId":"long-delay","inputs":{"n":1e999}})";
  const std::string dup = R"({"workflowId":"long-delay","workflowId":"x"})";
  std::vector<Probe> probes = {
      {"DELETE", "/v1/openapi.json", ""},
      {"POST", "/v1/workflows", "{}"},
      {"GET", "/v1/workflows/no-such-workflow", ""},
      {"PUT", "/v1/runs", "{}"},
      {"POST", "/v1/runs", bad_json},
      {"POST", "/v1/runs", big_number},
      {"POST", "/v1/runs", dup},
      {"POST", "/v1/runs", R"({"workflowId":"no-such-workflow"})"},
      {"POST", "/v1/runs", R"({"workflowId":"long-delay","inputs":[1]})"},
      {"POST", "/v1/runs", "[1]"},
      {"POST", "/v1/runs", R"({"workflowId":"long-delay"})", {{"Idempotency-Key", std::string(300, 'k')}}},
      {"GET", "/v1/runs?pageSize=0", ""},
      {"GET", "/v1/runs?pageSize=abc", ""},
      {"GET", "/v1/runs?pageToken=%%%", ""},
      {"GET", "/v1/runs?state=paused", ""},
      {"GET", "/v1/runs?updatedSince=yesterday", ""},
      {"POST", "/v1/push/deliveries/retry", bad_json},
      {"POST", "/v1/push/deliveries/retry", "{}"},
      {"POST", "/v1/push/deliveries/retry", R"({"taskId":"no-such-task","eventId":"e"})"},
      {"POST", "/console/", "{}"},
      {"GET", "/v1/runs/no-such-run", ""},
      {"DELETE", "/v1/runs/no-such-run", ""},
      {"POST", "/v1/runs/no-such-run/cancel", "{}"},
      {"POST", "/v1/runs/no-such-run/cancel", bad_json},
      {"GET", "/v1/runs/no-such-run/events", ""},
      {"GET", "/v1/runs/no-such-run/events?streamMode=bogus", ""},
      {"GET", "/v1/runs/no-such-run/events", "", {{"Last-Event-ID", "x"}}},
      {"GET", "/v1/runs/no-such-run/events/poll", ""},
      {"GET", "/v1/runs/no-such-run/events/poll?timeout=abc", ""},
      {"GET", "/v1/runs/no-such-run/events/poll?lastSequence=99999999999999999999999", ""},
      {"POST", "/v1/runs/no-such-run/interrupts/approve", R"({"resumeValue":{}})"},
      {"POST", "/v1/runs/no-such-run/interrupts/approve", bad_json},
      {"POST", "/v1/runs/no-such-run/approvals/approve", "{}"},
      {"GET", "/v1/interrupts/not-a-token", ""},
      {"POST", "/v1/interrupts/not-a-token", R"({"resumeValue":{}})"},
      {"POST", "/v1/interrupts/not-a-token/resolve", R"({"resumeValue":{}})"},
      {"PUT", "/v1/interrupts/not-a-token", ""},
      {"GET", "/v1/a2a/tasks/no-such-task", ""},
      {"POST", "/v1/a2a/tasks/no-such-task", "{}"},
      {"GET", "/v1/host/sample/a2a/tasks/no-such-task", ""},
      {"GET", "/v1/host/sample/a2a/tasks/push-config", ""},
      {"POST", "/v1/host/sample/a2a/tasks/push-config", bad_json},
      {"POST", "/v1/host/sample/a2a/tasks/push-config", "{}"},
      {"POST", "/v1/host/sample/a2a/tasks/push-config",
       R"({"taskId":"t","url":"https://127.0.0.1/hook"})"},
      {"GET", "/v1/webhooks", ""},
      {"POST", "/v1/webhooks", bad_json},
      {"POST", "/v1/webhooks", R"({"url":"https://10.1.2.3/x","events":["run.completed"]})"},
      {"POST", "/v1/webhooks", R"({"url":5})"},
      {"DELETE", "/v1/webhooks/no-such-webhook", ""},
      {"GET", "/v1/webhooks/no-such-webhook", ""},
      {"POST", "/v1/push/deliveries", ""},
      {"GET", "/v1/push/deliveries", ""},
      {"GET", "/v1/push/deliveries?taskId=t&limit=0", ""},
      {"POST", "/v1/push/dead-letters", ""},
      {"POST", "/.well-known/jwks.json", ""},
      {"POST", "/.well-known/agent-card.json", ""},
      {"GET", "/v1/a2a", ""},
      {"GET", "/runs", ""},
      {"GET", "/workflows/x", ""},
      {"GET", "/v1/no-such-route", ""},
      {"GET", "/nothing/here", ""},
      {"POST", "/v1/runs", std::string(5000, ' ')},  // past --body-limit: refused before routing
  };
  std::map<std::string, int> codes;
  for (const auto& p : probes) {
    auto r = c.Request(p.method, p.target, p.body, p.headers);
    ++codes[ExpectEnvelope(r, p)];
    if (!r.keep_alive) c.Close();
  }
  // The walk met the codes it was written for (a refusal of the wrong kind still fails).
  for (const char* expected :
       {"validation_error", "not_found", "method_not_allowed", "webhook_url_rejected",
        "subscription_not_found", "unsupported_stream_mode", "unauthenticated",
        "payload_too_large"})
    EXPECT_GT(codes[expected], 0) << "no probe answered " << expected;
}

}  // namespace
}  // namespace a2ad
