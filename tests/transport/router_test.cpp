// The router's two extension points (router.hpp, middleware.hpp): the middleware list (Before
// in order, After in reverse for every stage whose Before ran, an early answer stopping the
// request there) and the route index (a public route served before authentication, an
// authenticated one only once the caller is admitted, a family's "not mine" passing the
// request on, the tenant prefix taken off before authenticated routes match).
#include "a2ad/transport/router.hpp"

#include <gtest/gtest.h>

#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/storage/api_key_store.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/middleware.hpp"
#include "api_keys.hpp"
#include "in_process_router.hpp"

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;

// Writes "<name>.before" and "<name>.after" into a shared journal; answers 418 in Before
// when told to.
class Recorder : public Middleware {
 public:
  Recorder(std::string name, std::vector<std::string>& journal, bool answer = false)
      : name_(std::move(name)), journal_(journal), answer_(answer) {}
  std::optional<HttpResponse> Before(HttpRequest& request, Exchange&) override {
    journal_.push_back(name_ + ".before");
    request.headers.emplace_back("X-Seen-By", name_);
    if (!answer_) return std::nullopt;
    HttpResponse r;
    r.status = 418;
    return r;
  }
  void After(Exchange& x, HttpResponse& r) override {
    journal_.push_back(name_ + ".after " + std::to_string(r.status) + " " + x.operation);
  }

 private:
  std::string name_;
  std::vector<std::string>& journal_;
  bool answer_;
};

asio::awaitable<HttpResponse> Answer(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  co_return r;
}

class RouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.router = std::make_unique<Router>(app_.service, json::object{{"name", "t"}});
  }
  HttpResponse Get(const std::string& target,
                   std::vector<std::pair<std::string, std::string>> h = {}) {
    return app_.Get(target, std::move(h));
  }
  std::string AddKey(const std::string& tenant) {
    return testing::AddApiKey(keys_, tenant, {"tasks:read", "tasks:write"});
  }

  testing::InProcessRouter app_;
  storage::MemoryApiKeyStore keys_;
  Authenticator auth_{keys_, app_.clock};
};

TEST_F(RouterTest, MiddlewareRunsBeforeInOrderAndAfterInReverse) {
  std::vector<std::string> journal;
  app_.router->Use(std::make_unique<Recorder>("a", journal));
  app_.router->Use(std::make_unique<Recorder>("b", journal));
  std::string seen;
  app_.router->AddRoute({"probe", Route::Access::kPublic,
                         [](const HttpRequest& r) { return r.Path() == "/probe"; },
                         [&seen](HttpRequest& r) {
                           for (const auto& [k, v] : r.headers)
                             if (k == "X-Seen-By") seen += v;
                           return Answer(200, "probed");
                         },
                         nullptr});
  const HttpResponse r = Get("/probe");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "probed");
  EXPECT_EQ(seen, "ab");  // the route got the request as the middleware left it
  EXPECT_EQ(journal, (std::vector<std::string>{"a.before", "b.before", "b.after 200 /probe",
                                               "a.after 200 /probe"}));
}

TEST_F(RouterTest, AnEarlyAnswerSkipsTheLaterStagesAndTheRoute) {
  std::vector<std::string> journal;
  int routed = 0;
  app_.router->Use(std::make_unique<Recorder>("a", journal));
  app_.router->Use(std::make_unique<Recorder>("stop", journal, /*answer=*/true));
  app_.router->Use(std::make_unique<Recorder>("c", journal));
  app_.router->AddRoute({"probe", Route::Access::kPublic,
                         [](const HttpRequest& r) { return r.Path() == "/probe"; },
                         [&routed](HttpRequest&) {
                           ++routed;
                           return Answer(200, "");
                         },
                         nullptr});
  EXPECT_EQ(Get("/probe").status, 418);
  EXPECT_EQ(routed, 0);
  EXPECT_EQ(journal, (std::vector<std::string>{"a.before", "stop.before", "stop.after 418 /probe",
                                               "a.after 418 /probe"}));
}

TEST_F(RouterTest, APublicRouteIsServedBeforeAuthenticationAnAuthenticatedOneAfter) {
  app_.router->SetAuthenticator(&auth_);
  const std::string key = AddKey("");  // authentication is on from the first key
  auto answer = [](HttpRequest& r) {
    return Answer(200, r.principal ? r.principal->id : std::string("nobody"));
  };
  app_.router->AddRoute({"public", Route::Access::kPublic,
                         [](const HttpRequest& r) { return r.Path() == "/v1/public-probe"; },
                         answer, nullptr});
  app_.router->AddRoute({"private", Route::Access::kAuthenticated,
                         [](const HttpRequest& r) { return r.Path() == "/v1/private-probe"; },
                         answer, nullptr});
  EXPECT_EQ(Get("/v1/public-probe").body, "nobody");
  EXPECT_EQ(Get("/v1/private-probe").status, 401);
  const HttpResponse r = Get("/v1/private-probe", {{"Authorization", "Bearer " + key}});
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.body.empty());
  EXPECT_NE(r.body, "nobody");
  // A path no route serves asks for a credential first: an unknown path tells a stranger
  // nothing.
  EXPECT_EQ(Get("/v1/no-such-route").status, 401);
  EXPECT_EQ(Get("/v1/no-such-route", {{"Authorization", "Bearer " + key}}).status, 404);
}

TEST_F(RouterTest, AFamilyThatSaysNotMinePassesTheRequestOn) {
  int offered = 0;
  // Added after the built-in families (test seams, push routes, OpenWOP): it sees only what
  // none of them answers.
  app_.router->AddRoute(
      {"family", Route::Access::kAuthenticated,
       [](const HttpRequest& r) { return r.Path().starts_with("/v1/family/"); }, nullptr,
       [&offered](HttpRequest& r) -> asio::awaitable<std::optional<HttpResponse>> {
         ++offered;
         if (r.Path() == "/v1/family/known") {
           HttpResponse mine;
           mine.body = "known";
           co_return mine;
         }
         co_return std::nullopt;
       }});
  EXPECT_EQ(Get("/v1/family/known").body, "known");
  const HttpResponse r = Get("/v1/family/unknown");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(offered, 2);
  // The built-in routes still come first: the JSON-RPC endpoint is the binding's.
  EXPECT_EQ(Get("/v1/a2a").status, 405);
}

}  // namespace
}  // namespace a2ad::transport
