// WebhookClient over real loopback HTTP: delivered on 2xx, failed on 5xx, never follows a
// redirect, bounded by its timeouts, connects only to the vetted endpoint.
#include "a2ad/push/webhook_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "webhook_receiver.hpp"

namespace a2ad::push {
namespace {
namespace asio = boost::asio;
using testing::WebhookReceiver;

VettedTarget Vet(const std::string& url) {
  std::map<std::string, std::vector<std::string>> table;
  table["hooks.test"] = {"127.0.0.1"};
  StaticResolver dns(table);
  GuardPolicy p;
  p.allow_http = true;
  p.allow_list = {"127.0.0.1/32"};
  auto guard = UrlGuard::Create(p, dns);
  asio::io_context io;
  core::Result<VettedTarget> out;
  asio::co_spawn(io, guard->Vet(url), [&](std::exception_ptr ep, core::Result<VettedTarget> r) {
    if (ep) std::rethrow_exception(ep);
    out = std::move(r);
  });
  io.run();
  if (!out) throw std::runtime_error(out.error().message);
  return std::move(out).value();
}

WebhookOutcome PostSync(WebhookClient& client, const VettedTarget& t, std::string body,
                        std::vector<std::pair<std::string, std::string>> headers = {}) {
  asio::io_context io;
  WebhookOutcome out;
  asio::co_spawn(io, client.Post(t, std::move(body), std::move(headers)),
                 [&](std::exception_ptr ep, WebhookOutcome o) {
                   if (ep) std::rethrow_exception(ep);
                   out = std::move(o);
                 });
  io.run();
  return out;
}

TEST(WebhookClient, DeliversWithTheOriginalHostHeader) {
  WebhookReceiver rx;
  WebhookClient client({});
  auto target = Vet("http://hooks.test:" + std::to_string(rx.port()) + "/a2a/push?x=1");
  auto out = PostSync(client, target, R"({"hello":1})", {{"X-A2A-Notification-Token", "tok"}});
  EXPECT_TRUE(out.delivered) << out.error;
  EXPECT_EQ(out.status, 200);
  ASSERT_EQ(rx.count(), 1u);
  auto req = rx.requests()[0];
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.target, "/a2a/push?x=1");
  EXPECT_EQ(req.Header("Host"), "hooks.test:" + std::to_string(rx.port()));
  EXPECT_EQ(req.Header("X-A2A-Notification-Token"), "tok");
  EXPECT_EQ(req.body, R"({"hello":1})");
}

TEST(WebhookClient, ServerErrorsAndRedirectsAreFailedAttempts) {
  WebhookReceiver rx;
  rx.Script({500, 302});
  rx.SetLocation("http://127.0.0.1:" + std::to_string(rx.port()) + "/elsewhere");
  WebhookClient client({});
  auto target = Vet(rx.Url());
  auto first = PostSync(client, target, "{}");
  EXPECT_FALSE(first.delivered);
  EXPECT_EQ(first.status, 500);
  auto second = PostSync(client, target, "{}");
  EXPECT_FALSE(second.delivered);
  EXPECT_NE(second.error.find("redirect (302) not followed"), std::string::npos) << second.error;
  EXPECT_EQ(rx.count(), 2u);  // the Location was never requested
  for (const auto& r : rx.requests()) EXPECT_EQ(r.target, "/hook");
}

TEST(WebhookClient, TimesOutOnASlowReceiver) {
  WebhookReceiver rx;
  rx.SetDelay(std::chrono::milliseconds(1500));
  WebhookClientOptions opts;
  opts.total_timeout = std::chrono::milliseconds(200);
  WebhookClient client(opts);
  auto out = PostSync(client, Vet(rx.Url()), "{}");
  EXPECT_FALSE(out.delivered);
  EXPECT_NE(out.error.find("timed out"), std::string::npos) << out.error;
}

TEST(WebhookClient, RefusedConnectionIsAFailedAttempt) {
  uint16_t port;
  {
    WebhookReceiver gone;
    port = gone.port();
  }
  WebhookClient client({});
  auto out = PostSync(client, Vet("http://127.0.0.1:" + std::to_string(port) + "/"), "{}");
  EXPECT_FALSE(out.delivered);
  EXPECT_EQ(out.status, 0);
  EXPECT_NE(out.error.find("connect to 127.0.0.1"), std::string::npos) << out.error;
}

TEST(WebhookClient, HttpsToAPlainServerFailsTheHandshake) {
  WebhookReceiver rx;  // speaks plain HTTP: the TLS handshake cannot succeed
  WebhookClientOptions opts;
  opts.total_timeout = std::chrono::milliseconds(2000);
  WebhookClient client(opts);
  auto target = Vet(rx.Url());
  target.url.scheme = "https";
  auto out = PostSync(client, target, "{}");
  EXPECT_FALSE(out.delivered);
  EXPECT_NE(out.error.find("TLS handshake"), std::string::npos) << out.error;
}

}  // namespace
}  // namespace a2ad::push
