// Workflows that call out (issue 16), end to end over loopback: an a2ad caller whose
// core.a2a.invoke nodes hand work to a second a2ad process (the peer, both real binaries on
// real SQLite files), and core.http nodes calling a local HTTP server. Covers the reverse
// projection against a real peer (completed, input-required answered through the caller,
// canceled by the peer), cancel both ways, an unreachable peer, a peer result that tries to
// approve the caller's gate, SIGKILL of the caller mid-invoke (still one peer task) and of
// the caller after an HTTP call was logged (not called again), SIGKILL of the peer (waited
// for), retries and egress refusals.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "http_client.hpp"
#include "pause_fixture.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"
#include "webhook_receiver.hpp"

namespace a2ad::calls_test {
namespace fs = std::filesystem;
namespace json = boost::json;
using pause_test::Node;
using pause_test::Workflow;

json::object Invoke(json::object config) {
  return Node("call", "core.a2a.invoke", std::move(config));
}

// The peer's workflows: a gate (input-required until answered), a slow one.
std::vector<json::object> PeerWorkflows() {
  json::array delay_var{json::object{
      {"name", "delayMs"}, {"type", "number"}, {"required", false}, {"defaultValue", 3000}}};
  json::object from_var{
      {"delayMs", json::object{{"type", "variable"}, {"variableName", "delayMs"}}}};
  return {
      Workflow("peer-gate",
               json::array{Node("gate", "core.approvalGate",
                                json::object{{"title", "May I?"},
                                             {"actions", json::array{"accept", "reject"}}})}),
      Workflow("peer-slow",
               json::array{Node("wait", "core.delay", {}, from_var), Node("done", "core.noop", {})},
               delay_var),
  };
}

// The caller's workflows.
std::vector<json::object> CallerWorkflows(const std::string& http_url) {
  json::object gate_after{{"title", "Publish?"}, {"actions", json::array{"accept", "reject"}}};
  return {
      Workflow("call-echo", json::array{Invoke(json::object{
                                {"skill", "echo"}, {"text", "hello peer"}, {"pollMs", 50}})}),
      Workflow("call-gate",
               json::array{Invoke(json::object{{"skill", "peer-gate"}, {"pollMs", 50}}),
                           Node("local", "core.approvalGate", gate_after)}),
      Workflow("call-slow",
               json::array{Invoke(json::object{{"skill", "peer-slow"}, {"pollMs", 50}}),
                           Node("end", "core.noop", {})}),
      // Followed by the peer's stream, and by its pushes: pollMs 60 s, so a node that
      // finishes within seconds of its peer was told, not polling.
      Workflow("call-stream",
               json::array{Invoke(json::object{{"skill", "peer-slow"}, {"mode", "stream"}}),
                           Node("end", "core.noop", {})}),
      Workflow("call-push",
               json::array{Invoke(json::object{
                               {"skill", "peer-slow"}, {"mode", "push"}, {"pollMs", 60000}}),
                           Node("end", "core.noop", {})}),
      Workflow("call-stream-gate",
               json::array{Invoke(json::object{{"skill", "peer-gate"}, {"mode", "stream"}})}),
      // Over the peer's REST interface (A2A 1.0 HTTP+JSON): its stream, a question and the
      // answer sent back, and a refusal.
      Workflow("call-rest-stream",
               json::array{Invoke(
                   json::object{{"skill", "peer-slow"}, {"mode", "stream"}, {"binding", "rest"}})}),
      Workflow("call-rest-gate",
               json::array{Invoke(
                   json::object{{"skill", "peer-gate"}, {"pollMs", 50}, {"binding", "rest"}})}),
      Workflow("call-rest-unknown",
               json::array{Invoke(json::object{{"skill", "no-such-skill"}, {"binding", "rest"}})}),
      // The same over its gRPC interface (lf.a2a.v1.A2AService).
      Workflow("call-grpc-stream",
               json::array{Invoke(
                   json::object{{"skill", "peer-slow"}, {"mode", "stream"}, {"binding", "grpc"}})}),
      Workflow("call-grpc-gate",
               json::array{Invoke(
                   json::object{{"skill", "peer-gate"}, {"pollMs", 50}, {"binding", "grpc"}})}),
      Workflow("call-grpc-unknown",
               json::array{Invoke(json::object{{"skill", "no-such-skill"}, {"binding", "grpc"}})}),
      Workflow("call-self", json::array{Invoke(json::object{
                                {"peer", "me"}, {"skill", "echo"}, {"text", "hello me"}})}),
      Workflow("call-nowhere",
               json::array{Invoke(
                   json::object{{"agentCardUrl", "http://127.0.0.1:9/card.json"},
                                {"retry", json::object{{"maxAttempts", 2}, {"backoffMs", 10}}}})}),
      Workflow("call-http",
               json::array{
                   Node("http", "core.http",
                        json::object{{"url", http_url},
                                     {"method", "POST"},
                                     {"body", json::object{{"q", "status"}}},
                                     {"retry", json::object{{"maxAttempts", 3}, {"backoffMs", 10}}},
                                     {"responseHeaders", json::array{"x-served-by"}}}),
                   Node("after", "core.delay", json::object{{"delayMs", 1500}})}),
      Workflow("call-private",
               json::array{Node("http", "core.http",
                                json::object{{"url", "http://10.255.255.1/x"},
                                             {"retry", json::object{{"maxAttempts", 1}}}})}),
  };
}

class CallsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-calls");
    for (const char* d : {"peer-data", "peer-wf", "caller-data", "caller-wf"})
      fs::create_directories(dir_ / d);
    for (const auto& w : PeerWorkflows())
      std::ofstream(dir_ / "peer-wf" / (std::string(w.at("id").as_string()) + ".json"))
          << json::serialize(w);
    for (const auto& w : CallerWorkflows(receiver_.Url("/api")))
      std::ofstream(dir_ / "caller-wf" / (std::string(w.at("id").as_string()) + ".json"))
          << json::serialize(w);
    StartPeer();
    StartCaller();
  }
  // The peer may push to loopback (the caller's receiver), as the caller may call it.
  void StartPeer(uint16_t port = 0) {
    std::vector<std::string> args{"--workflows-dir", (dir_ / "peer-wf").string(),
                                  "--egress-allowlist", "127.0.0.1", "--egress-allow-http",
                                  "--grpc-listen", "127.0.0.1:0"};
    if (port != 0) {
      args.push_back("--listen");
      args.push_back("127.0.0.1:" + std::to_string(port));
    }
    peer_ =
        testing::ServerProcess::Start(testing::A2adBinary(), (dir_ / "peer-data").string(), args);
    peer_client_ = std::make_unique<testing::HttpClient>("127.0.0.1", peer_.port);
  }
  void TearDown() override {
    caller_client_.reset();
    peer_client_.reset();
    if (caller_.pid > 0) caller_.Kill(SIGKILL);
    if (peer_.pid > 0) peer_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void StartCaller() {
    caller_ = testing::ServerProcess::Start(
        testing::A2adBinary(), (dir_ / "caller-data").string(),
        {"--workflows-dir", (dir_ / "caller-wf").string(), "--a2a-peer",
         "default=http://127.0.0.1:" + std::to_string(peer_.port), "--egress-allowlist",
         "127.0.0.1", "--egress-allow-http"});
    caller_client_ = std::make_unique<testing::HttpClient>("127.0.0.1", caller_.port);
  }

  static json::value Rpc(testing::HttpClient& c, const std::string& method, json::object params) {
    json::object req{
        {"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", std::move(params)}};
    return json::parse(
        c.Request("POST", "/v1/a2a", json::serialize(req), {{"Content-Type", "application/json"}})
            .body);
  }
  // The caller's person answers run `id` with `text` (an A2A reply); true when it is taken.
  ::testing::AssertionResult Answer(const std::string& id, const std::string& message_id,
                                    const std::string& text) {
    json::object reply{{"kind", "message"},
                       {"messageId", message_id},
                       {"role", "user"},
                       {"taskId", id},
                       {"parts", json::array{json::object{{"kind", "text"}, {"text", text}}}}};
    json::value r = Rpc(*caller_client_, "message/send", json::object{{"message", reply}});
    if (r.as_object().contains("result")) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << json::serialize(r);
  }
  std::string Start(const std::string& skill) {
    json::object run{{"workflowId", skill}, {"inputs", json::object()}};
    auto r = caller_client_->Request("POST", "/v1/runs", json::serialize(run),
                                     {{"Content-Type", "application/json"}});
    json::value v = json::parse(r.body);
    EXPECT_TRUE(v.as_object().contains("runId")) << r.body;
    return v.as_object().contains("runId") ? std::string(v.at("runId").as_string()) : "";
  }
  static json::object RunOf(testing::HttpClient& c, const std::string& id) {
    return json::parse(c.Request("GET", "/v1/runs/" + id).body).as_object();
  }
  json::object Run(const std::string& id) { return RunOf(*caller_client_, id); }
  std::string Status(const std::string& id) {
    return std::string(Run(id).at("status").as_string());
  }
  bool WaitStatus(const std::string& id, const std::string& status, int ms = 15000) {
    if (testing::WaitFor([&] { return Status(id) == status; }, std::chrono::milliseconds(ms)))
      return true;
    ADD_FAILURE() << "run " << id << " is " << Status(id) << ", not " << status << ": "
                  << json::serialize(Run(id));
    return false;
  }
  // The peer task id the caller's node logged (waits for it).
  std::string PeerTaskId(const std::string& id) {
    auto logged = [&] {
      json::object run = Run(id);
      const json::value* effect = run.at("nodeStates").as_object().if_contains("call");
      if (effect && effect->as_object().contains("effect"))
        if (const json::value* t = effect->at("effect").as_object().if_contains("taskId"))
          return std::string(t->as_string());
      return std::string();
    };
    const std::string task = testing::PollUntil(
        logged, [](const std::string& t) { return !t.empty(); }, std::chrono::seconds(15));
    if (task.empty()) ADD_FAILURE() << "no peer task logged";
    return task;
  }
  std::string PeerState(const std::string& task_id) {
    json::value t = Rpc(*peer_client_, "tasks/get", json::object{{"id", task_id}});
    return std::string(t.at("result").at("status").at("state").as_string());
  }
  bool WaitPeerState(const std::string& task_id, const std::string& state) {
    if (testing::WaitFor([&] { return PeerState(task_id) == state; }, std::chrono::seconds(15)))
      return true;
    ADD_FAILURE() << "peer task " << task_id << " is " << PeerState(task_id) << ", not " << state;
    return false;
  }
  size_t PeerRuns(const std::string& workflow) {
    json::value runs = json::parse(peer_client_->Request("GET", "/v1/runs?pageSize=100").body);
    size_t n = 0;
    for (const auto& r : runs.at("runs").as_array())
      n += r.at("workflowId").as_string() == workflow;
    return n;
  }
  // How the node learned of the peer's last change (the logged effect's heardVia).
  std::string HeardVia(const std::string& id) {
    const json::object run = Run(id);
    const json::value* via =
        run.at("nodeStates").at("call").at("effect").as_object().if_contains("heardVia");
    return via ? std::string(via->as_string()) : "(none)";
  }
  static const json::object& Outputs(const json::object& run, const std::string& node) {
    return run.at("nodeStates").at(node).at("outputs").as_object();
  }

  testing::WebhookReceiver receiver_;
  fs::path dir_;
  testing::ServerProcess peer_, caller_;
  std::unique_ptr<testing::HttpClient> peer_client_, caller_client_;
};

TEST_F(CallsE2e, InvokeCompletesWithThePeersResultTaggedUntrusted) {
  const std::string id = Start("call-echo");
  ASSERT_TRUE(WaitStatus(id, "completed"));
  const json::object run = Run(id);
  const json::object& out = Outputs(run, "call");
  EXPECT_EQ(out.at("state"), "completed");
  EXPECT_EQ(out.at("contentTrust"), "untrusted");
  EXPECT_EQ(out.at("peer").at("version"), "1.0") << "a2ad's card declares 1.0: it is preferred";
  EXPECT_EQ(out.at("peer").at("verifiedCard"), true)
      << "a2ad's card is signed, its key on its origin";
  EXPECT_NE(std::string(out.at("text").as_string()).find("hello peer"), std::string::npos)
      << json::serialize(out);
  const std::string peer_task(out.at("peerTaskId").as_string());
  EXPECT_EQ(PeerState(peer_task), "completed");
  // The peer saw a2ad as the caller, with no credential in the message.
  json::value t =
      Rpc(*peer_client_, "tasks/get", json::object{{"id", peer_task}, {"historyLength", 10}});
  const json::value& first = t.at("result").at("history").at(0);
  EXPECT_EQ(first.at("metadata").at("openwop").at("callerAgentId"), "a2ad");
  EXPECT_EQ(first.at("metadata").at("openwop").at("runId"), json::value(id));
}

TEST_F(CallsE2e, PeerAskingForInputBecomesAClarificationAndTheAnswerGoesBack) {
  const std::string id = Start("call-gate");
  ASSERT_TRUE(WaitStatus(id, "waiting-input"));
  const std::string peer_task = PeerTaskId(id);
  const json::object run = Run(id);
  const json::object& data = run.at("interrupt").at("data").as_object();
  EXPECT_EQ(data.at("peerTaskId"), json::value(peer_task));
  EXPECT_EQ(data.at("contentTrust"), "untrusted");
  EXPECT_NE(json::serialize(data.at("questions")).find("May I?"), std::string::npos)
      << json::serialize(data);
  EXPECT_EQ(PeerState(peer_task), "input-required");
  // The caller's human answers the caller's run (an A2A reply); a2ad passes it on.
  ASSERT_TRUE(Answer(id, "answer-1", "accept"));
  ASSERT_TRUE(WaitPeerState(peer_task, "completed"));
  // The peer's result carries {"action": "accept"}; it does not approve the caller's gate.
  ASSERT_TRUE(WaitStatus(id, "waiting-approval"));
  EXPECT_EQ(Run(id).at("nodeStates").at("call").at("status"), "completed");
  EXPECT_EQ(Run(id).at("nodeStates").at("local").at("status"), "running");
}

TEST_F(CallsE2e, SigkillOfTheCallerMidInvokeReattachesToTheSamePeerTask) {
  const std::string id = Start("call-slow");
  const std::string peer_task = PeerTaskId(id);
  caller_client_.reset();
  caller_.Kill(SIGKILL);
  StartCaller();
  ASSERT_TRUE(WaitStatus(id, "completed"));
  EXPECT_EQ(Outputs(Run(id), "call").at("peerTaskId"), json::value(peer_task));
  EXPECT_EQ(PeerRuns("peer-slow"), 1u) << "exactly one task at the peer";
}

TEST_F(CallsE2e, APeerKilledMidTaskIsWaitedForAndItsTaskFinishes) {
  const std::string id = Start("call-slow");
  const std::string peer_task = PeerTaskId(id);
  const uint16_t port = peer_.port;
  peer_client_.reset();
  peer_.Kill(SIGKILL);
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(1500));  // the caller meets the outage
  EXPECT_EQ(Status(id), "running") << "an unreachable peer is not a failed run";
  StartPeer(port);
  ASSERT_TRUE(WaitStatus(id, "completed", 30000));
  EXPECT_EQ(Outputs(Run(id), "call").at("peerTaskId"), json::value(peer_task));
  EXPECT_EQ(PeerRuns("peer-slow"), 1u);
}

// Stream mode: the node hears the peer's change on its SubscribeToTask stream. The window
// is 15 s, the peer's task 3 s: finishing well within the window means the stream told it.
TEST_F(CallsE2e, StreamModeHearsThePeersChangeOnItsStream) {
  const auto started = std::chrono::steady_clock::now();
  const std::string id = Start("call-stream");
  ASSERT_TRUE(WaitStatus(id, "completed", 12000));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(12));
  EXPECT_EQ(Outputs(Run(id), "call").at("state"), "completed");
  EXPECT_EQ(HeardVia(id), "stream");
  EXPECT_EQ(PeerRuns("peer-slow"), 1u);
}

TEST_F(CallsE2e, StreamModeRaisesThePeersQuestionAndFollowsItsAnswer) {
  const std::string id = Start("call-stream-gate");
  ASSERT_TRUE(WaitStatus(id, "waiting-input"));
  const std::string peer_task = PeerTaskId(id);
  ASSERT_TRUE(Answer(id, "answer-s", "accept"));
  ASSERT_TRUE(WaitStatus(id, "completed", 12000));
  EXPECT_EQ(PeerState(peer_task), "completed");
}

TEST_F(CallsE2e, StreamModeReattachesAfterThePeerIsKilledMidStream) {
  const std::string id = Start("call-stream");
  const std::string peer_task = PeerTaskId(id);
  const uint16_t port = peer_.port;
  peer_client_.reset();
  peer_.Kill(SIGKILL);  // the stream drops mid-task
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(1000));  // (the run does not fail)
  EXPECT_EQ(Status(id), "running");
  StartPeer(port);
  ASSERT_TRUE(WaitStatus(id, "completed", 30000));
  EXPECT_EQ(Outputs(Run(id), "call").at("peerTaskId"), json::value(peer_task));
  EXPECT_EQ(PeerRuns("peer-slow"), 1u);
}

// Push mode: the message carries a push config pointing at the caller's receiver; the
// peer's push wakes the node (pollMs is 60 s: without the push it would sleep a minute).
TEST_F(CallsE2e, PushModeIsWokenByThePeersPush) {
  const auto started = std::chrono::steady_clock::now();
  const std::string id = Start("call-push");
  const std::string peer_task = PeerTaskId(id);
  json::value configs =
      Rpc(*peer_client_, "tasks/pushNotificationConfig/list", json::object{{"id", peer_task}});
  ASSERT_EQ(configs.at("result").as_array().size(), 1u) << configs;
  const std::string url(
      configs.at("result").at(0).at("pushNotificationConfig").at("url").as_string());
  EXPECT_EQ(url, "http://127.0.0.1:" + std::to_string(caller_.port) + "/v1/a2a/peer-push");
  ASSERT_TRUE(WaitStatus(id, "completed", 20000));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20));
  EXPECT_EQ(Outputs(Run(id), "call").at("state"), "completed");
  EXPECT_EQ(HeardVia(id), "push");
}

TEST_F(CallsE2e, ThePushReceiverRefusesWhatItDidNotIssue) {
  auto post = [&](std::vector<std::pair<std::string, std::string>> headers) {
    return caller_client_->Request("POST", "/v1/a2a/peer-push", R"({"id":"x"})", headers);
  };
  auto none = post({{"Content-Type", "application/json"}});
  EXPECT_EQ(none.status, 401) << none.body;
  EXPECT_NE(none.body.find("X-A2A-Notification-Token"), std::string::npos) << none.body;
  auto forged = post({{"Content-Type", "application/json"},
                      {"X-A2A-Notification-Token", "eyJydW5JZCI6IngifQ.AAAA"}});
  EXPECT_EQ(forged.status, 401) << forged.body;
  EXPECT_EQ(caller_client_->Request("GET", "/v1/a2a/peer-push").status, 405);
}

TEST_F(CallsE2e, CancellingTheRunCancelsThePeersTask) {
  const std::string id = Start("call-slow");
  const std::string peer_task = PeerTaskId(id);
  json::value r = Rpc(*caller_client_, "tasks/cancel", json::object{{"id", id}});
  ASSERT_TRUE(r.as_object().contains("result")) << r;
  EXPECT_TRUE(WaitPeerState(peer_task, "canceled"));
}

// The peer is down when the run is cancelled, and the caller is SIGKILLed before it is
// back: the cancel reaches the peer's task when the caller restarts.
TEST_F(CallsE2e, ACancelThatDidNotReachThePeerIsSentAgainAfterARestart) {
  const std::string id = Start("call-gate");
  ASSERT_TRUE(WaitStatus(id, "waiting-input"));
  const std::string peer_task = PeerTaskId(id);
  const uint16_t peer_port = peer_.port;
  peer_client_.reset();
  peer_.Kill(SIGKILL);
  json::value r = Rpc(*caller_client_, "tasks/cancel", json::object{{"id", id}});
  ASSERT_TRUE(r.as_object().contains("result")) << r;
  // The caller's attempts (3, 0.5 s then 1 s apart) meet a closed port; then it dies. (A fixed
  // wait: the attempts leave no trace the test can read, the caller logging to stderr.)
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  caller_client_.reset();
  caller_.Kill(SIGKILL);
  StartPeer(peer_port);
  ASSERT_EQ(PeerState(peer_task), "input-required") << "the cancel has not reached the peer yet";
  StartCaller();
  EXPECT_TRUE(WaitPeerState(peer_task, "canceled"));
  EXPECT_EQ(Status(id), "cancelled");
}

TEST_F(CallsE2e, ThePeerCancellingItsTaskCancelsTheRun) {
  const std::string id = Start("call-slow");
  const std::string peer_task = PeerTaskId(id);
  json::value r = Rpc(*peer_client_, "tasks/cancel", json::object{{"id", peer_task}});
  ASSERT_TRUE(r.as_object().contains("result")) << r;
  ASSERT_TRUE(WaitStatus(id, "cancelled"));
  EXPECT_EQ(Run(id).at("nodeStates").at("call").at("error").at("code"), "cancelled_by_remote");
}

TEST_F(CallsE2e, AnUnreachablePeerFailsTheNodeWithExternalCallFailed) {
  const std::string id = Start("call-nowhere");
  ASSERT_TRUE(WaitStatus(id, "failed"));
  const json::object run = Run(id);
  EXPECT_EQ(run.at("nodeStates").at("call").at("error").at("code"), "external_call_failed")
      << json::serialize(run);
}

TEST_F(CallsE2e, HttpNodeRetriesThenLogsTheAnswerWithOneIdempotencyKey) {
  receiver_.SetResponse(R"({"ok":true,"items":[1,2]})", {{"X-Served-By", "test"}});
  receiver_.Script({503, 200});
  const std::string id = Start("call-http");
  ASSERT_TRUE(WaitStatus(id, "completed"));
  const json::object run = Run(id);
  const json::object& out = Outputs(run, "http");
  EXPECT_EQ(out.at("status"), 200);
  EXPECT_EQ(out.at("body").at("ok"), true);
  EXPECT_EQ(out.at("headers").at("x-served-by"), "test");
  auto reqs = receiver_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].body, R"({"q":"status"})");
  EXPECT_FALSE(reqs[0].Header("Idempotency-Key").empty());
  EXPECT_EQ(reqs[0].Header("Idempotency-Key"), reqs[1].Header("Idempotency-Key"));
}

TEST_F(CallsE2e, HttpCallLoggedBeforeASigkillIsNotMadeAgain) {
  const std::string id = Start("call-http");
  testing::WaitFor(
      [&] {
        json::object run = Run(id);
        const json::value* st = run.at("nodeStates").as_object().if_contains("http");
        return st && st->at("status") == "completed";
      },
      std::chrono::seconds(15));
  caller_client_.reset();
  caller_.Kill(SIGKILL);  // the next node (a 1.5 s delay) is in flight
  StartCaller();
  ASSERT_TRUE(WaitStatus(id, "completed"));
  EXPECT_EQ(receiver_.count(), 1u);
}

TEST_F(CallsE2e, RestBindingStreamsAsksAndIsRefusedLikeJsonRpc) {
  const std::string streamed = Start("call-rest-stream");
  ASSERT_TRUE(WaitStatus(streamed, "completed"));
  const json::object run = Run(streamed);
  const json::object& effect = run.at("nodeStates").at("call").at("effect").as_object();
  EXPECT_EQ(effect.at("peer").at("binding"), "HTTP+JSON") << json::serialize(effect);
  EXPECT_NE(
      std::string(effect.at("peer").at("url").as_string()).find(":" + std::to_string(peer_.port)),
      std::string::npos);
  EXPECT_EQ(HeardVia(streamed), "stream") << "SubscribeToTask over REST";

  const std::string gated = Start("call-rest-gate");
  ASSERT_TRUE(WaitStatus(gated, "waiting-input"));
  const std::string peer_task = PeerTaskId(gated);
  ASSERT_TRUE(Answer(gated, "rest-answer-1", "accept"));
  ASSERT_TRUE(WaitPeerState(peer_task, "completed")) << "the answer reached the peer over REST";
  ASSERT_TRUE(WaitStatus(gated, "completed"));

  const std::string refused = Start("call-rest-unknown");
  ASSERT_TRUE(WaitStatus(refused, "failed"));
  const json::object failed = Run(refused);
  const json::object& error = failed.at("nodeStates").at("call").at("error").as_object();
  EXPECT_EQ(error.at("code"), "remote_error") << json::serialize(error);
  EXPECT_NE(json::serialize(error).find("INVALID_ARGUMENT"), std::string::npos)
      << "the peer's google.rpc.Status is kept: " << json::serialize(error);
}

TEST_F(CallsE2e, GrpcBindingStreamsAsksAndIsRefusedLikeJsonRpc) {
  const std::string streamed = Start("call-grpc-stream");
  ASSERT_TRUE(WaitStatus(streamed, "completed"));
  const json::object run = Run(streamed);
  const json::object& effect = run.at("nodeStates").at("call").at("effect").as_object();
  EXPECT_EQ(effect.at("peer").at("binding"), "GRPC") << json::serialize(effect);
  EXPECT_EQ(HeardVia(streamed), "stream") << "SubscribeToTask over gRPC";

  const std::string gated = Start("call-grpc-gate");
  ASSERT_TRUE(WaitStatus(gated, "waiting-input"));
  const std::string peer_task = PeerTaskId(gated);
  ASSERT_TRUE(Answer(gated, "grpc-answer-1", "accept"));
  ASSERT_TRUE(WaitPeerState(peer_task, "completed")) << "the answer reached the peer over gRPC";
  ASSERT_TRUE(WaitStatus(gated, "completed"));

  const std::string refused = Start("call-grpc-unknown");
  ASSERT_TRUE(WaitStatus(refused, "failed"));
  const json::object failed = Run(refused);
  const json::object& error = failed.at("nodeStates").at("call").at("error").as_object();
  EXPECT_EQ(error.at("code"), "remote_error") << json::serialize(error);
  EXPECT_NE(json::serialize(error).find("INVALID_ARGUMENT"), std::string::npos)
      << "the peer's gRPC status is kept: " << json::serialize(error);
}

// Under the default egress policy (loopback refused) a `self` peer still reaches the host
// itself, through a guard of its own; the same host calling another agent on loopback is
// refused, so the self peer opens nothing else.
TEST_F(CallsE2e, TheSelfPeerReachesTheHostItselfAndNothingElse) {
  // A caller of its own (its own data directory), under the default egress policy.
  caller_client_.reset();
  caller_.Kill(SIGKILL);
  fs::create_directories(dir_ / "strict-data");
  caller_ = testing::ServerProcess::Start(
      testing::A2adBinary(), (dir_ / "strict-data").string(),
      {"--workflows-dir", (dir_ / "caller-wf").string(), "--a2a-peer",
       "default=http://127.0.0.1:" + std::to_string(peer_.port), "--a2a-peer", "me=self"});
  caller_client_ = std::make_unique<testing::HttpClient>("127.0.0.1", caller_.port);
  const std::string self = Start("call-self");
  ASSERT_TRUE(WaitStatus(self, "completed"));
  const json::object run = Run(self);
  const json::object& out = Outputs(run, "call");
  EXPECT_NE(std::string(out.at("text").as_string()).find("hello me"), std::string::npos)
      << json::serialize(out);
  EXPECT_EQ(Run(std::string(out.at("peerTaskId").as_string())).at("status"), "completed")
      << "the echo task is at the host itself";
  const std::string other = Start("call-echo");
  ASSERT_TRUE(WaitStatus(other, "failed"));
  EXPECT_EQ(Run(other).at("nodeStates").at("call").at("error").at("code"), "egress_refused")
      << json::serialize(Run(other));
  EXPECT_EQ(PeerRuns("echo"), 0u);
}

TEST_F(CallsE2e, HttpToAPrivateAddressIsRefusedByTheEgressGuard) {
  const std::string id = Start("call-private");
  ASSERT_TRUE(WaitStatus(id, "failed"));
  EXPECT_EQ(Run(id).at("nodeStates").at("http").at("error").at("code"), "egress_refused");
}


// A pause and its resume while the node's call is out: the resume starts a new execution,
// which reaches the same node while the superseded one still waits for the answer. The claim
// on the call's idempotency key (effects/effect_claims.hpp) makes the new execution take that
// answer: the API sees one request, and the run goes on with its response.
TEST_F(CallsE2e, AResumeWhileTheCallIsOutTakesItsAnswerInsteadOfCallingAgain) {
  receiver_.SetResponse(R"({"ok":true})");
  receiver_.SetDelay(std::chrono::milliseconds(1500));
  const std::string id = Start("call-http");
  ASSERT_EQ(receiver_.WaitFor(1, std::chrono::seconds(15)), 1u);  // the call is out
  json::value paused = Rpc(*caller_client_, "tasks/pause",
                           json::object{{"taskId", id}, {"mode", "interrupt_immediate"}});
  ASSERT_TRUE(paused.as_object().contains("result")) << json::serialize(paused);
  json::value task = Rpc(*caller_client_, "tasks/get", json::object{{"id", id}});
  const std::string handle(task.at("result").at("metadata").at("pause").at("resumeToken").as_string());
  json::value resumed =
      Rpc(*caller_client_, "tasks/resume", json::object{{"taskId", id}, {"handle", handle}});
  ASSERT_TRUE(resumed.as_object().contains("result")) << json::serialize(resumed);
  ASSERT_TRUE(WaitStatus(id, "completed"));
  EXPECT_EQ(receiver_.count(), 1u);
  EXPECT_EQ(Outputs(Run(id), "http").at("body").at("ok"), true);
}

}  // namespace a2ad::calls_test
