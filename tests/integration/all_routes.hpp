#pragma once
// Every route of the real server that names a task, run, config or other object, in every
// surface (JSON-RPC 1.0 and 0.3, both A2A REST bindings, the OpenWOP REST routes, the push
// routes and the sample seams): the walks of auth_e2e_test (refusals without a credential or
// scope) and tenant_walk_test (another tenant's objects are never found).
#include <boost/json.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace a2ad::testing {
namespace json = boost::json;

// One request of a surface: what to send, and how its refusals look.
struct Route {
  std::string surface;  // "jsonrpc", "rest", "rest03", "openwop"
  std::string method;
  std::string target;
  std::string body;
  std::string version;  // A2A-Version header ("" none)
};

inline json::object Msg10(const std::string& id, const std::string& task = "") {
  json::object m{{"messageId", id},
                 {"role", "ROLE_USER"},
                 {"parts", json::array{json::object{{"text", "hi"}}}}};
  if (!task.empty()) m["taskId"] = task;
  return json::object{{"message", m}};
}

inline std::string Rpc(const std::string& method, json::object params) {
  return json::serialize(
      json::object{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}});
}

// Every A2A method on JSON-RPC (1.0 and 0.3 names), every A2A REST route (1.0, 0.3), every
// OpenWOP and push route, naming task `t`.
inline std::vector<Route> AllRoutes(const std::string& t) {
  const json::object id{{"id", t}};
  const json::object push10{{"taskId", t}, {"url", "https://example.com/hook"}};
  const json::object cfg10{{"taskId", t}, {"id", "c1"}};
  const json::object push03{
      {"taskId", t}, {"pushNotificationConfig", json::object{{"url", "https://example.com/hook"}}}};
  const json::object cfg03{{"id", t}, {"pushNotificationConfigId", "c1"}};
  const json::object msg03{
      {"message",
       json::object{{"kind", "message"},
                    {"messageId", "r03"},
                    {"role", "user"},
                    {"parts", json::array{json::object{{"kind", "text"}, {"text", "hi"}}}}}}};
  std::vector<Route> r;
  auto rpc10 = [&](const char* m, json::object p) {
    r.push_back({"jsonrpc", "POST", "/v1/a2a", Rpc(m, std::move(p)), "1.0"});
  };
  auto rpc03 = [&](const char* m, json::object p) {
    r.push_back({"jsonrpc", "POST", "/v1/a2a", Rpc(m, std::move(p)), ""});
  };
  rpc10("SendMessage", Msg10("r1"));
  rpc10("SendStreamingMessage", Msg10("r2"));
  rpc10("GetTask", id);
  rpc10("ListTasks", {});
  rpc10("CancelTask", id);
  rpc10("SubscribeToTask", id);
  rpc10("CreateTaskPushNotificationConfig", push10);
  rpc10("GetTaskPushNotificationConfig", cfg10);
  rpc10("ListTaskPushNotificationConfigs", json::object{{"taskId", t}});
  rpc10("DeleteTaskPushNotificationConfig", cfg10);
  rpc10("GetExtendedAgentCard", {});
  rpc03("message/send", msg03);
  rpc03("message/stream", msg03);
  rpc03("tasks/get", id);
  rpc03("tasks/cancel", id);
  rpc03("tasks/resubscribe", id);
  rpc03("tasks/pushNotificationConfig/set", push03);
  rpc03("tasks/pushNotificationConfig/get", cfg03);
  rpc03("tasks/pushNotificationConfig/list", id);
  rpc03("tasks/pushNotificationConfig/delete", cfg03);
  rpc03("agent/getAuthenticatedExtendedCard", {});
  const std::string b10 = json::serialize(Msg10("r3"));
  const std::string a = "/a2a/rest";
  for (const auto& [m, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"POST", "/message:send", b10},
           {"POST", "/message:stream", b10},
           {"GET", "/tasks/" + t, ""},
           {"GET", "/tasks", ""},
           {"POST", "/tasks/" + t + ":cancel", "{}"},
           {"GET", "/tasks/" + t + ":subscribe", ""},
           {"POST", "/tasks/" + t + "/pushNotificationConfigs",
            R"({"url":"https://example.com/h"})"},
           {"GET", "/tasks/" + t + "/pushNotificationConfigs/c1", ""},
           {"GET", "/tasks/" + t + "/pushNotificationConfigs", ""},
           {"DELETE", "/tasks/" + t + "/pushNotificationConfigs/c1", ""},
           {"GET", "/extendedAgentCard", ""}})
    r.push_back({"rest", m, a + path, body, ""});
  const std::string b03 =
      R"({"message":{"messageId":"r4","role":"ROLE_USER","content":[{"text":"hi"}]}})";
  const std::string a3 = "/a2a/rest03/v1";
  for (const auto& [m, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"POST", "/message:send", b03},
           {"POST", "/message:stream", b03},
           {"GET", "/tasks/" + t, ""},
           {"POST", "/tasks/" + t + ":cancel", ""},
           {"POST", "/tasks/" + t + ":subscribe", ""},
           {"POST", "/tasks/" + t + "/pushNotificationConfigs",
            R"({"pushNotificationConfig":{"url":"https://example.com/h"}})"},
           {"GET", "/tasks/" + t + "/pushNotificationConfigs/c1", ""},
           {"GET", "/tasks/" + t + "/pushNotificationConfigs", ""},
           {"DELETE", "/tasks/" + t + "/pushNotificationConfigs/c1", ""},
           {"GET", "/card", ""}})
    r.push_back({"rest03", m, a3 + path, body, ""});
  for (const auto& [m, path, body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"POST", "/v1/runs", R"({"workflowId":"echo"})"},
           {"GET", "/v1/runs", ""},
           {"GET", "/v1/runs/" + t, ""},
           {"POST", "/v1/runs/" + t + "/cancel", "{}"},
           {"GET", "/v1/runs/" + t + "/events", ""},
           {"GET", "/v1/runs/" + t + "/events/poll", ""},
           {"POST", "/v1/runs/" + t + "/interrupts/n1", R"({"resumeValue":"accept"})"},
           {"POST", "/v1/runs/" + t + "/approvals/n1", R"({"resumeValue":"accept"})"},
           {"GET", "/v1/interrupts/some-token", ""},
           {"POST", "/v1/interrupts/some-token/resolve", R"({"resumeValue":"accept"})"},
           {"GET", "/v1/workflows", ""},
           {"GET", "/v1/workflows/echo", ""},
           {"GET", "/v1/a2a/tasks/" + t, ""},
           {"GET", "/v1/host/sample/a2a/tasks/" + t, ""},
           {"GET", "/v1/push/deliveries?taskId=" + t, ""},
           {"GET", "/v1/push/dead-letters", ""},
           {"POST", "/v1/push/deliveries/retry", R"({"taskId":")" + t + R"(","eventId":"e1"})"},
           {"POST", "/v1/host/sample/a2a/tasks/push-config",
            R"({"taskId":")" + t + R"(","url":"https://example.com/h"})"},
           {"POST", "/v1/webhooks",
            R"({"url":"https://example.com/h","events":["run.completed"]})"},
           {"DELETE", "/v1/webhooks/w1", ""},
           {"POST", "/v1/host/sample/test/surface",
            R"({"tenantId":"t","surface":"webhooks","op":"list"})"},
           {"POST", "/v1/host/sample/test/idempotency/concurrent-claim", "{}"}})
    r.push_back({"openwop", m, path, body, ""});
  return r;
}

}  // namespace a2ad::testing
