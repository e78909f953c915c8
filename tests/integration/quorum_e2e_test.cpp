// Quorum approvals and approver restrictions through the real binary over loopback HTTP, on a
// real SQLite data directory, one API key per approver (`a2ad keys create`): the bundled
// conformance-interrupt-quorum (3 approvals, majority) answered on the OpenWOP REST route and
// by A2A messages into the task; a repeated vote is idempotent, a changed one refused; the
// server SIGKILLed between votes loses none; development mode and interrupt tokens cannot
// vote; a gate restricted to a list, a group or a role refuses everyone else and writes
// nothing. Event counts are read from GET /v1/runs/{id}/events/poll?lastSequence=-1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "http_client.hpp"
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

const std::string kBinary = testing::A2adBinary();
const std::string kQuorumWorkflow =
    std::string(A2AD_SOURCE_DIR) + "/workflows/conformance/conformance-interrupt-quorum.json";
const char* kVoterScopes = "runs:read,runs:write,interrupts:resolve,tasks:read,tasks:write";

struct Command {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// `a2ad <args>`: exit code, stdout and stderr.
Command RunA2ad(const std::string& args, const fs::path& scratch) {
  const fs::path err = scratch / "command.err";
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
  return c;
}

// The principal id of a key (what approversList names and decidedBy records).
std::string IdOf(const std::string& key) { return key.substr(7, 16); }

json::object GateNode(const std::string& title, json::object policy) {
  json::object config{{"title", title}, {"actions", json::array{"accept", "reject", "ask"}}};
  for (auto& kv : policy) config[kv.key()] = kv.value();
  return json::object{{"id", "gate"},
                      {"typeId", "core.approvalGate"},
                      {"name", title},
                      {"config", std::move(config)},
                      {"inputs", json::object()}};
}

json::object WorkflowDoc(const std::string& id, json::object node) {
  return json::object{{"id", id},
                      {"name", id},
                      {"version", "1.0"},
                      {"nodes", json::array{std::move(node)}},
                      {"edges", json::array()},
                      {"triggers", json::array()},
                      {"variables", json::array()},
                      {"metadata", json::object{{"tags", json::array{"test"}}}},
                      {"settings", json::object()}};
}

class QuorumE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-quorum");
    data_ = dir_ / "data";
    workflows_ = dir_ / "workflows";
    fs::create_directories(data_);
    fs::create_directories(workflows_);
    fs::copy_file(kQuorumWorkflow, workflows_ / "conformance-interrupt-quorum.json");
  }
  void TearDown() override {
    client_.reset();
    if (server_.pid > 0) server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  std::string CreateKey(const std::string& scopes, std::string* err = nullptr) {
    Command c = RunA2ad(
        "keys create --data-dir " + data_.string() + " --tenant acme --scopes " + scopes, dir_);
    EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
    if (err) *err = c.err;
    return c.out.substr(0, c.out.find('\n'));
  }
  void AddWorkflow(const json::object& doc) {
    std::ofstream(workflows_ / (std::string(doc.at("id").as_string()) + ".json"))
        << json::serialize(doc);
  }
  void Start() {
    server_ =
        ServerProcess::Start(kBinary, data_.string(), {"--workflows-dir", workflows_.string()});
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  void KillAndRestart() {
    client_.reset();
    server_.Kill(SIGKILL);
    Start();
  }

  ClientResponse As(const std::string& key, const std::string& method, const std::string& target,
                    const json::value& body = nullptr, Headers h = {}) {
    if (!key.empty()) h.emplace_back("Authorization", "Bearer " + key);
    std::string text;
    if (!body.is_null()) {
      h.emplace_back("Content-Type", "application/json");
      text = json::serialize(body);
    }
    return client_->Request(method, target, text, h);
  }
  std::string StartRun(const std::string& key, const std::string& workflow) {
    auto r = As(key, "POST", "/v1/runs", json::object{{"workflowId", workflow}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.status == 201 ? std::string(r.Json().at("runId").as_string()) : "";
  }
  ClientResponse Vote(const std::string& key, const std::string& run, const json::value& answer) {
    return As(key, "POST", "/v1/runs/" + run + "/interrupts/gate",
              json::object{{"resumeValue", answer}});
  }
  json::object Run(const std::string& key, const std::string& run) {
    auto r = As(key, "GET", "/v1/runs/" + run);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.Json().as_object();
  }
  // Waits (bounded, not timed) until the run's status is `status`.
  json::object WaitStatus(const std::string& key, const std::string& run,
                          const std::string& status) {
    auto is = [&](const json::object& v) { return v.at("status") == json::value(status); };
    json::object v =
        testing::PollUntil([&] { return Run(key, run); }, is, std::chrono::seconds(20));
    if (!is(v))
      ADD_FAILURE() << "run " << run << " never became " << status << ": " << json::serialize(v);
    return v;
  }
  std::vector<json::object> Events(const std::string& key, const std::string& run) {
    auto r = As(key, "GET", "/v1/runs/" + run + "/events/poll?lastSequence=-1&timeout=0");
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<json::object> out;
    const json::value page = r.Json();
    for (const auto& e : page.at("events").as_array()) out.push_back(e.as_object());
    return out;
  }
  static size_t Count(const std::vector<json::object>& evs, std::string_view type) {
    size_t n = 0;
    for (const auto& e : evs) n += e.at("type") == json::value(type) ? 1 : 0;
    return n;
  }
  static const json::object* Find(const std::vector<json::object>& evs, std::string_view type) {
    for (const auto& e : evs)
      if (e.at("type") == json::value(type)) return &e;
    return nullptr;
  }
  // A2A v1.0 SendMessage as `key`: a data part, into `task` (else a new task of `skill`).
  json::value Send(const std::string& key, const std::string& message_id, json::object data,
                   const std::string& task, const std::string& skill = "") {
    json::object msg{{"messageId", message_id},
                     {"role", "ROLE_USER"},
                     {"parts", json::array{json::object{{"data", std::move(data)}}}}};
    if (!task.empty()) msg["taskId"] = task;
    if (!skill.empty()) msg["metadata"] = json::object{{"skillId", skill}};
    json::object rpc{{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "SendMessage"},
                     {"params", json::object{{"message", std::move(msg)}}}};
    return As(key, "POST", "/v1/a2a", rpc, {{"A2A-Version", "1.0"}}).Json();
  }
  static json::object TaskOf(const json::value& answer) {
    EXPECT_TRUE(answer.as_object().contains("result")) << json::serialize(answer);
    if (!answer.as_object().contains("result")) return {};
    return answer.at("result").at("task").as_object();
  }
  static std::string StatusText(const json::object& task) {
    std::string text;
    if (auto* m = task.at("status").as_object().if_contains("message"))
      for (const auto& p : m->at("parts").as_array())
        if (p.as_object().contains("text")) text += p.at("text").as_string();
    return text;
  }

  fs::path dir_, data_, workflows_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

const json::value kAccept = json::parse(R"({"action": "accept"})");
const json::value kReject = json::parse(R"({"action": "reject", "feedback": "not yet"})");

TEST_F(QuorumE2E, RestVotesReachTheQuorumOncePerApproverAndNoTokenVotes) {
  const std::string a = CreateKey(kVoterScopes), b = CreateKey(kVoterScopes),
                    c = CreateKey(kVoterScopes);
  Start();
  const std::string run = StartRun(a, "conformance-interrupt-quorum");
  WaitStatus(a, run, "waiting-approval");
  auto first = Vote(a, run, kAccept);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.Json().at("status"), "waiting-approval");
  EXPECT_EQ(first.Json().at("quorum").at("accepts"), 1);
  EXPECT_EQ(first.Json().at("quorum").at("required"), 3);
  // The same approver again: 200 with the same tally, nothing logged.
  const size_t logged = Events(a, run).size();
  auto again = Vote(a, run, kAccept);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(again.Json().at("quorum").at("accepts"), 1);
  EXPECT_EQ(again.Json().at("quorum").at("votes").as_array().size(), 1u);
  // Changing it: refused, 409.
  auto changed = Vote(a, run, kReject);
  EXPECT_EQ(changed.status, 409) << changed.body;
  EXPECT_EQ(changed.Json().at("error"), "conflict");
  EXPECT_NE(changed.body.find("already voted accept"), std::string::npos) << changed.body;
  // The interrupt token is one bearer credential, not an approver.
  const std::string token(Run(a, run).at("interrupt").at("interruptToken").as_string());
  auto by_token = As(b, "POST", "/v1/interrupts/" + token, json::object{{"resumeValue", kAccept}});
  EXPECT_EQ(by_token.status, 403) << by_token.body;
  EXPECT_EQ(by_token.Json().at("error"), "forbidden");
  EXPECT_NE(by_token.body.find("interrupt token"), std::string::npos) << by_token.body;
  EXPECT_EQ(Events(a, run).size(), logged);

  auto second = Vote(b, run, kAccept);
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(second.Json().at("status"), "waiting-approval");
  EXPECT_EQ(second.Json().at("quorum").at("accepts"), 2);
  EXPECT_EQ(Run(a, run).at("status"), "waiting-approval");
  auto third = Vote(c, run, kAccept);
  ASSERT_EQ(third.status, 200) << third.body;
  EXPECT_FALSE(third.Json().as_object().contains("quorum"));
  WaitStatus(a, run, "completed");
  const auto evs = Events(a, run);
  EXPECT_EQ(Count(evs, "a2ad.approval.vote"), 2u);
  ASSERT_EQ(Count(evs, "approval.received"), 1u);
  const json::object& received = Find(evs, "approval.received")->at("payload").as_object();
  EXPECT_EQ(received.at("decidedBy"), json::value(IdOf(c)));
  const json::array& votes = received.at("quorum").at("votes").as_array();
  ASSERT_EQ(votes.size(), 3u);
  EXPECT_EQ(votes[0].at("principal"), json::value(IdOf(a)));
  EXPECT_EQ(votes[1].at("principal"), json::value(IdOf(b)));
  // A vote after the gate closed is too late.
  EXPECT_EQ(Vote(b, run, kAccept).status, 409);
}

TEST_F(QuorumE2E, AMajorityOfRejectsFailsTheRun) {
  const std::string a = CreateKey(kVoterScopes), b = CreateKey(kVoterScopes);
  Start();
  const std::string run = StartRun(a, "conformance-interrupt-quorum");
  WaitStatus(a, run, "waiting-approval");
  auto first = Vote(a, run, kReject);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.Json().at("quorum").at("rejects"), 1);
  ASSERT_EQ(Vote(b, run, kReject).status, 200);
  const json::object failed = WaitStatus(a, run, "failed");
  EXPECT_EQ(failed.at("error").at("code"), "approval_rejected");
  const auto evs = Events(a, run);
  const json::object& received = Find(evs, "approval.received")->at("payload").as_object();
  EXPECT_EQ(received.at("action"), "reject");
  EXPECT_EQ(received.at("quorum").at("reason"), "majority");
}

TEST_F(QuorumE2E, VotesSurviveASigkillBetweenThem) {
  const std::string a = CreateKey(kVoterScopes), b = CreateKey(kVoterScopes),
                    c = CreateKey(kVoterScopes);
  Start();
  const std::string run = StartRun(a, "conformance-interrupt-quorum");
  WaitStatus(a, run, "waiting-approval");
  ASSERT_EQ(Vote(a, run, kAccept).status, 200);
  ASSERT_EQ(Vote(b, run, kAccept).status, 200);  // acknowledged: durable
  KillAndRestart();
  const json::object parked = WaitStatus(a, run, "waiting-approval");
  EXPECT_EQ(parked.at("interrupt").at("quorum").at("accepts"), 2);
  // Both earlier votes still count: a and b are known voters, c closes the quorum.
  auto repeat = Vote(b, run, kAccept);
  ASSERT_EQ(repeat.status, 200) << repeat.body;
  EXPECT_EQ(repeat.Json().at("quorum").at("accepts"), 2);
  EXPECT_EQ(Vote(a, run, kReject).status, 409);
  ASSERT_EQ(Vote(c, run, kAccept).status, 200);
  WaitStatus(a, run, "completed");
  KillAndRestart();
  const auto evs = Events(a, run);
  EXPECT_EQ(Count(evs, "a2ad.approval.vote"), 2u);
  EXPECT_EQ(Count(evs, "approval.received"), 1u);
  EXPECT_EQ(Run(a, run).at("status"), "completed");
}

TEST_F(QuorumE2E, A2aRepliesVoteAndTheTaskSaysTheTally) {
  const std::string a = CreateKey(kVoterScopes), b = CreateKey(kVoterScopes),
                    c = CreateKey(kVoterScopes);
  Start();
  const json::object started = TaskOf(Send(a, "start", {}, "", "conformance-interrupt-quorum"));
  ASSERT_EQ(started.at("status").at("state"), "TASK_STATE_INPUT_REQUIRED");
  const std::string task(started.at("id").as_string());
  json::object t = TaskOf(Send(a, "a-vote", {{"action", "accept"}}, task));
  EXPECT_EQ(t.at("status").at("state"), "TASK_STATE_INPUT_REQUIRED");
  EXPECT_NE(StatusText(t).find("1 of 3 approvals"), std::string::npos) << json::serialize(t);
  EXPECT_EQ(t.at("metadata").at("openwop").at("interrupt").at("quorum").at("accepts"), 1);
  // The same approver again, under another messageId: the same task, nothing logged.
  const size_t logged = Events(a, task).size();
  json::object same = TaskOf(Send(a, "a-vote-again", {{"action", "accept"}}, task));
  EXPECT_EQ(same.at("metadata").at("openwop").at("interrupt").at("quorum").at("accepts"), 1);
  EXPECT_EQ(Events(a, task).size(), logged);
  json::value changed = Send(a, "a-changes", {{"action", "reject"}}, task);
  ASSERT_TRUE(changed.as_object().contains("error")) << json::serialize(changed);

  t = TaskOf(Send(b, "b-vote", {{"approve", true}}, task));
  EXPECT_EQ(t.at("status").at("state"), "TASK_STATE_INPUT_REQUIRED");
  EXPECT_NE(StatusText(t).find("2 of 3 approvals"), std::string::npos) << json::serialize(t);
  t = TaskOf(Send(c, "c-vote", {{"action", "accept"}}, task));
  EXPECT_EQ(t.at("status").at("state"), "TASK_STATE_COMPLETED") << json::serialize(t);
  const auto evs = Events(a, task);
  EXPECT_EQ(Find(evs, "approval.received")->at("payload").at("decidedBy"), json::value(IdOf(c)));
}

TEST_F(QuorumE2E, DevelopmentModeRefusesQuorumVotesNamingAuthentication) {
  Start();  // no key: every caller is `anonymous`
  const std::string run = StartRun("", "conformance-interrupt-quorum");
  WaitStatus("", run, "waiting-approval");
  const size_t logged = Events("", run).size();
  for (int i = 0; i < 3; ++i) {
    auto r = Vote("", run, kAccept);
    ASSERT_EQ(r.status, 403) << r.body;
    EXPECT_EQ(r.Json().at("error"), "forbidden");
    EXPECT_NE(r.body.find("a2ad keys create"), std::string::npos) << r.body;
  }
  json::value rpc = Send("", "anon-vote", {{"action", "accept"}}, run);
  ASSERT_TRUE(rpc.as_object().contains("error")) << json::serialize(rpc);
  EXPECT_EQ(rpc.at("error").at("code"), -32015);
  EXPECT_NE(json::serialize(rpc).find("approver_authentication_required"), std::string::npos);
  EXPECT_EQ(Events("", run).size(), logged);
  EXPECT_EQ(Run("", run).at("status"), "waiting-approval");
}

TEST_F(QuorumE2E, RestrictedGatesTakeListedGroupedOrRoledApproversOnly) {
  std::string warned;
  const std::string listed = CreateKey(kVoterScopes);
  const std::string finance = CreateKey(std::string(kVoterScopes) + ",group:finance", &warned);
  EXPECT_EQ(warned.find("warning"), std::string::npos) << warned;  // group:<name> is known
  const std::string cfo = CreateKey(std::string(kVoterScopes) + ",role:cfo");
  const std::string outsider = CreateKey(std::string(kVoterScopes) + ",group:ops");
  const std::string admin = CreateKey("admin");
  std::string bare_warning;
  CreateKey("finance", &bare_warning);
  EXPECT_NE(bare_warning.find("warning"), std::string::npos) << bare_warning;
  AddWorkflow(WorkflowDoc(
      "pay-gate", GateNode("Pay the invoice?",
                           json::object{{"approversList", json::array{json::value(IdOf(listed))}},
                                        {"approverGroupRefs", json::array{"finance"}},
                                        {"approverRoleRefs", json::array{"cfo"}}})));
  AddWorkflow(WorkflowDoc("board-gate",
                          GateNode("Approve the budget?",
                                   json::object{{"requiredApprovals", 2},
                                                {"approverRoleRefs", json::array{"cfo"}},
                                                {"approverGroupRefs", json::array{"finance"}}})));
  Start();
  EXPECT_EQ(As(admin, "GET", "/.well-known/openwop")
                .Json()
                .at("interrupt")
                .at("approverRouting")
                .at("refKinds"),
            json::parse(R"(["group", "role"])"));

  // Single approval restricted to a list, a group and a role: each of them may answer.
  for (const std::string* who : {&listed, &finance, &cfo}) {
    const std::string run = StartRun(admin, "pay-gate");
    WaitStatus(admin, run, "waiting-approval");
    const size_t logged = Events(admin, run).size();
    for (const std::string* refused : {&outsider, &admin}) {
      auto r = Vote(*refused, run, kAccept);
      ASSERT_EQ(r.status, 403) << r.body;
      EXPECT_EQ(r.Json().at("error"), "forbidden");
      EXPECT_NE(r.body.find("may not answer approval gate 'gate'"), std::string::npos) << r.body;
      EXPECT_NE(r.body.find("finance"), std::string::npos) << r.body;
      json::value rpc = Send(*refused, "no-" + run, {{"action", "ask"}}, run);
      ASSERT_TRUE(rpc.as_object().contains("error")) << json::serialize(rpc);
      EXPECT_EQ(rpc.at("error").at("code"), -32015);
    }
    EXPECT_EQ(Events(admin, run).size(), logged);
    EXPECT_EQ(Run(admin, run).at("status"), "waiting-approval");
    ASSERT_EQ(Vote(*who, run, kAccept).status, 200);
    WaitStatus(admin, run, "completed");
  }

  // A quorum of two among the finance group and the cfo role, by A2A messages.
  const json::object started = TaskOf(Send(cfo, "board", {}, "", "board-gate"));
  const std::string task(started.at("id").as_string());
  json::value refused = Send(outsider, "o-vote", {{"action", "accept"}}, task);
  ASSERT_TRUE(refused.as_object().contains("error")) << json::serialize(refused);
  EXPECT_EQ(refused.at("error").at("code"), -32015);
  EXPECT_NE(json::serialize(refused).find("not_an_approver"), std::string::npos);
  json::object t = TaskOf(Send(finance, "f-vote", {{"action", "accept"}}, task));
  EXPECT_EQ(t.at("status").at("state"), "TASK_STATE_INPUT_REQUIRED");
  t = TaskOf(Send(cfo, "c-vote", {{"action", "accept"}}, task));
  EXPECT_EQ(t.at("status").at("state"), "TASK_STATE_COMPLETED") << json::serialize(t);
}

}  // namespace
}  // namespace a2ad
