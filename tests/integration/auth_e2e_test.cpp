// Authentication, scopes and tenants through the real binary over loopback, on a real SQLite
// data directory (issue 14): keys made with `a2ad keys create`, listed without secrets,
// revoked while the server runs; every A2A method (JSON-RPC 1.0 and 0.3), every route of the
// A2A REST bindings (1.0, 0.3), the OpenWOP REST routes and the push routes, and gRPC, each
// x {no credential, a wrong secret, a revoked key, an expired key, a key without the scope};
// another tenant's tasks and push configs are not found; messageId dedupe is per tenant; the
// exempt routes answer without a credential; the key secrets never reach the server's log or
// its database; the safe defaults (loopback without keys is development mode, a key turns
// authentication on at once, a non-loopback address without keys refuses to start).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "a2a/v1/a2a.grpc.pb.h"
#include "all_routes.hpp"
#include "http_client.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using testing::ClientResponse;
using testing::HttpClient;
using testing::ServerProcess;
using Headers = std::vector<std::pair<std::string, std::string>>;
using testing::AllRoutes;
using testing::Msg10;
using testing::Route;
using testing::Rpc;

const std::string kBinary = testing::A2adBinary();

struct Command {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

Command RunA2ad(const std::string& args) {
  static int n = 0;
  const fs::path err = fs::temp_directory_path() /
                       ("a2ad-auth-err-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
  Command c;
  FILE* p = popen((kBinary + " " + args + " 2>" + err.string()).c_str(), "r");
  if (!p) return c;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) c.out.append(buf, got);
  const int status = pclose(p);
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  c.err = ss.str();
  fs::remove(err);
  return c;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string SecretOf(const std::string& key) { return key.substr(key.find('_', 7) + 1); }
std::string IdOf(const std::string& key) { return key.substr(7, 16); }


class AuthE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-auth");
    log_ = dir_.string() + "-server.log";
  }
  void TearDown() override {
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
    fs::remove(log_);
  }
  std::string CreateKey(const std::string& tenant, const std::string& scopes,
                        const std::string& extra = "") {
    Command c = RunA2ad("keys create --data-dir " + dir_.string() + " --tenant " + tenant +
                        " --scopes " + scopes + " " + extra);
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    std::string key = c.out.substr(0, c.out.find('\n'));
    EXPECT_EQ(c.out, key + "\n") << "create prints the key and nothing else on stdout";
    EXPECT_TRUE(key.starts_with("a2ad_k_")) << key;
    EXPECT_GE(SecretOf(key).size(), 43u);
    EXPECT_EQ(c.err.find(SecretOf(key)), std::string::npos) << c.err;
    keys_.push_back(key);
    return key;
  }
  // With the OpenWOP test seams, whose routes are checked like the others.
  void Start(std::vector<std::string> flags = {}) {
    if (std::find(flags.begin(), flags.end(), "--conformance-fixtures") == flags.end())
      flags.push_back("--conformance-fixtures");
    server_ = ServerProcess::Start(kBinary, dir_.string(), std::move(flags), log_);
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  ClientResponse Send(const Route& r, const std::string& auth_header = "",
                      const std::string& key = "") {
    Headers h;
    if (!r.body.empty()) h.emplace_back("Content-Type", "application/json");
    if (!r.version.empty()) h.emplace_back("A2A-Version", r.version);
    if (!auth_header.empty()) h.emplace_back(auth_header, key);
    return client_->Request(r.method, r.target, r.body, h);
  }
  ClientResponse As(const std::string& key, const std::string& method, const std::string& target,
                    const std::string& body = "", Headers h = {}) {
    h.emplace_back("Authorization", "Bearer " + key);
    if (!body.empty()) h.emplace_back("Content-Type", "application/json");
    return client_->Request(method, target, body, h);
  }
  json::value RpcAs(const std::string& key, const std::string& method, json::object params,
                    const std::string& version = "1.0") {
    Headers h{{"A2A-Version", version}};
    return As(key, "POST", "/v1/a2a", Rpc(method, std::move(params)), h).Json();
  }

  fs::path dir_;
  std::string log_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
  std::vector<std::string> keys_;
};

// How a refusal of `r` looks on its surface: status, WWW-Authenticate, body shape.
void ExpectRefused(const Route& r, const ClientResponse& res, int status, const std::string& why) {
  const std::string what = why + ": " + r.method + " " + r.target + " " + r.body.substr(0, 60);
  ASSERT_EQ(res.status, status) << what << "\n" << res.body;
  if (status == 401) {
    EXPECT_TRUE(res.Header("WWW-Authenticate").starts_with("Bearer")) << what;
  }
  const json::value body = res.Json();
  if (r.surface == "jsonrpc") {
    EXPECT_EQ(body.at("error").at("code"), status == 401 ? -32014 : -32015) << what << body;
    EXPECT_EQ(body.at("id"), 1) << what << body;  // the request's id, readable: echoed
  } else if (r.surface == "rest") {
    EXPECT_EQ(body.at("error").at("status"),
              status == 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED")
        << what << body;
  } else if (r.surface == "rest03") {
    EXPECT_EQ(body.at("code"), status == 401 ? -32014 : -32015) << what << body;
  } else {
    EXPECT_EQ(body.at("error"), status == 401 ? "unauthenticated" : "forbidden") << what << body;
  }
}

TEST_F(AuthE2e, EveryRouteRefusesMissingWrongRevokedExpiredKeysAndMissingScopes) {
  const std::string admin = CreateKey("acme", "admin", "--name ops");
  const std::string revoked = CreateKey("acme", "admin");
  const std::string expired = CreateKey("acme", "admin", "--expires 1s");
  const std::string scopeless = CreateKey("acme", "nothing:here");
  Command rv = RunA2ad("keys revoke --data-dir " + dir_.string() + " " + IdOf(revoked));
  ASSERT_EQ(rv.exit_code, 0) << rv.out << rv.err;
  const std::string wrong = "a2ad_k_" + IdOf(admin) + "_" + std::string(43, 'A');
  Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the 1s key has expired
  const auto routes = AllRoutes("no-such-task");
  for (const auto& r : routes) {
    ExpectRefused(r, Send(r), 401, "no credential");
    ExpectRefused(r, Send(r, "Authorization", "Bearer " + wrong), 401, "wrong secret");
    ExpectRefused(r, Send(r, "X-API-Key", "not-a-key"), 401, "not a key");
    ExpectRefused(r, Send(r, "X-API-Key", revoked), 401, "revoked");
    ExpectRefused(r, Send(r, "Authorization", "Bearer " + expired), 401, "expired");
    // The extended card needs a credential and no scope; every other route needs one.
    const bool extended_card = r.body.find("xtended") != std::string::npos ||
                               r.target.ends_with("/extendedAgentCard") ||
                               r.target.ends_with("/v1/card");
    if (extended_card)
      EXPECT_EQ(Send(r, "X-API-Key", scopeless).status, 200) << r.target << " " << r.body;
    else
      ExpectRefused(r, Send(r, "X-API-Key", scopeless), 403, "no scope");
    // The admin key passes authentication and the scope check (whatever the route answers).
    const ClientResponse ok = Send(r, "Authorization", "Bearer " + admin);
    // (The interrupt-token routes answer 401 themselves, for the made-up token.)
    if (!r.target.starts_with("/v1/interrupts/")) {
      EXPECT_NE(ok.status, 401) << r.target << " " << ok.body;
    }
    EXPECT_NE(ok.status, 403) << r.target << " " << ok.body;
    if (r.surface == "jsonrpc" && ok.Header("Content-Type") == "application/json") {
      const json::value answer = ok.Json();
      const auto code = answer.as_object().if_contains("error");
      if (code) {
        EXPECT_NE(code->at("code"), -32014) << r.body;
        EXPECT_NE(code->at("code"), -32015) << r.body;
      }
    }
  }
  // The exempt routes need no credential.
  for (const char* path :
       {"/.well-known/agent-card.json", "/.well-known/agent.json", "/v1/a2a/agent.json",
        "/.well-known/jwks.json", "/healthz", "/.well-known/openwop", "/v1/openapi.json"})
    EXPECT_EQ(client_->Request("GET", path).status, 200) << path;
  // An unknown path is refused before it is looked up (nothing to enumerate).
  EXPECT_EQ(client_->Request("GET", "/no/such/path").status, 401);
}

TEST_F(AuthE2e, ScopesAreThoseOfTheOperation) {
  const std::string reader = CreateKey("acme", "tasks:read,runs:read");
  const std::string writer = CreateKey("acme", "tasks:write");
  const std::string pusher = CreateKey("acme", "push:manage,runs:write");
  Start();
  // tasks:write sends; tasks:read reads it, may not cancel it or manage its push configs.
  json::value sent = RpcAs(writer, "SendMessage", Msg10("s1"));
  ASSERT_TRUE(sent.as_object().contains("result")) << sent;
  const std::string task(sent.at("result").at("task").at("id").as_string());
  EXPECT_EQ(RpcAs(writer, "GetTask", {{"id", task}}).at("error").at("code"), -32015);
  EXPECT_TRUE(RpcAs(reader, "GetTask", {{"id", task}}).as_object().contains("result"));
  EXPECT_EQ(RpcAs(reader, "CancelTask", {{"id", task}}).at("error").at("code"), -32015);
  EXPECT_EQ(RpcAs(reader, "SendMessage", Msg10("s2")).at("error").at("code"), -32015);
  json::value denied = RpcAs(reader, "ListTaskPushNotificationConfigs", {{"taskId", task}});
  EXPECT_EQ(denied.at("error").at("code"), -32015) << denied;
  EXPECT_EQ(denied.at("error").at("data").at(0).at("metadata").at("requiredScope"), "push:manage")
      << denied;
  // OpenWOP: runs:read reads the run, may not cancel it; the A2A seam needs tasks:read.
  EXPECT_EQ(As(reader, "GET", "/v1/runs/" + task).status, 200);
  EXPECT_EQ(As(reader, "POST", "/v1/runs/" + task + "/cancel", "{}").status, 403);
  EXPECT_EQ(As(writer, "GET", "/v1/runs/" + task).status, 403);
  EXPECT_EQ(As(reader, "GET", "/v1/push/dead-letters").status, 403);  // admin only
  // The surface seam acts for any tenant its body names: admin only.
  const std::string list = R"({"tenantId":"globex","surface":"webhooks","op":"list"})";
  EXPECT_EQ(As(pusher, "POST", "/v1/host/sample/test/surface", list).status, 403);
  EXPECT_EQ(As(pusher, "POST", "/v1/host/sample/test/idempotency/concurrent-claim", "{}").status,
            200);
}

TEST_F(AuthE2e, AnotherTenantsTasksRunsAndPushConfigsAreNotFound) {
  const std::string a = CreateKey("acme", "admin");
  const std::string b = CreateKey("globex", "admin");
  Start();
  json::value sent = RpcAs(a, "SendMessage", Msg10("t1"));
  const std::string task(sent.at("result").at("task").at("id").as_string());
  json::value made = RpcAs(a, "CreateTaskPushNotificationConfig",
                           {{"taskId", task}, {"id", "c1"}, {"url", "https://example.com/hook"}});
  ASSERT_TRUE(made.as_object().contains("result")) << made;
  // A sees its own task and config.
  EXPECT_TRUE(RpcAs(a, "GetTask", {{"id", task}}).as_object().contains("result"));
  EXPECT_TRUE(RpcAs(a, "GetTaskPushNotificationConfig", {{"taskId", task}, {"id", "c1"}})
                  .as_object()
                  .contains("result"));
  // B: not found everywhere, never 403.
  for (const auto& [m, p] : std::vector<std::pair<std::string, json::object>>{
           {"GetTask", {{"id", task}}},
           {"CancelTask", {{"id", task}}},
           {"SubscribeToTask", {{"id", task}}},
           {"GetTaskPushNotificationConfig", {{"taskId", task}, {"id", "c1"}}},
           {"ListTaskPushNotificationConfigs", {{"taskId", task}}},
           {"DeleteTaskPushNotificationConfig", {{"taskId", task}, {"id", "c1"}}},
           {"CreateTaskPushNotificationConfig",
            {{"taskId", task}, {"id", "c2"}, {"url", "https://example.com/x"}}}}) {
    json::value r = RpcAs(b, m, p);
    EXPECT_EQ(r.at("error").at("code"), -32001) << m << " " << r;
  }
  EXPECT_EQ(RpcAs(b, "SendMessage", Msg10("t1-reply", task)).at("error").at("code"), -32001);
  EXPECT_EQ(RpcAs(b, "tasks/get", {{"id", task}}, "").at("error").at("code"), -32001);
  // B's list is empty; A's holds the task.
  EXPECT_EQ(RpcAs(b, "ListTasks", {}).at("result").at("tasks").as_array().size(), 0u);
  EXPECT_EQ(RpcAs(a, "ListTasks", {}).at("result").at("tasks").as_array().size(), 1u);
  // REST bindings and OpenWOP routes.
  EXPECT_EQ(As(b, "GET", "/a2a/rest/tasks/" + task).status, 404);
  EXPECT_EQ(As(b, "POST", "/a2a/rest/tasks/" + task + ":cancel", "{}").status, 404);
  EXPECT_EQ(As(b, "GET", "/a2a/rest/tasks/" + task + "/pushNotificationConfigs").status, 404);
  EXPECT_EQ(As(b, "GET", "/a2a/rest03/v1/tasks/" + task).status, 404);
  EXPECT_EQ(As(a, "GET", "/v1/runs/" + task).status, 200);
  for (const auto& [m, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/v1/runs/" + task},
           {"POST", "/v1/runs/" + task + "/cancel"},
           {"GET", "/v1/runs/" + task + "/events"},
           {"GET", "/v1/runs/" + task + "/events/poll"},
           {"POST", "/v1/runs/" + task + "/interrupts/n1"},
           {"GET", "/v1/a2a/tasks/" + task}}) {
    const auto r = As(b, m, path,
                      m != "POST"                ? ""
                      : path.ends_with("cancel") ? "{}"
                                                 : R"({"resumeValue":"accept"})");
    EXPECT_EQ(r.status, 404) << m << " " << path << " " << r.body;
  }
  const json::value runs = As(b, "GET", "/v1/runs").Json();
  EXPECT_EQ(json::serialize(runs).find(task), std::string::npos) << runs;
  EXPECT_EQ(As(b, "POST", "/v1/host/sample/a2a/tasks/push-config",
               R"({"taskId":")" + task + R"(","url":"https://example.com/h"})")
                .status,
            404);
  EXPECT_EQ(As(b, "GET", "/v1/push/deliveries?taskId=" + task).status, 404);
  // HEAD is checked as GET is (it once skipped the tenant check), and carries no body.
  auto head = As(b, "HEAD", "/v1/push/deliveries?taskId=" + task);
  EXPECT_EQ(head.status, 404);
  EXPECT_EQ(head.body, "");
  // Webhooks: registered for the credential's tenant; another tenant's is not found.
  auto hook = As(a, "POST", "/v1/webhooks",
                 R"({"url":"https://example.com/h","events":["run.completed"]})");
  ASSERT_EQ(hook.status, 201) << hook.body;
  const std::string hook_id(hook.Json().at("webhookId").as_string());
  EXPECT_EQ(As(b, "POST", "/v1/webhooks",
               R"({"url":"https://example.com/h","events":["run.completed"],"tenantId":"acme"})")
                .status,
            403);
  EXPECT_EQ(As(b, "DELETE", "/v1/webhooks/" + hook_id).status, 404);
  EXPECT_EQ(As(a, "DELETE", "/v1/webhooks/" + hook_id).status, 204);
  // messageId dedupe is per tenant: B's message with A's messageId makes B's own task; A's
  // repeat is A's task again.
  json::value again_a = RpcAs(a, "SendMessage", Msg10("t1"));
  EXPECT_EQ(again_a.at("result").at("task").at("id").as_string(), task) << again_a;
  json::value same_id_b = RpcAs(b, "SendMessage", Msg10("t1"));
  ASSERT_TRUE(same_id_b.as_object().contains("result")) << same_id_b;
  EXPECT_NE(same_id_b.at("result").at("task").at("id").as_string(), task);
}

TEST_F(AuthE2e, AnotherTenantCannotAnswerAnInterruptAndIdempotencyKeysArePerTenant) {
  const std::string a = CreateKey("acme", "admin");
  const std::string b = CreateKey("globex", "admin");
  Start({"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows", "--conformance-fixtures"});
  const std::string start = R"({"workflowId":"conformance-approval"})";
  auto made = As(a, "POST", "/v1/runs", start, {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string run(made.Json().at("runId").as_string());
  const json::value snapshot =
      testing::PollUntil([&] { return As(a, "GET", "/v1/runs/" + run).Json(); },
                         [](const json::value& s) { return s.at("status") == "waiting-approval"; });
  ASSERT_EQ(snapshot.at("status"), "waiting-approval") << snapshot;
  const std::string accept = R"({"resumeValue":{"action":"accept"}})";
  // B: the run and its interrupt do not exist; still waiting afterwards.
  EXPECT_EQ(As(b, "POST", "/v1/runs/" + run + "/interrupts/gate", accept).status, 404);
  EXPECT_EQ(As(b, "POST", "/v1/runs/" + run + "/approvals/gate", accept).status, 404);
  EXPECT_EQ(As(a, "GET", "/v1/runs/" + run).Json().at("status"), "waiting-approval");
  // The same Idempotency-Key: a replay for A, a new run for B.
  auto again = As(a, "POST", "/v1/runs", start, {{"Idempotency-Key", "k1"}});
  EXPECT_EQ(again.Header("openwop-Idempotent-Replay"), "true");
  EXPECT_EQ(again.Json().at("runId").as_string(), run);
  auto other = As(b, "POST", "/v1/runs", start, {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(other.status, 201) << other.body;
  EXPECT_EQ(other.Header("openwop-Idempotent-Replay"), "false");
  EXPECT_NE(other.Json().at("runId").as_string(), run);
  // A answers its own interrupt; the decision is recorded as A's key.
  EXPECT_EQ(As(a, "POST", "/v1/runs/" + run + "/interrupts/gate", accept).status, 200);
  const std::string events =
      As(a, "GET", "/v1/runs/" + run + "/events/poll?lastSequence=0&timeout=0").body;
  EXPECT_NE(events.find(IdOf(a)), std::string::npos) << events;
}

// The bundled campaign-brief asks the host itself for its draft (the `self` peer): with
// authentication on, that call presents the host's own credential for the calling run's
// tenant, so the drafting task is the tenant's, another tenant does not see it, and a
// credential of that shape the host did not make is refused.
TEST_F(AuthE2e, TheSelfPeerCallsInTheCallingRunsTenantWithTheHostsOwnCredential) {
  const std::string a = CreateKey("acme", "admin");
  const std::string b = CreateKey("globex", "admin");
  Start({"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows"});
  auto made = As(a, "POST", "/v1/runs",
                 R"({"workflowId":"campaign-brief","inputs":{"prompt":"Acme launch"}})");
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string run(made.Json().at("runId").as_string());
  const json::value snapshot =
      testing::PollUntil([&] { return As(a, "GET", "/v1/runs/" + run).Json(); },
                         [](const json::value& s) {
                           return s.at("status") != "running" && s.at("status") != "pending";
                         });
  ASSERT_EQ(snapshot.at("status"), "waiting-approval") << snapshot;
  const std::string drafted(
      snapshot.at("nodeStates").at("ask-drafter").at("outputs").at("peerTaskId").as_string());
  auto task = RpcAs(a, "GetTask", json::object{{"id", drafted}});
  ASSERT_TRUE(task.as_object().contains("result")) << task;
  EXPECT_EQ(task.at("result").at("status").at("state"), "TASK_STATE_COMPLETED") << task;
  auto hidden = RpcAs(b, "GetTask", json::object{{"id", drafted}});
  EXPECT_EQ(hidden.at("error").at("code"), -32001) << hidden;
  Route get{"jsonrpc", "POST", "/v1/a2a", Rpc("GetTask", json::object{{"id", drafted}}), "1.0"};
  ExpectRefused(get,
                Send(get, "Authorization",
                     "Bearer a2ad_s_YWNtZQ.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
                401, "a self credential the host did not make");
}

TEST_F(AuthE2e, GrpcMetadataCarriesTheKey) {
  const std::string reader = CreateKey("acme", "tasks:read");
  const std::string admin = CreateKey("acme", "admin");
  Start({"--grpc-listen", "127.0.0.1:0"});
  const json::value card = client_->Request("GET", "/.well-known/agent-card.json").Json();
  std::string address;
  for (const auto& i : card.at("additionalInterfaces").as_array())
    if (i.at("transport") == "GRPC") address = std::string(i.at("url").as_string());
  ASSERT_FALSE(address.empty()) << card;
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto v10 = ::lf::a2a::v1::A2AService::NewStub(channel);
  auto v03 = ::a2a::v1::A2AService::NewStub(channel);
  auto get10 = [&](const std::vector<std::pair<std::string, std::string>>& md) {
    grpc::ClientContext ctx;
    for (const auto& [k, v] : md) ctx.AddMetadata(k, v);
    ::lf::a2a::v1::GetTaskRequest req;
    req.set_id("no-such-task");
    ::lf::a2a::v1::Task task;
    return v10->GetTask(&ctx, req, &task).error_code();
  };
  EXPECT_EQ(get10({}), grpc::UNAUTHENTICATED);
  EXPECT_EQ(get10({{"authorization", "Bearer a2ad_k_0000000000000000_nope"}}),
            grpc::UNAUTHENTICATED);
  EXPECT_EQ(get10({{"x-api-key", reader}}), grpc::NOT_FOUND);
  EXPECT_EQ(get10({{"authorization", "Bearer " + admin}}), grpc::NOT_FOUND);
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("x-api-key", reader);
    ::lf::a2a::v1::SendMessageRequest req;
    req.mutable_message()->set_message_id("g1");
    req.mutable_message()->set_role(::lf::a2a::v1::ROLE_USER);
    req.mutable_message()->add_parts()->set_text("hi");
    ::lf::a2a::v1::SendMessageResponse resp;
    EXPECT_EQ(v10->SendMessage(&ctx, req, &resp).error_code(), grpc::PERMISSION_DENIED);
  }
  {
    grpc::ClientContext ctx;
    ::a2a::v1::GetTaskRequest req;
    req.set_name("tasks/no-such-task");
    ::a2a::v1::Task task;
    EXPECT_EQ(v03->GetTask(&ctx, req, &task).error_code(), grpc::UNAUTHENTICATED);
  }
  {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + reader);
    ::lf::a2a::v1::SubscribeToTaskRequest req;
    req.set_id("no-such-task");
    auto stream = v10->SubscribeToTask(&ctx, req);
    ::lf::a2a::v1::StreamResponse item;
    while (stream->Read(&item)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::NOT_FOUND);
  }
}

TEST_F(AuthE2e, TheCliListsWithoutSecretsAndARevokedKeyIsRefusedAtItsNextRequest) {
  const std::string key = CreateKey("acme", "tasks:read,tasks:write", "--name ci --expires 30d");
  Command listed = RunA2ad("keys list --data-dir " + dir_.string());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find(IdOf(key)), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("acme"), std::string::npos);
  EXPECT_NE(listed.out.find("ci"), std::string::npos);
  EXPECT_NE(listed.out.find("active"), std::string::npos);
  EXPECT_EQ(listed.out.find(SecretOf(key)), std::string::npos) << listed.out;
  // Bad arguments: exit 2 and no key.
  Command bad = RunA2ad("keys create --data-dir " + dir_.string() + " --tenant t --scopes 'a b'");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(bad.out, "");
  bad = RunA2ad("keys create --data-dir " + dir_.string() +
                " --tenant t --scopes admin --expires 2020-01-01T00:00:00Z");
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_EQ(RunA2ad("keys revoke --data-dir " + dir_.string() + " 0123456789abcdef").exit_code, 1);

  Start();
  EXPECT_EQ(As(key, "GET", "/a2a/rest/tasks").status, 200);
  Command rv = RunA2ad("keys revoke --data-dir " + dir_.string() + " " + IdOf(key));
  ASSERT_EQ(rv.exit_code, 0) << rv.err;
  EXPECT_EQ(As(key, "GET", "/a2a/rest/tasks").status, 401);  // the very next request
  listed = RunA2ad("keys list --data-dir " + dir_.string());
  EXPECT_NE(listed.out.find("revoked"), std::string::npos) << listed.out;
}

TEST_F(AuthE2e, WithoutKeysLoopbackIsDevelopmentModeUntilAKeyExists) {
  Start();
  // Development mode: no credential needed, said once in the log.
  json::value r = client_->Rpc("GetTask", json::object{{"id", "x"}}, "1.0");
  EXPECT_EQ(r.at("error").at("code"), -32001) << r;
  const std::string log = Slurp(log_);
  EXPECT_NE(log.find("development mode"), std::string::npos) << log;
  // A key made while the server runs turns authentication on at the next request.
  const std::string key = CreateKey("acme", "tasks:read");
  EXPECT_EQ(client_->Request("GET", "/a2a/rest/tasks").status, 401);
  EXPECT_EQ(As(key, "GET", "/a2a/rest/tasks").status, 200);
}

TEST_F(AuthE2e, ANonLoopbackAddressWithoutKeysRefusesToStart) {
  Command c = RunA2ad("serve --listen 0.0.0.0:0 --data-dir " + dir_.string());
  EXPECT_EQ(c.exit_code, 2) << c.err;
  EXPECT_NE(c.err.find("--insecure-no-auth"), std::string::npos) << c.err;
  EXPECT_EQ(c.out.find("serving"), std::string::npos) << c.out;
  c = RunA2ad("serve --listen 127.0.0.1:0 --grpc-listen 0.0.0.0:0 --data-dir " + dir_.string());
  EXPECT_EQ(c.exit_code, 2) << c.err;
}

TEST_F(AuthE2e, KeySecretsReachNeitherTheLogNorTheDatabase) {
  const std::string a = CreateKey("acme", "admin");
  const std::string b = CreateKey("globex", "tasks:read");
  Start();
  // Exercise every route with each key, a wrong one and a revoked one.
  for (const auto& r : AllRoutes("no-such-task")) {
    Send(r, "Authorization", "Bearer " + a);
    Send(r, "X-API-Key", b);
    Send(r, "X-API-Key", "a2ad_k_" + IdOf(a) + "_" + std::string(43, 'Q'));
  }
  RpcAs(a, "SendMessage", Msg10("log-1"));
  server_.Kill(SIGTERM);
  server_.pid = -1;
  const std::string log = Slurp(log_);
  ASSERT_FALSE(log.empty());
  std::string db;
  for (const char* f : {"a2ad.db", "a2ad.db-wal"})
    if (fs::exists(dir_ / f)) db += Slurp(dir_ / f);
  ASSERT_FALSE(db.empty());
  for (const auto& key : keys_) {
    EXPECT_EQ(log.find(SecretOf(key)), std::string::npos) << "a key secret is in the log";
    EXPECT_EQ(db.find(SecretOf(key)), std::string::npos) << "a key secret is in the database";
  }
  EXPECT_EQ(log.find(std::string(43, 'Q')), std::string::npos);
}

// RFC 0011 auth-scoped discovery (issue 29, 5): the public document advertises it; a caller
// presenting a credential sees the families it can use, never more than a broader one; a
// credential that does not authenticate is refused as anywhere else.
TEST_F(AuthE2e, DiscoveryIsScopedToTheCallersCredential) {
  const std::string admin = CreateKey("acme", "admin");
  const std::string reader = CreateKey("acme", "tasks:read");
  const std::string runs = CreateKey("acme", "runs:read");
  Start();
  auto families = [](const json::value& doc) {
    std::set<std::string> keys;
    for (const auto& kv : doc.as_object()) keys.insert(std::string(kv.key()));
    return keys;
  };
  const ClientResponse open = client_->Request("GET", "/.well-known/openwop");
  ASSERT_EQ(open.status, 200);
  const json::value pub = open.Json();
  EXPECT_EQ(pub.at("discovery").at("authScoped").at("supported"), true);
  EXPECT_EQ(pub.at("discovery").at("authScoped").at("mode"), "same-endpoint");
  const json::value all = As(admin, "GET", "/.well-known/openwop").Json();
  const json::value read = As(reader, "GET", "/.well-known/openwop").Json();
  const ClientResponse narrow = As(runs, "GET", "/.well-known/openwop");
  EXPECT_EQ(narrow.Header("Cache-Control"), "private, no-store");
  for (const json::value* doc : {&all, &read}) {
    for (const char* required : {"protocolVersion", "supportedEnvelopes", "schemaVersions", "limits"})
      EXPECT_TRUE(doc->as_object().contains(required)) << required;
  }
  EXPECT_EQ(families(all), families(pub));
  EXPECT_TRUE(read.as_object().contains("a2a"));
  EXPECT_FALSE(read.as_object().contains("webhooks"));
  EXPECT_FALSE(narrow.Json().as_object().contains("a2a"));
  const json::value narrow_doc = narrow.Json();
  for (const json::value* low : {&read, &narrow_doc})
    for (const auto& k : families(*low)) EXPECT_TRUE(families(all).contains(k)) << k;
  EXPECT_EQ(As("a2ad_k_0000000000000000_" + std::string(43, 'A'), "GET", "/.well-known/openwop")
                .status,
            401);
}

// Issue 35: an approver's queue. A key with only interrupts:resolve may not list runs, but
// its inbox lists the tasks waiting on a person, newest first, with skill, age, question and
// the interrupt to render; another tenant's inbox is empty; /v1/me says who a key is.
TEST_F(AuthE2e, AnApproverSeesItsInboxAndWhoItIs) {
  const std::string admin = CreateKey("acme", "admin");
  const std::string approver = CreateKey("acme", "interrupts:resolve");
  const std::string other = CreateKey("globex", "admin");
  Start({"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows", "--conformance-fixtures"});
  std::vector<std::string> runs;
  for (int i = 0; i < 2; ++i) {
    auto made = As(admin, "POST", "/v1/runs", R"({"workflowId":"conformance-approval"})");
    ASSERT_EQ(made.status, 201) << made.body;
    runs.emplace_back(made.Json().at("runId").as_string());
    testing::WaitFor([&] {
      return As(admin, "GET", "/v1/runs/" + runs.back()).Json().at("status") == "waiting-approval";
    });
  }
  EXPECT_EQ(As(approver, "GET", "/v1/runs").status, 403);
  const ClientResponse inbox = As(approver, "GET", "/v1/inbox");
  ASSERT_EQ(inbox.status, 200) << inbox.body;
  const json::value listed = inbox.Json();
  const json::array& items = listed.at("items").as_array();
  ASSERT_EQ(items.size(), 2u) << inbox.body;
  EXPECT_EQ(items[0].at("taskId"), json::value(runs[1]));  // newest first
  EXPECT_EQ(items[1].at("taskId"), json::value(runs[0]));
  EXPECT_EQ(items[0].at("skill"), "conformance-approval");
  EXPECT_EQ(items[0].at("state"), "input-required");
  EXPECT_EQ(items[0].at("interrupt").at("kind"), "approval");
  EXPECT_FALSE(items[0].at("question").as_string().empty());
  EXPECT_TRUE(items[0].as_object().contains("interruptToken"));
  EXPECT_EQ(As(approver, "GET", "/v1/inbox?limit=1").Json().at("items").as_array().size(), 1u);
  EXPECT_EQ(As(approver, "GET", "/v1/inbox?limit=0").status, 400);
  EXPECT_TRUE(As(other, "GET", "/v1/inbox").Json().at("items").as_array().empty());
  // The approver answers one: it leaves the inbox.
  EXPECT_EQ(As(approver, "POST", "/v1/runs/" + runs[1] + "/interrupts/gate",
               R"({"resumeValue":{"action":"accept"}})")
                .status,
            200);
  EXPECT_EQ(As(approver, "GET", "/v1/inbox").Json().at("items").as_array().size(), 1u);
  const json::value me = As(approver, "GET", "/v1/me").Json();
  EXPECT_EQ(me.at("tenant"), "acme");
  EXPECT_EQ(me.at("principal"), json::value(IdOf(approver)));
  EXPECT_EQ(me.at("scopes"), (json::array{"interrupts:resolve"}));
  EXPECT_EQ(me.at("authenticated"), true);
  EXPECT_EQ(client_->Request("GET", "/v1/me").status, 401);
}

}  // namespace
}  // namespace a2ad
