// The A2A 0.3 HTTP+JSON binding (a2a_rest.hpp, /a2a/rest03) as declarative fixtures (STYLE.md
// #7): fixtures/rest_v03.json is a sequence of HTTP exchanges, run by
// tests/support/rest_conformance.hpp against the servers its cases name (the default one: the
// operation table with push configs served and one extension registered). Every route and
// every error the binding answers is a case. Set A2AD_UPDATE_GOLDEN=1 to rewrite the "expect"
// members from the current output (then read the diff before committing).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "rest_conformance.hpp"

namespace a2ad::transport {
namespace {
using testing::RestFixture;
using testing::ServerOptions;

TEST(RestV03Conformance, MatchesGolden) {
  testing::RunRestGolden("tests/transport/fixtures/rest_v03.json", protocol::WireVersion::kV03);
}

// `--a2a-versions 1.0`: the routes stay (a client learns why), every one refuses the version.
TEST(RestV03Conformance, AOneZeroOnlyServerRefusesEveryRoute) {
  RestFixture fx(protocol::WireVersion::kV03, ServerOptions{.serve_v03 = false});
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/a2a/rest03/v1/message:send"},
           {"GET", "/a2a/rest03/v1/tasks/t1"},
           {"GET", "/a2a/rest03/v1/tasks/t1/pushNotificationConfigs"}}) {
    HttpRequest req;
    req.method = method;
    req.target = target;
    req.headers.emplace_back("Content-Type", "application/json");
    if (method == "POST")
      req.body = R"({"message":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]}})";
    const HttpResponse res = fx.Call(req);
    EXPECT_EQ(res.status, 400) << target;
    auto body = protocol::ParseJson(res.body);
    ASSERT_TRUE(body) << res.body;
    EXPECT_EQ(body->at("code"), -32009) << res.body;
  }
}

}  // namespace
}  // namespace a2ad::transport
