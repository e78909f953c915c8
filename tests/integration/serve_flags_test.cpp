// Serve flags through the real binary: --a2a-versions 1.0 (the strict card for everyone, 0.3
// methods refused), --tck-skill (the conformance skill, default skill when none is named), the
// card signature (--card-signing-key, --no-card-signing, the key kept in the data directory),
// and what bad values of them get (a clear message, exit 2 or CLI11's usage error, no server).
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fstream>
#include <set>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/es256.hpp"
#include "a2ad/protocol/jws.hpp"
#include "a2ad/protocol/card_signature.hpp"
#include "http_client.hpp"
#include "test_paths.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using testing::HttpClient;
using testing::ServerProcess;

const std::string kBinary = testing::A2adBinary();

struct Command {
  int exit_code = -1;
  std::string out;
};

Command RunCommand(const std::string& command) {
  Command c;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return c;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) c.out.append(buf, n);
  const int status = pclose(p);
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

class ServeFlags : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-flags"); }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(std::vector<std::string> flags) {
    server_ = ServerProcess::Start(kBinary, dir_.string(), std::move(flags));
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  json::object Card(std::vector<std::pair<std::string, std::string>> headers = {}) {
    return client_->Request("GET", "/.well-known/agent-card.json", "", std::move(headers))
        .Json()
        .as_object();
  }

  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(ServeFlags, ByDefaultBothVersionsAndTheStrictCardOnlyOnRequest) {
  Start({});
  EXPECT_TRUE(Card().contains("url"));
  EXPECT_FALSE(Card({{"A2A-Version", "1.0"}}).contains("url"));
  auto r = client_->Rpc("tasks/get", json::object{{"id", "x"}});
  EXPECT_EQ(r.at("error").at("code"), -32001) << r;  // served: an unknown task
  const json::object card = Card();
  for (const auto& s : card.at("skills").as_array()) EXPECT_NE(s.at("id"), "tck");
}

TEST_F(ServeFlags, OneZeroOnlyServesTheStrictCardAndRefusesZeroThreeMethods) {
  Start({"--a2a-versions", "1.0"});
  const json::object card = Card();
  EXPECT_FALSE(card.contains("url"));
  EXPECT_FALSE(card.contains("additionalInterfaces"));
  for (const auto& i : card.at("supportedInterfaces").as_array())
    EXPECT_EQ(i.at("protocolVersion"), "1.0") << i;
  auto r = client_->Rpc("tasks/get", json::object{{"id", "x"}});
  EXPECT_EQ(r.at("error").at("code"), -32009) << r;
  r = client_->Rpc("GetTask", json::object{{"id", "x"}}, "1.0");
  EXPECT_EQ(r.at("error").at("code"), -32001) << r;
}

TEST_F(ServeFlags, TheTckSkillIsServedAndIsTheDefault) {
  Start({"--tck-skill"});
  bool listed = false;
  const json::object card = Card();
  for (const auto& s : card.at("skills").as_array()) listed |= s.at("id") == "tck";
  EXPECT_TRUE(listed);
  // No skillId: the tck skill answers, here with a Message (tck-message-response).
  auto r = client_->Rpc(
      "SendMessage",
      json::object{{"message", json::object{{"messageId", "tck-message-response-flags"},
                                            {"role", "ROLE_USER"},
                                            {"parts", json::array{json::object{{"text", "hi"}}}}}}},
      "1.0");
  EXPECT_EQ(r.at("result").at("message").at("parts").at(0).at("text"), "Direct message response")
      << r;
}

// Without a default skill (the server's default), a message that names none starts a task
// that asks which skill, listing them (the generic client's path: interop.generic follows it
// to the end); a --default-skill that is not loaded stops the server at start, naming the
// skills there are; the conformance fixtures are served only with --conformance-fixtures.
TEST_F(ServeFlags, AnUnnamedMessageIsAskedWhichSkillAndFixturesAreOptIn) {
  const std::string workflows = std::string(A2AD_SOURCE_DIR) + "/workflows";
  Command missing = RunCommand(kBinary + " serve --listen 127.0.0.1:0 --data-dir " + dir_.string() +
                               "/missing --workflows-dir " + workflows + " --default-skill nope");
  EXPECT_NE(missing.exit_code, 0) << missing.out;
  EXPECT_NE(missing.out.find("--default-skill 'nope': no such skill"), std::string::npos)
      << missing.out;
  EXPECT_NE(missing.out.find("campaign-brief"), std::string::npos) << missing.out;
  Start({"--default-skill", "", "--workflows-dir", workflows});
  auto r = client_->Rpc(
      "message/send",
      json::object{{"message", json::object{{"kind", "message"},
                                            {"messageId", "unrouted-1"},
                                            {"role", "user"},
                                            {"parts", json::array{json::object{
                                                          {"kind", "text"}, {"text", "hi"}}}}}}});
  ASSERT_TRUE(r.as_object().contains("result")) << r;
  EXPECT_EQ(r.at("result").at("status").at("state"), "input-required");
  const std::string question(
      r.at("result").at("status").at("message").at("parts").at(0).at("text").as_string());
  EXPECT_NE(question.find("Which skill"), std::string::npos) << question;
  EXPECT_NE(question.find("campaign-brief"), std::string::npos) << question;
  EXPECT_NE(question.find("metadata.skillId"), std::string::npos) << question;
  auto skills_of = [](const json::object& card) {
    std::set<std::string> ids;
    for (const auto& s : card.at("skills").as_array()) ids.insert(std::string(s.at("id").as_string()));
    return ids;
  };
  std::set<std::string> skills = skills_of(Card());
  EXPECT_TRUE(skills.contains("campaign-brief"));
  EXPECT_FALSE(skills.contains("conformance-approval"));
  client_.reset();
  server_.Kill(SIGKILL);
  Start({"--workflows-dir", workflows, "--conformance-fixtures"});
  skills = skills_of(Card());
  EXPECT_TRUE(skills.contains("conformance-approval"));
  EXPECT_TRUE(skills.contains("campaign-brief"));
}

// `a2ad validate`: what the server would load, and why not.
TEST_F(ServeFlags, ValidateSaysWhichWorkflowsLoadAndWhyNot) {
  const std::string workflows = std::string(A2AD_SOURCE_DIR) + "/workflows";
  Command ok = RunCommand(kBinary + " validate " + workflows + "/campaign-brief.json " + workflows +
                          "/brief-drafter.json");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("ok     campaign-brief"), std::string::npos) << ok.out;
  // An input wired from a node that is not there, and the same id twice.
  std::ofstream(dir_ / "typo.json") << R"({"id":"typo","name":"t","version":"1.0.0","nodes":[
    {"id":"draft","typeId":"core.noop","name":"d","position":{"x":0,"y":0},"config":{},"inputs":{}},
    {"id":"out","typeId":"core.identity","name":"o","position":{"x":0,"y":0},"config":{},
     "inputs":{"text":{"type":"connection","nodeId":"drft","outputKey":"text"}}}],
    "edges":[],"triggers":[],"variables":[],"metadata":{},"settings":{}})";
  std::filesystem::copy_file(workflows + "/long-delay.json", dir_ / "again.json");
  Command bad = RunCommand(kBinary + " validate " + (dir_ / "typo.json").string() + " " +
                           workflows + "/long-delay.json " + (dir_ / "again.json").string());
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("nodes[1].inputs.text.nodeId: no node 'drft'"), std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("'long-delay' is already defined by " + workflows + "/long-delay.json"),
            std::string::npos)
      << bad.out;
}

TEST_F(ServeFlags, BadValuesAreRefusedWithAMessageAndNoServer) {
  const std::string base = kBinary + " serve --listen 127.0.0.1:0 --data-dir " + dir_.string();
  Command c = RunCommand(base + " --grpc-listen not-an-address");
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("--grpc-listen"), std::string::npos) << c.out;
  c = RunCommand(base + " --a2a-versions 2.0");
  EXPECT_NE(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("--a2a-versions"), std::string::npos) << c.out;
}

// A private key OpenSSL makes, as PEM (`type` "EC" with a curve, or "RSA").
std::string NewKeyPem(const char* type, const char* curve) {
  EVP_PKEY* key = curve ? EVP_PKEY_Q_keygen(nullptr, nullptr, type, curve)
                        : EVP_PKEY_Q_keygen(nullptr, nullptr, type, size_t{2048});
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long len = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(len));
  BIO_free(bio);
  EVP_PKEY_free(key);
  return pem;
}

// The kid of the card's first signature.
std::string KidOf(const json::object& card) {
  const auto header =
      core::Base64UrlDecode(card.at("signatures").at(0).at("protected").as_string());
  return std::string(json::parse(header.value_or("{}")).at("kid").as_string());
}

// The card, verified with the key the JWKS lists under its kid.
void ExpectVerifies(HttpClient& client, const json::object& card) {
  const std::string kid = KidOf(card);
  const json::value jwks = client.Request("GET", "/.well-known/jwks.json").Json();
  for (const auto& k : jwks.at("keys").as_array()) {
    if (k.at("kid") != kid.c_str()) continue;
    EXPECT_EQ(k.at("alg"), "ES256");
    auto key = core::Es256PublicKey::FromXY(*core::Base64UrlDecode(k.at("x").as_string()),
                                            *core::Base64UrlDecode(k.at("y").as_string()));
    ASSERT_TRUE(key);
    auto verified = protocol::VerifyAgentCardSignature(card, *key);
    EXPECT_TRUE(verified) << verified.error().message;
    return;
  }
  ADD_FAILURE() << "kid " << kid << " is not in the JWKS " << jwks;
}

TEST_F(ServeFlags, TheCardIsSignedWithAKeyKeptInTheDataDirectory) {
  Start({});
  const json::object v03 = Card();
  const json::object v10 = Card({{"A2A-Version", "1.0"}});
  ExpectVerifies(*client_, v03);  // each form signed over itself (card_signature.hpp)
  ExpectVerifies(*client_, v10);
  EXPECT_EQ(KidOf(v03), KidOf(v10));
  const json::object hybrid = v03;
  const fs::path key_file = dir_ / "card-signing-key.pem";
  struct stat st {};
  ASSERT_EQ(::stat(key_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const std::string kid = KidOf(hybrid);
  // After a restart: the same key and kid (and a new, equally valid, signature).
  server_.Kill(SIGTERM);
  Start({});
  EXPECT_EQ(KidOf(Card()), kid);
  ExpectVerifies(*client_, Card());
}

TEST_F(ServeFlags, TheCardSigningKeyFlagSignsWithThatKey) {
  const core::Es256PrivateKey key = core::Es256PrivateKey::Generate().value();
  const fs::path file = dir_ / "given-key.pem";
  std::ofstream(file) << key.ToPem();
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  Start({"--card-signing-key", file.string()});
  EXPECT_EQ(KidOf(Card()), protocol::JwkThumbprint(key.public_key()));
  EXPECT_TRUE(protocol::VerifyAgentCardSignature(Card(), key.public_key()));
  EXPECT_FALSE(fs::exists(dir_ / "card-signing-key.pem"));
}

TEST_F(ServeFlags, NoCardSigningServesAnUnsignedCard) {
  Start({"--no-card-signing"});
  EXPECT_FALSE(Card().contains("signatures"));
  EXPECT_FALSE(Card({{"A2A-Version", "1.0"}}).contains("signatures"));
  EXPECT_FALSE(fs::exists(dir_ / "card-signing-key.pem"));
}

TEST_F(ServeFlags, BadCardSigningKeysAreRefusedWithAMessageAndNoServer) {
  const std::string base = kBinary + " serve --listen 127.0.0.1:0 --data-dir " + dir_.string();
  auto key_file = [&](const std::string& name, const std::string& pem) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << pem;
    return p.string();
  };
  Command c = RunCommand(base + " --card-signing-key " + (dir_ / "missing.pem").string());
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("--card-signing-key: cannot read"), std::string::npos) << c.out;
  c = RunCommand(base + " --card-signing-key " + key_file("rsa.pem", NewKeyPem("RSA", nullptr)));
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("a key of type RSA; ES256 needs an EC key on P-256"), std::string::npos)
      << c.out;
  c = RunCommand(base + " --card-signing-key " + key_file("p384.pem", NewKeyPem("EC", "P-384")));
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("an EC key on secp384r1"), std::string::npos) << c.out;
  c = RunCommand(base + " --card-signing-key " + key_file("junk.pem", "not a key"));
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("no PEM private key"), std::string::npos) << c.out;
  c = RunCommand(base + " --no-card-signing --card-signing-key " +
                 key_file("ok.pem", NewKeyPem("EC", "P-256")));
  EXPECT_NE(c.exit_code, 0) << c.out;
  EXPECT_NE(c.out.find("excludes"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("--no-card-signing"), std::string::npos) << c.out;
  // A damaged key in the data directory is not replaced (that would change the kid).
  key_file("card-signing-key.pem", "damaged");
  c = RunCommand(base);
  EXPECT_EQ(c.exit_code, 1) << c.out;
  EXPECT_NE(c.out.find("card-signing-key.pem"), std::string::npos) << c.out;
  std::ifstream kept(dir_ / "card-signing-key.pem");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "damaged");
}

// ACTS' reduced-capabilities pass (issue 29, 5): an operator can stop declaring streaming and
// push notifications; the card and discovery then say false and the operations are refused
// with the errors A2A names for them, in either wire version.
TEST_F(ServeFlags, StreamingAndPushNotificationsCanBeTurnedOff) {
  Start({"--no-streaming", "--no-push-notifications"});
  for (const json::object& card : {Card(), Card({{"A2A-Version", "1.0"}})}) {
    EXPECT_EQ(card.at("capabilities").at("streaming"), false) << json::serialize(card);
    EXPECT_EQ(card.at("capabilities").at("pushNotifications"), false) << json::serialize(card);
  }
  const json::value discovery = client_->Request("GET", "/.well-known/openwop").Json();
  EXPECT_EQ(discovery.at("a2a").at("streaming"), false);
  EXPECT_EQ(discovery.at("a2a").at("pushNotifications"), false);
  const json::object msg10{{"message", json::object{{"messageId", "caps-1"},
                                                   {"role", "ROLE_USER"},
                                                   {"parts", json::array{json::object{{"text", "hi"}}}}}}};
  auto stream = client_->Request("POST", "/v1/a2a",
                                 json::serialize(json::object{{"jsonrpc", "2.0"},
                                                              {"id", 1},
                                                              {"method", "SendStreamingMessage"},
                                                              {"params", msg10}}),
                                 {{"A2A-Version", "1.0"}, {"Content-Type", "application/json"}});
  EXPECT_NE(stream.body.find("-32004"), std::string::npos) << stream.body;
  EXPECT_EQ(client_->Rpc("SubscribeToTask", json::object{{"id", "x"}}, "1.0").at("error").at("code"),
            -32004);
  EXPECT_EQ(client_->Rpc("CreateTaskPushNotificationConfig",
                         json::object{{"taskId", "x"}, {"url", "https://example.com/h"}}, "1.0")
                .at("error")
                .at("code"),
            -32003);
  json::object with_push = msg10;
  with_push["configuration"] =
      json::object{{"taskPushNotificationConfig", json::object{{"url", "https://example.com/h"}}}};
  EXPECT_EQ(client_->Rpc("SendMessage", with_push, "1.0").at("error").at("code"), -32003);
  // A plain send still works.
  EXPECT_TRUE(client_->Rpc("SendMessage", msg10, "1.0").as_object().contains("result"));
}

// The replica and proxy flags refuse what they cannot mean, by name, before serving.
TEST_F(ServeFlags, ReplicaAndProxyFlagsRefuseBadValuesByName) {
  const std::string base =
      kBinary + " serve --listen 127.0.0.1:0 --data-dir " + dir_.string() + " ";
  for (const std::string& bad :
       {std::string("--lease-ttl-ms 5"), std::string("--lease-ttl-ms 600001"),
        std::string("--lease-ttl-ms soon"), std::string("--forwarded-header x-real-ip")}) {
    Command c = RunCommand(base + bad);
    EXPECT_NE(c.exit_code, 0) << bad << ": " << c.out;
    const std::string flag = bad.substr(0, bad.find(' '));
    EXPECT_NE(c.out.find(flag), std::string::npos) << bad << ": " << c.out;
  }
}

}  // namespace
}  // namespace a2ad
