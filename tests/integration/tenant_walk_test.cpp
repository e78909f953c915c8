// Issue 29, 2: every route that takes a tenant, task, run, config, objective, plan, delivery,
// webhook or interrupt token from the request, walked with a key of another tenant (the way
// auth_e2e_test walks them without a credential): what names tenant A's objects is "not
// found" for tenant B (no enumeration), on JSON-RPC (both versions), both A2A REST bindings,
// gRPC, the OpenWOP routes, the push routes and the OPT extension; what B may call (lists,
// new sends) answers without any of A's ids. A request naming another tenant is refused as
// with keys also without them (the anonymous caller is the default tenant's).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "all_routes.hpp"
#include "http_client.hpp"
#include "lf/a2a/v1/a2a.grpc.pb.h"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using testing::AllRoutes;
using testing::ClientResponse;
using testing::HttpClient;
using testing::Msg10;
using testing::Route;
using testing::Rpc;
using testing::ServerProcess;
using Headers = std::vector<std::pair<std::string, std::string>>;

const std::string kBinary = testing::A2adBinary();
const std::string kOpt = "https://github.com/zeroasterisk/a2a-opt/v1";

std::string RunA2ad(const std::string& args) {
  std::string out;
  FILE* p = popen((kBinary + " " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  pclose(p);
  return out.substr(0, out.find('\n'));
}

class TenantWalk : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDir("a2ad-tenant-walk"); }
  void TearDown() override {
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  std::string Key(const std::string& tenant) {
    return RunA2ad("keys create --data-dir " + dir_.string() + " --tenant " + tenant +
                   " --scopes admin");
  }
  void Start() {
    server_ = ServerProcess::Start(
        kBinary, dir_.string(),
        {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows", "--conformance-fixtures",
         "--grpc-listen", "127.0.0.1:0", "--push-max-attempts", "1"});
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  ClientResponse As(const std::string& key, const std::string& method, const std::string& target,
                    const std::string& body = "", Headers h = {}) {
    if (!key.empty()) h.emplace_back("Authorization", "Bearer " + key);
    if (!body.empty()) h.emplace_back("Content-Type", "application/json");
    return client_->Request(method, target, body, h);
  }
  json::value RpcAs(const std::string& key, const std::string& method, json::object params,
                    Headers h = {{"A2A-Version", "1.0"}}) {
    return As(key, "POST", "/v1/a2a", Rpc(method, std::move(params)), std::move(h)).Json();
  }
  // A run of conformance-approval waiting at its gate, and its interrupt token.
  std::pair<std::string, std::string> Parked(const std::string& key) {
    auto made = As(key, "POST", "/v1/runs", R"({"workflowId":"conformance-approval"})");
    EXPECT_EQ(made.status, 201) << made.body;
    const std::string run(made.Json().at("runId").as_string());
    const json::value snapshot = testing::PollUntil(
        [&] { return As(key, "GET", "/v1/runs/" + run).Json(); },
        [](const json::value& s) { return s.at("status") == "waiting-approval"; });
    EXPECT_EQ(snapshot.at("status"), "waiting-approval") << snapshot;
    return {run, std::string(snapshot.at("interrupt").at("interruptToken").as_string())};
  }

  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

// True when `r` answered with an error: an HTTP error status, or a JSON-RPC error object.
bool IsError(const ClientResponse& r) {
  if (r.status >= 400) return true;
  if (r.Header("Content-Type").find("application/json") == std::string::npos) return false;
  try {
    const json::value v = r.Json();
    return v.is_object() && v.as_object().contains("error");
  } catch (const std::exception&) {
    return false;
  }
}

// The "not found" of each surface: 404 (REST, OpenWOP, push routes), or the JSON-RPC
// TaskNotFound (-32001) / OPT not found (-32000) of JSON-RPC and the 0.3 REST binding.
bool IsNotFound(const ClientResponse& r) {
  if (r.status == 404) return true;
  try {
    // A 0.3 stream refused before its first event: one `event: error` whose data is the
    // JSON-RPC answer.
    std::string text = r.body;
    if (text.starts_with("event: error")) {
      const size_t data = text.find("data:");
      if (data == std::string::npos) return false;
      text = text.substr(data + 5, text.find('\n', data) - data - 5);
    }
    const json::value v = json::parse(text);
    const json::value* code = nullptr;
    if (const auto* e = v.as_object().if_contains("error"); e && e->is_object())
      code = e->as_object().if_contains("code");
    else
      code = v.as_object().if_contains("code");
    return code && (*code == -32001 || *code == -32000);
  } catch (const std::exception&) {
    return false;
  }
}

TEST_F(TenantWalk, AnotherTenantsObjectsAreNotFoundOnEveryRoute) {
  const std::string a = Key("acme");
  const std::string b = Key("globex");
  ASSERT_TRUE(a.starts_with("a2ad_k_") && b.starts_with("a2ad_k_"));
  Start();
  // Tenant A's objects: a task with a push config, a run at its gate (token), a webhook, an
  // objective with a plan and a plan task.
  json::value sent = RpcAs(a, "SendMessage", Msg10("walk-1"));
  const std::string task(sent.at("result").at("task").at("id").as_string());
  ASSERT_TRUE(RpcAs(a, "CreateTaskPushNotificationConfig",
                    {{"taskId", task}, {"id", "c1"}, {"url", "https://example.com/hook"}})
                  .as_object()
                  .contains("result"));
  const auto [run, token] = Parked(a);
  auto hook = As(a, "POST", "/v1/webhooks",
                 R"({"url":"https://example.com/h","events":["run.completed"]})");
  ASSERT_EQ(hook.status, 201) << hook.body;
  const std::string hook_id(hook.Json().at("webhookId").as_string());
  const Headers opt{{"A2A-Version", "1.0"}, {"A2A-Extensions", kOpt}};
  json::value objective = RpcAs(a, "objectives/create", {{"name", "walk"}}, opt);
  const std::string obj(objective.at("result").at("objective").at("id").as_string());
  json::value plan = RpcAs(a, "plans/create",
                           {{"objectiveId", obj},
                            {"name", "p"},
                            {"tasks", json::array{json::object{{"name", "t"}}}}},
                           opt);
  const std::string plan_id(plan.at("result").at("plan").at("id").as_string());
  const std::string plan_task(plan.at("result").at("plan").at("tasks").at(0).at("id").as_string());
  // A dead letter of A's: a run whose push goes to a name that does not resolve (one attempt).
  const auto [dead_run, dead_token] = Parked(a);
  ASSERT_TRUE(RpcAs(a, "CreateTaskPushNotificationConfig",
                    {{"taskId", dead_run}, {"id", "c2"}, {"url", "https://unresolvable.example/h"}})
                  .as_object()
                  .contains("result"));
  ASSERT_EQ(As(a, "POST", "/v1/runs/" + dead_run + "/interrupts/gate",
               R"({"resumeValue":{"action":"accept"}})")
                .status,
            200);
  const std::string dead_letters = testing::PollUntil(
      [&] { return As(a, "GET", "/v1/push/dead-letters").body; },
      [&](const std::string& body) { return body.find(dead_run) != std::string::npos; });
  ASSERT_NE(dead_letters.find(dead_run), std::string::npos) << "A sees its dead letter";
  const std::vector<std::string> ids{task, run, token, hook_id, obj, plan_id, plan_task, dead_run};

  // Every route, for A's task and A's run, plus what names A's other objects.
  std::vector<Route> routes = AllRoutes(task);
  for (auto& r : AllRoutes(run)) routes.push_back(std::move(r));
  routes.push_back({"jsonrpc", "POST", "/v1/a2a", Rpc("SendMessage", Msg10("walk-r", task)), "1.0"});
  routes.push_back({"rest", "POST", "/a2a/rest/message:send",
                    json::serialize(Msg10("walk-r2", run)), ""});
  routes.push_back({"openwop", "GET", "/v1/interrupts/" + token, "", ""});
  routes.push_back({"openwop", "POST", "/v1/interrupts/" + token + "/resolve",
                    R"({"resumeValue":{"action":"accept"}})", ""});
  routes.push_back({"openwop", "POST", "/v1/interrupts/" + token,
                    R"({"resumeValue":{"action":"accept"}})", ""});
  routes.push_back({"openwop", "POST", "/v1/runs/" + run + "/interrupts/gate",
                    R"({"resumeValue":{"action":"accept"}})", ""});
  routes.push_back({"openwop", "DELETE", "/v1/webhooks/" + hook_id, "", ""});
  for (const std::string& m : {std::string("objectives/get"), std::string("objectives/subscribe"),
                               std::string("objectives/update")})
    routes.push_back({"opt", "POST", "/v1/a2a", Rpc(m, {{"id", obj}, {"name", "x"}}), "1.0"});
  routes.push_back(
      {"opt", "POST", "/v1/a2a", Rpc("plans/create", {{"objectiveId", obj}, {"name", "q"}}), "1.0"});
  routes.push_back({"opt", "POST", "/v1/a2a", Rpc("plans/get", {{"id", plan_id}}), "1.0"});
  routes.push_back(
      {"opt", "POST", "/v1/a2a", Rpc("plans/update", {{"id", plan_id}, {"name", "x"}}), "1.0"});
  routes.push_back({"opt", "POST", "/v1/a2a",
                    Rpc("tasks/link", {{"planTaskId", plan_task}, {"a2aTaskId", "x"}}), "1.0"});
  routes.push_back(
      {"opt", "POST", "/v1/a2a",
       Rpc("tasks/updateStatus", {{"planTaskId", plan_task}, {"status", "completed"}}), ""});
  for (const std::string& base : {std::string("/a2a/rest"), std::string("/a2a/rest03/v1")}) {
    routes.push_back({"opt", "GET", base + "/objectives/" + obj, "", ""});
    routes.push_back({"opt", "GET", base + "/objectives/" + obj + ":subscribe", "", ""});
    routes.push_back({"opt", "PATCH", base + "/objectives/" + obj, R"({"name":"x"})", ""});
    routes.push_back({"opt", "POST", base + "/objectives/" + obj + "/plans", R"({"name":"q"})", ""});
    routes.push_back({"opt", "GET", base + "/plans/" + plan_id, "", ""});
    routes.push_back({"opt", "PATCH", base + "/plans/" + plan_id, R"({"name":"x"})", ""});
    routes.push_back({"opt", "POST", base + "/planTasks/" + plan_task + ":link",
                      R"({"a2aTaskId":"x"})", ""});
    routes.push_back({"opt", "POST", base + "/planTasks/" + plan_task + ":updateStatus",
                      R"({"status":"completed"})", ""});
  }
  // Collections B may read: they must not hold A's objects.
  routes.push_back({"opt", "POST", "/v1/a2a", Rpc("objectives/list", {}), "1.0"});
  routes.push_back({"opt", "GET", "/a2a/rest/objectives", "", ""});
  routes.push_back({"openwop", "GET", "/v1/push/dead-letters", "", ""});

  size_t walked = 0;
  for (const Route& r : routes) {
    Headers h;
    if (!r.version.empty()) h.emplace_back("A2A-Version", r.version);
    if (r.surface == "opt") h.emplace_back("A2A-Extensions", kOpt);
    const ClientResponse res = As(b, r.method, r.target, r.body, h);
    const std::string what = r.method + " " + r.target + " " + r.body.substr(0, 120) + " -> " +
                             std::to_string(res.status) + " " + res.body.substr(0, 300);
    bool names_a = false;
    for (const auto& id : ids)
      names_a = names_a || r.target.find(id) != std::string::npos ||
                r.body.find(id) != std::string::npos;
    // (A made-up interrupt token is refused as a credential: 401.)
    if (r.target.find("some-token") == std::string::npos) {
      EXPECT_NE(res.status, 401) << what;
    }
    EXPECT_LT(res.status, 500) << what;
    if (names_a) {
      // Never found, never a hint that it exists (403 is only for a named tenant).
      EXPECT_TRUE(IsNotFound(res)) << what;
    } else if (!IsError(res)) {
      for (const auto& id : ids) EXPECT_EQ(res.body.find(id), std::string::npos) << id << ": " << what;
    }
    ++walked;
  }
  EXPECT_GT(walked, 100u);

  // gRPC, with B's key: A's task and its config do not exist.
  const json::value card = client_->Request("GET", "/.well-known/agent-card.json").Json();
  std::string address;
  for (const auto& i : card.at("additionalInterfaces").as_array())
    if (i.at("transport") == "GRPC") address = std::string(i.at("url").as_string());
  ASSERT_FALSE(address.empty()) << card;
  auto stub = ::lf::a2a::v1::A2AService::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  auto with_b = [&](grpc::ClientContext& ctx) { ctx.AddMetadata("authorization", "Bearer " + b); };
  {
    grpc::ClientContext ctx;
    with_b(ctx);
    ::lf::a2a::v1::GetTaskRequest req;
    req.set_id(task);
    ::lf::a2a::v1::Task out;
    EXPECT_EQ(stub->GetTask(&ctx, req, &out).error_code(), grpc::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    with_b(ctx);
    ::lf::a2a::v1::CancelTaskRequest req;
    req.set_id(run);
    ::lf::a2a::v1::Task out;
    EXPECT_EQ(stub->CancelTask(&ctx, req, &out).error_code(), grpc::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    with_b(ctx);
    ::lf::a2a::v1::SubscribeToTaskRequest req;
    req.set_id(run);
    auto stream = stub->SubscribeToTask(&ctx, req);
    ::lf::a2a::v1::StreamResponse item;
    while (stream->Read(&item)) {
    }
    EXPECT_EQ(stream->Finish().error_code(), grpc::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    with_b(ctx);
    ::lf::a2a::v1::GetTaskPushNotificationConfigRequest req;
    req.set_task_id(task);
    req.set_id("c1");
    ::lf::a2a::v1::TaskPushNotificationConfig out;
    EXPECT_EQ(stub->GetTaskPushNotificationConfig(&ctx, req, &out).error_code(), grpc::NOT_FOUND);
  }
  {
    grpc::ClientContext ctx;
    with_b(ctx);
    ::lf::a2a::v1::SendMessageRequest req;
    req.mutable_message()->set_message_id("walk-g");
    req.mutable_message()->set_task_id(run);
    req.mutable_message()->set_role(::lf::a2a::v1::ROLE_USER);
    req.mutable_message()->add_parts()->set_text("accept");
    ::lf::a2a::v1::SendMessageResponse out;
    EXPECT_EQ(stub->SendMessage(&ctx, req, &out).error_code(), grpc::NOT_FOUND);
  }
  // A's objects are intact: the run still waits, the config and webhook are there.
  EXPECT_EQ(As(a, "GET", "/v1/runs/" + run).Json().at("status"), "waiting-approval");
  EXPECT_TRUE(RpcAs(a, "GetTaskPushNotificationConfig", {{"taskId", task}, {"id", "c1"}})
                  .as_object()
                  .contains("result"));
  EXPECT_EQ(As(a, "DELETE", "/v1/webhooks/" + hook_id).status, 204);
}

// A request naming a tenant: served in the caller's own, refused for any other, with keys and
// without them (development mode: the anonymous caller is the default tenant's).
TEST_F(TenantWalk, NamingAnotherTenantIsRefusedWithAndWithoutKeys) {
  auto expect_refusals = [&](const std::string& key, const std::string& own,
                             const std::string& other) {
    SCOPED_TRACE(key.empty() ? "without keys" : "with a key of " + own);
    const std::string hook = R"({"url":"https://example.com/h","events":["run.completed"],)";
    auto foreign = As(key, "POST", "/v1/webhooks", hook + R"("tenantId":")" + other + "\"}");
    EXPECT_EQ(foreign.status, 403) << foreign.body;
    EXPECT_EQ(foreign.Json().at("error"), "forbidden");
    auto mine = As(key, "POST", "/v1/webhooks", hook + R"("tenantId":")" + own + "\"}");
    ASSERT_EQ(mine.status, 201) << mine.body;
    const std::string id(mine.Json().at("webhookId").as_string());
    EXPECT_EQ(As(key, "DELETE", "/v1/webhooks/" + id + "?tenantId=" + other).status, 403);
    EXPECT_EQ(As(key, "DELETE", "/v1/webhooks/" + id).status, 204);
    auto run = As(key, "POST", "/v1/runs",
                  R"({"workflowId":"conformance-noop","tenantId":")" + other + "\"}");
    EXPECT_EQ(run.status, 403) << run.body;
    auto own_run =
        As(key, "POST", "/v1/runs", R"({"workflowId":"conformance-noop","tenantId":")" + own + "\"}");
    EXPECT_EQ(own_run.status, 201) << own_run.body;
    json::object send = Msg10("named-" + other);
    send["tenant"] = other;
    json::value refused = RpcAs(key, "SendMessage", send);
    EXPECT_EQ(refused.at("error").at("code"), -32015) << refused;
    refused = RpcAs(key, "ListTasks", {{"tenant", other}});
    EXPECT_EQ(refused.at("error").at("code"), -32015) << refused;
    send["tenant"] = own;
    EXPECT_TRUE(RpcAs(key, "SendMessage", send).as_object().contains("result"));
    EXPECT_TRUE(RpcAs(key, "ListTasks", {{"tenant", own}}).as_object().contains("result"));
  };
  Start();
  expect_refusals("", "default", "acme");
  server_.Kill(SIGKILL);
  const std::string a = Key("acme");
  Start();
  expect_refusals(a, "acme", "default");
}

}  // namespace
}  // namespace a2ad
