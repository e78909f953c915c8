#pragma once
// The fixture of the OPT extension's end-to-end tests (opt_e2e_test.cpp, opt_exec_e2e_test.cpp):
// the real binary on a fresh SQLite data directory with three workflows (`work` waits a
// durable timer, `gate` stops at an approval gate, `boom` fails), and JSON-RPC calls with the
// extension activated.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "http_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad::testing {
namespace fs = std::filesystem;
namespace json = boost::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kOpt = "https://github.com/zeroasterisk/a2a-opt/v1";

inline json::object Workflow(const std::string& id, json::array nodes, json::array variables = {},
                             json::array edges = {}) {
  return json::object{{"id", id},
                      {"name", id},
                      {"version", "1.0.0"},
                      {"description", "a test workflow"},
                      {"metadata", json::object{{"tags", json::array{"test"}}}},
                      {"triggers", json::array{}},
                      {"variables", std::move(variables)},
                      {"settings", json::object{{"timeout", 0}}},
                      {"nodes", std::move(nodes)},
                      {"edges", std::move(edges)}};
}

// `work`: waits delayMs (a durable timer; default 10 ms), then completes.
inline json::object WorkWorkflow() {
  json::object wait{{"id", "wait"},
                    {"typeId", "core.delay"},
                    {"name", "wait"},
                    {"position", json::object{{"x", 0}, {"y", 0}}},
                    {"config", json::object{}},
                    {"inputs", json::object{{"delayMs", json::object{{"type", "variable"},
                                                                     {"variableName", "delayMs"}}}}}};
  json::array vars{json::object{{"name", "delayMs"},
                                {"type", "number"},
                                {"required", false},
                                {"defaultValue", 10}}};
  return Workflow("work", json::array{wait}, vars);
}

// `boom`: fails.
inline json::object BoomWorkflow() {
  json::object fail{{"id", "fail"},
                    {"typeId", "core.fail"},
                    {"name", "fail"},
                    {"position", json::object{{"x", 0}, {"y", 0}}},
                    {"config", json::object{}},
                    {"inputs", json::object{}}};
  return Workflow("boom", json::array{fail});
}

// `gate`: stops at an approval gate (accept completes it).
inline json::object GateWorkflow() {
  json::object node{{"id", "gate"},
                    {"typeId", "core.approvalGate"},
                    {"name", "gate"},
                    {"position", json::object{{"x", 0}, {"y", 0}}},
                    {"config", json::object{{"title", "ok?"},
                                            {"actions", json::array{"accept", "reject"}}}},
                    {"inputs", json::object{}}};
  return Workflow("gate", json::array{node});
}

class OptFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("a2ad-opt");
    fs::create_directories(dir_ / "data");
    fs::create_directories(dir_ / "workflows");
    std::ofstream(dir_ / "workflows" / "gate.json") << json::serialize(GateWorkflow());
    std::ofstream(dir_ / "workflows" / "work.json") << json::serialize(WorkWorkflow());
    std::ofstream(dir_ / "workflows" / "boom.json") << json::serialize(BoomWorkflow());
    Start(extra_args_);
  }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--workflows-dir", (dir_ / "workflows").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    server_ = ServerProcess::Start(A2adBinary(), (dir_ / "data").string(), args);
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  void Restart(std::vector<std::string> extra = {}) {
    client_.reset();
    server_.Kill(SIGKILL);
    Start(std::move(extra));
  }

  ClientResponse Post(const std::string& method, json::value params,
                               const std::string& version, Headers h) {
    h.emplace_back("Content-Type", "application/json");
    if (!version.empty()) h.emplace_back("A2A-Version", version);
    json::object req{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
    return client_->Request("POST", "/v1/a2a", json::serialize(req), h);
  }
  // An OPT call with the extension activated (A2A-Extensions), 0.3 unless version "1.0".
  json::value Rpc(const std::string& method, json::object params, const std::string& version = "") {
    return json::parse(Post(method, params, version, {{"A2A-Extensions", kOpt}}).body);
  }
  json::value Result(const std::string& method, json::object params,
                     const std::string& version = "") {
    json::value r = Rpc(method, std::move(params), version);
    EXPECT_TRUE(r.as_object().contains("result")) << method << ": " << r;
    return r.as_object().contains("result") ? r.at("result") : json::value();
  }
  static int64_t Code(const json::value& r) {
    const json::value* e = r.as_object().if_contains("error");
    return e ? e->at("code").as_int64() : 0;
  }
  static std::string Message(const json::value& r) {
    const json::value* e = r.as_object().if_contains("error");
    return e ? std::string(e->at("message").as_string()) : std::string();
  }
  std::string NewObjective(const std::string& name) {
    return std::string(
        Result("objectives/create", {{"name", name}}).at("objective").at("id").as_string());
  }
  json::value Objective(const std::string& id) {
    return Result("objectives/get", {{"id", id}}).at("objective");
  }
  static std::string StatusOf(const json::value& v) { return std::string(v.at("status").as_string()); }
  static std::string TaskId(const json::value& plan, size_t i) {
    return std::string(plan.at("tasks").at(i).at("id").as_string());
  }
  void Report(const std::string& task, const std::string& status, const std::string& v = "") {
    Result("tasks/updateStatus", {{"planTaskId", task}, {"status", status}}, v);
  }

  // ---- execution helpers ----
  /// The plan task named `name` anywhere in objective `o`.
  static json::value TaskNamed(const json::value& o, const std::string& name) {
    for (const auto& p : o.at("plans").as_array())
      for (const auto& t : p.at("tasks").as_array())
        if (t.at("name") == name.c_str()) return t;
    ADD_FAILURE() << "no plan task " << name << " in " << o;
    return json::object{};
  }
  static std::string Str(const json::value& v, const char* key) {
    const json::value* f = v.as_object().if_contains(key);
    return f && f->is_string() ? std::string(f->as_string()) : std::string();
  }
  /// Objective `id` once `pred` holds of it (polled; fails the test after `timeout`).
  template <class Pred>
  json::value WaitFor(const std::string& id, Pred pred,
                      std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    json::value o = PollUntil([&] { return Objective(id); }, pred, timeout);
    EXPECT_TRUE(pred(o)) << "objective " << id << " never got there: " << o;
    return o;
  }
  /// The A2A task `id` (tasks/get, 0.3).
  json::value A2aTask(const std::string& id) { return Result("tasks/get", {{"id", id}}); }
  /// Answers the approval gate of A2A task `id` with `action` (a blocking message/send).
  json::value Answer(const std::string& id, const std::string& context, const std::string& action) {
    json::object msg{{"kind", "message"},
                     {"messageId", "answer-" + id},
                     {"role", "user"},
                     {"taskId", id},
                     {"contextId", context},
                     {"parts", json::array{json::object{
                                   {"kind", "data"}, {"data", json::object{{"action", action}}}}}}};
    return Result("message/send", {{"message", msg}, {"configuration", json::object{{"blocking", true}}}});
  }

  std::vector<std::string> extra_args_;  // for every start of the server (SetUp's)
  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

}  // namespace a2ad::testing
