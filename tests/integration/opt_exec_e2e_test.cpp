// Plans executed as runs, objectives streamed, tasks joining by message (issue 17; ext/opt,
// docs/OPT.md "Execution", "Subscribing", "Joining by message"), through the real binary on a
// real SQLite data directory: a three-plan objective of real workflow runs with dependencies
// and an approval gate executed to completion, a failure stopping its dependents, cancel,
// SIGKILLs mid-plan, a dropped and resumed subscription, the REST routes.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "opt_fixture.hpp"
#include "sse_client.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace json = boost::json;
using testing::kOpt;
using testing::SseClient;

class OptExec : public testing::OptFixture {
 protected:
  static json::object Task(const std::string& name, const std::string& skill,
                           json::array deps = {}, json::object inputs = {}) {
    json::object t{{"name", name}, {"dependencies", std::move(deps)}};
    if (!skill.empty()) t["skill"] = skill;
    if (!inputs.empty()) t["inputs"] = std::move(inputs);
    return t;
  }
  static json::object Delay(int ms) { return json::object{{"delayMs", ms}}; }
  json::value NewPlan(const std::string& objective, const std::string& name, json::array tasks,
                      json::array deps = {}, bool execute = true) {
    return Result("plans/create", {{"objectiveId", objective},
                                   {"name", name},
                                   {"execute", execute},
                                   {"dependencies", std::move(deps)},
                                   {"tasks", std::move(tasks)}})
        .at("plan");
  }
  static std::string StatusOfTask(const json::value& o, const std::string& name) {
    return Str(TaskNamed(o, name), "status");
  }
  // The A2A tasks of objective `id` (ListTasks by contextId, A2A 1.0).
  json::array RunsOf(const std::string& id) {
    return Result("ListTasks", {{"contextId", id}, {"pageSize", 100}}, "1.0").at("tasks").as_array();
  }
  std::string Sub(const std::string& id, const std::string& extra = "") {
    return R"({"jsonrpc":"2.0","id":7,"method":"objectives/subscribe","params":{"id":")" + id +
           "\"" + extra + "}}";
  }
};

TEST_F(OptExec, ThreePlansOfRealRunsOneBehindAGateExecuteToCompletion) {
  const std::string id = NewObjective("launch");
  json::value research = NewPlan(
      id, "Research",
      json::array{Task("search", "work", {}, Delay(400)), Task("quotes", "work", {}, Delay(400)),
                  Task("summary", "work", json::array{"task-0", "task-1"})});
  json::value review = NewPlan(id, "Review", json::array{Task("approve", "gate")},
                               json::array{research.at("id")});
  json::value publish = NewPlan(id, "Publish", json::array{Task("post", "work")},
                                json::array{review.at("id")});
  // The two independent tasks run at the same time; the plans after them wait.
  json::value o = WaitFor(id, [](const json::value& v) {
    auto running = [&](const char* n) {
      const std::string s = StatusOfTask(v, n);
      return s == "submitted" || s == "working";
    };
    return running("search") && running("quotes");
  });
  EXPECT_EQ(StatusOfTask(o, "summary"), "pending");
  EXPECT_EQ(Str(TaskNamed(o, "summary"), "a2aTaskId"), "");  // not started before its dependencies
  EXPECT_EQ(StatusOf(o), "working");
  EXPECT_EQ(StatusOf(o.at("plans").at(1)), "blocked");
  EXPECT_EQ(Str(o.at("plans").at(1), "blockedOn"), "dependencies");
  // The gate: the objective is blocked until it is approved.
  o = WaitFor(id, [](const json::value& v) { return StatusOfTask(v, "approve") == "input-required"; });
  EXPECT_EQ(StatusOf(o), "blocked");
  EXPECT_EQ(Str(o.at("plans").at(1), "blockedOn"), "input");
  EXPECT_EQ(StatusOfTask(o, "summary"), "completed");
  EXPECT_EQ(StatusOf(o.at("plans").at(2)), "blocked");
  const json::value approve = TaskNamed(o, "approve");
  const std::string run = Str(approve, "a2aTaskId");
  json::value task = A2aTask(run);
  EXPECT_EQ(task.at("status").at("state"), "input-required");
  EXPECT_EQ(task.at("contextId"), json::value(id));  // a task started under an objective
  const json::object& md = task.at("metadata").as_object();
  EXPECT_EQ(md.at("opt/v1/objectiveId"), json::value(id));
  EXPECT_EQ(md.at("opt/v1/planId"), review.at("id"));
  EXPECT_EQ(md.at("opt/v1/taskIndex"), 0);
  EXPECT_EQ(md.at("opt/v1/planTaskId"), approve.at("id"));
  EXPECT_TRUE(md.at("opt/v1/dependencies").as_array().empty());
  json::value summary_run = A2aTask(Str(TaskNamed(o, "summary"), "a2aTaskId"));
  EXPECT_EQ(summary_run.at("metadata").at("opt/v1/dependencies").as_array().size(), 2u);
  EXPECT_EQ(Answer(run, id, "accept").at("status").at("state"), "completed");
  o = WaitFor(id, [](const json::value& v) { return StatusOf(v) == "completed"; });
  std::set<std::string> runs;
  for (const auto& p : o.at("plans").as_array()) {
    EXPECT_EQ(StatusOf(p), "completed");
    for (const auto& t : p.at("tasks").as_array()) {
      EXPECT_EQ(StatusOf(t), "completed") << t;
      runs.insert(Str(t, "a2aTaskId"));
    }
  }
  EXPECT_EQ(runs.size(), 5u);
  EXPECT_EQ(RunsOf(id).size(), 5u);  // one run per plan task
  (void)publish;
}

TEST_F(OptExec, AFailedTaskStopsItsDependentsAndTheIndependentOnesRunOn) {
  const std::string id = NewObjective("partly");
  NewPlan(id, "p",
          json::array{Task("a", "boom"), Task("b", "work", json::array{"task-0"}),
                      Task("c", "work", json::array{"task-1"}), Task("d", "work", {}, Delay(200))});
  json::value o = WaitFor(id, [](const json::value& v) {
    return StatusOfTask(v, "a") == "failed" && StatusOfTask(v, "d") == "completed";
  });
  const json::value a = TaskNamed(o, "a"), b = TaskNamed(o, "b"), c = TaskNamed(o, "c");
  EXPECT_EQ(StatusOf(b), "canceled");
  EXPECT_EQ(b.at("stoppedBy"), a.at("id"));
  EXPECT_EQ(StatusOf(c), "canceled");
  EXPECT_EQ(c.at("stoppedBy"), b.at("id"));  // transitively
  EXPECT_EQ(Str(b, "a2aTaskId"), "");        // never started
  EXPECT_EQ(Str(c, "a2aTaskId"), "");
  EXPECT_EQ(StatusOf(o.at("plans").at(0)), "failed");
  EXPECT_EQ(StatusOf(o), "failed");
  EXPECT_EQ(RunsOf(id).size(), 2u);
}

TEST_F(OptExec, EndingTheObjectiveOrAPlanCancelsItsRuns) {
  const std::string id = NewObjective("stopped");
  NewPlan(id, "p",
          json::array{Task("x", "work", {}, Delay(60000)),
                      Task("y", "work", json::array{"task-0"}, Delay(60000)), Task("z", "gate")});
  json::value o = WaitFor(id, [](const json::value& v) {
    return StatusOfTask(v, "x") == "working" && StatusOfTask(v, "z") == "input-required";
  });
  Result("objectives/update", {{"id", id}, {"status", "canceled"}});
  for (const char* name : {"x", "z"}) {
    const std::string run = Str(TaskNamed(o, name), "a2aTaskId");
    const json::value t = testing::PollUntil(
        [&] { return A2aTask(run); },
        [](const json::value& v) { return v.at("status").at("state") == "canceled"; });
    EXPECT_EQ(t.at("status").at("state"), "canceled") << name << ": " << t;
  }
  o = Objective(id);
  EXPECT_EQ(StatusOf(o), "canceled");
  EXPECT_EQ(StatusOfTask(o, "y"), "canceled");
  EXPECT_EQ(TaskNamed(o, "y").at("stoppedBy"), json::value(id));
  EXPECT_EQ(RunsOf(id).size(), 2u);  // y never ran
  // A plan skipped by its caller cancels its runs the same way.
  const std::string other = NewObjective("skipped");
  json::value plan = NewPlan(other, "q", json::array{Task("w", "work", {}, Delay(60000))});
  o = WaitFor(other, [](const json::value& v) { return StatusOfTask(v, "w") == "working"; });
  Result("plans/update", {{"id", plan.at("id")}, {"status", "skipped"}});
  const std::string run = Str(TaskNamed(o, "w"), "a2aTaskId");
  testing::WaitFor([&] { return A2aTask(run).at("status").at("state") == "canceled"; });
  EXPECT_EQ(A2aTask(run).at("status").at("state"), "canceled");
}

TEST_F(OptExec, SigkillsMidPlanNeitherLoseNorRepeatARun) {
  const std::string id = NewObjective("durable");
  NewPlan(id, "p",
          json::array{Task("a", "work", {}, Delay(150)), Task("b", "work", {}, Delay(150)),
                      Task("c", "work", json::array{"task-0", "task-1"}, Delay(150)),
                      Task("d", "work", json::array{"task-2"}, Delay(100)),
                      Task("e", "work", json::array{"task-2"}, Delay(100)),
                      Task("f", "work", json::array{"task-3", "task-4"})});
  // Killed right after the plan was answered, then at points through the chain (the times
  // between the kills are the test: they land each in another step).
  for (int wait_ms : {0, 120, 90, 200, 60}) {
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    Restart();
  }
  json::value o = WaitFor(id, [](const json::value& v) { return StatusOf(v) == "completed"; });
  std::set<std::string> runs;
  for (const auto& t : o.at("plans").at(0).at("tasks").as_array()) {
    EXPECT_EQ(StatusOf(t), "completed") << t;
    runs.insert(Str(t, "a2aTaskId"));
  }
  EXPECT_EQ(runs.size(), 6u);
  json::array listed = RunsOf(id);
  EXPECT_EQ(listed.size(), 6u);  // no run was started twice
  for (const auto& t : listed) {
    EXPECT_TRUE(runs.contains(std::string(t.at("id").as_string()))) << t;
    EXPECT_EQ(t.at("status").at("state"), "TASK_STATE_COMPLETED");
  }
}

TEST_F(OptExec, ASubscriptionDroppedAndResumedMissesNothing) {
  const std::string id = NewObjective("watched");
  testing::Headers h{{"Content-Type", "application/json"}, {"A2A-Extensions", kOpt}};
  auto first = std::make_unique<SseClient>("127.0.0.1", server_.port, "/v1/a2a", Sub(id), h);
  ASSERT_EQ(first->status(), 200);
  auto snap = first->Next();
  ASSERT_TRUE(snap);
  json::value s = snap->Json().at("result");
  EXPECT_EQ(s.at("kind"), "snapshot");
  EXPECT_EQ(s.at("objective").at("id"), json::value(id));
  int64_t last = s.at("sequence").as_int64();
  EXPECT_EQ(snap->id, std::to_string(last));
  std::vector<int64_t> seen;
  NewPlan(id, "p", json::array{Task("a", "work", {}, Delay(50)), Task("b", "gate", json::array{"task-0"})});
  // Read until task a completed, then drop the stream.
  for (bool done = false; !done;) {
    auto e = first->Next();
    ASSERT_TRUE(e) << "the stream ended early";
    if (e->comment) continue;
    json::value r = e->Json().at("result");
    seen.push_back(r.at("sequence").as_int64());
    EXPECT_EQ(e->id, std::to_string(seen.back()));
    done = r.at("kind") == "task" && r.at("status") == "completed";
  }
  first->Close();
  // Meanwhile b starts and stops at its gate.
  json::value o = WaitFor(id, [](const json::value& v) { return StatusOfTask(v, "b") == "input-required"; });
  h.emplace_back("Last-Event-ID", std::to_string(seen.back()));
  SseClient again("127.0.0.1", server_.port, "/v1/a2a", Sub(id), h);
  ASSERT_EQ(again.status(), 200);
  bool saw_blocked = false;
  while (!saw_blocked) {
    auto e = again.Next();
    ASSERT_TRUE(e);
    if (e->comment) continue;
    json::value r = e->Json().at("result");
    seen.push_back(r.at("sequence").as_int64());
    saw_blocked = r.at("kind") == "objective" && r.at("status") == "blocked";
  }
  Answer(Str(TaskNamed(o, "b"), "a2aTaskId"), id, "accept");
  json::value final_event;
  for (const auto& e : again.ReadToEnd()) {
    json::value r = e.Json().at("result");
    seen.push_back(r.at("sequence").as_int64());
    final_event = r;
  }
  EXPECT_TRUE(again.ended());
  EXPECT_EQ(final_event.at("final"), true) << final_event;
  EXPECT_EQ(final_event.at("status"), "completed");
  // Every event once, in order, from the one after the snapshot to the last.
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], last + 1 + static_cast<int64_t>(i));
  // A subscription after the end replays it and ends; a cursor past the end is refused.
  h.back().second = std::to_string(seen.back() - 1);
  SseClient late("127.0.0.1", server_.port, "/v1/a2a", Sub(id), h);
  auto tail = late.ReadToEnd();
  ASSERT_EQ(tail.size(), 1u);
  EXPECT_EQ(tail[0].Json().at("result").at("final"), true);
  h.back().second = std::to_string(seen.back() + 5);
  SseClient beyond("127.0.0.1", server_.port, "/v1/a2a", Sub(id), h);
  auto refused = beyond.Next();  // a 0.3 stream method's error: the one event of its stream
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->event, "error");
  EXPECT_EQ(refused->Json().at("error").at("code"), -32602);
  EXPECT_EQ(refused->Json().at("error").at("data").at("field"), "Last-Event-ID");
}

TEST_F(OptExec, AMessageNamingAnObjectiveCreatesOrJoinsIt) {
  auto send = [&](const std::string& message_id, const std::string& skill, json::object objective,
                  json::object extra = {}) {
    json::object md{{"skillId", skill}, {"opt/v1/objective", std::move(objective)}};
    for (auto& [k, v] : extra) md[k] = v;
    json::object msg{{"kind", "message"},
                     {"messageId", message_id},
                     {"role", "user"},
                     {"parts", json::array{json::object{{"kind", "text"}, {"text", "Draft the plan"}}}},
                     {"metadata", std::move(md)}};
    // No extension header: the metadata is what activates it here.
    testing::Headers h{{"Content-Type", "application/json"}};
    json::object req{{"jsonrpc", "2.0"},
                     {"id", 1},
                     {"method", "message/send"},
                     {"params", json::object{{"message", std::move(msg)},
                                             {"configuration", json::object{{"blocking", true}}}}}};
    return json::parse(client_->Request("POST", "/v1/a2a", json::serialize(req), h).body);
  };
  json::value made = send("m1", "gate", json::object{{"name", "from a message"}});
  ASSERT_TRUE(made.as_object().contains("result")) << made;
  const json::value task = made.at("result");
  const std::string id = Str(task, "contextId");
  ASSERT_TRUE(id.starts_with("obj-")) << task;
  EXPECT_EQ(task.at("metadata").at("opt/v1/objectiveId"), json::value(id));
  json::value o = Objective(id);
  EXPECT_EQ(StatusOf(o), "blocked");  // its one task waits at the gate
  EXPECT_EQ(o.at("name"), "from a message");
  const json::value joined = o.at("plans").at(0).at("tasks").at(0);
  EXPECT_EQ(joined.at("a2aTaskId"), task.at("id"));
  EXPECT_EQ(joined.at("name"), "Draft the plan");
  EXPECT_EQ(joined.at("status"), "input-required");
  // A retry is the same task of the same objective.
  json::value retry = send("m1", "gate", json::object{{"name", "from a message"}});
  EXPECT_EQ(retry.at("result").at("id"), task.at("id"));
  EXPECT_EQ(Objective(id).at("plans").at(0).at("tasks").as_array().size(), 1u);
  // Another message joins it by id (into the same plan), a third a plan named by the caller.
  json::value second = send("m2", "work", json::object{{"id", id}});
  EXPECT_EQ(second.at("result").at("contextId"), json::value(id));
  json::value named = NewPlan(id, "named", json::array{}, {}, false);
  json::value third = send("m3", "work", json::object{{"id", id}},
                           json::object{{"opt/v1/planId", named.at("id")}});
  ASSERT_TRUE(third.as_object().contains("result")) << third;
  o = WaitFor(id, [](const json::value& v) {
    return v.at("plans").at(0).at("tasks").as_array().size() == 2 &&
           v.at("plans").at(1).at("tasks").as_array().size() == 1 &&
           StatusOf(v.at("plans").at(1).at("tasks").at(0)) == "completed";
  });
  // Refusals: an unknown objective, another conversation's contextId, nothing to name it by.
  EXPECT_EQ(Code(send("m4", "work", json::object{{"id", "obj-nope"}})), -32000);
  json::value no_name = send("m5", "work", json::object{});
  EXPECT_EQ(Code(no_name), -32602);
  EXPECT_NE(Message(no_name).find("opt/v1/objective"), std::string::npos) << no_name;
  // The gate answered: every task done, the objective completes.
  Answer(Str(task, "id"), id, "accept");
  o = WaitFor(id, [](const json::value& v) { return StatusOf(v) == "completed"; });
  EXPECT_EQ(RunsOf(id).size(), 3u);
}

TEST_F(OptExec, ExecutionIsAskedForAndItsSkillsCheckedAtCreate) {
  const std::string id = NewObjective("later");
  json::value plan = NewPlan(id, "p", json::array{Task("a", "work")}, {}, false);
  testing::GiveTimeToMisbehave(std::chrono::milliseconds(200));
  EXPECT_EQ(StatusOfTask(Objective(id), "a"), "pending");  // not executing: nothing starts
  json::value moved = Result("plans/update", {{"id", plan.at("id")}, {"status", "working"}}).at("plan");
  EXPECT_EQ(moved.at("execute"), true);
  WaitFor(id, [](const json::value& v) { return StatusOfTask(v, "a") == "completed"; });
  json::value unknown = Rpc("plans/create", {{"objectiveId", id},
                                             {"name", "bad"},
                                             {"tasks", json::array{Task("x", "no-such-workflow")}}});
  EXPECT_EQ(Code(unknown), -32602);
  EXPECT_NE(Message(unknown).find("params.tasks[0].skill"), std::string::npos) << unknown;
  json::value stray = Rpc("plans/create", {{"objectiveId", id},
                                           {"name", "bad"},
                                           {"tasks", json::array{Task("x", "", {}, Delay(1))}}});
  EXPECT_NE(Message(stray).find("params.tasks[0].inputs"), std::string::npos) << stray;
}

TEST_F(OptExec, TheRestRoutesServeTheMethods) {
  testing::Headers h{{"Content-Type", "application/json"}, {"A2A-Extensions", kOpt}};
  auto call = [&](const std::string& method, const std::string& path, const std::string& body = "") {
    return client_->Request(method, path, body, h);
  };
  auto made = call("POST", "/a2a/rest/objectives", R"({"name":"rest"})");
  ASSERT_EQ(made.status, 200) << made.body;
  const std::string id(json::parse(made.body).at("objective").at("id").as_string());
  auto plan = call("POST", "/a2a/rest/objectives/" + id + "/plans",
                   R"({"name":"p","tasks":[{"name":"t"}]})");
  ASSERT_EQ(plan.status, 200) << plan.body;
  const json::value p = json::parse(plan.body).at("plan");
  const std::string task_id(p.at("tasks").at(0).at("id").as_string());
  auto reported = call("POST", "/a2a/rest/planTasks/" + task_id + ":updateStatus",
                       R"({"status":"TASK_STATE_WORKING"})");
  ASSERT_EQ(reported.status, 200) << reported.body;
  auto got = call("GET", "/a2a/rest/objectives/" + id + "?includePlans=false");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(json::parse(got.body).at("objective").at("status"), "working");
  EXPECT_FALSE(json::parse(got.body).at("objective").as_object().contains("plans"));
  auto listed = call("GET", "/a2a/rest/objectives?pageSize=1&status=working");
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(json::parse(listed.body).at("objectives").at(0).at("id"), json::value(id));
  auto skipped = call("PATCH", "/a2a/rest/plans/" + std::string(p.at("id").as_string()),
                      R"({"status":"skipped"})");
  ASSERT_EQ(skipped.status, 200) << skipped.body;
  EXPECT_EQ(json::parse(skipped.body).at("plan").at("status"), "skipped");
  auto plan_got = call("GET", "/a2a/rest/plans/" + std::string(p.at("id").as_string()));
  EXPECT_EQ(json::parse(plan_got.body).at("plan").at("tasks").at(0).at("status"), "canceled");
  auto canceled = call("PATCH", "/a2a/rest/objectives/" + id, R"({"status":"canceled"})");
  EXPECT_EQ(canceled.status, 409) << canceled.body;  // completed by its one skipped plan
  // The stream: a finished objective's snapshot, then the end.
  SseClient sse("127.0.0.1", server_.port, "/a2a/rest/objectives/" + id + ":subscribe", "", h, "GET");
  auto events = sse.ReadToEnd();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].Json().at("kind"), "snapshot");
  EXPECT_EQ(events[0].Json().at("final"), true);
  // Errors in the binding's format; A2A 0.3's REST routes under /v1.
  auto missing = call("GET", "/a2a/rest/objectives/obj-nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(json::parse(missing.body).at("error").at("status"), "NOT_FOUND");
  auto inactive = client_->Request("GET", "/a2a/rest/objectives/" + id, "", {});
  EXPECT_EQ(inactive.status, 400) << inactive.body;
  EXPECT_NE(inactive.body.find("A2A-Extensions"), std::string::npos);
  auto v03 = call("GET", "/a2a/rest03/v1/objectives/" + id);
  ASSERT_EQ(v03.status, 200) << v03.body;
  EXPECT_EQ(json::parse(v03.body).at("objective").at("id"), json::value(id));
}

}  // namespace
}  // namespace a2ad
