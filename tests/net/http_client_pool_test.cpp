// HttpClient with reuse_connections, over real loopback HTTP and HTTPS: a connection the
// server keeps alive serves the next request to its origin and no other; an idle one past
// idle_timeout is not taken; one the server dropped is replaced for a request that may be
// sent twice, and never re-sent for one that may not; a client without reuse opens one
// connection per request and says Connection: close.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "a2ad/net/http_client.hpp"
#include "test_servers.hpp"

namespace a2ad::net {
namespace {
namespace asio = boost::asio;
using testing::TestServer;

// A client and the one io_context it is used from (pooled connections belong to it).
struct PoolRig {
  explicit PoolRig(bool reuse = true, std::chrono::milliseconds idle = std::chrono::seconds(4))
      : dns(std::map<std::string, std::vector<std::string>>{{"hooks.test", {"127.0.0.1"}}}) {
    guard = std::make_unique<UrlGuard>(
        std::move(UrlGuard::Create(testing::LoopbackPolicy(), dns)).value());
    HttpClientOptions options;
    options.reuse_connections = reuse;
    options.idle_timeout = idle;
    client = std::move(HttpClient::Create(*guard, options)).value();
  }
  core::Result<HttpResponse> Fetch(const std::string& url, const std::string& method = "GET",
                                   HeaderList headers = {}, bool replayable = false) {
    HttpRequest req;
    req.url = url;
    req.method = method;
    req.headers = std::move(headers);
    req.replayable = replayable;
    if (method == "POST") req.body = "{}";
    core::Result<HttpResponse> out;
    asio::co_spawn(io, client->Fetch(std::move(req)),
                   [&](std::exception_ptr ep, core::Result<HttpResponse> r) {
                     if (ep) std::rethrow_exception(ep);
                     out = std::move(r);
                   });
    io.restart();
    io.run();
    return out;
  }
  asio::io_context io;  // outlives the client and its pool
  StaticResolver dns;
  std::unique_ptr<UrlGuard> guard;
  std::unique_ptr<HttpClient> client;
};

TEST(HttpClientPool, AKeptAliveConnectionServesTheNextRequestsToItsOrigin) {
  for (auto mode : {TestServer::Mode::kHttp, TestServer::Mode::kHttps}) {
    TestServer server(mode);
    server.KeepAlive(100);
    PoolRig rig;
    for (int i = 0; i < 3; ++i) {
      auto r = rig.Fetch(server.Url("/x"));
      ASSERT_TRUE(r) << r.error().message;
      EXPECT_EQ(r->status, 200);
    }
    EXPECT_EQ(server.count(), 3u);
    EXPECT_EQ(server.connections(), 1u);
    EXPECT_EQ(server.requests()[0].Header("Connection"), "") << "HTTP/1.1 keeps alive";
  }
}

TEST(HttpClientPool, AnotherHostNameOfTheSameAddressGetsItsOwnConnection) {
  TestServer server(TestServer::Mode::kHttps);
  server.KeepAlive(100);
  PoolRig rig;
  ASSERT_TRUE(rig.Fetch(server.Url("/a", "hooks.test")));
  ASSERT_TRUE(rig.Fetch(server.Url("/b", "127.0.0.1")));  // TLS: another name to verify
  ASSERT_TRUE(rig.Fetch(server.Url("/c", "hooks.test")));
  EXPECT_EQ(server.connections(), 2u);
  EXPECT_EQ(server.requests()[1].sni, "") << "an address literal sends no SNI";
}

TEST(HttpClientPool, AConnectionIdleLongerThanTheIdleTimeoutIsNotTaken) {
  TestServer server;
  server.KeepAlive(100);
  PoolRig rig(true, std::chrono::milliseconds(50));
  ASSERT_TRUE(rig.Fetch(server.Url("/a")));
  // Idle past the 50 ms: time passing is the test (the pool reads the steady clock).
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  ASSERT_TRUE(rig.Fetch(server.Url("/b")));
  EXPECT_EQ(server.connections(), 2u);
}

TEST(HttpClientPool, ADroppedConnectionIsReplacedOnlyForARequestThatMaySendTwice) {
  TestServer server;
  server.KeepAlive(1, /*then_drop=*/true);
  PoolRig rig;
  // Replayable: a GET, a POST with an Idempotency-Key, a POST the caller marks.
  ASSERT_TRUE(rig.Fetch(server.Url("/first")));
  auto get = rig.Fetch(server.Url("/get"));
  ASSERT_TRUE(get) << get.error().message;
  auto keyed = rig.Fetch(server.Url("/keyed"), "POST", {{"Idempotency-Key", "k1"}});
  ASSERT_TRUE(keyed) << keyed.error().message;
  auto marked = rig.Fetch(server.Url("/marked"), "POST", {}, true);
  ASSERT_TRUE(marked) << marked.error().message;
  // first; get (dropped), get; keyed (dropped), keyed; marked (dropped), marked.
  EXPECT_EQ(server.count(), 7u);
  EXPECT_EQ(server.connections(), 4u);
  // A plain POST: the dropped connection's failure is the answer; it was sent once.
  const size_t before = server.count();
  auto post = rig.Fetch(server.Url("/post"), "POST");
  ASSERT_FALSE(post) << "a POST that may not be sent twice is not sent again";
  EXPECT_EQ(server.count(), before + 1);
}

TEST(HttpClientPool, WithoutReuseEachRequestHasItsOwnConnection) {
  TestServer server;
  server.KeepAlive(100);
  PoolRig rig(false);
  ASSERT_TRUE(rig.Fetch(server.Url("/a")));
  ASSERT_TRUE(rig.Fetch(server.Url("/b")));
  EXPECT_EQ(server.connections(), 2u);
  EXPECT_EQ(server.requests()[0].Header("Connection"), "close");
}

}  // namespace
}  // namespace a2ad::net
