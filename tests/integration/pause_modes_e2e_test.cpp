// The pause extension's modes per node kind, agent pauses (core.awaitResumption and
// tasks/await_resumption: event, trigger, timeout) and SIGKILL at each durable moment, through
// the real binary (issue 15; tasks/pause.hpp, docs/PAUSE.md).
#include "pause_fixture.hpp"

namespace a2ad::pause_test {
namespace {
using Clock = std::chrono::steady_clock;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

TEST_F(PauseE2e, FinishStepLetsTheDelayEndThenParks) {
  const std::string t = Send("slow", {{"delayMs", 1200}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  ASSERT_TRUE(WaitNodeStatus(t, "wait", "running"));  // the step is in flight
  ASSERT_EQ(ErrorCode(Pause(t, "finish_step")), 0);
  EXPECT_TRUE(WaitNodeStatus(t, "wait", "completed"));           // the delay ended
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(500));  // (for "done" to start)
  EXPECT_EQ(Status(t), "paused");
  EXPECT_EQ(NodeStatus(t, "wait"), "completed");  // the step in flight committed
  EXPECT_EQ(NodeStatus(t, "done"), "");           // and nothing after it started
  ASSERT_EQ(ErrorCode(Resume(t, HandleOf(t))), 0);
  EXPECT_TRUE(WaitStatus(t, "completed"));
}

TEST_F(PauseE2e, InterruptImmediateAbandonsTheDelayAndRunsItAgain) {
  const std::string t = Send("slow", {{"delayMs", 1200}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  ASSERT_TRUE(WaitNodeStatus(t, "wait", "running"));  // the step is in flight
  ASSERT_EQ(ErrorCode(Pause(t, "interrupt_immediate")), 0);
  // Past the abandoned delay's end: it must not complete.
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(1500));
  EXPECT_EQ(Status(t), "paused");
  EXPECT_EQ(NodeStatus(t, "wait"), "");  // abandoned: to start again
  EXPECT_TRUE(Events(t, "node.completed").empty());
  const auto resumed = Clock::now();
  ASSERT_EQ(ErrorCode(Resume(t, HandleOf(t))), 0);
  ASSERT_TRUE(WaitStatus(t, "completed"));
  EXPECT_GE(MsSince(resumed), 1100);                  // the whole delay again, from the resume
  EXPECT_EQ(Events(t, "node.started").size(), 3u);    // wait twice, then done
  EXPECT_EQ(Events(t, "node.completed").size(), 2u);  // each node committed once
}

TEST_F(PauseE2e, WaitForCompletionLetsTheChildFinish) {
  const std::string t = Send("parent", {{"delayMs", 1200}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  ASSERT_TRUE(testing::WaitFor([&] {  // the child's step is in flight
    const std::string c = ChildOf(t);
    return !c.empty() && NodeStatus(c, "wait") == "running";
  }));
  ASSERT_EQ(ErrorCode(Pause(t, "wait_for_completion")), 0);
  const std::string child(Run(t).at("nodeStates").at("call").at("childRunId").as_string());
  EXPECT_EQ(Status(child), "running");  // not paused with its parent
  ASSERT_TRUE(WaitStatus(child, "completed"));
  EXPECT_TRUE(WaitNodeStatus(t, "call", "completed"));
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(300));  // (for "end" to start)
  EXPECT_EQ(Status(t), "paused");
  EXPECT_EQ(NodeStatus(t, "call"), "completed");  // the node in flight finished
  EXPECT_EQ(NodeStatus(t, "end"), "");
  ASSERT_EQ(ErrorCode(Resume(t, HandleOf(t))), 0);
  EXPECT_TRUE(WaitStatus(t, "completed"));
}

TEST_F(PauseE2e, FinishStepPausesTheChildWithItsParent) {
  const std::string t = Send("parent");
  ASSERT_TRUE(WaitStatus(t, "running"));
  ASSERT_TRUE(testing::WaitFor([&] {  // the child's step is in flight
    const std::string c = ChildOf(t);
    return !c.empty() && NodeStatus(c, "wait") == "running";
  }));
  ASSERT_EQ(ErrorCode(Pause(t, "finish_step")), 0);
  const std::string child(Run(t).at("nodeStates").at("call").at("childRunId").as_string());
  EXPECT_EQ(Status(child), "paused");
  EXPECT_EQ(Task(child).at("metadata").at("pause").at("reason").as_string(),
            "parent run " + t + " was paused");
  // The child's delay ends (its step in flight), then it parks; so does the parent.
  EXPECT_TRUE(WaitNodeStatus(child, "wait", "completed"));
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(400));  // (for either to go on)
  EXPECT_EQ(Status(child), "paused");
  EXPECT_EQ(Status(t), "paused");
  ASSERT_EQ(ErrorCode(Resume(t, HandleOf(t))), 0);  // resumes the child too
  EXPECT_TRUE(WaitStatus(child, "completed"));
  EXPECT_TRUE(WaitStatus(t, "completed"));
}

TEST_F(PauseE2e, AgentPauseUntilAnEvent) {
  const std::string t = Send("await-event");
  ASSERT_TRUE(WaitStatus(t, "paused"));
  json::value task = Task(t);
  EXPECT_EQ(task.at("status").at("state"), "working");
  const json::value& pause = task.at("metadata").at("pause");
  EXPECT_EQ(pause.at("state"), "paused-by-agent");
  EXPECT_EQ(pause.at("conditions").at("onEvent"), "go");
  const Headers ct{{"Content-Type", "application/json"}};
  auto post = [&](const std::string& body) {
    auto r = client_->Request("POST", "/v1/events", body, ct);
    return std::make_pair(r.status, json::parse(r.body));
  };
  auto [s0, none] = post(R"({"name":"other","payload":{}})");
  EXPECT_EQ(s0, 200);
  EXPECT_TRUE(none.at("resumed").as_array().empty());
  EXPECT_EQ(post(R"({"name":"go","extra":1})").first, 400);  // unknown member
  EXPECT_EQ(post(R"({"payload":{}})").first, 400);           // no name
  auto [s1, hit] = post(R"({"name":"go","payload":{"build":7}})");
  EXPECT_EQ(s1, 200);
  ASSERT_EQ(hit.at("resumed").as_array().size(), 1u);
  EXPECT_EQ(hit.at("resumed").at(0).as_string(), t);
  ASSERT_TRUE(WaitStatus(t, "completed"));
  const json::value out = Run(t).at("nodeStates").at("done").at("outputs");
  EXPECT_EQ(out.at("input").at("build"), 7);
  EXPECT_EQ(out.at("cause"), "external_event");
  EXPECT_TRUE(post(R"({"name":"go"})").second.at("resumed").as_array().empty());  // spent
}

TEST_F(PauseE2e, AgentPauseTimersAndExplicitResume) {
  const auto t0 = Clock::now();
  const std::string trig = Send("await-trigger");
  const std::string fail = Send("await-timeout-fail");
  const std::string res = Send("await-timeout-resume");
  const std::string manual = Send("await-event");
  ASSERT_TRUE(WaitStatus(manual, "paused"));
  // An explicit resume with the handle and an input: the input is the node's output.
  json::value r = Resume(manual, HandleOf(manual), {{"input", json::object{{"ok", true}}}});
  ASSERT_EQ(ErrorCode(r), 0) << r;
  ASSERT_TRUE(WaitStatus(manual, "completed"));
  EXPECT_EQ(Run(manual).at("nodeStates").at("done").at("outputs").at("cause"), "explicit_resume");
  EXPECT_EQ(Run(manual).at("nodeStates").at("done").at("outputs").at("input").at("ok"), true);
  // The trigger fires (condition_fired); the timeouts fail one run and resume the other.
  ASSERT_TRUE(WaitStatus(trig, "completed"));
  EXPECT_GE(MsSince(t0), 1400);
  EXPECT_EQ(Run(trig).at("nodeStates").at("done").at("outputs").at("cause"), "condition_fired");
  ASSERT_TRUE(WaitStatus(fail, "failed"));
  EXPECT_EQ(Task(fail).at("status").at("state"), "failed");
  EXPECT_EQ(Task(fail).at("metadata").at("openwop").at("error").at("code"), "pause_timeout");
  ASSERT_TRUE(WaitStatus(res, "completed"));
  EXPECT_EQ(Run(res).at("nodeStates").at("done").at("outputs").at("cause"), "timeout");
}

TEST_F(PauseE2e, AwaitResumptionMethodParksAWorkingTask) {
  const std::string t = Send("slow", {{"delayMs", 400}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  json::value p =
      Result("tasks/await_resumption",
             {{"taskId", t},
              {"reason", "waiting on ci"},
              {"conditions", json::object{{"trigger", json::object{{"afterMs", 900}}}}}});
  EXPECT_EQ(p.at("state"), "paused-by-agent");
  EXPECT_FALSE(p.at("pausedUntil").as_string().empty());
  EXPECT_EQ(Status(t), "paused");
  ASSERT_TRUE(WaitStatus(t, "completed"));  // woke by itself, ran its delay again, completed
  const auto resumed = Events(t, "run.resumed");
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].at("payload").at("cause"), "condition_fired");
}

TEST_F(PauseE2e, ConditionRacingExplicitResumeOneWins) {
  for (int round = 0; round < 4; ++round) {
    const std::string t = Send("await-trigger");
    ASSERT_TRUE(WaitStatus(t, "paused"));
    const std::string handle = HandleOf(t);
    // Around the trigger's instant: the race is the test.
    std::this_thread::sleep_for(std::chrono::milliseconds(1450 + 20 * round));
    json::value r = Resume(t, handle);
    EXPECT_TRUE(ErrorCode(r) == 0 || ErrorCode(r) == -32011) << r;
    ASSERT_TRUE(WaitStatus(t, "completed"));
    EXPECT_EQ(Events(t, "run.resumed").size(), 1u);
  }
}

// ---- SIGKILL at each durable moment ----------------------------------------------------------

TEST_F(PauseE2e, APausedTaskStaysPausedAcrossASigkill) {
  const std::string t = Send("slow", {{"delayMs", 60000}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  ASSERT_EQ(ErrorCode(Pause(t)), 0);  // acknowledged: committed
  const std::string handle = HandleOf(t);
  KillAndRestart();
  EXPECT_EQ(Status(t), "paused");
  EXPECT_EQ(HandleOf(t), handle);
  EXPECT_EQ(ErrorCode(Resume(t, "stale")), -32012);
  ASSERT_EQ(ErrorCode(Resume(t, handle)), 0);
  EXPECT_EQ(Status(t), "running");
}

TEST_F(PauseE2e, AFinishStepPauseWaitingForItsStepParksAfterASigkill) {
  const std::string t = Send("slow", {{"delayMs", 1200}});
  ASSERT_TRUE(WaitStatus(t, "running"));
  ASSERT_TRUE(WaitNodeStatus(t, "wait", "running"));  // the step is in flight
  ASSERT_EQ(ErrorCode(Pause(t, "finish_step")), 0);
  KillAndRestart();  // while the delay (the step in flight) still runs
  // Past the delay's end: nothing after the pause starts, across the restart either.
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(1500));
  EXPECT_EQ(Status(t), "paused");  // parked; nothing after the pause started
  EXPECT_EQ(NodeStatus(t, "done"), "");
  ASSERT_EQ(ErrorCode(Resume(t, HandleOf(t))), 0);
  EXPECT_TRUE(WaitStatus(t, "completed"));
  EXPECT_EQ(Events(t, "node.completed").size(), 2u);  // nothing committed twice
}

TEST_F(PauseE2e, AnAgentTimerWakesAtTheSameInstantAfterASigkill) {
  const std::string t = Send("await-trigger");
  ASSERT_TRUE(WaitStatus(t, "paused"));
  const std::string paused_at(Task(t).at("metadata").at("pause").at("pausedAt").as_string());
  // Killed a while into the pause (its trigger is 1.5 s after it): the timing is the scenario.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  KillAndRestart();
  ASSERT_TRUE(WaitStatus(t, "completed"));
  const auto resumed = Events(t, "run.resumed");
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].at("payload").at("cause"), "condition_fired");
  // Not earlier than the trigger (1.5 s after the pause), whatever the restart did.
  EXPECT_GE(std::string(resumed[0].at("payload").at("resumedAt").as_string()), paused_at);
  EXPECT_EQ(Run(t).at("nodeStates").at("done").at("outputs").at("cause"), "condition_fired");
}

TEST_F(PauseE2e, AnEventWaitSurvivesASigkill) {
  const std::string t = Send("await-event");
  ASSERT_TRUE(WaitStatus(t, "paused"));
  KillAndRestart();
  auto r = client_->Request("POST", "/v1/events", R"({"name":"go","payload":1})",
                            {{"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body).at("resumed").as_array().size(), 1u) << r.body;
  EXPECT_TRUE(WaitStatus(t, "completed"));
}

}  // namespace
}  // namespace a2ad::pause_test
