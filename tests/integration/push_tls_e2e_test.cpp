// The https push happy path (issue 14) with the real binary: the test makes a CA and a server
// certificate for 127.0.0.1 (test_pki.hpp) and runs its own https webhook receiver on
// loopback; a2ad trusts that CA (--egress-ca-file) and reaches loopback through the test
// allow-list only (plain http stays refused). A push is delivered over https, signed (its JWT
// verifies against the server's JWKS); a receiver whose certificate comes from another CA is
// refused in the handshake, retried, and dead-lettered as any failing destination.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>

#include "a2ad/core/clock.hpp"
#include "a2ad/push/signer.hpp"
#include "http_client.hpp"
#include "test_paths.hpp"
#include "test_pki.hpp"
#include "wait_for.hpp"
#include "webhook_receiver.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;
using testing::WaitFor;
using testing::WebhookReceiver;

// How long a delivery is waited for (testing::WaitFor).
constexpr std::chrono::seconds kPatience(30);

json::object SendWithPush(const std::string& id, const std::string& hook) {
  return json::object{
      {"message",
       json::object{{"kind", "message"},
                    {"role", "user"},
                    {"messageId", id},
                    {"parts", json::array{json::object{{"kind", "text"}, {"text", "x"}}}}}},
      {"configuration",
       json::object{{"blocking", true},
                    {"pushNotificationConfig", json::object{{"url", hook}, {"token", "tok"}}}}}};
}

TEST(PushTlsE2E, DeliveredOverHttpsSignedAndAnUntrustedReceiverIsRefused) {
  const fs::path dir = testing::FreshTestDir("a2ad-push-tls");
  testing::TestPki trusted("webhook CA");
  testing::WriteTextFile(dir / "webhook-ca.pem", trusted.ca_pem());
  WebhookReceiver rx(trusted.IssueServer());
  testing::TestPki untrusted("impostor CA");
  WebhookReceiver impostor(untrusted.IssueServer());
  ASSERT_TRUE(rx.Url().starts_with("https://127.0.0.1:"));

  ServerProcess server = ServerProcess::Start(
      testing::A2adBinary(), (dir / "data").string(),
      {"--egress-ca-file", (dir / "webhook-ca.pem").string(), "--egress-allowlist", "127.0.0.1/32",
       "--push-max-attempts", "2", "--push-backoff-ms", "20"});
  HttpClient c("127.0.0.1", server.port);

  auto sent = c.Rpc("message/send", SendWithPush("m1", rx.Url("/hook")));
  ASSERT_TRUE(sent.as_object().contains("result")) << json::serialize(sent);
  const std::string task_id(sent.at("result").at("id").as_string());
  ASSERT_EQ(rx.WaitFor(1), 1u);
  auto deliveries = [&](const std::string& task) {
    return c.Request("GET", "/v1/push/deliveries?taskId=" + task).Json();
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        auto d = deliveries(task_id).at("deliveries").as_array();
        return d.size() == 1 && d[0].at("state") == "delivered";
      },
      kPatience))
      << json::serialize(deliveries(task_id));
  const auto got = rx.requests().at(0);
  EXPECT_EQ(got.target, "/hook");
  EXPECT_EQ(got.Header("X-A2A-Notification-Token"), "tok");
  EXPECT_EQ(json::parse(got.body).at("status").at("state"), "completed");
  core::SystemClock clock;
  push::VerifyOptions options;
  options.issuer = "http://127.0.0.1:" + std::to_string(server.port);
  options.audience = rx.Url("/hook");
  push::JwtVerifier verifier(options, clock);
  ASSERT_TRUE(verifier.SetJwks(c.Request("GET", "/.well-known/jwks.json").body));
  auto claims = verifier.Verify(got.Header("Authorization").substr(7));
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->at("taskId"), json::value(task_id));

  // The impostor's certificate does not chain to the trusted CA: every attempt fails in the
  // handshake, nothing reaches it, and the delivery is dead-lettered after its two attempts.
  auto refused = c.Rpc("message/send", SendWithPush("m2", impostor.Url("/hook")));
  const std::string refused_id(refused.at("result").at("id").as_string());
  ASSERT_TRUE(WaitFor(
      [&] {
        auto d = deliveries(refused_id).at("deliveries").as_array();
        return d.size() == 1 && d[0].at("state") == "dead";
      },
      kPatience))
      << json::serialize(deliveries(refused_id));
  const json::value row = deliveries(refused_id).at("deliveries").at(0);
  EXPECT_EQ(row.at("attempts"), 2);
  EXPECT_NE(std::string(row.at("lastError").as_string()).find("TLS"), std::string::npos) << row;
  EXPECT_EQ(impostor.count(), 0u);
  EXPECT_TRUE(WaitFor([&] { return impostor.failed_handshakes() >= 2; }, kPatience));
  EXPECT_EQ(impostor.failed_handshakes(), 2u);
  EXPECT_EQ(rx.count(), 1u);

  server.Kill(SIGKILL);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace a2ad
