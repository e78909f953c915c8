// Mutual TLS (issue 14) through the real binary over loopback, with certificates the test
// makes (test_pki.hpp): a client certificate from the client CA that the map names is that
// principal (its tenant's tasks, not another's); without a certificate and credential a call
// is 401 (the card stays readable); a certificate the map does not name is 403; one from
// another CA is refused in the handshake and the server goes on; an API key sent with a
// certificate wins; gRPC reads the same certificates; with mTLS and no API key the server
// authenticates from the start.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "http_client.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "test_paths.hpp"
#include "test_pki.hpp"
#include "tls_client.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using testing::CertAndKey;
using testing::ServerProcess;
using testing::TlsClientOptions;
using testing::TlsHttpClient;
namespace v1 = ::lf::a2a::v1;

const std::string kBinary = testing::A2adBinary();

json::object SendParams(const std::string& id) {
  return json::object{
      {"message",
       json::object{{"kind", "message"},
                    {"messageId", id},
                    {"role", "user"},
                    {"parts", json::array{json::object{{"kind", "text"}, {"text", "hi"}}}}}}};
}

class MtlsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-mtls");
    const CertAndKey server = server_ca_.IssueServer();
    testing::WriteTextFile(dir_ / "server.pem", server.cert_pem);
    testing::WriteTextFile(dir_ / "server-key.pem", server.key_pem);
    testing::WriteTextFile(dir_ / "clients-ca.pem", client_ca_.ca_pem());
    testing::WriteTextFile(dir_ / "map.json", R"([
      {"subject": "CN=billing-agent,O=Acme", "tenant": "acme",
       "scopes": ["tasks:read", "tasks:write"]},
      {"subject": "CN=ops,O=Globex", "tenant": "globex", "scopes": ["tasks:read"]}
    ])");
    fs::create_directories(dir_ / "data");
    server_ = ServerProcess::Start(
        kBinary, (dir_ / "data").string(),
        {"--tls-cert", (dir_ / "server.pem").string(), "--tls-key",
         (dir_ / "server-key.pem").string(), "--tls-client-ca", (dir_ / "clients-ca.pem").string(),
         "--tls-client-map", (dir_ / "map.json").string(), "--grpc-listen", "127.0.0.1:0"});
  }
  void TearDown() override {
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  TlsHttpClient As(const CertAndKey& cert) {
    return TlsHttpClient(server_.port,
                         TlsClientOptions{server_ca_.ca_pem(), cert.cert_pem, cert.key_pem});
  }
  TlsHttpClient Anonymous() { return TlsHttpClient(server_.port, {server_ca_.ca_pem()}); }
  std::string GrpcAddress() {
    const json::value card = Anonymous().Request("GET", "/.well-known/agent-card.json").Json();
    for (const auto& i : card.at("additionalInterfaces").as_array())
      if (i.at("transport") == "GRPC") return std::string(i.at("url").as_string());
    return "";
  }
  std::unique_ptr<v1::A2AService::Stub> GrpcAs(const CertAndKey* cert) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = server_ca_.ca_pem();
    if (cert) {
      tls.pem_cert_chain = cert->cert_pem;
      tls.pem_private_key = cert->key_pem;
    }
    grpc::ChannelArguments args;
    args.SetSslTargetNameOverride("localhost");
    return v1::A2AService::NewStub(
        grpc::CreateCustomChannel(GrpcAddress(), grpc::SslCredentials(tls), args));
  }

  testing::TestPki server_ca_{"a2ad test server CA"};
  testing::TestPki client_ca_{"a2ad test client CA"};
  const CertAndKey billing_ = client_ca_.IssueClient("billing-agent", "Acme");
  const CertAndKey ops_ = client_ca_.IssueClient("ops", "Globex");
  const CertAndKey stranger_ = client_ca_.IssueClient("stranger", "Acme");
  fs::path dir_;
  ServerProcess server_;
};

TEST_F(MtlsE2e, AMappedCertificateIsItsTenantsPrincipal) {
  TlsHttpClient billing = As(billing_);
  auto sent = billing.Rpc("message/send", SendParams("m1"));
  ASSERT_EQ(sent.status, 200) << sent.body;
  const json::value task = sent.Json().at("result");
  EXPECT_EQ(task.at("status").at("state"), "completed") << sent.body;
  const json::object get{{"id", task.at("id")}};
  auto mine = billing.Rpc("tasks/get", get);
  ASSERT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(mine.Json().at("result").at("id"), task.at("id")) << mine.body;
  // Another tenant's certificate does not see it.
  TlsHttpClient ops = As(ops_);
  auto theirs = ops.Rpc("tasks/get", get);
  EXPECT_EQ(theirs.Json().at("error").at("code"), -32001) << theirs.body;  // TaskNotFound
  // Scopes come from the map: globex may read, not write.
  auto write = ops.Rpc("message/send", SendParams("m2"));
  EXPECT_EQ(write.status, 403) << write.body;
}

TEST_F(MtlsE2e, NoCertificateIs401AndAnUnmappedOneIs403) {
  TlsHttpClient anonymous = Anonymous();
  testing::ClientResponse card = anonymous.Request("GET", "/.well-known/agent-card.json");
  EXPECT_EQ(card.status, 200);  // exempt
  // The card declares client certificates as a way in (0.3 `type`; 1.0 member).
  EXPECT_EQ(card.Json().at("securitySchemes").at("mtls").at("type"), "mutualTLS") << card.body;
  testing::ClientResponse card10 =
      anonymous.Request("GET", "/.well-known/agent-card.json", "", {{"A2A-Version", "1.0"}});
  const json::value mtls = card10.Json().at("securitySchemes").at("mtls");
  EXPECT_TRUE(mtls.as_object().contains("mtlsSecurityScheme")) << mtls;
  auto refused = anonymous.Rpc("message/send", SendParams("m1"));
  EXPECT_EQ(refused.status, 401) << refused.body;
  EXPECT_TRUE(refused.Header("WWW-Authenticate").starts_with("Bearer")) << refused.body;
  TlsHttpClient stranger = As(stranger_);
  auto unmapped = stranger.Request("GET", "/a2a/rest/tasks");
  EXPECT_EQ(unmapped.status, 403) << unmapped.body;
  EXPECT_NE(unmapped.body.find("CN=stranger,O=Acme"), std::string::npos) << unmapped.body;
}

TEST_F(MtlsE2e, ACertificateFromAnotherCaIsRefusedInTheHandshake) {
  testing::TestPki rogue("rogue CA");
  const CertAndKey forged = rogue.IssueClient("billing-agent", "Acme");  // the mapped subject
  TlsHttpClient client = As(forged);
  EXPECT_ANY_THROW(client.Request("GET", "/a2a/rest/tasks"));
  TlsHttpClient billing = As(billing_);
  EXPECT_EQ(billing.Request("GET", "/a2a/rest/tasks").status, 200);  // the server goes on
}

TEST_F(MtlsE2e, AnApiKeyWinsOverTheCertificate) {
  TlsHttpClient billing = As(billing_);
  auto sent = billing.Rpc("message/send", SendParams("m1"));
  ASSERT_EQ(sent.status, 200) << sent.body;
  const json::object get{{"id", sent.Json().at("result").at("id")}};
  // A key of another tenant, made while the server runs.
  const std::string cmd = kBinary + " keys create --data-dir " + (dir_ / "data").string() +
                          " --tenant globex --scopes tasks:read 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[256] = {};
  ASSERT_NE(fgets(buf, sizeof buf, p), nullptr);
  pclose(p);
  std::string key(buf);
  key.erase(key.find_last_not_of("\r\n") + 1);
  auto as_key = billing.Rpc("tasks/get", get, {{"Authorization", "Bearer " + key}});
  EXPECT_EQ(as_key.Json().at("error").at("code"), -32001) << as_key.body;
  auto wrong = billing.Rpc("tasks/get", get, {{"X-API-Key", key + "x"}});
  EXPECT_EQ(wrong.status, 401) << wrong.body;
  EXPECT_EQ(billing.Rpc("tasks/get", get).status, 200);  // the certificate alone
}

TEST_F(MtlsE2e, GrpcAuthenticatesTheSameCertificates) {
  v1::SendMessageRequest req;
  req.mutable_message()->set_message_id("g1");
  req.mutable_message()->set_role(v1::ROLE_USER);
  req.mutable_message()->add_parts()->set_text("hi");
  auto deadline = [] { return std::chrono::system_clock::now() + std::chrono::seconds(30); };
  v1::SendMessageResponse resp;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    const grpc::Status st = GrpcAs(&billing_)->SendMessage(&ctx, req, &resp);
    ASSERT_TRUE(st.ok()) << st.error_message();
  }
  v1::GetTaskRequest get;
  get.set_id(resp.task().id());
  v1::Task task;
  auto get_as = [&](const CertAndKey* cert) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    return GrpcAs(cert)->GetTask(&ctx, get, &task);
  };
  EXPECT_TRUE(get_as(&billing_).ok());
  EXPECT_EQ(get_as(&ops_).error_code(), grpc::NOT_FOUND);
  EXPECT_EQ(get_as(nullptr).error_code(), grpc::UNAUTHENTICATED);
  EXPECT_EQ(get_as(&stranger_).error_code(), grpc::PERMISSION_DENIED);
}

}  // namespace
}  // namespace a2ad
