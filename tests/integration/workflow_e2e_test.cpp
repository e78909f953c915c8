// The engine end to end with the real binary over loopback HTTP: the RFC 0100 positive
// example (send, caller leaves, run parks at an approval gate, tasks/get shows it,
// resubscribe, approve by message, complete), the same across a SIGKILL while parked and
// while a durable timer is pending, and each bundled conformance workflow reaching the
// outcome DIGEST §5.3 gives for it through the REST surface.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <set>
#include <thread>

#include "http_client.hpp"
#include "sse_client.hpp"
#include "test_paths.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using testing::HttpClient;
using testing::ServerProcess;
using testing::SseClient;

const std::string kBinary = testing::A2adBinary();
const std::string kWorkflows = std::string(A2AD_SOURCE_DIR) + "/workflows";

class WorkflowE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-wf");
    Start();
  }
  void TearDown() override {
    server_.Kill(SIGKILL);
    fs::remove_all(dir_);
  }
  void Start() {
    server_ = ServerProcess::Start(kBinary, dir_.string(),
                                   {"--workflows-dir", kWorkflows, "--conformance-fixtures"});
    client_ = std::make_unique<HttpClient>("127.0.0.1", server_.port);
  }
  void Restart() {
    client_.reset();
    server_.Kill(SIGKILL);
    Start();
  }
  json::value Get(const std::string& target) { return client_->Request("GET", target).Json(); }
  testing::ClientResponse Post(const std::string& target, const json::value& body,
                               std::vector<std::pair<std::string, std::string>> headers = {}) {
    headers.emplace_back("Content-Type", "application/json");
    return client_->Request("POST", target, json::serialize(body), headers);
  }
  json::object Task(const std::string& id) {
    auto r = client_->Rpc("tasks/get", json::object{{"id", id}});
    return r.at("result").as_object();
  }
  // Waits (bounded, not timed) until `pred` holds for the JSON at `target`.
  json::value WaitFor(const std::string& target,
                      const std::function<bool(const json::value&)>& pred) {
    json::value v = testing::PollUntil([&] { return Get(target); }, pred, std::chrono::seconds(20));
    if (!pred(v))
      ADD_FAILURE() << "condition never held for " << target << ": " << json::serialize(v);
    return v;
  }
  json::value WaitStatus(const std::string& run_id, const std::string& status) {
    return WaitFor("/v1/runs/" + run_id, [&](const json::value& v) {
      return v.as_object().contains("status") && v.at("status") == json::value(status);
    });
  }
  std::string StartRun(const std::string& workflow, json::object inputs = {}) {
    auto r = Post("/v1/runs", json::object{{"workflowId", workflow}, {"inputs", inputs}});
    EXPECT_EQ(r.status, 201) << r.body;
    return std::string(r.Json().at("runId").as_string());
  }
  std::vector<json::object> Events(const std::string& run_id) {
    std::vector<json::object> out;
    auto v = Get("/v1/runs/" + run_id + "/events/poll?lastSequence=0&timeout=0");
    for (const auto& e : v.at("events").as_array()) out.push_back(e.as_object());
    return out;
  }
  static size_t Count(const std::vector<json::object>& evs, std::string_view type,
                      std::string_view node = "") {
    size_t n = 0;
    for (const auto& e : evs)
      if (e.at("type") == json::value(type) &&
          (node.empty() || (e.contains("nodeId") && e.at("nodeId") == json::value(node))))
        ++n;
    return n;
  }
  json::object SendParams(const std::string& message_id, json::object part,
                          const std::string& skill = "", const std::string& task_id = "",
                          bool blocking = false) {
    json::object msg{{"kind", "message"},
                     {"role", "user"},
                     {"messageId", message_id},
                     {"parts", json::array{std::move(part)}}};
    if (!skill.empty()) msg["metadata"] = json::object{{"skillId", skill}};
    if (!task_id.empty()) msg["taskId"] = task_id;
    return json::object{{"message", std::move(msg)},
                        {"configuration", json::object{{"blocking", blocking}}}};
  }
  static json::object Text(const std::string& t) {
    return json::object{{"kind", "text"}, {"text", t}};
  }
  static json::object Data(json::object d) {
    return json::object{{"kind", "data"}, {"data", std::move(d)}};
  }

  fs::path dir_;
  ServerProcess server_;
  std::unique_ptr<HttpClient> client_;
};

std::string State(const json::object& task) {
  return std::string(task.at("status").at("state").as_string());
}

TEST_F(WorkflowE2E, Rfc0100PositiveExampleAcrossADisconnect) {
  std::string task_id;
  {
    // message/stream: the task arrives; then the caller goes away.
    json::object rpc{
        {"jsonrpc", "2.0"},
        {"id", 1},
        {"method", "message/stream"},
        {"params", SendParams("brief-1", Text("Brief for Acme launch"), "campaign-brief")}};
    SseClient sse("127.0.0.1", server_.port, "/v1/a2a", json::serialize(rpc),
                  {{"Content-Type", "application/json"}});
    auto first = sse.Next();
    ASSERT_TRUE(first);
    task_id = std::string(first->Json().at("result").at("id").as_string());
    sse.Close();
  }
  // Later: tasks/get shows the run parked at the gate, with what a client needs to render it.
  const json::object task =
      testing::PollUntil([&] { return Task(task_id); },
                         [&](const json::object& t) { return State(t) == "input-required"; });
  ASSERT_EQ(State(task), "input-required");
  const auto& ow = task.at("metadata").at("openwop").as_object();
  EXPECT_EQ(ow.at("runId"), json::value(task_id));
  EXPECT_EQ(ow.at("interrupt").at("kind"), "approval");
  EXPECT_EQ(ow.at("interrupt").at("nodeId"), "review");
  EXPECT_TRUE(ow.at("interrupt").at("actions").as_array().size() >= 2);
  EXPECT_FALSE(ow.at("interruptToken").as_string().empty());
  auto state = Get("/v1/a2a/tasks/" + task_id);
  EXPECT_EQ(state.at("state"), "input-required");
  EXPECT_EQ(state.at("interruptKind"), "approval");
  EXPECT_EQ(Get("/v1/host/sample/a2a/tasks/" + task_id), state);

  // Resubscribe (read-only), then approve by message with the seed's {approve: true}.
  json::object resub{{"jsonrpc", "2.0"},
                     {"id", 2},
                     {"method", "tasks/resubscribe"},
                     {"params", json::object{{"id", task_id}}}};
  SseClient watch("127.0.0.1", server_.port, "/v1/a2a", json::serialize(resub),
                  {{"Content-Type", "application/json"}});
  auto snap = watch.Next();
  ASSERT_TRUE(snap);
  EXPECT_EQ(snap->Json().at("result").at("status").at("state"), "input-required");
  auto reply = client_->Rpc(
      "message/send",
      SendParams("brief-2", Data({{"approve", true}, {"feedback", "ship it"}}), "", task_id, true));
  ASSERT_TRUE(reply.as_object().contains("result")) << json::serialize(reply);
  EXPECT_EQ(reply.at("result").at("status").at("state"), "completed");
  std::vector<std::string> states;
  for (const auto& e : watch.ReadToEnd())
    if (e.Json().at("result").as_object().contains("status"))
      states.emplace_back(e.Json().at("result").at("status").at("state").as_string());
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(states.back(), "completed");
  EXPECT_NE(std::find(states.begin(), states.end(), "working"), states.end());
  EXPECT_EQ(Get("/v1/a2a/tasks/" + task_id).at("state"), "completed");
  auto evs = Events(task_id);
  EXPECT_EQ(Count(evs, "approval.received"), 1u);
  EXPECT_EQ(Count(evs, "run.completed"), 1u);
}

// The bundled campaign-brief: each review action does what the gate says it does.
TEST_F(WorkflowE2E, EachCampaignBriefActionDoesWhatItSays) {
  struct Case {
    json::object answer;
    std::string node;      // the node that publishes or returns
    std::string artifact;  // what it carries
  };
  const std::vector<Case> cases{
      {json::object{{"action", "accept"}}, "publish", R"(About: Acme launch\n)"},
      {json::object{{"action", "edit-accept"},
                    {"editedArtifactData", json::object{{"brief", "Acme launch, edited"}}}},
       "publish-edit", R"("edited":{"brief":"Acme launch, edited"})"},
      {json::object{{"action", "refine"}, {"feedback", "shorter"}}, "return",
       R"("feedback":"shorter")"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string id = StartRun("campaign-brief", {{"prompt", "Acme launch"}});
    WaitStatus(id, "waiting-approval");
    if (n == 0) {  // the draft came from a task of the host's own brief-drafter skill
      const json::value asked = Get("/v1/runs/" + id).at("nodeStates").at("ask-drafter");
      const std::string peer_task(asked.at("outputs").at("peerTaskId").as_string());
      const json::value drafted = Get("/v1/runs/" + peer_task);
      EXPECT_EQ(drafted.at("workflowId"), "brief-drafter") << json::serialize(drafted);
      EXPECT_EQ(drafted.at("status"), "completed");
      EXPECT_NE(json::serialize(asked.at("outputs").at("text")).find("About: Acme launch\\n"),
                std::string::npos)
          << json::serialize(asked);
    }
    auto r = client_->Rpc("message/send",
                          SendParams("cb-" + std::to_string(++n), Data(c.answer), "", id, true));
    ASSERT_EQ(r.at("result").at("status").at("state"), "completed") << json::serialize(r);
    const json::value run = Get("/v1/runs/" + id);
    const json::object& states = run.at("nodeStates").as_object();
    for (const char* node : {"publish", "publish-edit", "return"})
      EXPECT_EQ(states.at(node).at("status"), node == c.node ? "completed" : "skipped")
          << node << " after " << json::serialize(c.answer);
    EXPECT_NE(json::serialize(states.at(c.node).at("outputs")).find(c.artifact), std::string::npos)
        << json::serialize(states.at(c.node));
  }
  // reject stops: nothing is published or returned.
  const std::string id = StartRun("campaign-brief", {{"prompt", "Acme launch"}});
  WaitStatus(id, "waiting-approval");
  (void)client_->Rpc("message/send",
                     SendParams("cb-r", Data({{"action", "reject"}}), "", id, true));
  const json::value run = WaitStatus(id, "failed");
  EXPECT_FALSE(run.at("nodeStates").as_object().contains("publish"));
}

TEST_F(WorkflowE2E, RunParkedAtAGateStaysParkedAcrossSigkill) {
  auto r =
      client_->Rpc("message/send", SendParams("p-1", Text("brief"), "campaign-brief", "", true));
  const std::string id(r.at("result").at("id").as_string());
  ASSERT_EQ(r.at("result").at("status").at("state"), "input-required") << json::serialize(r);
  Restart();
  json::object task = Task(id);
  EXPECT_EQ(State(task), "input-required");
  EXPECT_EQ(task.at("metadata").at("openwop").at("interrupt").at("kind"), "approval");
  // A wrong answer is refused and changes nothing.
  auto wrong =
      client_->Rpc("message/send", SendParams("p-2", Data({{"action", "maybe"}}), "", id, true));
  ASSERT_TRUE(wrong.as_object().contains("error"));
  EXPECT_EQ(wrong.at("error").at("code"), -32602);
  EXPECT_EQ(State(Task(id)), "input-required");
  auto ok =
      client_->Rpc("message/send", SendParams("p-3", Data({{"action", "accept"}}), "", id, true));
  EXPECT_EQ(ok.at("result").at("status").at("state"), "completed") << json::serialize(ok);
  auto evs = Events(id);
  EXPECT_EQ(Count(evs, "node.started", "draft"), 1u);  // nothing committed was repeated
  EXPECT_EQ(Count(evs, "interrupt.requested"), 1u);    // nothing answered was re-asked
}

TEST_F(WorkflowE2E, DurableTimerSurvivesSigkill) {
  const std::string id = StartRun("long-delay", {{"delayMs", 1500}});
  WaitFor("/v1/runs/" + id, [](const json::value& v) {
    auto* st = v.as_object().if_contains("nodeStates");
    return st && st->as_object().contains("wait");
  });
  Restart();  // mid-sleep
  auto done = WaitStatus(id, "completed");
  auto evs = Events(id);
  EXPECT_EQ(Count(evs, "node.started", "wait"), 1u);
  EXPECT_EQ(Count(evs, "node.completed", "wait"), 1u);
  EXPECT_EQ(Count(evs, "run.completed"), 1u);
  EXPECT_EQ(State(Task(id)), "completed");
}

TEST_F(WorkflowE2E, FixtureWorkflowsReachTheirOutcomes) {
  // noop, identity, failure, multi-node.
  WaitStatus(StartRun("conformance-noop"), "completed");
  auto ident = WaitStatus(StartRun("conformance-identity", {{"payload", json::object{{"a", 1}}}}),
                          "completed");
  EXPECT_EQ(ident.at("variables").at("payload"), (json::object{{"a", 1}}));
  auto failed = WaitStatus(StartRun("conformance-failure"), "failed");
  EXPECT_TRUE(failed.at("error").at("code").is_string());
  EXPECT_TRUE(failed.at("error").at("message").is_string());
  const std::string multi = StartRun("conformance-multi-node");
  WaitStatus(multi, "completed");
  std::vector<std::string> order;
  for (const auto& e : Events(multi))
    if (e.at("type") == "node.completed") order.emplace_back(e.at("nodeId").as_string());
  EXPECT_EQ(order, (std::vector<std::string>{"a", "b", "c"}));
  // A missing required input is refused at creation.
  EXPECT_EQ(Post("/v1/runs", json::object{{"workflowId", "conformance-identity"}}).status, 400);

  // Approval: parked at `gate`; a bad action 400; unknown node 404; accept; again 409.
  const std::string gate = StartRun("conformance-approval");
  auto waiting = WaitStatus(gate, "waiting-approval");
  EXPECT_EQ(waiting.at("currentNodeId"), "gate");
  EXPECT_EQ(Post("/v1/runs/" + gate + "/interrupts/gate",
                 json::object{{"resumeValue", json::object{{"action", "maybe"}}}})
                .status,
            400);
  EXPECT_EQ(Post("/v1/runs/" + gate + "/interrupts/nope",
                 json::object{{"resumeValue", json::object{{"action", "accept"}}}})
                .status,
            404);
  auto accepted = Post("/v1/runs/" + gate + "/interrupts/gate",
                       json::object{{"resumeValue", json::object{{"action", "accept"}}}});
  EXPECT_EQ(accepted.status, 200) << accepted.body;
  WaitStatus(gate, "completed");
  auto again = Post("/v1/runs/" + gate + "/interrupts/gate",
                    json::object{{"resumeValue", json::object{{"action", "accept"}}}});
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_EQ(again.Json().at("error"), "interrupt_already_resolved");

  // Clarification.
  const std::string ask = StartRun("conformance-clarification");
  EXPECT_EQ(WaitStatus(ask, "waiting-input").at("currentNodeId"), "ask");
  EXPECT_EQ(
      Post("/v1/runs/" + ask + "/interrupts/ask",
           json::object{{"resumeValue", json::object{{"answers", json::object{{"q1", "blue"}}}}}})
          .status,
      200);
  WaitStatus(ask, "completed");

  // External event through the signed token: mismatch 422 and still waiting; match completes.
  const std::string ext = StartRun("conformance-interrupt-external-event");
  auto parked = WaitStatus(ext, "waiting-external");
  const std::string token(parked.at("interrupt").at("interruptToken").as_string());
  EXPECT_EQ(Get("/v1/interrupts/" + token).at("kind"), "external-event");
  auto mismatch =
      Post("/v1/interrupts/" + token, json::object{{"orderId", "other"}, {"status", "completed"}});
  EXPECT_EQ(mismatch.status, 422) << mismatch.body;
  EXPECT_EQ(Get("/v1/runs/" + ext).at("status"), "waiting-external");
  auto match =
      Post("/v1/interrupts/" + token,
           json::object{{"orderId", "fixture-order-1"}, {"status", "completed"}, {"extra", 1}});
  EXPECT_EQ(match.status, 200) << match.body;
  WaitStatus(ext, "completed");
  EXPECT_EQ(Post("/v1/interrupts/" + token, json::object{{"orderId", "fixture-order-1"}}).status,
            409);
  std::string forged = token;  // one character of the signature changed
  char& c = forged[forged.size() - 5];
  c = c == 'A' ? 'B' : 'A';
  EXPECT_EQ(client_->Request("GET", "/v1/interrupts/" + forged).status, 401);

  // Delay, and cancel mid-sleep.
  const std::string quick = StartRun("conformance-delay", {{"delayMs", 50}});
  WaitStatus(quick, "completed");
  // Cancel of a run that is over: idempotent, 200 with the status it ended in, nothing changed.
  auto late = Post("/v1/runs/" + quick + "/cancel", json::object{});
  EXPECT_EQ(late.status, 200) << late.body;
  EXPECT_EQ(late.Json().at("status"), "completed") << late.body;
  EXPECT_EQ(Get("/v1/runs/" + quick).at("status"), "completed");
  const std::string slow = StartRun("conformance-cancellable", {{"delayMs", 60000}});
  WaitStatus(slow, "running");
  auto cancel = Post("/v1/runs/" + slow + "/cancel", json::object{});
  EXPECT_EQ(cancel.status, 200) << cancel.body;
  WaitStatus(slow, "cancelled");
  EXPECT_EQ(State(Task(slow)), "canceled");
  auto recancel = Post("/v1/runs/" + slow + "/cancel", json::object{});
  EXPECT_EQ(recancel.status, 200) << recancel.body;
  EXPECT_EQ(recancel.Json().at("status"), "cancelled");

  // Sub-workflows: outcome copied back; child linked to the parent; input mapping.
  const std::string parent = StartRun("conformance-subworkflow-parent");
  auto pdone = WaitStatus(parent, "completed");
  EXPECT_EQ(pdone.at("variables").at("childOutcome"), "child-completed");
  const std::string child(pdone.at("childRuns").at(0).at("runId").as_string());
  auto cdone = Get("/v1/runs/" + child);
  EXPECT_EQ(cdone.at("parentRunId"), json::value(parent));
  EXPECT_EQ(cdone.at("parentNodeId"), "subwf-call");
  json::object outputs;
  for (const auto& e : Events(parent))
    if (e.at("type") == "node.completed" && e.at("nodeId") == "subwf-call")
      outputs = e.at("payload").at("outputs").as_object();
  EXPECT_EQ(outputs.at("childStatus"), "completed");
  EXPECT_EQ(outputs.at("childRunId"), json::value(child));
  auto mapped = WaitStatus(StartRun("conformance-subworkflow-input-mapping"), "completed");
  auto mchild =
      Get("/v1/runs/" + std::string(mapped.at("childRuns").at(0).at("runId").as_string()));
  EXPECT_EQ(mchild.at("variables").at("receivedPrdId"), "prd-1");

  // Cascade: cancelling the parent cancels the child parked at its gate.
  const std::string cp = StartRun("conformance-interrupt-parent-child-cancel");
  auto with_child = WaitFor(
      "/v1/runs/" + cp, [](const json::value& v) { return v.as_object().contains("childRuns"); });
  const std::string cc(with_child.at("childRuns").at(0).at("runId").as_string());
  WaitStatus(cc, "waiting-approval");
  auto mirrored = WaitStatus(cp, "waiting-approval");  // the parent mirrors its child
  EXPECT_EQ(mirrored.at("currentNodeId"), "spawn-child");
  EXPECT_EQ(mirrored.at("waitingOn").at("childRunId"), json::value(cc));
  EXPECT_EQ(Post("/v1/runs/" + cp + "/cancel", json::object{}).status, 200);
  WaitStatus(cp, "cancelled");
  WaitStatus(cc, "cancelled");
  EXPECT_EQ(Post("/v1/runs/" + cc + "/interrupts/gate",
                 json::object{{"resumeValue", json::object{{"action", "accept"}}}})
                .status,
            410);

  // Idempotency-Key: same key and body -> same run, replayed; other body -> 409.
  json::object body{{"workflowId", "conformance-idempotent"},
                    {"inputs", json::object{{"nonce", "n1"}}}};
  auto first = Post("/v1/runs", body, {{"Idempotency-Key", "k-1"}});
  auto second = Post("/v1/runs", body, {{"Idempotency-Key", "k-1"}});
  EXPECT_EQ(first.Json().at("runId"), second.Json().at("runId"));
  EXPECT_EQ(first.Header("openwop-Idempotent-Replay"), "false");
  EXPECT_EQ(second.Header("openwop-Idempotent-Replay"), "true");
  body["inputs"] = json::object{{"nonce", "n2"}};
  auto third = Post("/v1/runs", body, {{"Idempotency-Key", "k-1"}});
  EXPECT_EQ(third.status, 409);
  EXPECT_EQ(third.Json().at("error"), "idempotency_key_mismatch");
  EXPECT_FALSE(third.Json().as_object().contains("runId"));
}

TEST_F(WorkflowE2E, RunEventStreamReplaysFollowsAndClosesAfterTheTerminalEvent) {
  const std::string id = StartRun("conformance-approval");
  WaitStatus(id, "waiting-approval");
  std::vector<int64_t> seen;
  {
    SseClient sse("127.0.0.1", server_.port, "/v1/runs/" + id + "/events?streamMode=debug", "", {},
                  "GET");
    ASSERT_EQ(sse.status(), 200);
    for (auto e = sse.Next(); e && seen.size() < 5; e = sse.Next()) {
      if (e->comment) continue;
      EXPECT_EQ(e->event, std::string(e->Json().at("type").as_string()));
      seen.push_back(std::stoll(e->id));
    }
  }
  ASSERT_EQ(seen.size(), 5u);  // submitted .. node.suspended, replayed from the log
  EXPECT_EQ(seen.front(), 0);
  // Resume after the last seen id; the default `updates` mode; then answer the gate.
  SseClient sse("127.0.0.1", server_.port, "/v1/runs/" + id + "/events", "",
                {{"Last-Event-ID", std::to_string(seen.back())}}, "GET");
  ASSERT_EQ(sse.status(), 200);
  EXPECT_EQ(Post("/v1/runs/" + id + "/interrupts/gate",
                 json::object{{"resumeValue", json::object{{"action", "accept"}}}})
                .status,
            200);
  std::vector<std::string> types;
  int64_t last = seen.back();
  for (const auto& e : sse.ReadToEnd()) {
    EXPECT_GT(std::stoll(e.id), last);  // nothing at or before the cursor, in order
    last = std::stoll(e.id);
    types.push_back(e.event);
  }
  EXPECT_TRUE(sse.ended());  // the server closed after the terminal event
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.back(), "run.completed");
  EXPECT_EQ(std::count(types.begin(), types.end(), "node.started"), 0);  // not in `updates`
  EXPECT_EQ(std::count(types.begin(), types.end(), "approval.received"), 1);
}

TEST_F(WorkflowE2E, SameMessageIdNeverStartsASecondRun) {
  auto a =
      client_->Rpc("message/send", SendParams("dup-1", Text("x"), "conformance-noop", "", true));
  auto b =
      client_->Rpc("message/send", SendParams("dup-1", Text("x"), "conformance-noop", "", true));
  EXPECT_EQ(a.at("result").at("id"), b.at("result").at("id"));
  auto list = Get("/v1/runs?workflowId=conformance-noop");
  EXPECT_EQ(list.at("runs").as_array().size(), 1u);
  // Within a conversation the messageId is the key; the same id in another context (a client
  // that numbers its messages per conversation) is another message.
  auto in_context = [&](const std::string& context) {
    json::object p = SendParams("dup-3", Text("x"), "conformance-noop", "", true);
    p["message"].as_object()["contextId"] = context;
    return client_->Rpc("message/send", p);
  };
  auto in_a = in_context("ctx-a");
  auto again_a = in_context("ctx-a");
  auto in_b = in_context("ctx-b");
  EXPECT_EQ(in_a.at("result").at("id"), again_a.at("result").at("id"));
  EXPECT_NE(in_a.at("result").at("id"), in_b.at("result").at("id"));
  EXPECT_EQ(in_b.at("result").at("contextId"), "ctx-b");

  // A retried message/stream of a running task follows that task to its end.
  auto first = client_->Rpc("message/send",
                            SendParams("dup-2", Data({{"delayMs", 400}}), "conformance-delay"));
  const std::string id(first.at("result").at("id").as_string());
  json::object rpc{{"jsonrpc", "2.0"},
                   {"id", 9},
                   {"method", "message/stream"},
                   {"params", SendParams("dup-2", Data({{"delayMs", 400}}), "conformance-delay")}};
  SseClient sse("127.0.0.1", server_.port, "/v1/a2a", json::serialize(rpc),
                {{"Content-Type", "application/json"}});
  auto events = sse.ReadToEnd();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().Json().at("result").at("id"), json::value(id));
  EXPECT_EQ(events.back().Json().at("result").at("status").at("state"), "completed");
}

TEST_F(WorkflowE2E, DiscoveryAndErrorsUseOpenwopShapes) {
  auto r = client_->Request("GET", "/.well-known/openwop");
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.Header("Cache-Control").empty());
  auto d = r.Json();
  EXPECT_EQ(d.at("a2a").at("durableTasks"), true);
  // openwop-interrupts: the clarification interrupt (FixtureWorkflowsReachTheirOutcomes).
  EXPECT_EQ(d.at("supportedEnvelopes"), json::array{"clarification.request"});
  // RFC 0152 (a2a-card-runtime-consistency): agentCardUrl, fetched as it is, is the 0.3 card
  // header-less (a top-level url, no supportedInterfaces) and the 1.0 card with A2A-Version
  // 1.0 (no top-level url or protocolVersion), whose interfaces' versions are the
  // protocolVersions discovery lists.
  const std::string card_url(d.at("a2a").at("agentCardUrl").as_string());
  const std::string origin = "http://127.0.0.1:" + std::to_string(server_.port);
  ASSERT_EQ(card_url, origin + "/.well-known/agent-card.json");
  const json::value c03 = client_->Request("GET", card_url.substr(origin.size())).Json();
  EXPECT_TRUE(c03.at("url").is_string());
  EXPECT_FALSE(c03.as_object().contains("supportedInterfaces"));
  auto card = client_->Request("GET", card_url.substr(origin.size()), "", {{"A2A-Version", "1.0"}});
  ASSERT_EQ(card.status, 200);
  const json::value c = card.Json();
  EXPECT_FALSE(c.as_object().contains("url")) << card.body;
  EXPECT_FALSE(c.as_object().contains("protocolVersion"));
  std::set<std::string> card_versions, listed;
  for (const auto& i : c.at("supportedInterfaces").as_array())
    card_versions.emplace(i.at("protocolVersion").as_string());
  for (const auto& v : d.at("a2a").at("protocolVersions").as_array()) listed.emplace(v.as_string());
  EXPECT_EQ(card_versions, listed);
  bool has_approval = false;
  for (const auto& f : d.at("fixtures").as_array()) has_approval |= f == "conformance-approval";
  EXPECT_TRUE(has_approval);
  auto missing = client_->Request("GET", "/v1/runs/nope");
  EXPECT_EQ(missing.status, 404);
  auto env = missing.Json().as_object();
  EXPECT_EQ(env.at("error"), "not_found");
  for (const auto& kv : env)
    EXPECT_TRUE(kv.key() == "error" || kv.key() == "message" || kv.key() == "details");
  EXPECT_EQ(Post("/v1/runs", json::object{{"workflowId", "conformance-noop"}, {"bogus", 1}}).status,
            400);
  EXPECT_EQ(Get("/v1/openapi.json").at("openapi"), "3.1.0");
  auto unversioned = client_->Request("GET", "/runs/x");
  EXPECT_EQ(unversioned.status, 400);
  EXPECT_EQ(unversioned.Json().at("error"), "validation_error");
  EXPECT_EQ(client_->Request("GET", "/nothing-here").status, 404);
  EXPECT_EQ(client_->Request("GET", "/v1/a2a/agent.json").status, 200);
  auto bad_mode = client_->Request("GET", "/v1/runs/x/events?streamMode=nonsense");
  EXPECT_EQ(bad_mode.status, 400);
  EXPECT_EQ(bad_mode.Json().at("error"), "unsupported_stream_mode");
  EXPECT_EQ(bad_mode.Json().at("details").at("supported"),
            json::parse(R"(["updates","values","messages","debug"])"));
}

}  // namespace
}  // namespace a2ad

namespace a2ad {
namespace {

// A run at a durable timer is `working`, and its status message says until when (a caller
// polling tasks/get an hour later knows what it waits for).
TEST_F(WorkflowE2E, ARunAtADurableTimerSaysUntilWhen) {
  auto sent = client_->Rpc(
      "message/send",
      json::object{
          {"message", json::object{{"kind", "message"},
                                   {"role", "user"},
                                   {"messageId", "delay-1"},
                                   {"parts", json::array{json::object{
                                                 {"kind", "data"},
                                                 {"data", json::object{{"delayMs", 3600000}}}}}},
                                   {"metadata", json::object{{"skillId", "long-delay"}}}}},
          // Not blocking: a blocking send would wait out the server's 30 s cap on
          // a run parked for an hour.
          {"configuration", json::object{{"blocking", false}}}});
  const std::string id(sent.at("result").at("id").as_string());
  const json::object task = testing::PollUntil(
      [&] { return Task(id); },
      [](const json::object& t) { return t.at("status").as_object().contains("message"); });
  EXPECT_EQ(task.at("status").at("state"), "working");
  const auto& message = task.at("status").at("message");
  const std::string text(message.at("parts").at(0).at("text").as_string());
  EXPECT_TRUE(text.starts_with("waiting until 20")) << text;
  EXPECT_NE(text.find("(node "), std::string::npos) << text;
  const std::string until(message.at("metadata").at("openwop").at("waitingUntil").as_string());
  EXPECT_NE(text.find(until), std::string::npos);
}

}  // namespace
}  // namespace a2ad

namespace a2ad {
namespace {

// streamMode=values (DIGEST §2.4): the RunSnapshot first, then after each change, to the end.
TEST_F(WorkflowE2E, ValuesModeSendsTheRunSnapshotFirstAndAfterEachChange) {
  const std::string id = StartRun("conformance-approval");
  WaitStatus(id, "waiting-approval");
  SseClient sse("127.0.0.1", server_.port, "/v1/runs/" + id + "/events?streamMode=values", "", {},
                "GET");
  ASSERT_EQ(sse.status(), 200);
  auto first = sse.Next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->event, "state.snapshot");
  const json::value doc = first->Json();
  EXPECT_EQ(doc.at("type"), "state.snapshot");
  EXPECT_EQ(doc.at("payload").at("status"), "waiting-approval");
  EXPECT_EQ(doc.at("payload").at("runId"), json::value(id));
  EXPECT_EQ(std::stoll(first->id), doc.at("sequence").as_int64());
  EXPECT_EQ(Post("/v1/runs/" + id + "/interrupts/gate",
                 json::object{{"resumeValue", json::object{{"action", "accept"}}}})
                .status,
            200);
  std::vector<std::string> statuses;
  int64_t last = std::stoll(first->id);
  for (const auto& e : sse.ReadToEnd()) {
    if (e.comment) continue;
    EXPECT_EQ(e.event, "state.snapshot");
    EXPECT_GT(std::stoll(e.id), last);
    last = std::stoll(e.id);
    statuses.emplace_back(e.Json().at("payload").at("status").as_string());
  }
  ASSERT_FALSE(statuses.empty());
  EXPECT_EQ(statuses.back(), "completed");  // and the server closed the stream
  EXPECT_TRUE(sse.ended());
}

// Modes combined name the admitting mode; unknown ones and values with another are refused.
TEST_F(WorkflowE2E, ModesCombineAndWrongOnesAreRefused) {
  const std::string id = StartRun("conformance-multi-node");
  WaitStatus(id, "completed");
  SseClient both("127.0.0.1", server_.port,
                 "/v1/runs/" + id + "/events?streamMode=updates,messages", "", {}, "GET");
  std::set<std::string> names;
  for (const auto& e : both.ReadToEnd()) names.insert(e.event);
  EXPECT_EQ(names, std::set<std::string>{"updates"});  // no AI message chunks in this run
  SseClient debug("127.0.0.1", server_.port, "/v1/runs/" + id + "/events?streamMode=messages,debug",
                  "", {}, "GET");
  names.clear();
  for (const auto& e : debug.ReadToEnd()) names.insert(e.event);
  EXPECT_EQ(names, std::set<std::string>{"debug"});
  for (const char* bad : {"streamMode=bogus", "streamMode=values,updates", "bufferMs=5001",
                          "bufferMs=-1", "bufferMs=x"}) {
    auto r = client_->Request("GET", "/v1/runs/" + id + "/events?" + std::string(bad));
    EXPECT_EQ(r.status, 400) << bad;
    const std::string code(r.Json().at("error").as_string());
    if (std::string(bad).starts_with("streamMode"))
      EXPECT_EQ(code, "unsupported_stream_mode") << bad;
    else
      EXPECT_EQ(code, "validation_error") << bad;
  }
}

// bufferMs: `event: batch` frames of RunEventDocs, id = the highest sequence; a suspension and
// the end flush at once.
TEST_F(WorkflowE2E, BufferMsBatchesAndFlushesAtASuspensionAndTheEnd) {
  const std::string id = StartRun("conformance-approval");
  WaitStatus(id, "waiting-approval");
  const auto started = std::chrono::steady_clock::now();
  SseClient sse("127.0.0.1", server_.port,
                "/v1/runs/" + id + "/events?streamMode=debug&bufferMs=5000", "", {}, "GET");
  auto history = sse.Next();  // the log so far: one batch, at once
  ASSERT_TRUE(history);
  EXPECT_EQ(history->event, "batch");
  const json::array docs = history->Json().as_array();
  ASSERT_GE(docs.size(), 4u);
  EXPECT_EQ(std::stoll(history->id), docs.back().at("sequence").as_int64());
  EXPECT_EQ(docs.front().at("sequence"), 0);
  EXPECT_EQ(Post("/v1/runs/" + id + "/interrupts/gate",
                 json::object{{"resumeValue", json::object{{"action", "accept"}}}})
                .status,
            200);
  // The run's end flushes the window without waiting the 5 s out.
  std::vector<std::string> types;
  for (const auto& e : sse.ReadToEnd()) {
    if (e.comment) continue;
    EXPECT_EQ(e.event, "batch");
    const json::value batch = e.Json();
    for (const auto& d : batch.as_array()) types.emplace_back(d.at("type").as_string());
  }
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.back(), "run.completed");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(4500));
}

}  // namespace
}  // namespace a2ad

namespace a2ad {
namespace {

// The durable-task seam (DIGEST §2.5): a task parked at an approval when the answer comes,
// read back through the read seam; served only with --conformance-fixtures.
TEST_F(WorkflowE2E, TheStartSeamParksATaskAtItsApproval) {
  auto started = Post("/v1/host/sample/a2a/tasks/start",
                      json::object{{"scenario", "paused-at-approval"}});
  ASSERT_EQ(started.status, 201) << started.body;
  const std::string id(started.Json().at("taskId").as_string());
  const json::value state = Get("/v1/host/sample/a2a/tasks/" + id);
  EXPECT_EQ(state.at("state"), "input-required") << state;
  EXPECT_EQ(state.at("runId"), json::value(id));
  EXPECT_EQ(Post("/v1/host/sample/a2a/tasks/start", json::object{{"scenario", "other"}}).status,
            400);

  const fs::path bare = testing::FreshTestDir("a2ad-wf-bare");
  auto plain = ServerProcess::Start(kBinary, bare.string(), {"--workflows-dir", kWorkflows});
  HttpClient c("127.0.0.1", plain.port);
  EXPECT_EQ(c.Request("POST", "/v1/host/sample/a2a/tasks/start",
                      R"({"scenario":"paused-at-approval"})")
                .status,
            404);
  plain.Kill(SIGKILL);
  fs::remove_all(bare);
}

}  // namespace
}  // namespace a2ad
