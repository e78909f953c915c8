// Replicas on one PostgreSQL database (issue 30): two `a2ad serve` started with the same
// --database-url and data directories of their own sign and verify alike, with no shared file:
// one JWKS, one card signing kid, interrupt tokens of one accepted by the other, and a rotation
// by `a2ad keys rotate --database-url` served by both within --push-key-refresh-ms. Nothing of
// it is written to their data directories.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/es256.hpp"
#include "http_client.hpp"
#include "pg_cluster.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;


json::value Jwks(HttpClient& c) {
  return json::parse(c.Request("GET", "/.well-known/jwks.json").body);
}

std::set<std::string> Kids(const json::value& jwks) {
  std::set<std::string> kids;
  for (const auto& k : jwks.at("keys").as_array()) kids.emplace(k.at("kid").as_string());
  return kids;
}

// The kid of the agent card's signature.
std::string CardKid(HttpClient& c) {
  const json::value card = c.Request("GET", "/.well-known/agent-card.json").Json();
  const auto header =
      core::Base64UrlDecode(card.at("signatures").at(0).at("protected").as_string());
  return std::string(json::parse(header.value_or("{}")).at("kid").as_string());
}

// Every file and directory under `dir`, relative to it.
std::vector<std::string> Entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    out.push_back(fs::relative(it->path(), dir).string());
  return out;
}

class SharedKeys : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-shared-keys"); }
  void TearDown() override {
    for (auto* s : {&a_, &b_})
      if (s->pid > 0) s->Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  ServerProcess Serve(const std::string& url, const std::string& name) {
    return ServerProcess::Start(
        testing::A2adBinary(), (dir_ / name).string(),
        {"--database-url", url, "--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows",
         "--conformance-fixtures", "--push-key-refresh-ms", "200"});
  }
  fs::path dir_;
  ServerProcess a_, b_;
};

TEST_F(SharedKeys, TwoServersOnOneDatabaseSignAndVerifyAlike) {
  const std::string url = test::FreshPgDatabase();
  a_ = Serve(url, "a");
  b_ = Serve(url, "b");
  HttpClient a("127.0.0.1", a_.port), b("127.0.0.1", b_.port);

  // One JWKS (the card's key and the push keys), one card kid.
  const json::value jwks = Jwks(a);
  EXPECT_EQ(jwks, Jwks(b));
  EXPECT_EQ(jwks.at("keys").as_array().size(), 2u) << jwks;  // the card's, one push key
  const std::string card_kid = CardKid(a);
  EXPECT_EQ(card_kid, CardKid(b));
  EXPECT_TRUE(Kids(jwks).count(card_kid)) << jwks;

  // An interrupt token one server gave, the other accepts (and a forged one it refuses).
  auto gate = a.Rpc(
      "message/send",
      json::object{
          {"message",
           json::object{{"kind", "message"},
                        {"role", "user"},
                        {"messageId", "gate"},
                        {"parts", json::array{json::object{{"kind", "text"}, {"text", "gate"}}}},
                        {"metadata", json::object{{"skillId", "conformance-approval"}}}}}});
  ASSERT_EQ(gate.at("result").at("status").at("state"), "input-required") << gate;
  const std::string run_id(gate.at("result").at("id").as_string());
  const std::string token(a.Request("GET", "/v1/runs/" + run_id)
                              .Json()
                              .at("interrupt")
                              .at("interruptToken")
                              .as_string());
  auto from_b = b.Request("GET", "/v1/interrupts/" + token);
  EXPECT_EQ(from_b.status, 200) << from_b.body;
  std::string forged = token;
  forged[0] = forged[0] == 'e' ? 'f' : 'e';  // other claims, the same MAC
  EXPECT_EQ(b.Request("GET", "/v1/interrupts/" + forged).status, 401);

  // `a2ad keys rotate` on the database (a third data directory): both serve the new key, and
  // still the old one, within --push-key-refresh-ms.
  int code = -1;
  const std::string out = testing::RunCommand(testing::A2adBinary() + " keys rotate --data-dir " +
                                    (dir_ / "cli").string() + " --database-url '" + url + "'",
                                &code);
  ASSERT_EQ(code, 0) << out;
  std::set<std::string> before = Kids(jwks);
  const json::value rotated = testing::PollUntil(
      [&] { return Jwks(a); },
      [&](const json::value& v) { return v.at("keys").as_array().size() == 3 && Jwks(b) == v; });
  EXPECT_EQ(rotated, Jwks(b));
  const std::set<std::string> after = Kids(rotated);
  ASSERT_EQ(after.size(), 3u) << rotated;
  for (const auto& kid : before) EXPECT_TRUE(after.count(kid)) << kid;  // old keys kept
  for (const auto& kid : after) {
    if (!before.count(kid)) {  // the new one, as the command said
      EXPECT_NE(out.find(kid), std::string::npos) << out;
    }
  }

  // No key file in any data directory.
  a_.Kill(SIGTERM);
  b_.Kill(SIGTERM);
  for (const char* name : {"a", "b", "cli"}) {
    for (const std::string& e : Entries(dir_ / name))
      ADD_FAILURE() << name << "/" << e
                    << ": a file in the data directory of a server on PostgreSQL";
  }
}

TEST_F(SharedKeys, AnOperatorsCardSigningKeyFileStaysAFile) {
  const std::string url = test::FreshPgDatabase();
  // The card key given by the operator signs; the database keeps only the other secrets.
  const std::string key = (dir_ / "card.pem").string();
  {
    auto made = core::Es256PrivateKey::Generate();
    ASSERT_TRUE(made);
    std::ofstream(key) << made->ToPem();
  }
  a_ = ServerProcess::Start(testing::A2adBinary(), (dir_ / "a").string(),
                            {"--database-url", url, "--card-signing-key", key});
  b_ = Serve(url, "b");  // makes the database's card key
  HttpClient a("127.0.0.1", a_.port), b("127.0.0.1", b_.port);
  EXPECT_NE(CardKid(a), CardKid(b));
  EXPECT_TRUE(Entries(dir_ / "a").empty());
}

}  // namespace
}  // namespace a2ad
