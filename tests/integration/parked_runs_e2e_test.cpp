// Parked runs end to end with the real binary (issue 32): a run waiting at a gate holds no
// execution, before and after a SIGKILL (a2ad_executions_running), and its gate's timeout
// still fires, once and not before its time, from the wake time its row keeps.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "http_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;

const std::string kBinary = testing::A2adBinary();

// One clarification gate; `timeout_ms` 0: none.
std::string GateWorkflow(const std::string& id, int timeout_ms) {
  json::object config{{"questions", json::array{json::object{{"id", "q"}, {"question", "Why?"}}}}};
  if (timeout_ms > 0) config["timeoutMs"] = timeout_ms;
  json::object position{{"x", 0}, {"y", 0}};
  return json::serialize(json::object{
      {"id", id},
      {"name", id},
      {"version", "1.0.0"},
      {"metadata", json::object{{"tags", json::array{"test"}}}},
      {"triggers", json::array{json::object{{"id", "manual"}, {"type", "manual"}, {"enabled", true}}}},
      {"variables", json::array{}},
      {"settings", json::object{{"timeout", 0}}},
      {"nodes", json::array{json::object{{"id", "ask"},
                                         {"typeId", "core.clarificationGate"},
                                         {"name", "Ask"},
                                         {"position", position},
                                         {"config", config},
                                         {"inputs", json::object{}}},
                            json::object{{"id", "done"},
                                         {"typeId", "core.identity"},
                                         {"name", "Done"},
                                         {"position", position},
                                         {"config", json::object{}},
                                         {"inputs", json::object{}}}}},
      {"edges", json::array{json::object{
                    {"id", "e1"}, {"sourceNodeId", "ask"}, {"targetNodeId", "done"}}}}});
}

class ParkedRunsE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-parked");
    fs::create_directories(dir_ / "wf");
    std::ofstream(dir_ / "wf" / "timed.json") << GateWorkflow("timed", 2500);
    std::ofstream(dir_ / "wf" / "untimed.json") << GateWorkflow("untimed", 0);
    Start();
  }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start() {
    server_ = ServerProcess::Start(kBinary, (dir_ / "data").string(),
                                   {"--workflows-dir", (dir_ / "wf").string()});
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  void KillAndRestart() {
    client_.reset();
    server_.Kill(SIGKILL);
    Start();
  }
  json::value Run(const std::string& id) { return client_->Request("GET", "/v1/runs/" + id).Json(); }
  std::string StartRun(const std::string& workflow) {
    auto r = client_->Request("POST", "/v1/runs",
                              json::serialize(json::object{{"workflowId", workflow}}),
                              {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 201) << r.body;
    return std::string(r.Json().at("runId").as_string());
  }
  // Waits (bounded, not timed) until run `id` has `status`.
  json::value WaitStatus(const std::string& id, const std::string& status) {
    auto is = [&](const json::value& v) {
      return v.as_object().contains("status") && v.at("status") == json::value(status);
    };
    // (a replica taking a killed one's runs: seconds)
    json::value v = testing::PollUntil([&] { return Run(id); }, is, std::chrono::seconds(30));
    if (!is(v))
      ADD_FAILURE() << "run " << id << " never became " << status << ": " << json::serialize(v);
    return v;
  }
  // The a2ad_executions_running gauge, once it settles: an execution that just parked its run
  // is still counted until it returns.
  int ExecutionsRunning() {
    int n = -1;
    bool listed = true;
    testing::WaitFor(
        [&] {
          const std::string body = client_->Request("GET", "/metrics").body;
          std::smatch m;
          listed = std::regex_search(body, m, std::regex("\\na2ad_executions_running ([0-9]+)"));
          if (listed) n = std::stoi(m[1]);
          return !listed || n == 0;
        },
        std::chrono::seconds(2));
    if (!listed) ADD_FAILURE() << "no a2ad_executions_running in /metrics";
    return listed ? n : -1;
  }
  // The run's open interrupt's timeout, in epoch ms.
  static int64_t ExpiresAt(const json::value& run) {
    int64_t at = 0;
    EXPECT_TRUE(core::ParseTimestamp(
        std::string(run.at("interrupt").at("expiresAt").as_string()), at))
        << json::serialize(run);
    return at;
  }
  std::vector<json::object> Events(const std::string& id, std::string_view type) {
    std::vector<json::object> out;
    auto v =
        client_->Request("GET", "/v1/runs/" + id + "/events/poll?lastSequence=0&timeout=0").Json();
    for (const auto& e : v.at("events").as_array())
      if (e.at("type") == json::value(type)) out.push_back(e.as_object());
    return out;
  }

  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(ParkedRunsE2E, AGateHoldsNoExecutionAndItsTimeoutFiresOnceAcrossASigkill) {
  const std::string timed = StartRun("timed");
  const std::string untimed = StartRun("untimed");
  const json::value parked = WaitStatus(timed, "waiting-input");
  WaitStatus(untimed, "waiting-input");
  const int64_t expires_at = ExpiresAt(parked);
  // Parked, with and without a timeout: no execution waits for either.
  EXPECT_EQ(ExecutionsRunning(), 0);

  KillAndRestart();
  // A restart starts none for them either; both are still where they were.
  EXPECT_EQ(ExecutionsRunning(), 0);
  EXPECT_EQ(Run(untimed).at("status"), "waiting-input");

  // The timeout fires from the row's wake time: once, and not before it.
  const json::value failed = WaitStatus(timed, "failed");
  EXPECT_EQ(failed.at("error").at("code"), "interrupt_timeout") << json::serialize(failed);
  const auto ends = Events(timed, "run.failed");
  ASSERT_EQ(ends.size(), 1u);
  const auto resolved = Events(timed, "interrupt.resolved");
  ASSERT_EQ(resolved.size(), 1u);
  int64_t failed_at = 0;
  ASSERT_TRUE(core::ParseTimestamp(std::string(ends[0].at("timestamp").as_string()), failed_at));
  EXPECT_GE(failed_at, expires_at);
  // The run without a timeout still waits, and its answer still completes it.
  EXPECT_EQ(Run(untimed).at("status"), "waiting-input");
  auto answered = client_->Request(
      "POST", "/v1/runs/" + untimed + "/interrupts/ask",
      json::serialize(json::object{
          {"resumeValue", json::object{{"answers", json::object{{"q", "because"}}}}}}),
      {{"Content-Type", "application/json"}});
  EXPECT_EQ(answered.status, 200) << answered.body;
  WaitStatus(untimed, "completed");
  EXPECT_EQ(ExecutionsRunning(), 0);
}

// A timeout that came due while the server was down fires at the start.
TEST_F(ParkedRunsE2E, ATimeoutDueWhileTheServerWasDownFiresAtTheStart) {
  const std::string timed = StartRun("timed");
  const int64_t expires_at = ExpiresAt(WaitStatus(timed, "waiting-input"));
  client_.reset();
  server_.Kill(SIGKILL);
  // The timeout comes due while the server is down: that time passing is what is tested.
  std::this_thread::sleep_until(
      std::chrono::system_clock::time_point(std::chrono::milliseconds(expires_at + 1)));
  Start();
  EXPECT_EQ(WaitStatus(timed, "failed").at("error").at("code"), "interrupt_timeout");
  EXPECT_EQ(Events(timed, "run.failed").size(), 1u);
}

}  // namespace
}  // namespace a2ad
