// Several replicas on one PostgreSQL database (issue 31): real `a2ad serve` processes on a
// throwaway cluster, loopback only. A run sent to one is read, streamed and answered on the
// others; a replica killed with SIGKILL, or frozen with SIGSTOP past its lease, has its runs
// taken over from their last committed step, each step exactly once (a frozen replica's late
// commits are refused); a cancel on another replica stops the run where it executes; an
// idempotent send raced on two replicas makes one task. Through HAProxy too, with the recipe
// of the README (scripts/cluster-demo.sh).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "http_client.hpp"
#include "pause_fixture.hpp"
#include "pg_cluster.hpp"
#include "sse_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"
#include "webhook_receiver.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::HttpClient;
using testing::ServerProcess;
using testing::SseClient;

constexpr int kLeaseTtlMs = 1500;

json::object Message(const std::string& id, json::array parts, const std::string& task_id = "",
                     const std::string& skill = "") {
  json::object m{{"kind", "message"}, {"role", "user"}, {"messageId", id}, {"parts", std::move(parts)}};
  if (!task_id.empty()) m["taskId"] = task_id;
  if (!skill.empty()) m["metadata"] = json::object{{"skillId", skill}};
  return m;
}
json::object Text(const std::string& t) { return {{"kind", "text"}, {"text", t}}; }
json::object Data(json::object d) { return {{"kind", "data"}, {"data", std::move(d)}}; }

class Replicas : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-replicas");
    url_ = test::FreshPgDatabase();
  }
  void TearDown() override {
    for (auto& s : servers_)
      if (s.pid > 0) {
        ::kill(s.pid, SIGCONT);
        s.Kill(SIGKILL);
      }
    fs::remove_all(dir_);
  }
  // Replica `i` ("r<i>"): its log in the test directory.
  ServerProcess& Serve(size_t i, int lease_ttl_ms = kLeaseTtlMs,
                       std::vector<std::string> extra = {}) {
    if (servers_.size() <= i) servers_.resize(i + 1);
    const std::string name = "r" + std::to_string(i);
    std::vector<std::string> args{
        "--database-url",        url_,
        "--replica-id",          name,
        "--lease-ttl-ms",        std::to_string(lease_ttl_ms),
        "--workflows-dir",       std::string(A2AD_SOURCE_DIR) + "/workflows",
        "--conformance-fixtures"};
    args.insert(args.end(), extra.begin(), extra.end());
    servers_[i] = ServerProcess::Start(testing::A2adBinary(), (dir_ / name).string(), args,
                                       (dir_ / (name + ".log")).string());
    return servers_[i];
  }
  // A replica named `name` (its log `name`.log) with `args` after the cluster's flags; its port.
  uint16_t ServeNamed(const std::string& name, std::vector<std::string> args) {
    std::vector<std::string> all{"--database-url", url_,
                                 "--replica-id",   name,
                                 "--lease-ttl-ms", std::to_string(kLeaseTtlMs)};
    all.insert(all.end(), args.begin(), args.end());
    servers_.push_back(ServerProcess::Start(testing::A2adBinary(), (dir_ / name).string(), all,
                                            (dir_ / (name + ".log")).string()));
    return servers_.back().port;
  }
  HttpClient Client(size_t i) { return HttpClient("127.0.0.1", servers_[i].port); }
  std::string Log(size_t i) {
    std::ifstream in(dir_ / ("r" + std::to_string(i) + ".log"));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static json::object Task(HttpClient& c, const std::string& id) {
    auto r = c.Rpc("tasks/get", json::object{{"id", id}});
    return r.as_object().contains("result") ? r.at("result").as_object() : json::object{};
  }
  static std::string State(const json::object& task) {
    return task.contains("status") ? std::string(task.at("status").at("state").as_string()) : "";
  }
  // Polls `c` until the task's state is `want` (or `limit` passes); the last state seen.
  static std::string AwaitState(HttpClient& c, const std::string& id, const std::string& want,
                                std::chrono::milliseconds limit) {
    return testing::PollUntil([&] { return State(Task(c, id)); },
                              [&](const std::string& seen) { return seen == want; }, limit);
  }
  // The run's whole event log (OpenWOP long-poll, no wait).
  static json::array Events(HttpClient& c, const std::string& id) {
    auto r = c.Request("GET", "/v1/runs/" + id + "/events/poll?lastSequence=-1&timeout=0");
    if (r.status != 200) return {};
    return r.Json().at("events").as_array();
  }
  static size_t CountType(const json::array& events, const std::string& type) {
    size_t n = 0;
    for (const auto& e : events)
      if (e.at("type") == json::value(type)) ++n;
    return n;
  }
  // A ticker task (ticks of `interval_ms`), sent without waiting; its id.
  static std::string StartTicker(HttpClient& c, const std::string& message_id, int ticks,
                                 int interval_ms) {
    auto r = c.Rpc(
        "message/send",
        json::object{{"configuration", json::object{{"blocking", false}}},
                     {"message", Message(message_id,
                                         json::array{Data({{"ticks", ticks}, {"intervalMs", interval_ms}})},
                                         "", "ticker")}});
    return std::string(r.at("result").at("id").as_string());
  }
  // Sets the push config "hook" (a closed port) of task `id` through `c`; the answer.
  static json::value SetHook(HttpClient& c, const std::string& id) {
    return c.Rpc("tasks/pushNotificationConfig/set",
                 json::object{{"taskId", id},
                              {"pushNotificationConfig",
                               json::object{{"id", "hook"}, {"url", "http://127.0.0.1:9/hook"}}}});
  }
  // How many outbox rows task `task` has for config or webhook `target`.
  std::string OutboxRows(const std::string& task, const std::string& target) {
    return test::PgQuery(url_, "SELECT count(*) FROM push_outbox WHERE task_id = '" + task +
                                   "' AND target_id = '" + target + "'");
  }
  static size_t Chunks(const json::object& task) {
    if (!task.contains("artifacts") || task.at("artifacts").as_array().empty()) return 0;
    return task.at("artifacts").at(0).at("parts").as_array().size();
  }
  // Waits until every ticker of `ids` has ticked `ticks` times (read through `c`): executing.
  static bool Ticked(HttpClient& c, const std::vector<std::string>& ids, size_t ticks = 1) {
    return testing::WaitFor([&] {
      return std::all_of(ids.begin(), ids.end(),
                         [&](const std::string& id) { return Chunks(Task(c, id)) >= ticks; });
    });
  }
  // Waits until a session of the test's database is asleep in pg_sleep (holding what it took
  // before), or, with `lock`, one waits on a lock.
  bool SessionWaits(const std::string& on) {
    const std::string where = on == "lock" ? "wait_event_type = 'Lock'" : "wait_event = 'PgSleep'";
    return testing::WaitFor([&] {
      return test::PgQuery(url_,
                           "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                           " current_database() AND " +
                               where) != "0";
    });
  }
  fs::path dir_;
  std::string url_;
  std::vector<ServerProcess> servers_;
};

TEST_F(Replicas, AGatedRunSentToOneIsReadStreamedAndAnsweredOnOthers) {
  Serve(0), Serve(1), Serve(2);
  HttpClient r0 = Client(0), r1 = Client(1);
  auto gate = r0.Rpc("message/send",
                     json::object{{"message", Message("gate-1", json::array{Text("go")}, "", "conformance-approval")}});
  ASSERT_EQ(gate.at("result").at("status").at("state"), "input-required") << gate;
  const std::string id(gate.at("result").at("id").as_string());
  EXPECT_EQ(State(Task(r1, id)), "input-required");
  // The run's event stream from a third replica, from the start.
  SseClient watch("127.0.0.1", servers_[2].port, "/v1/runs/" + id + "/events", "", {}, "GET");
  ASSERT_EQ(watch.status(), 200);
  auto first = watch.Next();
  ASSERT_TRUE(first) << "no event";
  // Answered on the second.
  auto answer = r1.Rpc("message/send",
                       json::object{{"message", Message("gate-1-answer",
                                                        json::array{Data({{"action", "accept"}})}, id)}});
  ASSERT_TRUE(answer.as_object().contains("result")) << answer;
  EXPECT_EQ(AwaitState(r0, id, "completed", std::chrono::seconds(10)), "completed");
  // The stream on the third saw every event, in order, once, up to the end: what the same
  // stream opened afterwards gives at once.
  auto sequences = [](SseClient& s, std::vector<int64_t> out) {
    for (const auto& e : s.ReadToEnd(std::chrono::seconds(10)))
      if (!e.data.empty() && e.Json().as_object().contains("sequence"))
        out.push_back(e.Json().at("sequence").to_number<int64_t>());
    return out;
  };
  const std::vector<int64_t> seen =
      sequences(watch, {first->Json().at("sequence").to_number<int64_t>()});
  SseClient after("127.0.0.1", servers_[2].port, "/v1/runs/" + id + "/events", "", {}, "GET");
  const std::vector<int64_t> all = sequences(after, {});
  EXPECT_EQ(seen, all);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.back(), static_cast<int64_t>(Events(r0, id).size()) - 1);  // up to the end
  // Each replica says who it is, and the rung it serves.
  const std::string metrics = r1.Request("GET", "/metrics").body;
  EXPECT_NE(metrics.find("a2ad_replica_info{replica=\"r1\"} 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("a2ad_durability_info{rung=\"durable-multi-instance\"} 1"),
            std::string::npos);
}

// Taking a run's lease (an answered gate here) is a database round trip made off the I/O
// threads: while it waits, on a lock another session holds on the lease, the replica (one I/O
// thread) answers everyone else at once, and the run goes on once the lock is gone.
TEST_F(Replicas, TakingALeaseNeverHoldsAnIoThread) {
  Serve(0, kLeaseTtlMs, {"--threads", "1"});
  HttpClient r0 = Client(0);
  auto gate =
      r0.Rpc("message/send", json::object{{"message", Message("held-1", json::array{Text("go")}, "",
                                                              "conformance-approval")}});
  ASSERT_EQ(gate.at("result").at("status").at("state"), "input-required") << gate;
  const std::string id(gate.at("result").at("id").as_string());
  std::thread blocker([&] {  // holds the lease's key (inserted or updated) for 3 s, then undoes it
    test::PgQuery(url_, "BEGIN; INSERT INTO run_leases(task_id, holder, epoch) VALUES ('" + id +
                            "', 'blocker', 100) ON CONFLICT (task_id) DO UPDATE SET epoch ="
                            " run_leases.epoch; SELECT pg_sleep(3); ROLLBACK");
  });
  EXPECT_TRUE(SessionWaits("sleep")) << "the blocker holds the key";
  std::thread answer([&] {
    HttpClient c = Client(0);
    c.Rpc("message/send",
          json::object{{"configuration", json::object{{"blocking", false}}},
                       {"message",
                        Message("held-1-answer", json::array{Data({{"action", "accept"}})}, id)}});
  });
  EXPECT_TRUE(SessionWaits("lock")) << "its lease is being taken now";
  const auto asked = Clock::now();
  auto card = r0.Request("GET", "/.well-known/agent-card.json");
  const auto waited = Clock::now() - asked;
  EXPECT_EQ(card.status, 200);
  EXPECT_LT(waited, std::chrono::milliseconds(1500)) << "the I/O thread waited for the lease";
  answer.join();
  blocker.join();
  EXPECT_EQ(AwaitState(r0, id, "completed", std::chrono::seconds(10)), "completed") << Log(0);
}

// A peer's push reaches a replica that does not execute the run it is for (the push URL names
// the balancer; here r1): the nudge goes on the feed to r0, which executes it, and wakes the
// node at once. Its pollMs is 60 s: without the nudge the run would sleep a minute.
TEST_F(Replicas, APeersPushToAnotherReplicaWakesTheRunWhereItExecutes) {
  using pause_test::Node;
  using pause_test::Workflow;
  for (const char* d : {"peer", "peer-wf", "wf"}) fs::create_directories(dir_ / d);
  auto write = [](const fs::path& dir, const json::object& w) {
    std::ofstream(dir / (std::string(w.at("id").as_string()) + ".json")) << json::serialize(w);
  };
  write(dir_ / "peer-wf",
        Workflow("peer-slow", json::array{Node("wait", "core.delay", {{"delayMs", 1500}}),
                                          Node("done", "core.noop", {})}));
  write(dir_ / "wf",
        Workflow("call-push",
                 json::array{Node("call", "core.a2a.invoke",
                                  {{"skill", "peer-slow"}, {"mode", "push"}, {"pollMs", 60000}}),
                             Node("end", "core.noop", {})}));
  const std::vector<std::string> egress{"--egress-allowlist", "127.0.0.1", "--egress-allow-http"};
  std::vector<std::string> peer_args{"--workflows-dir", (dir_ / "peer-wf").string()};
  peer_args.insert(peer_args.end(), egress.begin(), egress.end());
  servers_.push_back(ServerProcess::Start(testing::A2adBinary(), (dir_ / "peer").string(),
                                          peer_args, (dir_ / "peer.log").string()));
  const uint16_t peer_port = servers_.back().port;
  auto replica = [&](const std::string& name, std::vector<std::string> more) {
    std::vector<std::string> args{"--workflows-dir", (dir_ / "wf").string(), "--a2a-peer",
                                  "default=http://127.0.0.1:" + std::to_string(peer_port)};
    args.insert(args.end(), egress.begin(), egress.end());
    args.insert(args.end(), more.begin(), more.end());
    return ServeNamed(name, std::move(args));
  };
  const uint16_t r1 = replica("r1", {});
  // (r0 says its public URL where it says it serves: its own port is chosen here.)
  const uint16_t r0 = [] {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    uint16_t port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
    ::close(fd);
    return port;
  }();
  ASSERT_NE(r0, 0);
  replica("r0", {"--listen", "127.0.0.1:" + std::to_string(r0), "--public-url",
                 "http://127.0.0.1:" + std::to_string(r1)});
  ASSERT_EQ(servers_.back().pid > 0, true);
  HttpClient c0("127.0.0.1", r0);
  const auto started = Clock::now();
  auto r = c0.Request("POST", "/v1/runs", R"({"workflowId":"call-push","inputs":{}})",
                      {{"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string id(r.Json().at("runId").as_string());
  const std::string status = testing::PollUntil(
      [&] {
        return std::string(c0.Request("GET", "/v1/runs/" + id).Json().at("status").as_string());
      },
      [](const std::string& s) { return s == "completed"; },
      std::chrono::seconds(20) - (Clock::now() - started));
  ASSERT_EQ(status, "completed") << Log(0);
  // r0 executed it; r1 received the peer's push.
  EXPECT_NE(Log(0).find("run completed task=" + id), std::string::npos) << Log(0);
  EXPECT_NE(Log(1).find("route=/v1/a2a/peer-push status=200"), std::string::npos) << Log(1);
  const json::value run = c0.Request("GET", "/v1/runs/" + id).Json();
  EXPECT_EQ(run.at("nodeStates").at("call").at("effect").at("heardVia"), "push") << run;
}

// The effect fence: a replica frozen (SIGSTOP) between two attempts of an HTTP call loses the
// run to another, which calls again from the start; thawed, the frozen one asks whether it
// still holds the run before its next attempt, and stops. The API sees the first replica's
// one attempt and the second's four, never a third party's attempt after the takeover.
TEST_F(Replicas, AFrozenReplicaThawedBetweenRetriesDoesNotCallAgain) {
  testing::WebhookReceiver api;
  api.SetDefaultStatus(503);
  fs::create_directories(dir_ / "wf");
  std::ofstream(dir_ / "wf" / "call-api.json") << json::serialize(pause_test::Workflow(
      "call-api", json::array{pause_test::Node(
                      "http", "core.http",
                      {{"url", api.Url("/api")},
                       {"method", "POST"},
                       {"retry", json::object{{"maxAttempts", 4}, {"backoffMs", 2000}}}})}));
  const std::vector<std::string> args{"--workflows-dir", (dir_ / "wf").string(),
                                      "--egress-allowlist", "127.0.0.1", "--egress-allow-http"};
  const uint16_t r0 = ServeNamed("r0", args);
  ServeNamed("r1", args);
  const int frozen = servers_[0].pid;
  HttpClient c0("127.0.0.1", r0);
  auto r = c0.Request("POST", "/v1/runs", R"({"workflowId":"call-api","inputs":{}})",
                      {{"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string id(r.Json().at("runId").as_string());
  ASSERT_EQ(api.WaitFor(1, std::chrono::seconds(10)), 1u);       // r0's first attempt
  ::kill(frozen, SIGSTOP);                                       // in its 2 s backoff
  // Frozen past the 1.5 s lease and past its backoff: how long is the scenario.
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  ::kill(frozen, SIGCONT);  // its backoff is over: it would attempt again now
  HttpClient c1 = Client(1);
  EXPECT_EQ(AwaitState(c1, id, "failed", std::chrono::seconds(40)), "failed") << Log(1);
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(2500));  // (r0's next backoff, if any)
  EXPECT_EQ(api.count(), 5u) << "r0 1 + r1 4 attempts\n" << Log(0);
  EXPECT_NE(Log(0).find("was taken over by another replica; this execution stops"),
            std::string::npos)
      << Log(0);
  for (auto& server : servers_)
    server.Kill(SIGKILL);  // (their pooled connections, before `api` goes)
}

// A rolling restart: each replica in turn gets SIGTERM while it executes runs, and starts
// again. Its leases are given up at once (the lease here is 30 s: only leaving explains a
// takeover within seconds), every run completes, each step once.
TEST_F(Replicas, ARollingRestartHandsRunsOverAtOnceAndLosesNothing) {
  constexpr int kTtl = 30000, kTicks = 15;
  for (size_t i = 0; i < 3; ++i) Serve(i, kTtl);
  std::vector<std::string> ids;
  for (size_t victim = 0; victim < 3; ++victim) {
    HttpClient c = Client(victim);
    std::vector<std::string> round;
    for (int k = 0; k < 4; ++k)
      round.push_back(
          StartTicker(c, "roll-" + std::to_string(victim) + "-" + std::to_string(k), kTicks, 100));
    EXPECT_TRUE(Ticked(c, round));  // executing there
    const auto stopped = Clock::now();
    servers_[victim].Kill(SIGTERM);  // (waits for it to exit)
    HttpClient other = Client((victim + 1) % 3);
    for (const auto& id : round)
      EXPECT_EQ(AwaitState(other, id, "completed", std::chrono::seconds(10)), "completed") << id;
    EXPECT_LT(Clock::now() - stopped, std::chrono::milliseconds(kTtl / 2))
        << "taken over only when the lease expired";
    ids.insert(ids.end(), round.begin(), round.end());
    Serve(victim, kTtl);
  }
  HttpClient c = Client(0);
  for (const auto& id : ids) {
    EXPECT_EQ(Chunks(Task(c, id)), static_cast<size_t>(kTicks)) << id;
    EXPECT_EQ(CountType(Events(c, id), "run.completed"), 1u) << id;
  }
}

TEST_F(Replicas, AKilledReplicasRunsGoOnElsewhereEachStepOnce) {
  Serve(0), Serve(1), Serve(2);
  HttpClient r0 = Client(0), r1 = Client(1);
  constexpr int kRuns = 6, kTicks = 12;
  std::vector<std::string> ids;
  for (int i = 0; i < kRuns; ++i) ids.push_back(StartTicker(r0, "kill-" + std::to_string(i), kTicks, 150));
  EXPECT_TRUE(Ticked(r0, ids, 2));  // a few ticks in
  const auto killed = Clock::now();
  servers_[0].Kill(SIGKILL);
  for (const auto& id : ids)
    EXPECT_EQ(AwaitState(r1, id, "completed", std::chrono::seconds(20)), "completed") << id;
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed);
  // Every tick once: the chunks of the artifact and the events of the log.
  for (const auto& id : ids) {
    const json::object task = Task(r1, id);
    EXPECT_EQ(Chunks(task), static_cast<size_t>(kTicks)) << id;
    const json::array log = Events(r1, id);
    for (size_t i = 0; i < log.size(); ++i)
      EXPECT_EQ(log[i].at("sequence").to_number<int64_t>(), static_cast<int64_t>(i));
    EXPECT_EQ(CountType(log, "run.completed"), 1u) << id;
  }
  // Taken over (the replicas say so), and in about the lease and the rest of the ticks.
  EXPECT_NE((Log(1) + Log(2)).find("takeover: run " + ids[0]), std::string::npos);
  EXPECT_LT(took.count(), kLeaseTtlMs + kTicks * 150 + 5000) << took.count();
  std::printf("takeover: %d runs completed %lld ms after the kill (lease %d ms)\n", kRuns,
              static_cast<long long>(took.count()), kLeaseTtlMs);
}

TEST_F(Replicas, AFrozenReplicasLateCommitsAreRefused) {
  Serve(0), Serve(1);
  HttpClient r0 = Client(0), r1 = Client(1);
  constexpr int kTicks = 10;
  const std::string id = StartTicker(r0, "frozen", kTicks, 200);
  ASSERT_TRUE(Ticked(r0, {id}));  // executing on r0
  ASSERT_EQ(::kill(servers_[0].pid, SIGSTOP), 0);
  // Past its lease: the other takes the run over and goes on.
  testing::WaitFor([&] { return Log(1).find("takeover: run " + id) != std::string::npos; },
                   std::chrono::seconds(15));
  ASSERT_NE(Log(1).find("takeover: run " + id), std::string::npos) << Log(1);
  const size_t taken_at = Chunks(Task(r1, id));
  EXPECT_TRUE(Ticked(r1, {id}, taken_at + 1));     // r1 goes on
  ASSERT_EQ(::kill(servers_[0].pid, SIGCONT), 0);  // its timers fire, its commits are refused
  EXPECT_EQ(AwaitState(r1, id, "completed", std::chrono::seconds(15)), "completed");
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(500));  // (for a late commit of r0's)
  EXPECT_EQ(Chunks(Task(r1, id)), static_cast<size_t>(kTicks));
  const json::array log = Events(r0, id);  // the thawed one answers reads, from the database
  EXPECT_EQ(CountType(log, "run.completed"), 1u);
  EXPECT_EQ(State(Task(r0, id)), "completed");
}

TEST_F(Replicas, ACancelOnAnotherReplicaStopsTheRunWhereItExecutes) {
  Serve(0), Serve(1);
  HttpClient r0 = Client(0), r1 = Client(1);
  const std::string id = StartTicker(r0, "cancel-me", 100, 100);
  ASSERT_TRUE(Ticked(r0, {id}));  // executing on r0
  auto cancel = r1.Rpc("tasks/cancel", json::object{{"id", id}});
  ASSERT_EQ(cancel.at("result").at("status").at("state"), "canceled") << cancel;
  const size_t events = Events(r1, id).size();
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(600));  // 6 ticks' worth
  EXPECT_EQ(Events(r1, id).size(), events) << "the run went on after its cancel";
  EXPECT_EQ(State(Task(r0, id)), "canceled");
}

TEST_F(Replicas, AnEventPostedToAnyReplicaResumesARunPausedOnAnother) {
  Serve(0), Serve(1);
  HttpClient r0 = Client(0), r1 = Client(1);
  auto sent = r0.Rpc(
      "message/send",
      json::object{{"configuration", json::object{{"blocking", false}}},
                   {"message", Message("ev-1", json::array{Text("wait")}, "", "await-event")}});
  const std::string id(sent.at("result").at("id").as_string());
  auto status = [&](HttpClient& c) {
    auto r = c.Request("GET", "/v1/runs/" + id);
    return r.status == 200 ? std::string(r.Json().at("status").as_string()) : std::string();
  };
  testing::WaitFor([&] { return status(r0) == "paused"; });
  ASSERT_EQ(status(r0), "paused");
  auto posted = r1.Request("POST", "/v1/events", R"({"name":"build.done","payload":{"ok":true}})",
                           {{"Content-Type", "application/json"}});
  ASSERT_EQ(posted.status, 200) << posted.body;
  EXPECT_EQ(posted.Json().at("resumed"), (json::array{json::value(id)})) << posted.body;
  EXPECT_EQ(AwaitState(r0, id, "completed", std::chrono::seconds(10)), "completed");
  // Once: posted again, it resumes nothing.
  auto again = r0.Request("POST", "/v1/events", R"({"name":"build.done"})",
                          {{"Content-Type", "application/json"}});
  EXPECT_TRUE(again.Json().at("resumed").as_array().empty()) << again.body;
}

// The database goes away under load (connections cut, new ones refused: a restart or a
// failover), then comes back: every run goes on from its last committed step, each step once.
// Shorter than the leases (each replica executes its runs again itself), and longer (the
// registrations expired: the replicas take each other's runs over, fenced).
TEST_F(Replicas, ADatabaseOutageUnderLoadLosesNothing) {
  Serve(0), Serve(1);
  constexpr int kTicks = 20;
  const std::string db = test::PgQuery(url_, "SELECT current_database()");
  const std::string admin = test::FreshPgDatabase();
  HttpClient r1 = Client(1);
  for (int outage_ms : {600, kLeaseTtlMs + 1000}) {
    std::vector<std::string> ids;
    for (int i = 0; i < 6; ++i) {
      HttpClient c = Client(i % 2);
      ids.push_back(StartTicker(c, "outage-" + std::to_string(outage_ms) + "-" + std::to_string(i),
                                kTicks, 100));
    }
    EXPECT_TRUE(Ticked(r1, ids));  // under way
    test::PgQuery(admin, "ALTER DATABASE \"" + db + "\" ALLOW_CONNECTIONS false");
    test::PgQuery(
        admin, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" +
                   db + "'");
    std::this_thread::sleep_for(std::chrono::milliseconds(outage_ms));  // the outage: the test
    test::PgQuery(admin, "ALTER DATABASE \"" + db + "\" ALLOW_CONNECTIONS true");
    for (const auto& id : ids) {
      EXPECT_EQ(AwaitState(r1, id, "completed", std::chrono::seconds(20)), "completed")
          << id << " after an outage of " << outage_ms << " ms";
      EXPECT_EQ(Chunks(Task(r1, id)), static_cast<size_t>(kTicks)) << id;
      const json::array log = Events(r1, id);
      for (size_t i = 0; i < log.size(); ++i)
        EXPECT_EQ(log[i].at("sequence").to_number<int64_t>(), static_cast<int64_t>(i));
      EXPECT_EQ(CountType(log, "run.completed"), 1u) << id;
    }
  }
}

// The pools exhausted: every connection of both replicas stuck behind a lock on the tasks
// table for 3 s (twice the lease TTL), with more requests waiting than the pools hold. The
// heartbeats go on (another table), so no run changes hands; the probes are answered; once
// the lock goes every request is answered and every run completes, each tick once.
TEST_F(Replicas, EveryConnectionStuckBehindALockLosesNothing) {
  Serve(0), Serve(1);
  constexpr int kTicks = 15;
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    HttpClient c = Client(i % 2);
    ids.push_back(StartTicker(c, "stuck-" + std::to_string(i), kTicks, 100));
  }
  {
    HttpClient r0 = Client(0);
    EXPECT_TRUE(Ticked(r0, ids));  // under way
  }
  std::thread lock([&] {
    test::PgQuery(url_, "BEGIN; LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE;"
                        " SELECT pg_sleep(3); COMMIT");
  });
  EXPECT_TRUE(SessionWaits("sleep")) << "the table is locked";
  std::atomic<int> answered{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 12; ++i)
    readers.emplace_back([&, i] {
      HttpClient c = Client(static_cast<size_t>(i % 2));
      if (c.Request("GET", "/v1/runs/" + ids[static_cast<size_t>(i) % ids.size()]).status == 200)
        ++answered;
    });
  for (size_t s = 0; s < 2; ++s) {
    HttpClient c = Client(s);
    EXPECT_EQ(c.Request("GET", "/healthz").status, 200) << "replica " << s;
  }
  lock.join();
  for (auto& t : readers) t.join();
  EXPECT_EQ(answered.load(), 12);
  HttpClient r1 = Client(1);
  for (const auto& id : ids) {
    EXPECT_EQ(AwaitState(r1, id, "completed", std::chrono::seconds(30)), "completed") << id;
    EXPECT_EQ(Chunks(Task(r1, id)), static_cast<size_t>(kTicks)) << id;
    const json::array log = Events(r1, id);
    for (size_t i = 0; i < log.size(); ++i)
      EXPECT_EQ(log[i].at("sequence").to_number<int64_t>(), static_cast<int64_t>(i));
    EXPECT_EQ(CountType(log, "run.completed"), 1u) << id;
  }
  for (size_t s = 0; s < 2; ++s)
    EXPECT_EQ(Log(s).find("takeover"), std::string::npos) << "replica " << s << ": " << Log(s);
}

// A rolling deploy: the run's skill is served by no replica left alive. The one that finds
// the orphan gives it back at every look, and says so once; a replica that serves the skill
// takes it and executes it.
TEST_F(Replicas, ARunNoReplicaServesIsGivenBackQuietlyUntilOneDoes) {
  Serve(0);
  HttpClient r0 = Client(0);
  auto sent = r0.Request("POST", "/v1/runs", R"({"workflowId":"long-delay","inputs":{}})",
                         {{"Content-Type", "application/json"}});
  ASSERT_EQ(sent.status, 201) << sent.body;
  const std::string id(sent.Json().at("runId").as_string());
  servers_[0].Kill(SIGKILL);
  fs::create_directories(dir_ / "no-workflows");
  ServeNamed("r1", {"--workflows-dir", (dir_ / "no-workflows").string()});
  // Several looks: it says so once.
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(3 * kLeaseTtlMs));
  const std::string log = Log(1);
  size_t said = 0;
  for (size_t at = log.find("is not served here"); at != std::string::npos;
       at = log.find("is not served here", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << log;
  ServeNamed("r2", {"--workflows-dir", std::string(A2AD_SOURCE_DIR) + "/workflows"});
  testing::WaitFor([&] { return Log(2).find("takeover: run " + id) != std::string::npos; });
  EXPECT_NE(Log(2).find("takeover: run " + id), std::string::npos) << Log(2);
}

// A push config set through one replica for a run executing on another is the executing
// replica's to push by (it reads what the other set when the feed brings the commit).
TEST_F(Replicas, APushConfigSetOnOneReplicaIsPushedByTheOneExecuting) {
  const std::vector<std::string> push{"--push-allow-http", "--push-allowlist", "127.0.0.1/32",
                                      "--push-max-attempts", "1"};
  Serve(0, kLeaseTtlMs, push), Serve(1, kLeaseTtlMs, push);
  HttpClient r0 = Client(0), r1 = Client(1);
  const std::string id = StartTicker(r0, "pushed", 10, 100);
  ASSERT_TRUE(Ticked(r0, {id}));  // executing on r0
  auto set = SetHook(r1, id);
  ASSERT_TRUE(set.as_object().contains("result")) << set;
  EXPECT_EQ(AwaitState(r0, id, "completed", std::chrono::seconds(10)), "completed");
  // The run's completion was pushed (a row of the outbox, whatever its delivery's fate).
  EXPECT_NE(OutboxRows(id, "hook"), "0") << Log(0);
}

// A push config or webhook deleted (or a webhook registered) through one replica is known to
// the one executing at once (the change feed), not at its next resync or restart.
TEST_F(Replicas, APushConfigOrWebhookChangedOnOneReplicaIsKnownToTheOneExecutingAtOnce) {
  const std::vector<std::string> push{"--push-allow-http",    "--push-allowlist",
                                      "127.0.0.1/32",         "--push-max-attempts",
                                      "1",                    "--webhook-allow-http",
                                      "--webhook-allowlist",  "127.0.0.1/32"};
  Serve(0, kLeaseTtlMs, push), Serve(1, kLeaseTtlMs, push);
  HttpClient r0 = Client(0), r1 = Client(1);
  // A config set, then deleted, through r1 while r0 executes: r0's completion pushes nothing
  // to it (it used to make a row, dead-lettered at delivery as "deleted").
  const std::string id = StartTicker(r0, "unpushed", 12, 100);
  auto set = SetHook(r1, id);
  ASSERT_TRUE(set.as_object().contains("result")) << set;
  // r0 reads it (the feed; a fixed wait: nothing outside r0 shows that it has read it).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto del = r1.Rpc("tasks/pushNotificationConfig/delete",
                    json::object{{"id", id}, {"pushNotificationConfigId", "hook"}});
  ASSERT_TRUE(del.as_object().contains("result")) << del;
  EXPECT_EQ(AwaitState(r0, id, "completed", std::chrono::seconds(10)), "completed");
  EXPECT_EQ(OutboxRows(id, "hook"), "0") << Log(0);

  // A webhook registered through r1: a run r0 executes right after pushes to it; deleted
  // through r1: the next run r0 executes does not. (Each well within the 5 s resync.)
  auto hook = r1.Request("POST", "/v1/webhooks",
                         R"({"url":"http://127.0.0.1:9/wh","events":["run.completed"]})");
  ASSERT_EQ(hook.status, 201) << hook.body;
  const std::string hook_id(hook.Json().at("webhookId").as_string());
  const std::string first = StartTicker(r0, "webhooked", 2, 50);
  EXPECT_EQ(AwaitState(r0, first, "completed", std::chrono::seconds(5)), "completed");
  EXPECT_NE(OutboxRows(first, hook_id), "0") << Log(0);
  ASSERT_EQ(r1.Request("DELETE", "/v1/webhooks/" + hook_id).status, 204);
  // "At once": within this (a fixed wait, as nothing outside r0 shows that it knows).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string second = StartTicker(r0, "unwebhooked", 2, 50);
  EXPECT_EQ(AwaitState(r0, second, "completed", std::chrono::seconds(5)), "completed");
  EXPECT_EQ(OutboxRows(second, hook_id), "0") << Log(0);
}

TEST_F(Replicas, AnIdempotentSendRacedOnTwoReplicasMakesOneTask) {
  Serve(0), Serve(1);
  for (int round = 0; round < 5; ++round) {
    const std::string mid = "race-" + std::to_string(round);
    std::string a, b;
    auto send = [&](size_t i, std::string& out) {
      HttpClient c = Client(i);
      auto r = c.Rpc("message/send",
                     json::object{{"configuration", json::object{{"blocking", false}}},
                                  {"message", Message(mid, json::array{Text("/echo hi")})}});
      if (r.as_object().contains("result")) out = std::string(r.at("result").at("id").as_string());
    };
    std::thread t1([&] { send(0, a); }), t2([&] { send(1, b); });
    t1.join();
    t2.join();
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, b) << "round " << round;
  }
}

// The README's recipe: three replicas behind HAProxy (health-checking /readyz).
TEST(ReplicasBehindHaproxy, AGatedRunThroughTheBalancerCompletesAndEveryReplicaReadsIt) {
  if (std::system("command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy") != 0)
    GTEST_SKIP() << "haproxy is not installed (scripts/bootstrap.sh installs it)";
  // (Short: the database's unix socket path lives under it.)
  const fs::path dir = fs::path("/tmp") / ("a2ad-lb-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string script = std::string(A2AD_SOURCE_DIR) + "/scripts/cluster-demo.sh";
  int code = -1;
  const std::string out = testing::RunCommand(
      "A2AD_BIN=" + testing::A2adBinary() + " A2AD_SERVE_ARGS=--conformance-fixtures bash " + script + " start " + dir.string() + " 2>&1",
      &code);
  ASSERT_EQ(code, 0) << out;
  struct Stop {
    std::string cmd;
    ~Stop() { (void)std::system(cmd.c_str()); }
  } stop{"bash " + script + " stop " + dir.string() + " >/dev/null 2>&1"};
  std::map<std::string, std::string> env;
  {
    std::ifstream in(dir / "env");
    for (std::string line; std::getline(in, line);)
      if (auto eq = line.find('='); eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  auto port_of = [](const std::string& url) {
    return static_cast<uint16_t>(std::stoi(url.substr(url.rfind(':') + 1)));
  };
  HttpClient lb("127.0.0.1", port_of(env["BALANCER_URL"]));
  // The card points at the balancer.
  auto card = lb.Request("GET", "/.well-known/agent-card.json").Json();
  ASSERT_TRUE(card.as_object().contains("url")) << card << out;
  EXPECT_EQ(card.at("url"), json::value(env["BALANCER_URL"] + "/v1/a2a"));
  auto gate = lb.Rpc("message/send",
                     json::object{{"message", Message("lb-gate", json::array{Text("go")}, "", "conformance-approval")}});
  ASSERT_EQ(gate.at("result").at("status").at("state"), "input-required") << gate;
  const std::string id(gate.at("result").at("id").as_string());
  auto answer = lb.Rpc("message/send",
                       json::object{{"message", Message("lb-gate-answer",
                                                        json::array{Data({{"action", "accept"}})}, id)}});
  ASSERT_TRUE(answer.as_object().contains("result")) << answer;
  std::istringstream urls(env["REPLICA_URLS"]);
  std::string url;
  int replicas = 0;
  while (urls >> url) {
    if (url.back() == '\\') url.pop_back();
    HttpClient c("127.0.0.1", port_of(url));
    const std::string state = testing::PollUntil(
        [&] {
          auto t = c.Rpc("tasks/get", json::object{{"id", id}});
          return std::string(t.at("result").at("status").at("state").as_string());
        },
        [](const std::string& s) { return s == "completed"; });
    EXPECT_EQ(state, "completed") << url;
    ++replicas;
  }
  EXPECT_EQ(replicas, 3);
}

}  // namespace
}  // namespace a2ad
