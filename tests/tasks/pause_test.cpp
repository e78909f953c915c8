// The pause extension's pure parts (tasks/pause.hpp, ext/pause/): conditions, what a paused run
// admits, the fold of run.paused / run.resumed into the run and the task, and the view that
// shows the literal states.
#include "a2ad/tasks/pause.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "a2ad/ext/pause/pause_extension.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/tasks/task_projection.hpp"

namespace a2ad::tasks {
namespace {
namespace json = boost::json;

constexpr int64_t kNow = 1'800'000'000'000;

TEST(PauseConditions, AcceptsTheSeedsShapesAndMakesTimesAbsolute) {
  auto c = NormalizeConditions(json::parse(R"({"onEvent":"ci.done","trigger":{"afterMs":5000},
                      "timeout":{"durationMinutes":0.5}})"),
                               kNow, "params.conditions");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->trigger_at_ms, kNow + 5000);
  EXPECT_EQ(c->timeout_at_ms, kNow + 30000);
  EXPECT_EQ(c->normalized.at("onEvent"), "ci.done");
  EXPECT_EQ(c->normalized.at("timeout").at("onTimeout"), "fail");  // the default
  EXPECT_EQ(c->normalized.at("trigger"), json::value(core::FormatTimestamp(kNow + 5000)));
  auto at = NormalizeConditions(json::parse(R"({"trigger":"2027-01-15T09:00:00Z"})"), kNow, "c");
  ASSERT_TRUE(at.ok());
  int64_t want = 0;
  ASSERT_TRUE(core::ParseTimestamp("2027-01-15T09:00:00Z", want));
  EXPECT_EQ(at->trigger_at_ms, want);
  EXPECT_TRUE(NormalizeConditions(json::value(), kNow, "c").ok());  // none: parks until resumed
}

TEST(PauseConditions, RefusesWhatItCannotKeepNamingTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"when":"later"})", "c.when"},
      {R"({"onEvent":""})", "c.onEvent"},
      {R"({"onEvent":7})", "c.onEvent"},
      {R"({"trigger":"tomorrow"})", "c.trigger"},
      {R"({"trigger":{"afterMs":-1}})", "c.trigger.afterMs"},
      {R"({"trigger":{"afterMs":99999999999}})", "c.trigger.afterMs"},
      {R"({"trigger":"2099-01-01T00:00:00Z"})", "c.trigger"},  // more than 30 days ahead
      {R"({"timeout":{"durationMinutes":0}})", "c.timeout.durationMinutes"},
      {R"({"timeout":{"onTimeout":"fail"}})", "c.timeout.durationMinutes"},
      {R"({"timeout":{"durationMinutes":1,"onTimeout":"retry"}})", "c.timeout.onTimeout"},
      {R"({"timeout":{"durationMinutes":1,"every":2}})", "c.timeout.every"},
      {R"([1])", "c"},
  };
  for (const auto& [text, field] : cases) {
    auto c = NormalizeConditions(json::parse(text), kNow, "c");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.error().code, core::ErrorCode::kInvalidParams) << text;
    EXPECT_EQ(c.error().message.rfind(std::string(field) + ":", 0), 0u)
        << text << " -> " << c.error().message;
  }
}

protocol::RunSnapshot PausedRun(const std::string& mode, const std::string& in_flight) {
  protocol::RunSnapshot run;
  run.status = "paused";
  run.NodeOrNew("wait").status = "running";
  run.pause = json::object{{"mode", mode}, {"inFlightNode", in_flight}, {"resumeToken", "h"}};
  return run;
}

EventDraft Draft(std::string type, std::string node, json::object payload = {}) {
  return EventDraft{std::move(type), std::move(node), std::move(payload)};
}

TEST(PauseAdmits, OnlyTheStepThatEndsTheNodeInFlight) {
  const auto completes = std::vector<EventDraft>{Draft(protocol::kEvArtifactCreated, "wait"),
                                                 Draft(protocol::kEvNodeCompleted, "wait")};
  const auto next_node = std::vector<EventDraft>{Draft(protocol::kEvNodeStarted, "done")};
  const auto fails = std::vector<EventDraft>{Draft(protocol::kEvNodeFailed, "wait"),
                                             Draft(protocol::kEvRunFailed, "")};
  const auto ends_run = std::vector<EventDraft>{Draft(protocol::kEvRunCompleted, "")};
  const auto child_running =
      std::vector<EventDraft>{Draft(protocol::kEvChildStatus, "wait", {{"status", "running"}})};
  const auto child_gate = std::vector<EventDraft>{
      Draft(protocol::kEvChildStatus, "wait", {{"status", "waiting-approval"}})};

  const protocol::RunSnapshot finish = PausedRun("finish_step", "wait");
  EXPECT_TRUE(PauseAdmits(finish, completes));
  EXPECT_FALSE(PauseAdmits(finish, next_node));
  EXPECT_FALSE(PauseAdmits(finish, fails));  // a run-ending step waits for the resume
  EXPECT_FALSE(PauseAdmits(finish, ends_run));
  EXPECT_FALSE(PauseAdmits(finish, child_running));  // finish_step: only the node's end
  const protocol::RunSnapshot whole = PausedRun("wait_for_completion", "wait");
  EXPECT_TRUE(PauseAdmits(whole, completes));
  EXPECT_TRUE(PauseAdmits(whole, child_running));
  EXPECT_FALSE(PauseAdmits(whole, child_gate));  // never a gate while paused
  EXPECT_FALSE(PauseAdmits(PausedRun("interrupt_immediate", "wait"), completes));
  EXPECT_FALSE(PauseAdmits(PausedRun("finish_step", ""), completes));  // nothing in flight
  protocol::RunSnapshot done = finish;
  done.Node("wait")->status = "completed";
  EXPECT_FALSE(PauseAdmits(done, completes));  // its step already committed
  protocol::RunSnapshot running;
  running.status = "running";
  EXPECT_TRUE(PauseAdmits(running, ends_run));  // not paused
}

struct Log {
  storage::TaskRecord rec;
  core::Result<void> Add(std::string type, json::object payload = {}) {
    protocol::RunEvent e;
    e.event_id = "e" + std::to_string(rec.last_sequence + 1);
    e.run_id = "t1";
    e.type = std::move(type);
    e.payload = std::move(payload);
    e.timestamp_ms = kNow + rec.last_sequence + 1;
    e.sequence = rec.last_sequence + 1;
    last = e;
    return ApplyEvent(rec, e);
  }
  protocol::RunEvent last;
};

json::object Entry(const std::string& initiator, json::object extra = {}) {
  PauseTaskRequest req;
  req.initiated_by = initiator;
  req.reason = "review";
  PausePlan plan;
  plan.abandon_node = extra.contains("abandon") ? "wait" : "";
  PauseEntryFields f{req, "suspend-1", kNow, "running", "working", &plan, {}, "alice"};
  return PauseEntry(f);
}

TEST(PauseFold, PausedAndResumedInTheRunAndTheTask) {
  Log log;
  protocol::Message m;
  m.message_id = "m1";
  m.role = protocol::Role::kUser;
  m.parts.push_back(protocol::Part::Text("hi"));
  ASSERT_TRUE(
      log.Add(protocol::kEvTaskSubmitted,
              {{"contextId", "c1"}, {"skillId", "w"}, {"message", protocol::MessageToJson(m)}})
          .ok());
  ASSERT_TRUE(log.Add(protocol::kEvRunStarted).ok());
  ASSERT_TRUE(log.Add(protocol::kEvNodeStarted, {{"nodeId", "wait"}}).ok());
  ASSERT_TRUE(log.Add(protocol::kEvRunPaused, Entry("client", {{"abandon", true}})).ok());
  // The run: paused, the pause kept (without its caller), the abandoned node reset.
  EXPECT_EQ(RunStatus(log.rec.run), "paused");
  ASSERT_NE(OpenPause(log.rec.run), nullptr);
  EXPECT_FALSE(OpenPause(log.rec.run)->contains("caller"));
  EXPECT_EQ(log.rec.run.Node("wait"), nullptr);
  // The task: working, metadata.pause; the update carries it.
  EXPECT_EQ(log.rec.task.status.state, protocol::TaskState::kWorking);
  const json::object& view = log.rec.task.metadata.at("pause").as_object();
  EXPECT_EQ(view.at("state"), "paused-by-client");
  EXPECT_EQ(view.at("resumeToken"), "suspend-1");
  EXPECT_FALSE(view.contains("previousStatus"));  // internal: not in the view
  auto update = ProjectEvent(log.rec.task, log.last);
  ASSERT_TRUE(update);
  EXPECT_EQ(update->status_update.metadata.at("pause").at("state"), "paused-by-client");
  EXPECT_FALSE(update->status_update.final);
  ASSERT_TRUE(log.Add(protocol::kEvRunResumed, {{"previousState", "paused-by-client"},
                                                {"cause", "explicit_resume"},
                                                {"hadResumeInput", true},
                                                {"continueTranscript", false},
                                                {"resumedAt", "2027-01-15T08:00:00.000Z"},
                                                {"input", 42}})
                  .ok());
  EXPECT_EQ(RunStatus(log.rec.run), "running");
  EXPECT_EQ(OpenPause(log.rec.run), nullptr);
  ASSERT_TRUE(log.rec.run.last_resume);
  EXPECT_EQ(log.rec.run.last_resume->at("input"), 42);
  EXPECT_FALSE(log.rec.task.metadata.contains("pause"));
  auto resumed = ProjectEvent(log.rec.task, log.last);
  ASSERT_TRUE(resumed);
  const json::object& md = resumed->status_update.metadata;
  EXPECT_EQ(md.at("previousState"), "paused-by-client");
  EXPECT_EQ(md.at("cause"), "explicit_resume");
  EXPECT_EQ(md.at("hadResumeInput"), true);
  EXPECT_EQ(md.at("continueTranscript"), false);
  EXPECT_FALSE(md.contains("pause"));
  // Paused again, then cancelled: the terminal task says nothing of a pause.
  ASSERT_TRUE(log.Add(protocol::kEvRunPaused, Entry("agent")).ok());
  EXPECT_EQ(log.rec.task.metadata.at("pause").at("state"), "paused-by-agent");
  ASSERT_TRUE(log.Add(protocol::kEvRunCancelled).ok());
  EXPECT_FALSE(log.rec.task.metadata.contains("pause"));
  EXPECT_EQ(OpenPause(log.rec.run), nullptr);
}

TEST(PauseView, LiteralStatesForCallersOfTheExtension) {
  using protocol::Wire;
  const json::value paused = json::parse(R"({"id":"t","status":{"state":"working"},
      "metadata":{"pause":{"state":"paused-by-agent","resumeToken":"h","reason":"r"}}})");
  json::value v03 = paused;
  ext::pause::ShowPausedStates(v03, protocol::Wire::kV03);
  EXPECT_EQ(v03.at("status").at("state"), "paused-by-agent");
  EXPECT_FALSE(v03.at("status").as_object().contains("pause"));
  json::value v10 = json::object{{"statusUpdate", paused}};  // a 1.0 stream event
  ext::pause::ShowPausedStates(v10, protocol::Wire::kV10);
  const json::value& st = v10.at("statusUpdate").at("status");
  EXPECT_EQ(st.at("state"), "TASK_STATE_PAUSED");
  EXPECT_EQ(st.at("pause").at("resumeToken"), "h");
  EXPECT_FALSE(st.at("pause").as_object().contains("state"));
  json::value list = json::object{{"tasks", json::array{paused, paused}}};  // ListTasks
  ext::pause::ShowPausedStates(list, protocol::Wire::kV10);
  EXPECT_EQ(list.at("tasks").at(1).at("status").at("state"), "TASK_STATE_PAUSED");
  json::value working = json::parse(R"({"status":{"state":"working"},"metadata":{}})");
  const json::value before = working;
  ext::pause::ShowPausedStates(working, protocol::Wire::kV03);
  EXPECT_EQ(working, before);  // nothing paused, nothing changed
}

}  // namespace
}  // namespace a2ad::tasks
