// The Objective-Plan-Task extension through the real binary (issue 17; ext/opt, docs/OPT.md)
// on a real SQLite data directory: activation (on, off, either header, echoed), every method
// and its errors in both A2A versions, the rollup from reported task states up to the
// objective, a link to a task of this host at its gate, limits, and a SIGKILL that loses
// nothing written.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "opt_fixture.hpp"
#include "wait_for.hpp"

namespace a2ad {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;
using Headers = std::vector<std::pair<std::string, std::string>>;

using OptE2e = testing::OptFixture;
using testing::kOpt;

TEST_F(OptE2e, WithoutActivationEveryMethodSaysHowToActivate) {
  for (const char* m : {"objectives/create", "objectives/get", "objectives/list",
                        "objectives/update", "objectives/subscribe", "plans/create", "plans/get",
                        "plans/update", "tasks/link", "tasks/updateStatus"}) {
    for (const std::string v : {"", "1.0"}) {
      std::string body = Post(m, json::object{{"id", "x"}, {"name", "n"}}, v, {}).body;
      // A 0.3 stream method's error is the one event of its stream.
      if (body.starts_with("event: error\ndata: ")) body = body.substr(19);
      json::value r = json::parse(body);
      EXPECT_EQ(Code(r), -32008) << m << " " << v << ": " << r;
      EXPECT_NE(Message(r).find(std::string("A2A-Extensions: ") + kOpt), std::string::npos) << r;
    }
  }
  // The card declares it with its limits.
  json::value card = json::parse(client_->Request("GET", "/.well-known/agent-card.json").body);
  bool found = false;
  for (const auto& e : card.at("capabilities").at("extensions").as_array())
    if (e.at("uri") == kOpt) {
      found = true;
      EXPECT_EQ(e.at("params").at("maxPlansPerObjective"), 20);
      EXPECT_EQ(e.at("params").at("maxTasksPerPlan"), 100);
    }
  EXPECT_TRUE(found) << card;
}

TEST_F(OptE2e, EitherHeaderActivatesItInEitherVersionAndItIsEchoed) {
  auto v03 = Post("objectives/create", json::object{{"name", "a"}}, "", {{"X-A2A-Extensions", kOpt}});
  EXPECT_EQ(v03.status, 200);
  EXPECT_EQ(v03.Header("X-A2A-Extensions"), kOpt);
  EXPECT_TRUE(json::parse(v03.body).as_object().contains("result")) << v03.body;
  auto v10 = Post("objectives/create", json::object{{"name", "b"}}, "1.0",
                  {{"A2A-Extensions", std::string("https://example.com/other, ") + kOpt}});
  EXPECT_EQ(v10.Header("A2A-Extensions"), kOpt);
  json::value created = json::parse(v10.body);
  ASSERT_TRUE(created.as_object().contains("result")) << v10.body;
  EXPECT_EQ(created.at("result").at("objective").at("status"), "submitted");
  // An unsupported A2A version is refused as for any method.
  auto v2 = Post("objectives/list", json::object{}, "2.0", {{"A2A-Extensions", kOpt}});
  EXPECT_EQ(Code(json::parse(v2.body)), -32009) << v2.body;
}

TEST_F(OptE2e, AnObjectiveWithTwoPlansRollsUpFromItsTasksInBothVersions) {
  json::value created = Result("objectives/create", {{"name", "Write blog post"},
                                                     {"description", "About AI safety"},
                                                     {"metadata", json::object{{"team", "a"}}}});
  const json::value& o = created.at("objective");
  const std::string id(o.at("id").as_string());
  EXPECT_TRUE(id.starts_with("obj-"));
  EXPECT_EQ(o.at("status"), "submitted");
  EXPECT_EQ(o.at("metadata").at("team"), "a");
  EXPECT_EQ(o.at("createdAt"), o.at("updatedAt"));

  json::value research = Result(
      "plans/create",
      {{"objectiveId", id},
       {"name", "Research"},
       {"tasks", json::array{json::object{{"name", "Search papers"}},
                             json::object{{"name", "Summarize"},
                                          {"dependencies", json::array{"task-0"}}}}}})
                             .at("plan");
  const std::string research_id(research.at("id").as_string());
  EXPECT_EQ(research.at("status"), "pending");
  EXPECT_EQ(research.at("tasks").at(1).at("dependencies").at(0), research.at("tasks").at(0).at("id"));
  EXPECT_EQ(research.at("tasks").at(1).at("taskIndex"), 1);
  EXPECT_EQ(research.at("tasks").at(0).at("status"), "pending");
  json::value writing = Result("plans/create", {{"objectiveId", id},
                                                {"name", "Writing"},
                                                {"dependencies", json::array{research_id}},
                                                {"tasks", json::array{json::object{{"name", "Draft"}}}}},
                               "1.0")
                            .at("plan");
  EXPECT_EQ(writing.at("status"), "blocked");
  EXPECT_EQ(writing.at("blockedOn"), "dependencies");
  EXPECT_EQ(StatusOf(Objective(id)), "planning");

  // The first task works, then waits for input: the objective is blocked.
  Report(TaskId(research, 0), "working");
  EXPECT_EQ(StatusOf(Objective(id)), "working");
  Report(TaskId(research, 0), "TASK_STATE_INPUT_REQUIRED", "1.0");
  json::value now = Objective(id);
  EXPECT_EQ(StatusOf(now), "blocked");
  EXPECT_EQ(now.at("plans").at(0).at("blockedOn"), "input");
  EXPECT_EQ(now.at("plans").at(0).at("tasks").at(0).at("status"), "input-required");
  // Answered and done; the second task too: Research completes, Writing is free to start.
  Report(TaskId(research, 0), "completed");
  Report(TaskId(research, 1), "completed");
  now = Objective(id);
  EXPECT_EQ(now.at("plans").at(0).at("status"), "completed");
  EXPECT_EQ(now.at("plans").at(1).at("status"), "pending");
  EXPECT_EQ(StatusOf(now), "working");
  Report(TaskId(writing, 0), "completed", "1.0");
  EXPECT_EQ(StatusOf(Objective(id)), "completed");

  // get: includePlans / includeTasks; plans/get.
  json::value bare = Result("objectives/get", {{"id", id}, {"includePlans", false}}).at("objective");
  EXPECT_FALSE(bare.as_object().contains("plans"));
  json::value shallow =
      Result("objectives/get", {{"id", id}, {"includeTasks", false}}).at("objective");
  EXPECT_FALSE(shallow.at("plans").at(0).as_object().contains("tasks"));
  json::value plan = Result("plans/get", {{"id", research_id}}, "1.0").at("plan");
  EXPECT_EQ(plan.at("tasks").as_array().size(), 2u);
  EXPECT_EQ(plan.at("objectiveId"), json::value(id));
}

TEST_F(OptE2e, ListPagesByCursorAndFiltersByStatus) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(NewObjective("o" + std::to_string(i)));
  // The list orders by change time (ms), then id: a change in a later millisecond.
  using std::chrono::floor, std::chrono::milliseconds, std::chrono::system_clock;
  const auto created = floor<milliseconds>(system_clock::now());
  testing::WaitFor([&] { return floor<milliseconds>(system_clock::now()) > created; });
  Result("objectives/update", {{"id", ids[1]}, {"status", "canceled"}});
  json::value page = Result("objectives/list", {{"pageSize", 2}});
  EXPECT_EQ(page.at("totalSize"), 5);
  EXPECT_EQ(page.at("objectives").as_array().size(), 2u);
  EXPECT_EQ(page.at("objectives").at(0).at("id"), json::value(ids[1]));  // the newest change first
  std::set<std::string> seen;
  std::string token;
  for (int pages = 0; pages < 5; ++pages) {
    json::object p{{"pageSize", 2}};
    if (!token.empty()) p["pageToken"] = token;
    json::value r = Result("objectives/list", p, "1.0");
    for (const auto& o : r.at("objectives").as_array()) seen.insert(std::string(o.at("id").as_string()));
    if (!r.as_object().contains("nextPageToken")) break;
    token = std::string(r.at("nextPageToken").as_string());
  }
  EXPECT_EQ(seen.size(), 5u);
  json::value canceled = Result("objectives/list", {{"status", "canceled"}});
  ASSERT_EQ(canceled.at("objectives").as_array().size(), 1u);
  EXPECT_EQ(canceled.at("objectives").at(0).at("id"), json::value(ids[1]));
  EXPECT_EQ(Code(Rpc("objectives/list", {{"pageSize", 0}})), -32602);
  EXPECT_EQ(Code(Rpc("objectives/list", {{"pageToken", "###"}})), -32602);
  EXPECT_EQ(Code(Rpc("objectives/list", {{"status", "paused"}})), -32602);
}

TEST_F(OptE2e, EveryMethodsErrors) {
  const std::string id = NewObjective("errors");
  json::value plan = Result("plans/create",
                            {{"objectiveId", id},
                             {"name", "p"},
                             {"tasks", json::array{json::object{{"name", "a"}},
                                                   json::object{{"name", "b"}}}}})
                         .at("plan");
  const std::string plan_id(plan.at("id").as_string());
  for (const std::string v : {"", "1.0"}) {
    // Missing and malformed params.
    EXPECT_EQ(Code(Rpc("objectives/create", {}, v)), -32602);
    EXPECT_EQ(Code(Rpc("objectives/create", {{"name", 5}}, v)), -32602);
    EXPECT_EQ(Code(Rpc("objectives/create", {{"name", "x"}, {"metadata", "no"}}, v)), -32602);
    EXPECT_EQ(Code(Rpc("objectives/get", {}, v)), -32602);
    EXPECT_EQ(Code(Rpc("objectives/get", {{"id", id}, {"includePlans", "yes"}}, v)), -32602);
    EXPECT_EQ(Code(Rpc("plans/create", {{"objectiveId", id}}, v)), -32602);
    EXPECT_EQ(Code(Rpc("plans/create", {{"objectiveId", id}, {"name", "p"}, {"tasks", 3}}, v)),
              -32602);
    EXPECT_EQ(Code(Rpc("plans/update", {{"id", plan_id}, {"status", "done"}}, v)), -32602);
    EXPECT_EQ(Code(Rpc("tasks/updateStatus", {{"planTaskId", TaskId(plan, 0)}, {"status", "paused"}}, v)),
              -32602);
    EXPECT_EQ(Code(Rpc("tasks/link", {{"planTaskId", TaskId(plan, 0)}}, v)), -32602);
    // Unknown ids: -32000 naming the id.
    json::value missing = Rpc("objectives/get", {{"id", "obj-nope"}}, v);
    EXPECT_EQ(Code(missing), -32000);
    EXPECT_NE(Message(missing).find("objective 'obj-nope' not found"), std::string::npos);
    EXPECT_EQ(Code(Rpc("objectives/update", {{"id", "obj-nope"}, {"name", "x"}}, v)), -32000);
    EXPECT_EQ(Code(Rpc("plans/create", {{"objectiveId", "obj-nope"}, {"name", "p"}}, v)), -32000);
    EXPECT_EQ(Code(Rpc("plans/get", {{"id", "plan-nope"}}, v)), -32000);
    EXPECT_EQ(Code(Rpc("plans/update", {{"id", "plan-nope"}, {"name", "x"}}, v)), -32000);
    EXPECT_EQ(Code(Rpc("tasks/updateStatus", {{"planTaskId", "task-nope"}, {"status", "working"}}, v)),
              -32000);
    EXPECT_EQ(Code(Rpc("tasks/link", {{"planTaskId", "task-nope"}, {"a2aTaskId", "t"}}, v)),
              -32000);
    // Cycles and unknown dependencies, named.
    json::value cycle = Rpc("plans/create",
                            {{"objectiveId", id},
                             {"name", "c"},
                             {"tasks", json::array{json::object{{"name", "a"}, {"dependencies", json::array{"task-1"}}},
                                                   json::object{{"name", "b"}, {"dependencies", json::array{"task-0"}}}}}},
                            v);
    EXPECT_EQ(Code(cycle), -32602);
    EXPECT_NE(Message(cycle).find("cycle: task-0 -> task-1 -> task-0"), std::string::npos) << cycle;
    json::value unknown = Rpc("plans/create",
                              {{"objectiveId", id}, {"name", "u"}, {"dependencies", json::array{"plan-ghost"}}}, v);
    EXPECT_EQ(Code(unknown), -32602);
    EXPECT_NE(Message(unknown).find("'plan-ghost'"), std::string::npos) << unknown;
    // A derived status is refused, saying what it is.
    json::value derived = Rpc("plans/update", {{"id", plan_id}, {"status", "completed"}}, v);
    EXPECT_EQ(Code(derived), -32016);
    EXPECT_NE(Message(derived).find("derived from its tasks"), std::string::npos) << derived;
  }
  // Nothing of the refused plans was stored.
  EXPECT_EQ(Objective(id).at("plans").as_array().size(), 1u);
  // A finished objective changes no more.
  Result("objectives/update", {{"id", id}, {"status", "canceled"}});
  json::value after = Objective(id);
  EXPECT_EQ(after.at("plans").at(0).at("status"), "skipped");
  EXPECT_EQ(after.at("plans").at(0).at("tasks").at(0).at("status"), "canceled");
  EXPECT_EQ(after.at("plans").at(0).at("tasks").at(0).at("stoppedBy"), json::value(id));
  EXPECT_EQ(Code(Rpc("objectives/update", {{"id", id}, {"status", "working"}})), -32016);
  EXPECT_EQ(Code(Rpc("plans/create", {{"objectiveId", id}, {"name", "late"}})), -32016);
  EXPECT_EQ(Code(Rpc("tasks/updateStatus", {{"planTaskId", TaskId(plan, 1)}, {"status", "working"}})),
            -32016);
}

TEST_F(OptE2e, LimitsComeFromTheCommandLineAndAreEnforced) {
  Restart({"--opt-max-plans-per-objective", "1", "--opt-max-tasks-per-plan", "2"});
  json::value card = json::parse(client_->Request("GET", "/.well-known/agent-card.json").body);
  for (const auto& e : card.at("capabilities").at("extensions").as_array())
    if (e.at("uri") == kOpt) {
      EXPECT_EQ(e.at("params").at("maxTasksPerPlan"), 2);
    }
  const std::string id = NewObjective("limits");
  json::array three{json::object{{"name", "a"}}, json::object{{"name", "b"}},
                    json::object{{"name", "c"}}};
  json::value many = Rpc("plans/create", {{"objectiveId", id}, {"name", "p"}, {"tasks", three}});
  EXPECT_EQ(Code(many), -32602);
  EXPECT_NE(Message(many).find("maxTasksPerPlan (2)"), std::string::npos) << many;
  Result("plans/create", {{"objectiveId", id}, {"name", "p"}});
  json::value second = Rpc("plans/create", {{"objectiveId", id}, {"name", "q"}});
  EXPECT_NE(Message(second).find("maxPlansPerObjective (1)"), std::string::npos) << second;
  json::value long_name = Rpc("objectives/create", {{"name", std::string(600, 'n')}});
  EXPECT_EQ(Code(long_name), -32602);
  EXPECT_NE(Message(long_name).find("params.name: at most 512 bytes"), std::string::npos);
}

TEST_F(OptE2e, ALinkedTaskOfThisHostLendsItsStateAndAForeignOneIsReported) {
  // A run of `gate` stops at its approval gate: input-required.
  json::object msg{{"kind", "message"},
                   {"messageId", "m1"},
                   {"role", "user"},
                   {"parts", json::array{json::object{{"kind", "text"}, {"text", "go"}}}},
                   {"metadata", json::object{{"skillId", "gate"}}}};
  json::value task = Result("message/send", {{"message", msg},
                                             {"configuration", json::object{{"blocking", true}}}});
  const std::string task_id(task.at("id").as_string());
  ASSERT_EQ(task.at("status").at("state"), "input-required") << task;
  const std::string id = NewObjective("linked");
  json::value plan = Result("plans/create", {{"objectiveId", id},
                                             {"name", "p"},
                                             {"tasks", json::array{json::object{{"name", "gated"}},
                                                                   json::object{{"name", "elsewhere"}}}}})
                         .at("plan");
  json::value linked = Result("tasks/link", {{"planTaskId", TaskId(plan, 0)}, {"a2aTaskId", task_id}}).at("task");
  EXPECT_EQ(linked.at("a2aTaskId"), json::value(task_id));
  EXPECT_EQ(linked.at("status"), "input-required");
  EXPECT_EQ(StatusOf(Objective(id)), "blocked");
  // Another agent's task: linked, its state reported by the caller.
  json::value foreign =
      Result("tasks/link", {{"planTaskId", TaskId(plan, 1)}, {"a2aTaskId", "remote-42"}}, "1.0").at("task");
  EXPECT_EQ(foreign.at("status"), "pending");
  json::value again = Rpc("tasks/link", {{"planTaskId", TaskId(plan, 1)}, {"a2aTaskId", "remote-43"}});
  EXPECT_EQ(Code(again), -32016);
  EXPECT_NE(Message(again).find("already"), std::string::npos);
  // What a plan task follows, a caller cannot report.
  EXPECT_EQ(Code(Rpc("tasks/updateStatus", {{"planTaskId", TaskId(plan, 0)}, {"status", "failed"}})),
            -32016);
  // After a SIGKILL, the gate is approved: the A2A task completes, and in the same commit the
  // plan task with it; the objective works on (the other task is still pending).
  Restart();
  EXPECT_EQ(StatusOf(Objective(id)), "blocked");
  json::object answer{{"kind", "message"},
                      {"messageId", "m2"},
                      {"role", "user"},
                      {"taskId", task_id},
                      {"contextId", task.at("contextId")},
                      {"parts", json::array{json::object{
                                    {"kind", "data"}, {"data", json::object{{"action", "accept"}}}}}}};
  json::value done = Result("message/send", {{"message", answer},
                                             {"configuration", json::object{{"blocking", true}}}});
  EXPECT_EQ(done.at("status").at("state"), "completed") << done;
  json::value now = Objective(id);
  EXPECT_EQ(now.at("plans").at(0).at("tasks").at(0).at("status"), "completed") << now;
  EXPECT_EQ(StatusOf(now), "working");
  Report(TaskId(plan, 1), "completed");
  EXPECT_EQ(StatusOf(Objective(id)), "completed");
}

TEST_F(OptE2e, ASigkillLosesNothingThatWasAnswered) {
  const std::string id = NewObjective("durable");
  json::value plan = Result("plans/create", {{"objectiveId", id},
                                             {"name", "p"},
                                             {"tasks", json::array{json::object{{"name", "a"}},
                                                                   json::object{{"name", "b"}}}}})
                         .at("plan");
  Report(TaskId(plan, 0), "working");
  Report(TaskId(plan, 1), "input-required");
  const json::value before = Objective(id);
  EXPECT_EQ(StatusOf(before), "blocked");
  Restart();
  const json::value after = Objective(id);
  EXPECT_EQ(after, before);
  // It goes on where it was.
  Report(TaskId(plan, 1), "completed");
  Report(TaskId(plan, 0), "completed");
  EXPECT_EQ(StatusOf(Objective(id)), "completed");
}

}  // namespace
}  // namespace a2ad
