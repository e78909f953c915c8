// protocol/a2a_task_state.hpp: the RFC 0100 A2ATaskState written from a task and its run.
#include "a2ad/protocol/a2a_task_state.hpp"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <string>

#include "a2ad/protocol/json_text.hpp"

namespace a2ad::protocol {
namespace {
namespace json = boost::json;

std::string Text(const Task& task, const RunSnapshot& run) {
  std::string out;
  JsonTextWriter w(out);
  WriteA2ATaskState(w, task, run);
  return out;
}

Task TaskIn(TaskState state) {
  Task t;
  t.id = "run-1";
  t.context_id = "ctx-1";
  t.status.state = state;
  t.status.timestamp_ms = 1767261600123;  // 2026-01-01T10:00:00.123Z
  return t;
}

TEST(A2ATaskState, IsTheTasksIdentityStateAndTimeInTheSchemasOrder) {
  EXPECT_EQ(Text(TaskIn(TaskState::kCompleted), RunSnapshot{}),
            R"({"taskId":"run-1","runId":"run-1","contextId":"ctx-1","state":"completed",)"
            R"("updatedAt":"2026-01-01T10:00:00.123Z"})");
  Task no_context = TaskIn(TaskState::kWorking);
  no_context.context_id.clear();
  no_context.id = "a\"b";
  EXPECT_EQ(Text(no_context, RunSnapshot{}), R"({"taskId":"a\"b","runId":"a\"b","state":"working",)"
                                             R"("updatedAt":"2026-01-01T10:00:00.123Z"})");
}

TEST(A2ATaskState, NamesTheInterruptKindOnlyWhenInputIsRequired) {
  RunSnapshot run;
  run.interrupt = json::object{{"kind", "approval"}, {"data", "not copied"}};
  EXPECT_EQ(Text(TaskIn(TaskState::kInputRequired), run),
            R"({"taskId":"run-1","runId":"run-1","contextId":"ctx-1","state":"input-required",)"
            R"("interruptKind":"approval","updatedAt":"2026-01-01T10:00:00.123Z"})");
  EXPECT_EQ(Text(TaskIn(TaskState::kWorking), run).find("interruptKind"), std::string::npos);

  // Every other kind waits for input too: clarification.
  run.interrupt = json::object{{"kind", "external-event"}};
  EXPECT_EQ(A2ATaskStateOf(TaskIn(TaskState::kInputRequired), run).at("interruptKind"),
            "clarification");

  // No open interrupt in the run: the kind the task's openwop metadata names.
  Task t = TaskIn(TaskState::kInputRequired);
  t.metadata["openwop"] = json::object{{"interrupt", json::object{{"kind", "approval"}}}};
  EXPECT_EQ(A2ATaskStateOf(t, RunSnapshot{}).at("interruptKind"), "approval");
  t.metadata.erase("openwop");
  EXPECT_EQ(A2ATaskStateOf(t, RunSnapshot{}).at("interruptKind"), "clarification");
}

TEST(A2ATaskState, TheObjectIsTheTextRead) {
  RunSnapshot run;
  run.interrupt = json::object{{"kind", "approval"}};
  const Task t = TaskIn(TaskState::kInputRequired);
  EXPECT_EQ(json::value(A2ATaskStateOf(t, run)), json::parse(Text(t, run)));
}

}  // namespace
}  // namespace a2ad::protocol
