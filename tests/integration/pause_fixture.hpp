#pragma once
// The fixture of the pause extension's end-to-end tests (pause_e2e_test.cpp,
// pause_modes_e2e_test.cpp): the real binary over loopback on a real SQLite data directory,
// with small workflows that pause well (a delay, a parent waiting for that delay as a child,
// agent pauses until an event, a time, or a timeout), and the calls the tests make.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "http_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad::pause_test {
namespace fs = std::filesystem;
namespace json = boost::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kExt = "https://a2ad.dev/ext/pause/v1";

inline json::object Node(std::string id, std::string type, json::object config,
                         json::object inputs = {}) {
  return json::object{{"id", std::move(id)},
                      {"typeId", std::move(type)},
                      {"name", "n"},
                      {"position", json::object{{"x", 0}, {"y", 0}}},
                      {"config", std::move(config)},
                      {"inputs", std::move(inputs)}};
}

inline json::object Workflow(std::string id, json::array nodes, json::array variables = {}) {
  json::array edges;
  for (size_t i = 1; i < nodes.size(); ++i)
    edges.push_back(json::object{{"id", "e" + std::to_string(i)},
                                 {"sourceNodeId", nodes[i - 1].at("id")},
                                 {"targetNodeId", nodes[i].at("id")}});
  return json::object{{"id", id},
                      {"name", id},
                      {"version", "1.0.0"},
                      {"description", "pause test"},
                      {"metadata", json::object{{"tags", json::array{"test"}}}},
                      {"triggers", json::array{}},
                      {"variables", std::move(variables)},
                      {"settings", json::object{{"timeout", 0}}},
                      {"nodes", std::move(nodes)},
                      {"edges", std::move(edges)}};
}

// slow: a delay of `delayMs` (default 1500 ms), then a no-op. parent: slow as its child.
// await-*: core.awaitResumption with one kind of condition, then an identity node that
// outputs what the resume brought.
inline std::vector<json::object> Workflows() {
  json::array delay_var{json::object{
      {"name", "delayMs"}, {"type", "number"}, {"required", false}, {"defaultValue", 1500}}};
  json::object from_var{
      {"delayMs", json::object{{"type", "variable"}, {"variableName", "delayMs"}}}};
  auto await = [](std::string id, json::object conditions) {
    json::object outputs{
        {"input", json::object{{"type", "connection"}, {"nodeId", "wait"}, {"outputKey", "input"}}},
        {"cause",
         json::object{{"type", "connection"}, {"nodeId", "wait"}, {"outputKey", "cause"}}}};
    return Workflow(
        std::move(id),
        json::array{Node("wait", "core.awaitResumption",
                         json::object{{"reason", "waiting"}, {"conditions", conditions}}),
                    Node("done", "core.identity", {}, outputs)});
  };
  return {
      Workflow("slow",
               json::array{Node("wait", "core.delay", {}, from_var), Node("done", "core.noop", {})},
               delay_var),
      Workflow("parent", json::array{Node("call", "core.subWorkflow",
                                          json::object{{"workflowId", "slow"},
                                                       {"waitForCompletion", true},
                                                       {"onChildFailure", "fail-parent"}}),
                                     Node("end", "core.noop", {})}),
      Workflow("gate",
               json::array{Node(
                   "gate", "core.approvalGate",
                   json::object{{"title", "ok?"}, {"actions", json::array{"accept", "reject"}}})}),
      await("await-event", json::object{{"onEvent", "go"}}),
      await("await-trigger", json::object{{"trigger", json::object{{"afterMs", 1500}}}}),
      await("await-timeout-fail", json::object{{"timeout", json::object{{"durationMinutes", 0.02},
                                                                        {"onTimeout", "fail"}}}}),
      await("await-timeout-resume",
            json::object{
                {"timeout", json::object{{"durationMinutes", 0.02}, {"onTimeout", "resume"}}}}),
  };
}

class PauseE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-pause");
    data_ = dir_ / "data";
    fs::create_directories(data_);
    fs::create_directories(dir_ / "workflows");
    for (const auto& w : Workflows())
      std::ofstream(dir_ / "workflows" / (std::string(w.at("id").as_string()) + ".json"))
          << json::serialize(w);
    Start();
  }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start() {
    std::vector<std::string> args{"--workflows-dir", (dir_ / "workflows").string()};
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    server_ = testing::ServerProcess::Start(testing::A2adBinary(), data_.string(), args);
    client_ = std::make_unique<testing::HttpClient>("127.0.0.1", server_.port);
  }
  void KillAndRestart() {
    client_.reset();
    server_.Kill(SIGKILL);
    Start();
  }

  // A JSON-RPC call (0.3 unless version "1.0"), its whole response.
  json::value Rpc(const std::string& method, json::object params, const std::string& version = "",
                  Headers h = {}) {
    h.emplace_back("Content-Type", "application/json");
    if (!version.empty()) h.emplace_back("A2A-Version", version);
    json::object req{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
    auto r = client_->Request("POST", "/v1/a2a", json::serialize(req), h);
    return json::parse(r.body);
  }
  json::value Result(const std::string& method, json::object params,
                     const std::string& version = "", Headers h = {}) {
    json::value r = Rpc(method, std::move(params), version, std::move(h));
    EXPECT_TRUE(r.as_object().contains("result")) << method << ": " << r;
    return r.as_object().contains("result") ? r.at("result") : json::value();
  }
  int64_t ErrorCode(const json::value& r) {
    const json::value* e = r.as_object().if_contains("error");
    return e ? e->at("code").as_int64() : 0;
  }
  // A new task of `skill` (non-blocking), with `data` as its data part; its id.
  std::string Send(const std::string& skill, json::object data = {},
                   const std::string& context = "") {
    json::object msg{{"kind", "message"},
                     {"messageId", "m-" + std::to_string(++sent_)},
                     {"role", "user"},
                     {"parts", json::array{json::object{{"kind", "data"}, {"data", data}}}},
                     {"metadata", json::object{{"skillId", skill}}}};
    if (!context.empty()) msg["contextId"] = context;
    json::value t = Result(
        "message/send",
        json::object{{"message", msg}, {"configuration", json::object{{"blocking", false}}}});
    return t.is_object() ? std::string(t.at("id").as_string()) : std::string();
  }
  json::value Task(const std::string& id, Headers h = {}) {
    return Result("tasks/get", json::object{{"id", id}}, "", std::move(h));
  }
  json::value Run(const std::string& id) {
    return json::parse(client_->Request("GET", "/v1/runs/" + id).body);
  }
  std::string Status(const std::string& id) {
    return std::string(Run(id).at("status").as_string());
  }
  // Waits (at most `ms`) until the run's status is `status`; returns whether it got there.
  bool WaitStatus(const std::string& id, const std::string& status, int ms = 8000) {
    return testing::WaitFor([&] { return Status(id) == status; }, std::chrono::milliseconds(ms));
  }
  std::string NodeStatus(const std::string& id, const std::string& node) {
    const json::value run = Run(id);
    const json::value* states = run.as_object().if_contains("nodeStates");
    const json::value* st = states ? states->as_object().if_contains(node) : nullptr;
    return st ? std::string(st->at("status").as_string()) : std::string();
  }
  // Waits (at most `ms`) until the run's node `node` has `status` ("running": its step is in
  // flight); returns whether it got there.
  bool WaitNodeStatus(const std::string& id, const std::string& node, const std::string& status,
                      int ms = 8000) {
    return testing::WaitFor([&] { return NodeStatus(id, node) == status; },
                            std::chrono::milliseconds(ms));
  }
  // The child run of the run's node `call` ("" while there is none).
  std::string ChildOf(const std::string& id) {
    const json::value run = Run(id);
    const json::value* call = run.at("nodeStates").as_object().if_contains("call");
    const json::value* child = call ? call->as_object().if_contains("childRunId") : nullptr;
    return child ? std::string(child->as_string()) : std::string();
  }
  // The run's logged events of `type`, in order.
  std::vector<json::object> Events(const std::string& id, const std::string& type) {
    json::value r = json::parse(client_->Request("GET", "/v1/runs/" + id + "/events/poll").body);
    std::vector<json::object> out;
    for (const auto& e : r.at("events").as_array())
      if (e.at("type").as_string() == type) out.push_back(e.as_object());
    return out;
  }
  json::value Pause(const std::string& id, const std::string& mode = "finish_step") {
    return Rpc("tasks/pause", json::object{{"taskId", id}, {"reason", "test"}, {"mode", mode}});
  }
  json::value Resume(const std::string& id, const std::string& handle, json::object extra = {}) {
    extra["taskId"] = id;
    extra["handle"] = handle;
    return Rpc("tasks/resume", std::move(extra));
  }
  std::string HandleOf(const std::string& id) {
    return std::string(Task(id).at("metadata").at("pause").at("resumeToken").as_string());
  }

  std::vector<std::string> extra_args_;  // more `serve` flags (set before SetUp)
  fs::path dir_, data_;
  testing::ServerProcess server_;
  std::unique_ptr<testing::HttpClient> client_;
  int sent_ = 0;
};

}  // namespace a2ad::pause_test
