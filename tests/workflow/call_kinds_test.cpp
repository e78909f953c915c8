// The node kinds that call out (core.http, core.a2a.invoke), driven through the pure planner:
// what they ask the EffectRunner to do, what they make of each logged result (every row of
// the reverse projection, seed 003), that a logged result is never asked for again (the
// replay rule, DIGEST §7), and the config they refuse at load time.
#include <gtest/gtest.h>

#include "harness.hpp"

namespace a2ad::workflow::test_harness {
namespace {

json::object Http(json::object config, json::object inputs = {}) {
  return NodeDoc("http", "core.http", std::move(config), std::move(inputs));
}
json::object Invoke(json::object config = {}) {
  return NodeDoc("call", "core.a2a.invoke", std::move(config));
}
json::object Task(const std::string& state, json::object extra = {}) {
  json::object task{{"id", "peer-task-1"},
                    {"contextId", "peer-ctx"},
                    {"state", state},
                    {"status", json::object{{"state", state}}},
                    {"artifacts", json::array()}};
  for (auto& kv : extra) task[kv.key()] = kv.value();
  return json::object{{"taskId", "peer-task-1"},
                      {"contextId", "peer-ctx"},
                      {"state", state},
                      {"task", std::move(task)},
                      {"peer", json::object{{"name", "peer"}, {"version", "1.0"}}}};
}
json::object Message(const std::string& text, json::value data = nullptr) {
  json::array parts{json::object{{"text", text}}};
  if (!data.is_null()) parts.push_back(json::object{{"data", data}});
  return json::object{{"messageId", "p1"}, {"role", "agent"}, {"parts", parts}};
}

// ---- core.http ----------------------------------------------------------------------------

TEST(CallKinds, HttpLogsItsRequestBeforeAskingForTheCall) {
  Harness h(OneNode(Http(json::object{
      {"url", "https://api.example.com/v1/items"},
      {"method", "POST"},
      {"secretHeaders",
       json::object{{"Authorization", json::object{{"secret", "API"}, {"prefix", "Bearer "}}}}}})));
  Decision d = h.Drive();
  ASSERT_EQ(d.kind, K::kEffect);
  EXPECT_EQ(StrOf(d.effect, "kind"), "http");
  EXPECT_EQ(StrOf(d.effect, "method"), "POST");
  EXPECT_EQ(StrOf(d.effect, "url"), "https://api.example.com/v1/items");
  // The request is in the log already, naming the secret but not holding it.
  const json::object& logged = ObjAt(ObjAt(h.NodeState("http"), "effect"), "request");
  EXPECT_EQ(logged, d.effect);
  EXPECT_EQ(json::serialize(logged).find("Bearer x"), std::string::npos);
  EXPECT_TRUE(logged.at("body").is_object()) << "a POST without body sends the inputs";
}

TEST(CallKinds, HttpCompletesWithTheLoggedAnswerAndNeverAsksAgain) {
  Harness h(OneNode(Http(json::object{{"url", "https://api.example.com/x"}})));
  ASSERT_EQ(h.Drive().kind, K::kEffect);
  h.Effect("http", json::object{{"response", json::object{{"status", 200}, {"body", "hi"}}},
                                {"attempts", 1}});
  Decision d = h.Plan();
  ASSERT_EQ(d.kind, K::kCommit) << "a logged answer is read, not fetched again";
  h.Drive();
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(ObjAt(h.NodeState("http"), "outputs").at("status"), 200);
}

TEST(CallKinds, HttpFailureFailsTheNodeWithItsCode) {
  Harness h(OneNode(Http(json::object{{"url", "https://api.example.com/x"}})));
  h.Drive();
  h.Effect(
      "http",
      json::object{{"error", json::object{{"code", "external_call_failed"}, {"message", "503"}}}});
  h.Drive();
  EXPECT_EQ(h.Status(), "failed");
  EXPECT_EQ(StrOf(ObjAt(h.NodeState("http"), "error"), "code"), "external_call_failed");
}

TEST(CallKinds, HttpConfigRefusalsNameTheField) {
  struct Case {
    json::object config;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {json::object{}, "config.url"},
           {json::object{{"url", "ftp://x"}}, "config.url"},
           {json::object{{"url", "https://x"}, {"method", "TRACE"}}, "config.method"},
           {json::object{{"url", "https://x"},
                         {"headers", json::object{{"Authorization", "Bearer t"}}}},
            "config.headers.Authorization"},
           {json::object{{"url", "https://x"}, {"secretHeaders", json::object{{"X-Key", "K"}}}},
            "config.secretHeaders.X-Key"},
           {json::object{{"url", "https://x"}, {"expect", json::array{"20x"}}}, "config.expect"},
           {json::object{{"url", "https://x"}, {"timeoutMs", 0}}, "config.timeoutMs"},
           {json::object{{"url", "https://x"}, {"retry", json::object{{"maxAttempts", 11}}}},
            "config.retry.maxAttempts"},
       }) {
    auto w = ParseWorkflow(Doc(json::array{Http(c.config)}));
    ASSERT_FALSE(w) << json::serialize(c.config);
    EXPECT_NE(w.error().message.find(c.field), std::string::npos) << w.error().message;
  }
}

// ---- core.a2a.invoke: the request ------------------------------------------------------------

TEST(CallKinds, InvokeSendsOneMessagePerExecutionToTheDefaultPeer) {
  Harness h(OneNode(Invoke(json::object{{"skill", "summarize"}, {"text", "please"}})));
  Decision d = h.Drive();
  ASSERT_EQ(d.kind, K::kEffect);
  EXPECT_EQ(StrOf(d.effect, "kind"), "a2a.send");
  EXPECT_EQ(StrOf(d.effect, "peer"), "default");
  const json::object& m = ObjAt(d.effect, "message");
  EXPECT_EQ(StrOf(m, "messageId"), std::string("a2ad-") + kRunId + "-call-0")
      << "derived from run, node and execution ordinal";
  EXPECT_EQ(ObjAt(m, "metadata").at("skillId"), "summarize");
  EXPECT_EQ(ObjAt(ObjAt(m, "metadata"), "openwop").at("callerAgentId"), "a2ad");
  // Sent, not answered yet (a crash here): the same message is sent again.
  Harness again(OneNode(Invoke(json::object{{"skill", "summarize"}, {"text", "please"}})));
  EXPECT_EQ(StrOf(ObjAt(again.Drive().effect, "message"), "messageId"), StrOf(m, "messageId"));
}

TEST(CallKinds, TheFollowingModeTravelsFromTheSendToEveryWait) {
  for (const char* mode : {"poll", "stream", "push"}) {
    Harness h(OneNode(Invoke(json::object{{"mode", mode}})));
    Decision d = h.Drive();
    ASSERT_EQ(d.kind, K::kEffect) << mode;
    EXPECT_EQ(StrOf(d.effect, "mode"), mode);
    // Push: a push is awaited for 30 s before the node looks anyway; else pollMs 500.
    EXPECT_EQ(d.effect.at("pollMs").as_int64(), std::string(mode) == "push" ? 30000 : 500);
    h.Effect("call", Task("working"));
    Decision wait = h.Plan();
    ASSERT_EQ(wait.kind, K::kEffect);
    EXPECT_EQ(StrOf(wait.effect, "kind"), "a2a.wait");
    EXPECT_EQ(StrOf(wait.effect, "mode"), mode);
    EXPECT_EQ(wait.effect.at("pollMs"), d.effect.at("pollMs"));
  }
}

// ---- core.a2a.invoke: the reverse projection, row by row --------------------------------------

TEST(CallKinds, PendingAndWorkingStatesKeepFollowingThePeersTask) {
  for (const char* state : {"submitted", "unknown", "working"}) {
    Harness h(OneNode(Invoke()));
    h.Drive();
    h.Effect("call", Task(state));
    Decision d = h.Plan();
    ASSERT_EQ(d.kind, K::kEffect) << state;
    EXPECT_EQ(StrOf(d.effect, "kind"), "a2a.wait");
    EXPECT_EQ(StrOf(d.effect, "taskId"), "peer-task-1");
    EXPECT_EQ(StrOf(d.effect, "state"), state);
    EXPECT_EQ(h.Status(), "running");
  }
}

TEST(CallKinds, CompletedCompletesTheNodeWithThePeersContentUntrusted) {
  Harness h(OneNode(Invoke()));
  h.Drive();
  json::object done =
      Task("completed",
           json::object{
               {"artifacts",
                json::array{json::object{
                    {"artifactId", "a1"},
                    {"parts",
                     json::array{json::object{{"text", "the brief"}},
                                 json::object{{"data", json::object{{"action", "accept"}}}}}}}}}});
  h.Effect("call", done);
  h.Drive();
  EXPECT_EQ(h.Status(), "completed");
  const json::object& out = ObjAt(h.NodeState("call"), "outputs");
  EXPECT_EQ(out.at("contentTrust"), "untrusted");
  EXPECT_EQ(out.at("text"), "the brief");
  EXPECT_EQ(out.at("peerTaskId"), "peer-task-1");
  EXPECT_EQ(out.at("data").at("action"), "accept");
}

TEST(CallKinds, OutputsPickFromThePeersResultByJsonPointer) {
  const json::object done = Task(
      "completed",
      json::object{{"artifacts",
                    json::array{json::object{
                        {"artifactId", "a1"},
                        {"parts", json::array{json::object{
                                      {"data", json::object{{"brief", "the brief"},
                                                            {"a/b", json::array{1, 2}}}}}}}}}}});
  Harness h(OneNode(Invoke(
      json::object{{"outputs", json::object{{"brief", "/data/brief"},
                                            {"second", "/data/a~1b/1"},
                                            {"firstArtifact", "/artifacts/0/artifactId"}}}})));
  h.Drive();
  h.Effect("call", done);
  h.Drive();
  ASSERT_EQ(h.Status(), "completed");
  const json::object& out = ObjAt(h.NodeState("call"), "outputs");
  EXPECT_EQ(out.at("brief"), "the brief");
  EXPECT_EQ(out.at("second"), 2);
  EXPECT_EQ(out.at("firstArtifact"), "a1");
  EXPECT_EQ(out.at("contentTrust"), "untrusted") << "picking changes none of the node's own";

  // A pointer that finds nothing fails the node, naming it.
  Harness missing(OneNode(Invoke(json::object{{"outputs", json::object{{"b", "/data/nope"}}}})));
  missing.Drive();
  missing.Effect("call", done);
  missing.Drive();
  EXPECT_EQ(missing.Status(), "failed");
  const json::object& error = ObjAt(missing.NodeState("call"), "error");
  EXPECT_EQ(StrOf(error, "code"), "peer_output_missing");
  EXPECT_NE(StrOf(error, "message").find("/data/nope"), std::string::npos);
}

TEST(CallKinds, FailedRejectedAndCanceledEndTheRunAsTheSeedSays) {
  struct Row {
    const char* state;
    const char* run_status;
    const char* code;
  };
  for (const Row& r :
       {Row{"failed", "failed", "remote_failed"}, Row{"rejected", "failed", "rejected_by_remote"},
        Row{"canceled", "cancelled", "cancelled_by_remote"}}) {
    Harness h(OneNode(Invoke()));
    h.Drive();
    h.Effect("call", Task(r.state));
    h.Drive();
    EXPECT_EQ(h.Status(), r.run_status) << r.state;
    EXPECT_EQ(StrOf(ObjAt(h.NodeState("call"), "error"), "code"), r.code) << r.state;
    if (std::string(r.state) == "rejected") {
      EXPECT_EQ(StrOf(ObjAt(h.NodeState("call"), "error"), "reason"), "rejected_by_remote");
    }
  }
}

TEST(CallKinds, InputRequiredBecomesAClarificationWhoseAnswerIsSentToThePeer) {
  Harness h(OneNode(Invoke()));
  h.Drive();
  json::object asking = Task("input-required");
  asking["task"].as_object()["status"].as_object()["message"] =
      Message("Which region?", json::object{{"action", "accept"}});
  h.Effect("call", asking);
  h.Drive();
  ASSERT_EQ(h.Status(), "waiting-input");
  const json::object& data = ObjAt(ObjAt(h.Run(), "interrupt"), "data");
  EXPECT_EQ(data.at("contentTrust"), "untrusted");
  EXPECT_EQ(data.at("peerTaskId"), "peer-task-1");
  EXPECT_NE(json::serialize(data.at("questions")).find("Which region?"), std::string::npos);
  EXPECT_FALSE(data.contains("subkind"));
  // The human's answer goes on to the peer's task, with its own derived message id.
  ASSERT_TRUE(h.Answer(json::value("eu-west")));
  Decision d = h.Plan();
  ASSERT_EQ(d.kind, K::kEffect);
  EXPECT_EQ(StrOf(d.effect, "kind"), "a2a.reply");
  EXPECT_EQ(StrOf(d.effect, "taskId"), "peer-task-1");
  const json::object& m = ObjAt(d.effect, "message");
  EXPECT_EQ(json::serialize(m.at("parts")), R"([{"text":"eu-west"}])");
  EXPECT_EQ(StrOf(m, "messageId"), std::string("a2ad-") + kRunId + "-call-reply-0");
  // The peer goes on working, asks again, and the second answer is a second reply.
  json::object working = Task("working");
  working["replies"] = 1;
  h.Effect("call", working);
  EXPECT_EQ(StrOf(h.Plan().effect, "kind"), "a2a.wait");
  h.Effect("call", Task("input-required"));
  h.Drive();
  ASSERT_EQ(h.Status(), "waiting-input");
  ASSERT_TRUE(h.Answer(json::value("yes")));
  EXPECT_EQ(StrOf(ObjAt(h.Plan().effect, "message"), "messageId"),
            std::string("a2ad-") + kRunId + "-call-reply-1");
}

TEST(CallKinds, AReplyAnsweredWithTheOldQuestionIsFollowedNotAskedAgain) {
  Harness h(OneNode(Invoke()));
  h.Drive();
  h.Effect("call", Task("input-required"));
  h.Drive();
  ASSERT_TRUE(h.Answer(json::value("eu-west")));
  // The peer's answer to the reply was written before it read it: still input-required.
  json::object stale = Task("input-required");
  stale["replies"] = 1;
  stale["awaitingPeer"] = true;
  stale["statusStamp"] = "t1|m1";
  h.Effect("call", stale);
  Decision d = h.Plan();
  ASSERT_EQ(d.kind, K::kEffect) << "no second interrupt";
  EXPECT_EQ(StrOf(d.effect, "kind"), "a2a.wait");
  EXPECT_EQ(StrOf(d.effect, "statusStamp"), "t1|m1");
  EXPECT_EQ(h.Count(protocol::kEvInputRequired), 1u);
  // A new status that asks again: a second interrupt.
  json::object again = Task("input-required");
  again["awaitingPeer"] = false;
  h.Effect("call", again);
  h.Drive();
  EXPECT_EQ(h.Status(), "waiting-input");
  EXPECT_EQ(h.Count(protocol::kEvInputRequired), 2u);
}

TEST(CallKinds, AuthRequiredIsAClarificationWithSubkindAuth) {
  Harness h(OneNode(Invoke()));
  h.Drive();
  h.Effect("call", Task("auth-required"));
  h.Drive();
  ASSERT_EQ(h.Status(), "waiting-input");
  const json::object& data = ObjAt(ObjAt(h.Run(), "interrupt"), "data");
  EXPECT_EQ(data.at("subkind"), "auth");
  EXPECT_EQ(ObjAt(data, "metadata").at("subkind"), "auth");
}

TEST(CallKinds, ADirectMessageAnswerCompletesTheNode) {
  Harness h(OneNode(Invoke()));
  h.Drive();
  h.Effect("call", json::object{{"directMessage", Message("done already")}});
  h.Drive();
  EXPECT_EQ(h.Status(), "completed");
  EXPECT_EQ(ObjAt(h.NodeState("call"), "outputs").at("text"), "done already");
}

TEST(CallKinds, ACancelledRunCancelsThePeersTaskInFlightOnly) {
  auto wf = OneNode(Invoke(json::object{{"peer", "drafts"}}));
  Harness h(wf);
  h.Drive();
  const Node& n = wf->nodes.front();
  const NodeKind& kind = NodeKindRegistry::Get().KindOf(n);
  const std::string run_id = kRunId;
  PlanEnv env = h.Env();
  EXPECT_TRUE(
      kind.CancelEffect(NodeStep{*wf, n, run_id, h.rec.run, *h.rec.run.Node("call"), env}).empty())
      << "nothing at the peer yet";
  h.Effect("call", Task("working"));
  json::object spec =
      kind.CancelEffect(NodeStep{*wf, n, run_id, h.rec.run, *h.rec.run.Node("call"), env});
  EXPECT_EQ(StrOf(spec, "kind"), "a2a.cancel");
  EXPECT_EQ(StrOf(spec, "peer"), "drafts");
  EXPECT_EQ(StrOf(spec, "reason"), "cross_protocol_cancel");
  h.Effect("call", Task("completed"));
  EXPECT_TRUE(
      kind.CancelEffect(NodeStep{*wf, n, run_id, h.rec.run, *h.rec.run.Node("call"), env}).empty());
}

TEST(CallKinds, InvokeConfigRefusalsNameTheField) {
  struct Case {
    json::object config;
    std::string field;
  };
  for (const Case& c : std::vector<Case>{
           {json::object{{"agentCardUrl", "not a url"}}, "config.agentCardUrl"},
           {json::object{{"agentCardUrl", "https://x/card.json"}, {"peer", "p"}}, "config.peer"},
           {json::object{{"mode", "webhook"}}, "config.mode"},
           {json::object{{"requireSignedCard", "yes"}}, "config.requireSignedCard"},
           {json::object{{"pollMs", 1}}, "config.pollMs"},
           {json::object{{"skill", 3}}, "config.skill"},
           {json::object{{"outputs", "/data"}}, "config.outputs"},
           {json::object{{"binding", "websocket"}}, "config.binding"},
           {json::object{{"outputs", json::object{{"b", "data/brief"}}}}, "config.outputs.b"},
           {json::object{{"outputs", json::object{{"b", "/data/~2"}}}}, "config.outputs.b"},
           {json::object{{"outputs", json::object{{"text", "/data"}}}}, "config.outputs.text"},
       }) {
    auto w = ParseWorkflow(Doc(json::array{Invoke(c.config)}));
    ASSERT_FALSE(w) << json::serialize(c.config);
    EXPECT_NE(w.error().message.find(c.field), std::string::npos) << w.error().message;
  }
  EXPECT_TRUE(ParseWorkflow(Doc(json::array{NodeDoc("c", "core.conformance.a2a-invoke", {})})))
      << "the conformance suite's spelling is the same kind";
}

}  // namespace
}  // namespace a2ad::workflow::test_harness
