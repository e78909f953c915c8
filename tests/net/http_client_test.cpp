// HttpClient over real loopback HTTP and HTTPS (servers and CA made in the test): methods,
// headers and bodies both ways, the body limit, timeouts, refused connections, TLS with SNI
// and verification, and redirects: refused by default; when allowed, followed with every
// Location vetted again (a forbidden one is refused) and never from https to http.
#include "a2ad/net/http_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "test_servers.hpp"

namespace a2ad::net {
namespace {
namespace asio = boost::asio;
using testing::Reply;
using testing::SeenRequest;
using testing::TestCa;
using testing::TestServer;
using Ms = std::chrono::milliseconds;

std::map<std::string, std::vector<std::string>> Dns() {
  return {{"hooks.test", {"127.0.0.1"}}, {"wrong.test", {"127.0.0.1"}}};
}

EgressPolicy Loopback(bool allow_http = true) { return testing::LoopbackPolicy(allow_http); }

// A guard and a client over the fixed DNS table.
struct Rig {
  explicit Rig(EgressPolicy policy, HttpClientOptions options = {}) : dns(Dns()) {
    guard = std::make_unique<UrlGuard>(std::move(UrlGuard::Create(policy, dns)).value());
    auto made = HttpClient::Create(*guard, options);
    if (!made) throw std::runtime_error(made.error().message);
    client = std::move(made).value();
  }
  core::Result<HttpResponse> Fetch(HttpRequest req) { return Run(client->Fetch(std::move(req))); }
  core::Result<HttpResponse> Send(const VettedTarget& t, HttpRequest req) {
    return Run(client->Send(t, std::move(req)));
  }
  VettedTarget Vet(const std::string& url) {
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
  static core::Result<HttpResponse> Run(asio::awaitable<core::Result<HttpResponse>> op) {
    asio::io_context io;
    core::Result<HttpResponse> out;
    asio::co_spawn(io, std::move(op), [&](std::exception_ptr ep, core::Result<HttpResponse> r) {
      if (ep) std::rethrow_exception(ep);
      out = std::move(r);
    });
    io.run();
    return out;
  }
  StaticResolver dns;
  std::unique_ptr<UrlGuard> guard;
  std::unique_ptr<HttpClient> client;
};

HttpRequest Get(std::string url) {
  HttpRequest r;
  r.url = std::move(url);
  return r;
}

HttpRequest Post(std::string url, std::string body) {
  HttpRequest r;
  r.method = "POST";
  r.url = std::move(url);
  r.body = std::move(body);
  r.headers = {{"Content-Type", "application/json"}};
  return r;
}

Reply Redirect(int status, std::string location) {
  Reply r;
  r.status = status;
  r.headers = {{"Location", std::move(location)}};
  r.body.clear();
  return r;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HttpClient, GetReturnsStatusHeadersAndBodyWithTheOriginalHostHeader) {
  TestServer server;
  server.Handle([](const SeenRequest&) {
    Reply r;
    r.status = 203;
    r.headers = {{"X-Reply", "yes"}, {"Content-Type", "text/plain"}};
    r.body = "hello";
    return r;
  });
  Rig rig(Loopback());
  auto req = Get(server.Url("/path?q=1"));
  req.headers = {{"Accept", "text/plain"}, {"Host", "evil.example"}};
  auto got = rig.Fetch(req);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->status, 203);
  EXPECT_EQ(got->Header("x-reply"), "yes");
  EXPECT_EQ(got->body, "hello");
  EXPECT_EQ(got->url, server.Url("/path?q=1"));
  EXPECT_EQ(got->redirects, 0);
  ASSERT_EQ(server.count(), 1u);
  auto seen = server.requests()[0];
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.target, "/path?q=1");
  EXPECT_EQ(seen.Header("Host"), "hooks.test:" + std::to_string(server.port()));  // not evil
  EXPECT_EQ(seen.Header("Accept"), "text/plain");
  EXPECT_EQ(seen.Header("User-Agent"), "a2ad");
  EXPECT_EQ(seen.Header("Connection"), "close");
  EXPECT_TRUE(seen.body.empty());
}

TEST(HttpClient, SendsAnyMethodWithItsHeadersAndBody) {
  TestServer server;
  server.Handle([](const SeenRequest& r) {
    Reply out;
    out.body = r.method + ":" + r.body;
    return out;
  });
  Rig rig(Loopback());
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE"}) {
    auto req = Post(server.Url("/hook"), R"({"n":1})");
    req.method = method;
    req.headers.emplace_back("User-Agent", "caller/2");
    req.headers.emplace_back("X-A2A-Notification-Token", "tok");
    auto got = rig.Fetch(req);
    ASSERT_TRUE(got) << method << ": " << got.error().message;
    EXPECT_EQ(got->body, std::string(method) + R"(:{"n":1})");
  }
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].Header("Content-Type"), "application/json");
  EXPECT_EQ(seen[0].Header("Content-Length"), "7");
  EXPECT_EQ(seen[0].Header("User-Agent"), "caller/2");  // the request's own wins
  EXPECT_EQ(seen[3].method, "DELETE");
  EXPECT_EQ(seen[3].Header("X-A2A-Notification-Token"), "tok");
}

TEST(HttpClient, RefusesHeaderInjectionAndBadMethodsWithoutSending) {
  TestServer server;
  Rig rig(Loopback());
  auto req = Get(server.Url());
  req.headers = {{"X-Token", "a\r\nX-Evil: 1"}};
  auto got = rig.Fetch(req);
  ASSERT_FALSE(got);
  EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kRefused);
  auto bad = Get(server.Url());
  bad.method = "GET /x HTTP/1.1\r\n";
  EXPECT_FALSE(rig.Fetch(bad));
  EXPECT_EQ(server.count(), 0u);
}

TEST(HttpClient, TheResponseBodyLimitHolds) {
  TestServer server;
  server.Handle([](const SeenRequest&) {
    Reply r;
    r.body = std::string(4096, 'x');
    return r;
  });
  HttpClientOptions opts;
  opts.max_response_bytes = 1024;
  Rig rig(Loopback(), opts);
  auto over = rig.Fetch(Get(server.Url()));
  ASSERT_FALSE(over);
  EXPECT_EQ(EgressFailureOf(over.error()), EgressFailure::kTooLarge) << over.error().message;
  auto req = Get(server.Url());
  req.max_response_bytes = 4096;  // exactly the body: fine
  auto fits = rig.Fetch(req);
  ASSERT_TRUE(fits) << fits.error().message;
  EXPECT_EQ(fits->body.size(), 4096u);
}

TEST(HttpClient, TotalTimeoutOnASlowServerAndPerRequestTimeouts) {
  TestServer server;
  server.Handle([](const SeenRequest&) {
    Reply r;
    r.delay = Ms(400);
    return r;
  });
  HttpClientOptions opts;
  opts.total_timeout = Ms(100);
  Rig rig(Loopback(), opts);
  const auto start = std::chrono::steady_clock::now();
  auto slow = rig.Fetch(Get(server.Url()));
  ASSERT_FALSE(slow);
  EXPECT_LT(std::chrono::steady_clock::now() - start, Ms(350));
  EXPECT_EQ(EgressFailureOf(slow.error()), EgressFailure::kTimeout);
  EXPECT_TRUE(Contains(slow.error().message, "timed out")) << slow.error().message;
  auto req = Get(server.Url());
  req.total_timeout = Ms(5000);  // this request may wait longer
  auto patient = rig.Fetch(req);
  EXPECT_TRUE(patient) << patient.error().message;
}

TEST(HttpClient, ConnectTimeoutHoldsPerEndpoint) {
  testing::StalledPort stalled;
  Rig rig(Loopback());
  auto req = Get("http://127.0.0.1:" + std::to_string(stalled.port()) + "/");
  req.connect_timeout = Ms(200);
  req.total_timeout = Ms(5000);
  const auto start = std::chrono::steady_clock::now();
  auto got = rig.Fetch(req);
  ASSERT_FALSE(got);
  EXPECT_LT(std::chrono::steady_clock::now() - start, Ms(2000));
  EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kTimeout) << got.error().message;
  EXPECT_TRUE(Contains(got.error().message, "connect to 127.0.0.1")) << got.error().message;
}

TEST(HttpClient, ARefusedConnectionIsAnErrorAndEndpointsAreTriedInOrder) {
  uint16_t closed;
  {
    TestServer gone;
    closed = gone.port();
  }
  TestServer server;
  Rig rig(Loopback());
  auto got = rig.Fetch(Get("http://127.0.0.1:" + std::to_string(closed) + "/"));
  ASSERT_FALSE(got);
  EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kConnect);
  EXPECT_TRUE(Contains(got.error().message, "connect to 127.0.0.1")) << got.error().message;
  // Only the vetted endpoints are used, in order: the dead one, then the live one; the Host
  // header stays the URL's.
  VettedTarget target = rig.Vet(server.Url("/x"));
  target.endpoints.insert(target.endpoints.begin(), {asio::ip::make_address("127.0.0.1"), closed});
  auto sent = rig.Send(target, Get("ignored"));
  ASSERT_TRUE(sent) << sent.error().message;
  EXPECT_EQ(server.requests().at(0).Header("Host"), "hooks.test:" + std::to_string(server.port()));
}

TEST(HttpClient, RedirectsAreNotFollowedByDefault) {
  TestServer elsewhere;
  TestServer server;
  server.Handle([&](const SeenRequest&) { return Redirect(302, elsewhere.Url("/next")); });
  Rig rig(Loopback());
  auto got = rig.Fetch(Post(server.Url("/hook"), "{}"));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->status, 302);  // the answer, for the caller to judge
  EXPECT_EQ(got->Header("Location"), elsewhere.Url("/next"));
  EXPECT_EQ(got->redirects, 0);
  EXPECT_EQ(elsewhere.count(), 0u);
}

TEST(HttpClient, AllowedRedirectsAreFollowedAndVettedAgain) {
  TestServer b;
  b.Handle([](const SeenRequest& r) {
    Reply out;
    out.body = "b saw " + r.method;
    return out;
  });
  TestServer a;
  a.Handle([&](const SeenRequest& r) {
    if (r.target == "/start") return Redirect(307, "/again?x=1");  // relative, same origin
    return Redirect(303, b.Url("/done"));                          // another origin
  });
  Rig rig(Loopback());
  auto req = Post(a.Url("/start"), R"({"k":"v"})");
  req.headers.emplace_back("Authorization", "Bearer secret");
  req.redirects = RedirectPolicy::Follow(3);
  auto got = rig.Fetch(req);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->body, "b saw GET");  // 303: GET without a body
  EXPECT_EQ(got->redirects, 2);
  EXPECT_EQ(got->url, b.Url("/done"));
  auto at_a = a.requests();
  ASSERT_EQ(at_a.size(), 2u);
  EXPECT_EQ(at_a[1].target, "/again?x=1");
  EXPECT_EQ(at_a[1].method, "POST");  // 307 repeats the request
  EXPECT_EQ(at_a[1].body, R"({"k":"v"})");
  EXPECT_EQ(at_a[1].Header("Authorization"), "Bearer secret");
  auto at_b = b.requests();
  ASSERT_EQ(at_b.size(), 1u);
  EXPECT_TRUE(at_b[0].body.empty());
  EXPECT_EQ(at_b[0].Header("Authorization"), "");  // not sent to another origin
  EXPECT_EQ(at_b[0].Header("Content-Type"), "");
}

TEST(HttpClient, ARedirectToAForbiddenAddressIsRefused) {
  TestServer inside;  // 127.0.0.1, reachable only through the allowed name
  TestServer server;
  std::string location;
  server.Handle([&](const SeenRequest&) { return Redirect(302, location); });
  EgressPolicy p;
  p.allow_http = true;
  p.allow_list = {"hooks.test"};  // the name is allowed, its address is not by itself
  Rig rig(p);
  auto req = Get(server.Url("/"));
  req.redirects = RedirectPolicy::Follow(5);
  for (std::string to : {"http://127.0.0.1:" + std::to_string(inside.port()) + "/",
                         std::string("http://169.254.169.254/latest/meta-data/"),
                         std::string("http://localhost:1/"), std::string("http://[::1]:1/")}) {
    location = to;
    auto got = rig.Fetch(req);
    ASSERT_FALSE(got) << to << " was followed";
    EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kRefused) << got.error().message;
    EXPECT_TRUE(Contains(got.error().message, "redirect (302) to " + to)) << got.error().message;
  }
  EXPECT_EQ(inside.count(), 0u);
  // And the same redirect, without the Follow, is simply the answer.
  auto plain = rig.Fetch(Get(server.Url("/")));
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 302);
}

TEST(HttpClient, TooManyRedirectsAreAnError) {
  TestServer loop;
  loop.Handle([&](const SeenRequest&) { return Redirect(301, "/again"); });
  Rig rig(Loopback());
  auto req = Get(loop.Url("/"));
  req.redirects = RedirectPolicy::Follow(3);
  auto got = rig.Fetch(req);
  ASSERT_FALSE(got);
  EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kRedirect);
  EXPECT_TRUE(Contains(got.error().message, "more than 3")) << got.error().message;
  EXPECT_EQ(loop.count(), 4u);
}

TEST(HttpClient, HttpsVerifiesTheServerAndSendsSni) {
  TestServer server(TestServer::Mode::kHttps);
  server.Handle([](const SeenRequest& r) {
    Reply out;
    out.body = r.method + " over TLS";
    return out;
  });
  Rig rig(Loopback(/*allow_http=*/false));
  auto got = rig.Fetch(Post(server.Url("/hook"), "{}"));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->body, "POST over TLS");
  EXPECT_EQ(server.requests().at(0).sni, "hooks.test");
  EXPECT_EQ(server.requests().at(0).Header("Host"), "hooks.test:" + std::to_string(server.port()));
  // An address literal: verified against the certificate's IP entry, and no SNI.
  auto literal = rig.Fetch(Get(server.Url("/", "127.0.0.1")));
  ASSERT_TRUE(literal) << literal.error().message;
  EXPECT_EQ(server.requests().at(1).sni, "");
}

TEST(HttpClient, HttpsRefusesAnUntrustedOrMismatchedCertificate) {
  TestServer server(TestServer::Mode::kHttps);
  {
    EgressPolicy untrusting = Loopback(false);
    untrusting.ca_file.clear();  // the system store does not know the test CA
    Rig rig(untrusting);
    auto got = rig.Fetch(Get(server.Url()));
    ASSERT_FALSE(got);
    EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kTls) << got.error().message;
    EXPECT_TRUE(Contains(got.error().message, "TLS handshake")) << got.error().message;
  }
  Rig rig(Loopback(false));
  auto wrong = rig.Fetch(Get(server.Url("/", "wrong.test")));  // same address, other name
  ASSERT_FALSE(wrong);
  EXPECT_EQ(EgressFailureOf(wrong.error()), EgressFailure::kTls) << wrong.error().message;
  EXPECT_EQ(server.count(), 0u);
}

TEST(HttpClient, HttpsToAPlainServerFailsTheHandshake) {
  TestServer plain;
  Rig rig(Loopback());
  HttpRequest req = Get("");
  req.total_timeout = Ms(2000);
  VettedTarget target = rig.Vet(plain.Url());
  target.url.scheme = "https";
  auto got = rig.Send(target, req);
  ASSERT_FALSE(got);
  EXPECT_TRUE(Contains(got.error().message, "TLS handshake")) << got.error().message;
}

TEST(HttpClient, ARedirectFromHttpsToHttpIsRefused) {
  TestServer plain;
  TestServer secure(TestServer::Mode::kHttps);
  secure.Handle([&](const SeenRequest&) { return Redirect(302, plain.Url("/downgraded")); });
  Rig rig(Loopback(/*allow_http=*/true));  // http allowed, and still no downgrade
  auto req = Get(secure.Url("/"));
  req.redirects = RedirectPolicy::Follow(5);
  auto got = rig.Fetch(req);
  ASSERT_FALSE(got);
  EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kRedirect);
  EXPECT_TRUE(Contains(got.error().message, "from https to http")) << got.error().message;
  EXPECT_EQ(plain.count(), 0u);
}

TEST(HttpClient, AnUnreadableCaFileFailsCreate) {
  StaticResolver dns(Dns());
  EgressPolicy p;
  p.ca_file = "/nonexistent/ca.pem";
  auto guard = UrlGuard::Create(p, dns);
  ASSERT_TRUE(guard);
  auto client = HttpClient::Create(*guard);
  ASSERT_FALSE(client);
  EXPECT_TRUE(Contains(client.error().message, "/nonexistent/ca.pem"));
}

TEST(HttpClient, TheGuardRefusesBeforeAnyConnection) {
  TestServer server;
  StaticResolver dns(Dns());
  auto guard = UrlGuard::Create(EgressPolicy{}, dns);  // https only, no allow-list
  auto client = HttpClient::Create(*guard);
  ASSERT_TRUE(client);
  for (std::string url : {server.Url(), "https://127.0.0.1:" + std::to_string(server.port())}) {
    auto got = Rig::Run((*client)->Fetch(Get(url)));
    ASSERT_FALSE(got) << url;
    EXPECT_EQ(EgressFailureOf(got.error()), EgressFailure::kRefused) << url;
  }
  EXPECT_EQ(server.count(), 0u);
}

}  // namespace
}  // namespace a2ad::net
