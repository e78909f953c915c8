// The pause extension through the real binary (issue 15; ext/pause, tasks/pause.hpp): the
// transition table of the seed's state machine, every error on every JSON binding, what
// callers with and without the extension see (results and streams), bulk pause by context,
// and races that exactly one side wins. Modes, agent pauses and SIGKILLs are in
// pause_modes_e2e_test.cpp.
#include <atomic>
#include <optional>

#include "pause_fixture.hpp"
#include "sse_client.hpp"

namespace a2ad::pause_test {
namespace {

TEST_F(PauseE2e, TransitionTable) {
  // working -> paused-by-client (the handle), the same pause again -> the same handle.
  const std::string t = Send("slow", {{"delayMs", 60000}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  json::value p = Result("tasks/pause", {{"taskId", t}, {"reason", "operator review"}});
  EXPECT_EQ(p.at("state"), "paused-by-client");
  EXPECT_EQ(p.at("reason"), "operator review");
  const std::string handle(p.at("handle").as_string());
  EXPECT_EQ(Result("tasks/pause", {{"taskId", t}}).at("handle").as_string(), handle);
  EXPECT_EQ(Status(t), "paused");
  EXPECT_EQ(Events(t, "run.paused").size(), 1u);  // the repeat wrote nothing
  // Paused by the client, an agent pause is refused (the other initiator).
  EXPECT_EQ(ErrorCode(Rpc("tasks/await_resumption", {{"taskId", t}})), -32011);
  // A message does not resume it: it is refused and says how to resume.
  json::object reply{{"kind", "message"},
                     {"messageId", "reply-1"},
                     {"role", "user"},
                     {"taskId", t},
                     {"contextId", Task(t).at("contextId")},
                     {"parts", json::array{json::object{{"kind", "text"}, {"text", "go on"}}}}};
  json::value sent = Rpc("message/send", {{"message", reply}});
  EXPECT_EQ(ErrorCode(sent), -32004) << sent;
  EXPECT_NE(std::string(sent.at("error").at("message").as_string()).find("tasks/resume"),
            std::string::npos);
  EXPECT_EQ(Status(t), "paused");
  // paused -> working (with the handle), then a second resume has nothing to resume.
  json::value r = Result("tasks/resume", {{"taskId", t}, {"handle", handle}});
  EXPECT_EQ(r.at("state"), "working");
  EXPECT_EQ(r.at("cause"), "explicit_resume");
  EXPECT_EQ(Status(t), "running");
  EXPECT_EQ(ErrorCode(Resume(t, handle)), -32011);
  // working -> paused -> canceled; a canceled task can be neither paused nor resumed.
  const std::string h2(Result("tasks/pause", {{"taskId", t}}).at("handle").as_string());
  EXPECT_NE(h2, handle);  // a new pause, a new handle
  EXPECT_EQ(Result("tasks/cancel", {{"id", t}}).at("status").at("state"), "canceled");
  EXPECT_EQ(ErrorCode(Pause(t)), -32011);
  EXPECT_EQ(ErrorCode(Resume(t, h2)), -32011);
  EXPECT_FALSE(Task(t).at("metadata").as_object().contains("pause"));
  // input-required -> paused is refused (a gate is answered, not paused).
  const std::string gate = Send("gate");
  ASSERT_TRUE(WaitStatus(gate, "waiting-approval"));
  EXPECT_EQ(ErrorCode(Pause(gate)), -32011);
  // Paused by the agent, a client pause is refused (the other initiator).
  const std::string agent = Send("await-event");
  ASSERT_TRUE(WaitStatus(agent, "paused"));
  EXPECT_EQ(ErrorCode(Pause(agent)), -32011);
}

TEST_F(PauseE2e, ErrorsOnEveryBinding) {
  const std::string done = Send("slow", {{"delayMs", 0}});
  ASSERT_TRUE(WaitStatus(done, "completed"));
  const std::string t = Send("slow", {{"delayMs", 60000}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  ASSERT_EQ(Result("tasks/pause", {{"taskId", t}}).at("state"), "paused-by-client");
  // JSON-RPC 0.3 and 1.0.
  EXPECT_EQ(ErrorCode(Rpc("tasks/pause", {{"taskId", "no-such-task"}})), -32001);
  EXPECT_EQ(ErrorCode(Rpc("tasks/pause", {{"reason", "no task"}})), -32602);
  EXPECT_EQ(ErrorCode(Rpc("tasks/pause", {{"taskId", t}, {"mode", "now"}})), -32602);
  EXPECT_EQ(ErrorCode(Rpc("tasks/pause", {{"taskId", done}})), -32011);
  EXPECT_EQ(ErrorCode(Rpc("tasks/resume", {{"taskId", t}})), -32602);  // no handle
  EXPECT_EQ(ErrorCode(Rpc("tasks/resume", {{"taskId", t}, {"handle", "x"}})), -32012);
  EXPECT_EQ(ErrorCode(Rpc("tasks/await_resumption",
                          {{"taskId", t}, {"conditions", json::object{{"when", "later"}}}})),
            -32602);
  EXPECT_EQ(ErrorCode(Rpc("PauseTask", {{"id", done}}, "1.0")), -32011);
  EXPECT_EQ(ErrorCode(Rpc("ResumeTask", {{"id", t}, {"handle", "x"}}, "1.0")), -32012);
  EXPECT_EQ(ErrorCode(Rpc("PauseTask", {{"id", "no-such-task"}}, "1.0")), -32001);
  // REST 1.0: 409 with the google.rpc.Status naming the error.
  const Headers json_ct{{"Content-Type", "application/json"}};
  auto rest = [&](const std::string& target, const std::string& body) {
    auto r = client_->Request("POST", target, body, json_ct);
    return std::make_pair(r.status, json::parse(r.body));
  };
  auto [s1, b1] = rest("/a2a/rest/tasks/" + done + ":pause", "{}");
  EXPECT_EQ(s1, 409);
  EXPECT_EQ(b1.at("error").at("details").at(0).at("reason"), "TASK_NOT_PAUSABLE") << b1;
  auto [s2, b2] = rest("/a2a/rest/tasks/" + t + ":resume", R"({"handle":"x"})");
  EXPECT_EQ(s2, 409);
  EXPECT_EQ(b2.at("error").at("details").at(0).at("reason"), "RESUME_HANDLE_MISMATCH") << b2;
  auto [s3, b3] = rest("/a2a/rest/tasks/no-such-task:pause", "{}");
  EXPECT_EQ(s3, 404);
  // REST 0.3: 409 with the JSON-RPC code.
  auto [s4, b4] = rest("/a2a/rest03/v1/tasks/" + done + ":pause", "{}");
  EXPECT_EQ(s4, 409);
  EXPECT_EQ(b4.at("code"), -32011) << b4;
  auto [s5, b5] = rest("/a2a/rest03/v1/tasks/" + t + ":resume", R"({"handle":"x"})");
  EXPECT_EQ(s5, 409);
  EXPECT_EQ(b5.at("code"), -32012) << b5;
  // The right handle over REST 1.0 resumes and answers the task.
  auto [s6, b6] = rest("/a2a/rest/tasks/" + t + ":resume", "{\"handle\":\"" + HandleOf(t) + "\"}");
  EXPECT_EQ(s6, 200);
  EXPECT_EQ(b6.at("status").at("state"), "TASK_STATE_WORKING") << b6;
}

TEST_F(PauseE2e, WhatEachCallerSees) {
  const std::string t = Send("slow", {{"delayMs", 60000}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  const std::string handle(Result("tasks/pause", {{"taskId", t}}).at("handle").as_string());
  // Without the extension: working, the pause in metadata (0.3 and 1.0, JSON-RPC and REST).
  json::value plain = Task(t);
  EXPECT_EQ(plain.at("status").at("state"), "working");
  EXPECT_EQ(plain.at("metadata").at("pause").at("state"), "paused-by-client");
  EXPECT_EQ(plain.at("metadata").at("pause").at("resumeToken").as_string(), handle);
  json::value plain10 = Result("GetTask", {{"id", t}}, "1.0");
  EXPECT_EQ(plain10.at("status").at("state"), "TASK_STATE_WORKING");
  // With it: the literal states, and the activation echoed.
  json::value lit03 = Task(t, {{"X-A2A-Extensions", kExt}});
  EXPECT_EQ(lit03.at("status").at("state"), "paused-by-client");
  json::value lit10 = Result("GetTask", {{"id", t}}, "1.0", {{"A2A-Extensions", kExt}});
  EXPECT_EQ(lit10.at("status").at("state"), "TASK_STATE_PAUSED");
  EXPECT_EQ(lit10.at("status").at("pause").at("initiatedBy"), "client");
  EXPECT_EQ(lit10.at("status").at("pause").at("resumeToken").as_string(), handle);
  auto rest = client_->Request("GET", "/a2a/rest/tasks/" + t, "", {{"A2A-Extensions", kExt}});
  EXPECT_EQ(json::parse(rest.body).at("status").at("state"), "TASK_STATE_PAUSED");
  bool echoed = false;
  for (const auto& [k, v] : rest.headers) echoed |= (k == "A2A-Extensions" && v == kExt);
  EXPECT_TRUE(echoed);
  // ListTasks shows it too (1.0, activated).
  json::value list = Result("ListTasks", json::object{}, "1.0", {{"A2A-Extensions", kExt}});
  bool listed = false;
  for (const auto& x : list.at("tasks").as_array())
    if (x.at("id") == json::value(t)) listed = x.at("status").at("state") == "TASK_STATE_PAUSED";
  EXPECT_TRUE(listed);

  // Streams: a 0.3 resubscribe with the extension starts paused-by-client; a 1.0 one without
  // it starts working; both then see the resume as a status update with its cause.
  auto body = [&](const std::string& method) {
    return json::serialize(json::object{
        {"jsonrpc", "2.0"}, {"id", 7}, {"method", method}, {"params", json::object{{"id", t}}}});
  };
  testing::SseClient lit("127.0.0.1", server_.port, "/v1/a2a", body("tasks/resubscribe"),
                         {{"Content-Type", "application/json"}, {"X-A2A-Extensions", kExt}});
  testing::SseClient v10("127.0.0.1", server_.port, "/v1/a2a", body("SubscribeToTask"),
                         {{"Content-Type", "application/json"}, {"A2A-Version", "1.0"}});
  auto first = lit.Next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->Json().at("result").at("status").at("state"), "paused-by-client");
  auto first10 = v10.Next();
  ASSERT_TRUE(first10);
  EXPECT_EQ(first10->Json().at("result").at("task").at("status").at("state"), "TASK_STATE_WORKING");
  ASSERT_EQ(ErrorCode(Resume(t, handle)), 0);
  auto next = lit.Next();
  ASSERT_TRUE(next);
  const json::value next_json = next->Json();
  const json::value& u = next_json.at("result");
  EXPECT_EQ(u.at("kind"), "status-update");
  EXPECT_EQ(u.at("status").at("state"), "working");
  EXPECT_EQ(u.at("metadata").at("cause"), "explicit_resume");
  EXPECT_EQ(u.at("metadata").at("previousState"), "paused-by-client");
  EXPECT_EQ(u.at("metadata").at("hadResumeInput"), false);
  EXPECT_EQ(u.at("metadata").at("continueTranscript"), true);
  auto next10 = v10.Next();
  ASSERT_TRUE(next10);
  EXPECT_EQ(next10->Json().at("result").at("statusUpdate").at("metadata").at("cause"),
            "explicit_resume");
  // A pause while streaming: the update shows the pause (literal with the extension). The
  // resumed run may have sent a working update of its own before the pause landed (on a
  // loaded machine it did): those are passed over, at most a few.
  ASSERT_EQ(ErrorCode(Pause(t)), 0);
  const auto next_where = [](testing::SseClient& stream, const auto& is_it) {
    std::optional<json::value> found;
    for (int i = 0; i < 5 && !found; ++i) {
      auto event = stream.Next();
      if (!event) break;
      json::value v = event->Json();
      if (is_it(v)) found = std::move(v);
    }
    return found;
  };
  auto paused = next_where(lit, [](const json::value& v) {
    return v.at("result").at("status").at("state") == "paused-by-client";
  });
  ASSERT_TRUE(paused) << "no paused-by-client update on the stream with the extension";
  auto paused10 = next_where(v10, [](const json::value& v) {
    const auto* update = v.at("result").as_object().if_contains("statusUpdate");
    const auto* metadata = update ? update->as_object().if_contains("metadata") : nullptr;
    return metadata && metadata->as_object().contains("pause");
  });
  ASSERT_TRUE(paused10) << "no update with the pause in its metadata on the 1.0 stream";
  const json::value& pu = paused10->at("result").at("statusUpdate");
  EXPECT_EQ(pu.at("status").at("state"), "TASK_STATE_WORKING");
  EXPECT_EQ(pu.at("metadata").at("pause").at("state"), "paused-by-client");
}

TEST_F(PauseE2e, BulkPauseAndResumeByContext) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Send("slow", {{"delayMs", 60000}}, "ctx-bulk"));
  const std::string other = Send("slow", {{"delayMs", 60000}}, "ctx-other");
  for (const auto& id : ids) ASSERT_TRUE(WaitStatus(id, "running"));
  json::value r = Result("tasks/pause", {{"contextId", "ctx-bulk"}, {"reason", "over budget"}});
  EXPECT_EQ(r.at("contextId"), "ctx-bulk");
  EXPECT_EQ(r.at("truncated"), false);
  ASSERT_EQ(r.at("tasks").as_array().size(), 5u) << r;
  for (const auto& x : r.at("tasks").as_array()) EXPECT_EQ(x.at("state"), "paused-by-client");
  for (const auto& id : ids) EXPECT_EQ(Status(id), "paused");
  EXPECT_EQ(Status(other), "running");  // another context is untouched
  // 1.0 spelling, resume every paused task of the context with its own handle.
  json::value back = Result("ResumeTask", {{"contextId", "ctx-bulk"}}, "1.0");
  ASSERT_EQ(back.at("tasks").as_array().size(), 5u) << back;
  for (const auto& x : back.at("tasks").as_array()) EXPECT_EQ(x.at("cause"), "explicit_resume");
  for (const auto& id : ids) EXPECT_EQ(Status(id), "running");
  EXPECT_EQ(ErrorCode(Rpc("tasks/pause", {{"contextId", "c"}, {"taskId", ids[0]}})), -32602);
}

TEST_F(PauseE2e, TwoResumesOneWins) {
  for (int round = 0; round < 5; ++round) {
    const std::string t = Send("slow", {{"delayMs", 60000}});
    ASSERT_TRUE(WaitStatus(t, "running"));
    ASSERT_EQ(ErrorCode(Pause(t)), 0);
    const std::string handle = HandleOf(t);
    std::atomic<int> ok{0}, refused{0};
    auto resume = [&] {
      testing::HttpClient c("127.0.0.1", server_.port);
      json::object req{{"jsonrpc", "2.0"},
                       {"id", 1},
                       {"method", "tasks/resume"},
                       {"params", json::object{{"taskId", t}, {"handle", handle}}}};
      json::value r = json::parse(
          c.Request("POST", "/v1/a2a", json::serialize(req), {{"Content-Type", "application/json"}})
              .body);
      if (r.as_object().contains("result")) ++ok;
      if (r.as_object().contains("error") && r.at("error").at("code") == -32011) ++refused;
    };
    std::thread a(resume), b(resume);
    a.join();
    b.join();
    EXPECT_EQ(ok.load(), 1);
    EXPECT_EQ(refused.load(), 1);
    EXPECT_EQ(Events(t, "run.resumed").size(), 1u);
    ASSERT_EQ(ErrorCode(Rpc("tasks/cancel", {{"id", t}})), 0);
  }
}

TEST_F(PauseE2e, ResumeRacingCancelEndsCanceled) {
  // Either the resume lands first (then the cancel ends the running task) or the cancel does
  // (then the resume finds a canceled task: -32011); never a resumed task after a cancel.
  for (int round = 0; round < 5; ++round) {
    const std::string t = Send("slow", {{"delayMs", 60000}});
    ASSERT_TRUE(WaitStatus(t, "running"));
    ASSERT_EQ(ErrorCode(Pause(t)), 0);
    const std::string handle = HandleOf(t);
    auto call = [&](const std::string& method, json::object params, json::value& out) {
      testing::HttpClient c("127.0.0.1", server_.port);
      json::object req{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}};
      out = json::parse(
          c.Request("POST", "/v1/a2a", json::serialize(req), {{"Content-Type", "application/json"}})
              .body);
    };
    json::value resumed, canceled;
    std::thread a([&] { call("tasks/resume", {{"taskId", t}, {"handle", handle}}, resumed); });
    std::thread b([&] { call("tasks/cancel", {{"id", t}}, canceled); });
    a.join();
    b.join();
    EXPECT_EQ(ErrorCode(canceled), 0) << canceled;
    EXPECT_TRUE(ErrorCode(resumed) == 0 || ErrorCode(resumed) == -32011) << resumed;
    EXPECT_EQ(Status(t), "cancelled");
    EXPECT_EQ(Task(t).at("status").at("state"), "canceled");
  }
}

TEST_F(PauseE2e, PauseRacingCompletionOneWins) {
  // A pause sent as the delay ends: either it wins (the run parks before completing, and
  // completes once resumed) or the run completed first (the pause is refused as terminal).
  int won = 0, lost = 0;
  for (int round = 0; round < 8; ++round) {
    const std::string t = Send("slow", {{"delayMs", 150 + 10 * round}});
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // as the delay ends: the race
    json::value p = Pause(t);
    if (ErrorCode(p) == 0) {
      ++won;
      testing::GiveTimeToMisbehave(std::chrono::milliseconds(400));  // (for it to complete)
      EXPECT_EQ(Status(t), "paused");
      EXPECT_TRUE(Events(t, "run.completed").empty());
      ASSERT_EQ(ErrorCode(Resume(t, HandleOf(t))), 0);
      EXPECT_TRUE(WaitStatus(t, "completed"));
    } else {
      ++lost;
      EXPECT_EQ(ErrorCode(p), -32011) << p;
      EXPECT_EQ(Status(t), "completed");
    }
  }
  EXPECT_EQ(won + lost, 8);
}

}  // namespace
}  // namespace a2ad::pause_test
