// The HTTP server over real loopback sockets: keep-alive, limits, timeouts, routing, the
// agent card's caching headers, and that bad input never takes the server down.
#include "a2ad/transport/http_server.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/echo_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/agent_card.hpp"
#include "a2ad/transport/router.hpp"
#include "http_client.hpp"

namespace a2ad::transport {
namespace {
namespace json = boost::json;
using a2ad::testing::HttpClient;

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions opts = {}) {
    service_.RegisterSkill({"echo", "Echo", "echoes", {"echo"}, {}},
                           std::make_shared<tasks::EchoExecutor>());
    AgentCardConfig card;
    card.version = "test";
    card.base_url = "http://127.0.0.1";
    router_ = std::make_unique<Router>(service_, BuildAgentCard(card, service_.skills()));
    server_ = std::make_unique<HttpServer>(
        io_, [this](HttpRequest r) { return router_->Handle(std::move(r)); }, opts);
    auto port = server_->Listen("127.0.0.1", 0);
    ASSERT_TRUE(port.ok());
    port_ = port.value();
    server_->Start();
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    if (server_) {
      // Streams end on Stop (their coroutines must run to completion: a stream parked in a
      // subscription is only freed by finishing), so let the loop drain before stopping it.
      server_->Stop();
      for (int i = 0; i < 200 && server_->open_connections() > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    io_.stop();
    for (auto& t : threads_) t.join();
  }
  HttpClient Client() { return HttpClient("127.0.0.1", port_); }

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore store_;
  boost::asio::io_context io_;
  tasks::TaskService service_{store_, clock_, *ids_, io_.get_executor(), {}};
  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> server_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
};

json::object SendParams(const std::string& text) {
  return json::object{
      {"message",
       json::object{{"kind", "message"},
                    {"role", "user"},
                    {"messageId", "m-" + text},
                    {"parts", json::array{json::object{{"kind", "text"}, {"text", text}}}}}}};
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  Start();
  HttpClient c = Client();
  for (int i = 0; i < 20; ++i) {
    auto r = c.Rpc("message/send", SendParams("n" + std::to_string(i)));
    ASSERT_EQ(r.at("result").at("status").at("state"), "completed") << json::serialize(r);
    EXPECT_TRUE(c.connected());
  }
}

TEST_F(HttpServerTest, OversizedBodyGets413AndServerStaysUp) {
  HttpServerOptions opts;
  opts.body_limit = 1000;
  Start(opts);
  HttpClient c = Client();
  auto r = c.Request("POST", "/v1/a2a", std::string(5000, 'x'));
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body.find("exceeds the limit of 1000 bytes"), std::string::npos) << r.body;
  EXPECT_FALSE(r.keep_alive);
  HttpClient c2 = Client();
  auto ok = c2.Rpc("message/send", SendParams("after"));
  EXPECT_EQ(ok.at("result").at("status").at("state"), "completed");
}

TEST_F(HttpServerTest, BodyAtTheLimitIsAccepted) {
  HttpServerOptions opts;
  opts.body_limit = 4096;
  Start(opts);
  std::string body = json::serialize(json::object{{"jsonrpc", "2.0"},
                                                  {"id", 1},
                                                  {"method", "tasks/get"},
                                                  {"params", json::object{{"id", "x"}}}});
  body.append(4096 - body.size(), ' ');  // JSON allows trailing whitespace
  auto r = Client().Request("POST", "/v1/a2a", body);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Json().at("error").at("code"), -32001);
}

TEST_F(HttpServerTest, OversizedHeaderGets431) {
  HttpServerOptions opts;
  opts.header_limit = 2048;
  Start(opts);
  auto r = Client().Request("GET", "/healthz", "", {{"X-Big", std::string(4000, 'a')}});
  EXPECT_EQ(r.status, 431);
}

TEST_F(HttpServerTest, MalformedHttpGets400) {
  Start();
  auto r = Client().Raw("THIS IS NOT HTTP\r\n\r\n");
  EXPECT_EQ(r.status, 400);
  auto ok = Client().Request("GET", "/healthz");
  EXPECT_EQ(ok.status, 200);
}

TEST_F(HttpServerTest, IdleConnectionIsClosedAfterTheIdleTimeout) {
  HttpServerOptions opts;
  opts.idle_timeout = std::chrono::milliseconds(150);
  Start(opts);
  HttpClient c = Client();
  ASSERT_EQ(c.Request("GET", "/healthz").status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(server_->open_connections(), 0u);
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethodIs405) {
  Start();
  HttpClient c = Client();
  auto r = c.Request("GET", "/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Json().at("error"), "not_found");
  auto m = c.Request("GET", "/v1/a2a");
  EXPECT_EQ(m.status, 405);
  EXPECT_EQ(m.Header("Allow"), "POST");
  auto card = c.Request("POST", "/.well-known/agent-card.json", "{}");
  EXPECT_EQ(card.status, 405);
}

TEST_F(HttpServerTest, AgentCardHasETagCacheControlAndAnswers304) {
  Start();
  HttpClient c = Client();
  auto r = c.Request("GET", "/.well-known/agent-card.json");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  EXPECT_EQ(r.Header("Cache-Control"), "public, max-age=300");
  std::string etag = r.Header("ETag");
  ASSERT_EQ(etag.rfind("W/\"", 0), 0u) << etag;
  auto card = r.Json().as_object();
  EXPECT_EQ(card.at("skills").as_array().at(0).at("id"), "echo");
  auto again = c.Request("GET", "/.well-known/agent-card.json", "", {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  auto legacy = c.Request("GET", "/.well-known/agent.json");
  EXPECT_EQ(legacy.body, r.body);
}

TEST_F(HttpServerTest, StopRefusesNewConnectionsAndClosesIdleOnes) {
  Start();
  HttpClient idle = Client();
  ASSERT_EQ(idle.Request("GET", "/healthz").status, 200);
  server_->Stop();
  for (int i = 0; i < 100 && server_->open_connections() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(server_->open_connections(), 0u);
  HttpClient late = Client();
  EXPECT_THROW(late.Request("GET", "/healthz"), boost::system::system_error);
}

TEST_F(HttpServerTest, ConcurrentClientsAllGetTheirOwnTasks) {
  Start();
  std::vector<std::thread> clients;
  std::atomic<int> completed{0};
  for (int t = 0; t < 8; ++t) {
    clients.emplace_back([&, t] {
      HttpClient c = Client();
      for (int i = 0; i < 25; ++i) {
        std::string text = "c" + std::to_string(t) + "-" + std::to_string(i);
        auto r = c.Rpc("message/send", SendParams(text));
        auto& res = r.at("result");
        if (res.at("status").at("state") == "completed" &&
            res.at("artifacts").at(0).at("parts").at(0).at("text") == json::value(text))
          ++completed;
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(completed.load(), 200);
  storage::TaskQuery q;
  EXPECT_EQ(store_.List(q).value().total_size, 200);
}

}  // namespace
}  // namespace a2ad::transport
