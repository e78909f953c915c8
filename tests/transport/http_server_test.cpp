// The HTTP server over real loopback sockets: keep-alive, limits, timeouts, routing, the
// agent card's caching headers, and that bad input never takes the server down.
#include "a2ad/transport/http/http_server.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <optional>
#include <string_view>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/cidr.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/a2a/agent_card.hpp"
#include "a2ad/transport/router.hpp"
#include "http_client.hpp"
#include "wait_for.hpp"

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;
using a2ad::testing::ClientResponse;
using a2ad::testing::HttpClient;
using a2ad::testing::WaitFor;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;
using tcp = asio::ip::tcp;

// A client that sends exactly the bytes it is told, when it is told (a slow or greedy
// client), and reads with deadlines. `source` binds its local address (e.g. 127.0.0.2).
class RawConn {
 public:
  RawConn(const std::string& host, uint16_t port, const std::string& source = "") : sock_(io_) {
    const tcp::endpoint to(asio::ip::make_address(host), port);
    sock_.open(to.protocol());
    if (!source.empty()) sock_.bind(tcp::endpoint(asio::ip::make_address(source), 0));
    sock_.connect(to);
  }

  /// false once the server has closed.
  bool Send(std::string_view bytes) {
    boost::system::error_code ec;
    asio::write(sock_, asio::buffer(bytes.data(), bytes.size()), ec);
    return !ec;
  }

  /// Reads until the server closes the connection (true) or `within` passes (false).
  bool WaitClosed(Ms within) {
    return ReadUntil(within, [] { return false; }) && closed_;
  }

  /// Reads until one whole response has arrived (true) or `within` passes (false).
  bool WaitResponse(Ms within) {
    return ReadUntil(within, [this] { return Parsed().has_value(); }) && Parsed().has_value();
  }

  /// The first response received; fails the test if there is none.
  ClientResponse Response() const {
    auto r = Parsed();
    if (!r) ADD_FAILURE() << "no whole response; received: " << received_;
    return r.value_or(ClientResponse{});
  }

  const std::string& received() const { return received_; }

 private:
  template <class Done>
  bool ReadUntil(Ms within, Done done) {
    const auto until = Clock::now() + within;
    while (!closed_ && !done()) {
      const auto left = std::chrono::duration_cast<Ms>(until - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{sock_.native_handle(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
      char buf[4096];
      boost::system::error_code ec;
      const size_t n = sock_.read_some(asio::buffer(buf), ec);
      if (ec)
        closed_ = true;  // end of stream or reset
      else
        received_.append(buf, n);
    }
    return true;
  }

  std::optional<ClientResponse> Parsed() const {
    http::response_parser<http::string_body> p;
    p.eager(true);
    size_t off = 0;
    while (!p.is_done() && off < received_.size()) {
      boost::system::error_code ec;
      const size_t used = p.put(asio::buffer(received_.data() + off, received_.size() - off), ec);
      if (ec || used == 0) break;
      off += used;
    }
    if (!p.is_done()) return std::nullopt;
    ClientResponse out;
    out.status = static_cast<int>(p.get().result_int());
    for (const auto& f : p.get())
      out.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    out.body = p.get().body();
    out.keep_alive = p.get().keep_alive();
    return out;
  }

  asio::io_context io_;
  tcp::socket sock_;
  std::string received_;
  bool closed_ = false;
};

/// OpenWOP's closed error envelope: {"error": code, "message": ..., "details"?: {...}}.
void ExpectOpenwopError(const ClientResponse& r, int status, const std::string& code) {
  EXPECT_EQ(r.status, status) << r.body;
  const json::value v = r.Json();
  ASSERT_TRUE(v.is_object()) << r.body;
  EXPECT_EQ(v.at("error"), json::value(code)) << r.body;
  EXPECT_TRUE(v.at("message").is_string()) << r.body;
  for (const auto& kv : v.as_object())
    EXPECT_TRUE(kv.key() == "error" || kv.key() == "message" || kv.key() == "details") << kv.key();
}

/// The JSON-RPC shape of a transport error on the A2A endpoint.
void ExpectJsonRpcError(const ClientResponse& r, int status) {
  EXPECT_EQ(r.status, status) << r.body;
  const json::value v = r.Json();
  EXPECT_EQ(v.at("jsonrpc"), "2.0") << r.body;
  EXPECT_TRUE(v.at("id").is_null()) << r.body;
  EXPECT_EQ(v.at("error").at("code"), -32600) << r.body;
  EXPECT_TRUE(v.at("error").at("message").is_string()) << r.body;
  EXPECT_EQ(v.at("error").at("data").at("httpStatus"), json::value(std::to_string(status)));
}

/// A connection answered 503 because of a cap: Retry-After, Connection: close, then closed.
void ExpectRefused(RawConn& c) {
  ASSERT_TRUE(c.WaitClosed(Ms(3000))) << c.received();
  const ClientResponse r = c.Response();
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.Header("Retry-After"), "1");
  EXPECT_FALSE(r.keep_alive);
}

bool Served(RawConn& c) { return c.WaitResponse(Ms(3000)) && c.Response().status == 200; }

constexpr std::string_view kHealthz = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n";

class HttpServerTest : public ::testing::Test {
 protected:
  /// Serves the router on `host` (port 0); the server's own errors are shaped as a2ad
  /// shapes them (app/server.cpp) unless `opts` says otherwise.
  void Start(HttpServerOptions opts = {}, const std::string& host = "127.0.0.1") {
    if (!opts.transport_error) opts.transport_error = SurfaceTransportErrors("/v1/a2a");
    service_.RegisterSkill({"echo", "Echo", "echoes", {"echo"}, {}},
                           std::make_shared<tasks::EchoExecutor>());
    AgentCardConfig card;
    card.version = "test";
    card.base_url = "http://127.0.0.1";
    router_ = std::make_unique<Router>(service_, BuildAgentCard(card, service_.skills()));
    server_ = std::make_unique<HttpServer>(
        io_,
        [this](HttpRequest r) -> boost::asio::awaitable<HttpResponse> {
          ++handled_;
          if (r.Path() == "/hold") {  // a request that stays in flight until released
            ++holding_;
            boost::asio::steady_timer t(co_await boost::asio::this_coro::executor);
            for (int i = 0; i < 1000 && !release_.load(); ++i) {  // at most 10 s
              t.expires_after(Ms(10));
              co_await t.async_wait(boost::asio::use_awaitable);
            }
            co_return HttpResponse{};
          }
          co_return co_await router_->Handle(std::move(r));
        },
        opts);
    auto port = server_->Listen(host, 0);
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
      WaitFor([&] { return server_->open_connections() == 0; }, Ms(2000));
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
  std::atomic<int> handled_{0};  // requests that reached the handler
  std::atomic<int> holding_{0};   // /hold requests that reached the handler
  std::atomic<bool> release_{false};  // ends every /hold
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
  EXPECT_TRUE(WaitFor([&] { return server_->open_connections() == 0; }, Ms(5000)));
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
  WaitFor([&] { return server_->open_connections() == 0; }, Ms(3000));
  EXPECT_EQ(server_->open_connections(), 0u);
  // Refused at connect once the listener is closed; a connection the kernel completed while
  // Stop's close of the listener was still queued is reset by that close instead (the client
  // then fails in its write or read). Either way nothing answers it.
  HttpClient late = Client();
  EXPECT_THROW(late.Request("GET", "/healthz"), std::exception);
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

// A slow client's request head: the header timeout runs from its first byte, so a half head
// is answered 408 and closed at the header timeout, not held for the idle timeout.
TEST_F(HttpServerTest, HalfSentHeadGets408AtTheHeaderTimeout) {
  HttpServerOptions opts;
  opts.header_timeout = Ms(300);
  opts.idle_timeout = Ms(5000);
  Start(opts);
  RawConn c("127.0.0.1", port_);
  const auto t0 = Clock::now();
  ASSERT_TRUE(c.Send("POST /v1/runs HTTP/1.1\r\nHost: a\r\nContent-Ty"));
  ASSERT_TRUE(c.WaitClosed(Ms(4000))) << "held past the header timeout";
  const auto took = Clock::now() - t0;
  EXPECT_GE(took, Ms(250));
  EXPECT_LT(took, Ms(2500));
  const ClientResponse r = c.Response();
  ExpectOpenwopError(r, 408, "request_timeout");
  EXPECT_FALSE(r.keep_alive);
  EXPECT_EQ(handled_.load(), 0);
}

TEST_F(HttpServerTest, TricklingHeadIsCutAtTheHeaderTimeout) {
  HttpServerOptions opts;
  opts.header_timeout = Ms(400);
  opts.idle_timeout = Ms(5000);
  Start(opts);
  RawConn c("127.0.0.1", port_);
  const auto t0 = Clock::now();
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nX-Slow: "));
  bool closed = false;
  while (!closed && Clock::now() - t0 < Ms(4000)) {
    (void)c.Send("a");  // one byte every 20 ms: each read succeeds, the head never ends
    closed = c.WaitClosed(Ms(20));
  }
  ASSERT_TRUE(closed);
  EXPECT_LT(Clock::now() - t0, Ms(2500));
  EXPECT_EQ(c.Response().status, 408);
}

// A connection's reads share one pending wait of their deadline timer (connection.hpp): a slow
// head after a kept-alive request gets its header timeout from its own first byte, although
// the wait left pending by the request before ends sooner.
TEST_F(HttpServerTest, SlowHeadAfterARequestGetsTheWholeHeaderTimeout) {
  HttpServerOptions opts;
  opts.header_timeout = Ms(600);
  opts.idle_timeout = Ms(5000);
  Start(opts);
  RawConn c("127.0.0.1", port_);
  ASSERT_TRUE(c.Send(kHealthz));
  ASSERT_TRUE(Served(c));  // its head's deadline left a wait that ends within 600 ms
  std::this_thread::sleep_for(Ms(300));
  const auto t1 = Clock::now();
  ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slo"));
  ASSERT_TRUE(c.WaitClosed(Ms(4000))) << "held past the header timeout";
  const auto took = Clock::now() - t1;
  EXPECT_GE(took, Ms(550)) << "cut when the earlier request's wait ended";
  EXPECT_LT(took, Ms(3000));
  EXPECT_NE(c.received().find("HTTP/1.1 408"), std::string::npos) << c.received();
}

// The idle wait for a request's first byte is the idle timeout, not the header timeout:
// neither a new connection nor a kept-alive one is cut at the (shorter) header timeout, and
// an idle connection is closed without an answer.
TEST_F(HttpServerTest, IdleConnectionIsClosedAtTheIdleTimeoutNotTheHeaderTimeout) {
  HttpServerOptions opts;
  opts.header_timeout = Ms(150);
  opts.idle_timeout = Ms(700);
  Start(opts);
  RawConn fresh("127.0.0.1", port_);
  RawConn kept("127.0.0.1", port_);
  ASSERT_TRUE(kept.Send(kHealthz));
  ASSERT_TRUE(Served(kept));
  const auto t0 = Clock::now();
  ASSERT_TRUE(kept.WaitClosed(Ms(3000)));
  EXPECT_GE(Clock::now() - t0, Ms(600));
  ASSERT_TRUE(fresh.WaitClosed(Ms(3000)));
  EXPECT_GE(Clock::now() - t0, Ms(600));
  EXPECT_TRUE(fresh.received().empty()) << fresh.received();
  EXPECT_EQ(kept.received().find("HTTP/1.1", 1), std::string::npos) << kept.received();
}

// The body timeout ends the read without closing the socket, so the client reads the 408
// (in the shape of the path's surface) before the connection closes.
TEST_F(HttpServerTest, SlowBodyGets408ThatTheClientReads) {
  HttpServerOptions opts;
  opts.body_timeout = Ms(300);
  opts.header_timeout = Ms(5000);
  opts.idle_timeout = Ms(5000);
  Start(opts);
  const std::string head =
      " HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{";
  RawConn rest("127.0.0.1", port_);
  RawConn rpc("127.0.0.1", port_);
  const auto t0 = Clock::now();
  ASSERT_TRUE(rest.Send("POST /v1/runs" + head));
  ASSERT_TRUE(rpc.Send("POST /v1/a2a" + head));
  ASSERT_TRUE(rest.WaitClosed(Ms(4000)));
  ASSERT_TRUE(rpc.WaitClosed(Ms(4000)));
  const auto took = Clock::now() - t0;
  EXPECT_GE(took, Ms(250));
  EXPECT_LT(took, Ms(2500));
  ExpectOpenwopError(rest.Response(), 408, "request_timeout");
  EXPECT_EQ(rest.Response().Header("Connection"), "close");
  ExpectJsonRpcError(rpc.Response(), 408);
  EXPECT_FALSE(rpc.Response().keep_alive);
  EXPECT_EQ(handled_.load(), 0);
}

// Beast bounds neither a chunk size line nor the trailer; the connection's buffer is
// bounded, so a line that never ends is answered 400 at once, not buffered until the body
// timeout.
TEST_F(HttpServerTest, ChunkSizeLineThatNeverEndsIsRefusedNotBuffered) {
  HttpServerOptions opts;
  opts.body_timeout = Ms(10000);
  Start(opts);
  RawConn c("127.0.0.1", port_);
  const auto t0 = Clock::now();
  ASSERT_TRUE(c.Send("POST /v1/runs HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=" +
                     std::string(1024 * 1024, 'a')));
  ASSERT_TRUE(c.WaitClosed(Ms(5000)));
  EXPECT_LT(Clock::now() - t0, Ms(5000));
  ExpectOpenwopError(c.Response(), 400, "validation_error");
}

// max_connections = 2: the third connection gets 503 + Retry-After (shaped for its path,
// its body left unread), never reaches the handler, and a freed slot is used again.
TEST_F(HttpServerTest, ConnectionOverMaxConnectionsGets503AndAFreedSlotIsReused) {
  HttpServerOptions opts;
  opts.max_connections = 2;
  Start(opts);
  auto a = std::make_unique<RawConn>("127.0.0.1", port_);
  RawConn b("127.0.0.1", port_);
  ASSERT_TRUE(a->Send(kHealthz));
  ASSERT_TRUE(b.Send(kHealthz));
  ASSERT_TRUE(Served(*a));
  ASSERT_TRUE(Served(b));
  EXPECT_EQ(server_->open_connections(), 2u);

  RawConn rpc("127.0.0.1", port_);
  const std::string body(256 * 1024, ' ');
  ASSERT_TRUE(rpc.Send("POST /v1/a2a HTTP/1.1\r\nHost: a\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body));
  ExpectRefused(rpc);
  ExpectJsonRpcError(rpc.Response(), 503);
  RawConn rest("127.0.0.1", port_);
  ASSERT_TRUE(rest.Send(kHealthz));
  ExpectRefused(rest);
  ExpectOpenwopError(rest.Response(), 503, "service_unavailable");
  EXPECT_EQ(handled_.load(), 2);

  a.reset();
  WaitFor([&] { return server_->open_connections() <= 1; }, Ms(5000));
  ASSERT_EQ(server_->open_connections(), 1u);
  RawConn c("127.0.0.1", port_);
  ASSERT_TRUE(c.Send(kHealthz));
  EXPECT_TRUE(Served(c));
}

// The per-address cap counts each client IP address on its own: 127.0.0.2 is served while
// 127.0.0.1 is at its cap.
TEST_F(HttpServerTest, PerAddressCapCountsEachClientAddress) {
  HttpServerOptions opts;
  opts.max_connections_per_address = 1;
  Start(opts);
  auto first = std::make_unique<RawConn>("127.0.0.1", port_, "127.0.0.1");
  ASSERT_TRUE(first->Send(kHealthz));
  ASSERT_TRUE(Served(*first));
  RawConn second("127.0.0.1", port_, "127.0.0.1");
  ASSERT_TRUE(second.Send(kHealthz));
  ExpectRefused(second);
  std::unique_ptr<RawConn> other;
  try {
    other = std::make_unique<RawConn>("127.0.0.1", port_, "127.0.0.2");
  } catch (const boost::system::system_error& e) {
    GTEST_SKIP() << "cannot connect from 127.0.0.2: " << e.what();
  }
  ASSERT_TRUE(other->Send(kHealthz));
  EXPECT_TRUE(Served(*other));

  first.reset();
  WaitFor([&] { return server_->open_connections() <= 1; }, Ms(2000));
  RawConn again("127.0.0.1", port_, "127.0.0.1");
  ASSERT_TRUE(again.Send(kHealthz));
  EXPECT_TRUE(Served(again));
}

// Issue 29, 8: behind a reverse proxy every client shares the proxy's address. A trusted
// proxy's connections are not capped by address (three from 127.0.0.1 with a cap of 1); each
// request is counted, while in flight, against the address the proxy forwards: a second
// request for 203.0.113.7 while its first is held is refused with 503 on a connection that
// stays open, another client's is served, and the first client is served again once its
// A connection the server closes stops counting against its address's cap before the client
// can see the close: a client at a cap of 1 that reconnects the moment its last answer ends
// (Connection: close) is served every time, not refused while the old connection winds down.
TEST_F(HttpServerTest, AClosedConnectionsSlotIsFreeBeforeTheClientSeesTheClose) {
  HttpServerOptions opts;
  opts.max_connections_per_address = 1;
  Start(opts);
  for (int i = 0; i < 200; ++i) {
    RawConn c("127.0.0.1", port_);
    ASSERT_TRUE(c.Send("GET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));
    ASSERT_TRUE(c.WaitClosed(Ms(3000))) << "round " << i;
    ASSERT_EQ(c.Response().status, 200) << "round " << i << ": " << c.received();
  }
}

// request ended. An untrusted peer's X-Forwarded-For is ignored.
TEST_F(HttpServerTest, ATrustedProxyIsNotCappedByAddressItsForwardedClientsAre) {
  HttpServerOptions opts;
  opts.max_connections_per_address = 1;
  opts.trusted_proxies = net::ParseCidrList("127.0.0.1/32").value();
  Start(opts);
  auto via = [](std::string_view path, std::string_view client) {
    std::string r = "GET " + std::string(path) + " HTTP/1.1\r\nHost: a\r\n";
    if (!client.empty()) r += "X-Forwarded-For: " + std::string(client) + ", 127.0.0.1\r\n";
    return r + "\r\n";
  };
  RawConn held("127.0.0.1", port_, "127.0.0.1");
  ASSERT_TRUE(held.Send(via("/hold", "203.0.113.7")));
  ASSERT_TRUE(WaitFor([&] { return holding_.load() == 1; }, Ms(5000)));  // in flight
  RawConn same_client("127.0.0.1", port_, "127.0.0.1");
  ASSERT_TRUE(same_client.Send(via("/healthz", "203.0.113.7")));
  ASSERT_TRUE(same_client.WaitResponse(Ms(3000))) << same_client.received();
  EXPECT_EQ(same_client.Response().status, 503);
  EXPECT_EQ(same_client.Response().Header("Retry-After"), "1");
  EXPECT_TRUE(same_client.Response().keep_alive);  // the proxy's connection stays
  RawConn other_client("127.0.0.1", port_, "127.0.0.1");
  ASSERT_TRUE(other_client.Send(via("/healthz", "203.0.113.8")));
  EXPECT_TRUE(Served(other_client));
  RawConn unnamed("127.0.0.1", port_, "127.0.0.1");  // forwards nothing: not counted
  ASSERT_TRUE(unnamed.Send(via("/healthz", "")));
  EXPECT_TRUE(Served(unnamed));
  release_ = true;
  ASSERT_TRUE(held.WaitResponse(Ms(3000)));
  EXPECT_EQ(held.Response().status, 200);
  RawConn again("127.0.0.1", port_, "127.0.0.1");
  ASSERT_TRUE(again.Send(via("/healthz", "203.0.113.7")));
  EXPECT_TRUE(Served(again));

  // 127.0.0.2 is not trusted: its X-Forwarded-For is not believed, its address is capped.
  std::unique_ptr<RawConn> untrusted;
  try {
    untrusted = std::make_unique<RawConn>("127.0.0.1", port_, "127.0.0.2");
  } catch (const boost::system::system_error& e) {
    GTEST_SKIP() << "cannot connect from 127.0.0.2: " << e.what();
  }
  ASSERT_TRUE(untrusted->Send(via("/healthz", "203.0.113.9")));
  ASSERT_TRUE(Served(*untrusted));
  RawConn second("127.0.0.1", port_, "127.0.0.2");
  ASSERT_TRUE(second.Send(via("/healthz", "203.0.113.10")));
  ExpectRefused(second);
}

// On a dual-stack listener an IPv4 client arrives as ::ffff:127.0.0.1; it is still one
// address, and ::1 is another.
TEST_F(HttpServerTest, PerAddressCapOnADualStackListener) {
  {
    boost::system::error_code ec;
    asio::io_context probe;
    tcp::acceptor a(probe);
    a.open(tcp::v6(), ec);
    if (!ec) a.bind(tcp::endpoint(asio::ip::make_address("::1"), 0), ec);
    if (ec) GTEST_SKIP() << "no IPv6 loopback: " << ec.message();
  }
  HttpServerOptions opts;
  opts.max_connections_per_address = 1;
  Start(opts, "::");
  RawConn v4("127.0.0.1", port_);
  ASSERT_TRUE(v4.Send(kHealthz));
  ASSERT_TRUE(Served(v4));
  RawConn v6("::1", port_);
  ASSERT_TRUE(v6.Send(kHealthz));
  EXPECT_TRUE(Served(v6));
  RawConn v4_again("127.0.0.1", port_);
  ASSERT_TRUE(v4_again.Send(kHealthz));
  ExpectRefused(v4_again);
}

// Errors the server answers before routing take the shape of the path's surface: OpenWOP's
// envelope on the REST surface, JSON-RPC on the A2A endpoint (with or without a trailing
// slash).
TEST_F(HttpServerTest, PreRoutingErrorsTakeTheShapeOfTheirSurface) {
  HttpServerOptions opts;
  opts.body_limit = 1000;
  opts.header_limit = 2048;
  Start(opts);
  const std::string big_body(5000, 'x');
  const std::vector<std::pair<std::string, std::string>> big_header{
      {"X-Big", std::string(4000, 'a')}};
  ExpectOpenwopError(Client().Request("POST", "/v1/runs", big_body), 413, "payload_too_large");
  ExpectOpenwopError(Client().Request("GET", "/v1/runs", "", big_header), 431,
                     "request_header_too_large");
  ExpectJsonRpcError(Client().Request("POST", "/v1/a2a", big_body), 413);
  ExpectJsonRpcError(Client().Request("POST", "/v1/a2a/", big_body), 413);
  ExpectJsonRpcError(Client().Request("POST", "/v1/a2a?x=1", "{}", big_header), 431);
  ExpectJsonRpcError(Client().Raw("POST /v1/a2a HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n"), 400);
  ExpectOpenwopError(Client().Raw("GET /v1/runs HTTP/1.1\r\nHost: a\r\nBad Header\r\n\r\n"), 400,
                     "validation_error");
  EXPECT_EQ(handled_.load(), 0);
}

// When the path is not known (the request line is unparseable, or longer than the header
// limit) the error is OpenWOP's envelope.
TEST_F(HttpServerTest, ErrorsWithoutAKnownPathAreOpenwopEnvelopes) {
  HttpServerOptions opts;
  opts.header_limit = 2048;
  Start(opts);
  ExpectOpenwopError(Client().Raw("THIS IS NOT HTTP\r\n\r\n"), 400, "validation_error");
  ExpectOpenwopError(Client().Raw("POST /v1/a2a HTTX/1.1\r\nHost: a\r\n\r\n"), 400,
                     "validation_error");
  ExpectOpenwopError(
      Client().Raw("POST /v1/a2a?q=" + std::string(4000, 'q') + " HTTP/1.1\r\nHost: a\r\n\r\n"),
      431, "request_header_too_large");
}

}  // namespace
}  // namespace a2ad::transport
