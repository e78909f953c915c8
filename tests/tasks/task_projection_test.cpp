#include "a2ad/tasks/task_projection.hpp"

#include <gtest/gtest.h>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::tasks {
namespace {
namespace json = boost::json;
using protocol::RunEvent;
using protocol::StreamEvent;
using S = protocol::TaskState;

struct Log {
  storage::TaskRecord rec;
  std::vector<RunEvent> events;
  int64_t t = 1000;

  core::Result<void> Add(std::string type, json::object payload = {}, std::string node = "") {
    RunEvent e;
    e.node_id = std::move(node);
    e.event_id = "e" + std::to_string(events.size());
    e.run_id = "t1";
    e.type = std::move(type);
    e.payload = std::move(payload);
    e.timestamp_ms = t++;
    e.sequence = rec.last_sequence + 1;
    auto r = ApplyEvent(rec, e);
    if (r) events.push_back(e);
    return r;
  }
};

json::object UserMessage(const std::string& id, const std::string& text) {
  protocol::Message m;
  m.message_id = id;
  m.role = protocol::Role::kUser;
  m.parts.push_back(protocol::Part::Text(text));
  return protocol::MessageToJson(m);
}

json::object Submitted() {
  return {{"contextId", "c1"}, {"skillId", "echo"}, {"message", UserMessage("m1", "hi")}};
}

TEST(TaskProjection, SubmittedCreatesTheTask) {
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  EXPECT_EQ(log.rec.task.id, "t1");
  EXPECT_EQ(log.rec.task.context_id, "c1");
  EXPECT_EQ(log.rec.skill_id, "echo");
  EXPECT_EQ(log.rec.task.status.state, S::kSubmitted);
  EXPECT_EQ(log.rec.task.history.size(), 1u);
  EXPECT_EQ(log.rec.last_sequence, 0);
  EXPECT_EQ(log.rec.created_at_ms, 1000);
}

TEST(TaskProjection, FirstEventMustBeSubmitted) {
  Log log;
  auto r = log.Add("run.started");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
  EXPECT_EQ(log.rec.last_sequence, -1);
}

TEST(TaskProjection, OutOfSequenceEventIsRefused) {
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  RunEvent e;
  e.run_id = "t1";
  e.type = "run.started";
  e.sequence = 5;
  EXPECT_FALSE(ApplyEvent(log.rec, e).ok());
  EXPECT_EQ(log.rec.last_sequence, 0);
}

TEST(TaskProjection, StatusEventsTable) {
  struct Row {
    const char* type;
    json::object payload;
    S state;
    bool final;
  };
  protocol::Artifact a;
  a.artifact_id = "a1";
  a.parts.push_back(protocol::Part::Text("x"));
  const std::vector<Row> rows = {
      {"run.started", {}, S::kWorking, false},
      {"node.suspended", {{"kind", "approval"}}, S::kInputRequired, true},
      {"node.resumed", {}, S::kWorking, false},
      {"node.suspended", {{"kind", "auth"}}, S::kAuthRequired, true},
      {"node.resumed", {}, S::kWorking, false},
      {"run.completed", {}, S::kCompleted, true},
  };
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  for (const auto& row : rows) {
    ASSERT_TRUE(log.Add(row.type, row.payload).ok()) << row.type;
    EXPECT_EQ(log.rec.task.status.state, row.state) << row.type;
    auto ev = ProjectEvent(log.rec.task, log.events.back());
    ASSERT_TRUE(ev.has_value()) << row.type;
    ASSERT_EQ(ev->kind, StreamEvent::Kind::kStatusUpdate);
    EXPECT_EQ(ev->status_update.status.state, row.state);
    EXPECT_EQ(ev->status_update.final, row.final) << row.type;
  }
}

TEST(TaskProjection, NothingAfterATerminalState) {
  for (const char* terminal :
       {"run.completed", "run.failed", "run.cancelled", "a2a.task.rejected"}) {
    Log log;
    ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
    ASSERT_TRUE(log.Add(terminal).ok());
    auto before = log.rec;
    auto r = log.Add("run.started");
    ASSERT_FALSE(r.ok()) << terminal;
    EXPECT_EQ(r.error().code, core::ErrorCode::kUnsupportedOperation);
    EXPECT_EQ(log.rec, before);
  }
}

TEST(TaskProjection, FailureCarriesErrorInMetadataAndStatusMessage) {
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  ASSERT_TRUE(
      log.Add("run.failed", {{"error", json::object{{"code", "boom"}, {"message", "it broke"}}}})
          .ok());
  const auto& t = log.rec.task;
  EXPECT_EQ(t.status.state, S::kFailed);
  ASSERT_TRUE(t.status.message.has_value());
  EXPECT_EQ(t.status.message->parts.at(0).text, "it broke");
  EXPECT_EQ(t.status.message->role, protocol::Role::kAgent);
  EXPECT_EQ(t.metadata.at("openwop").at("error").at("code"), "boom");
  EXPECT_EQ(t.history.size(), 2u);
}

TEST(TaskProjection, ArtifactsAddReplaceAndAppend) {
  auto art = [](const std::string& text) {
    protocol::Artifact a;
    a.artifact_id = "a1";
    a.parts.push_back(protocol::Part::Text(text));
    return protocol::ArtifactToJson(a);
  };
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  ASSERT_TRUE(log.Add("artifact.created", {{"artifact", art("one")}}).ok());
  ASSERT_TRUE(
      log.Add("artifact.created", {{"artifact", art("two")}, {"append", true}, {"lastChunk", true}})
          .ok());
  ASSERT_EQ(log.rec.task.artifacts.size(), 1u);
  ASSERT_EQ(log.rec.task.artifacts[0].parts.size(), 2u);
  auto ev = ProjectEvent(log.rec.task, log.events.back());
  ASSERT_TRUE(ev && ev->kind == StreamEvent::Kind::kArtifactUpdate);
  EXPECT_TRUE(ev->artifact_update.append);
  EXPECT_TRUE(ev->artifact_update.last_chunk);
  EXPECT_EQ(ev->artifact_update.artifact.parts.at(0).text, "two");  // the chunk, not the whole
  ASSERT_TRUE(log.Add("artifact.created", {{"artifact", art("three")}}).ok());
  ASSERT_EQ(log.rec.task.artifacts[0].parts.size(), 1u);  // no append: replaced
  EXPECT_EQ(log.rec.task.artifacts[0].parts[0].text, "three");
}

// A2A 1.1 generation: 1 at creation, +1 for exactly the entries that project to an event,
// carried by each event as metadata.generation; entries without an event leave it alone.
TEST(TaskProjection, EveryProjectedEventCarriesTheNextGeneration) {
  protocol::Artifact a;
  a.artifact_id = "a1";
  a.parts.push_back(protocol::Part::Text("x"));
  const json::object artifact{{"artifact", protocol::ArtifactToJson(a)}};
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  EXPECT_EQ(GenerationOf(log.rec.task), 1);
  auto task_event = ProjectEvent(log.rec.task, log.events.back());
  ASSERT_TRUE(task_event);
  EXPECT_EQ(GenerationOf(task_event->task), 1);
  const std::vector<std::pair<const char*, json::object>> steps = {
      {"run.started", {}},
      {"log.appended", {{"message", "no event"}}},
      {"node.suspended", {{"kind", "approval"}}},
      {"a2a.message.received", {{"message", UserMessage("m2", "yes")}}},
      {"node.resumed", {}},
      {"run.paused", {{"reason", "x"}}},
      {"artifact.created", artifact},
      {"artifact.created", artifact},
      {"run.completed", {}},
  };
  int64_t want = 1;
  std::vector<int64_t> carried;
  for (const auto& [type, payload] : steps) {
    ASSERT_TRUE(log.Add(type, payload).ok()) << type;
    const auto ev = ProjectEvent(log.rec.task, log.events.back());
    EXPECT_EQ(ev.has_value(), ProjectsToA2a(log.events.back())) << type;
    if (ev) {
      ++want;
      const json::object& md = ev->kind == StreamEvent::Kind::kArtifactUpdate
                                   ? ev->artifact_update.metadata
                                   : ev->status_update.metadata;
      ASSERT_TRUE(md.contains("generation")) << type;
      carried.push_back(md.at("generation").as_int64());
    }
    EXPECT_EQ(GenerationOf(log.rec.task), want) << type;
  }
  EXPECT_EQ(carried, (std::vector<int64_t>{2, 3, 4, 5, 6, 7, 8}));
  // The snapshot keeps it: a task read back from storage (v1.0 JSON) has the same generation.
  auto stored = protocol::v10::TaskFromJson(protocol::TaskToJson(log.rec.task), "t");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(GenerationOf(*stored), 8);
}

TEST(TaskProjection, MalformedPayloadIsRefusedAndChangesNothing) {
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  auto before = log.rec;
  EXPECT_FALSE(log.Add("artifact.created", {{"artifact", "not an object"}}).ok());
  EXPECT_FALSE(log.Add("a2a.message.received", {}).ok());
  EXPECT_EQ(log.rec, before);
}

TEST(TaskProjection, UnknownEventsAdvanceTheSequenceOnly) {
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  auto before = log.rec.task;
  ASSERT_TRUE(log.Add("log.appended", {{"level", "info"}, {"message", "x"}}).ok());
  EXPECT_EQ(log.rec.task, before);
  EXPECT_EQ(log.rec.last_sequence, 1);
  EXPECT_FALSE(ProjectEvent(log.rec.task, log.events.back()).has_value());
}

TEST(TaskProjection, SubmittedProjectsToTheTaskSnapshot) {
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  auto ev = ProjectEvent(log.rec.task, log.events.back());
  ASSERT_TRUE(ev && ev->kind == StreamEvent::Kind::kTask);
  EXPECT_EQ(ev->task, log.rec.task);
}

TEST(TaskProjection, ADurableTimerSaysUntilWhenItWaits) {
  Log log;
  ASSERT_TRUE(log.Add("a2a.task.submitted", Submitted()).ok());
  ASSERT_TRUE(log.Add("run.started").ok());
  const int64_t generation = GenerationOf(log.rec.task);
  // 2026-11-27T12:00:00.000Z
  ASSERT_TRUE(log.Add("node.started", {{"typeId", "core.delay"}, {"wakeAt", 1795780800000}}, "wait")
                  .ok());
  const auto& t = log.rec.task;
  EXPECT_EQ(t.status.state, S::kWorking);
  ASSERT_TRUE(t.status.message.has_value());
  ASSERT_EQ(t.status.message->parts.size(), 1u);
  EXPECT_EQ(t.status.message->parts[0].text, "waiting until 2026-11-27T12:00:00.000Z (node wait)");
  EXPECT_EQ(t.status.message->metadata.at("openwop").at("waitingUntil"),
            "2026-11-27T12:00:00.000Z");
  EXPECT_EQ(GenerationOf(t), generation + 1);
  // Streams see it as a status update, not final.
  auto ev = ProjectEvent(t, log.events.back());
  ASSERT_TRUE(ev && ev->kind == StreamEvent::Kind::kStatusUpdate);
  EXPECT_FALSE(ev->status_update.final);
  EXPECT_EQ(ev->status_update.status.message, t.status.message);
  // Another node's start changes nothing; the next status replaces the message.
  ASSERT_TRUE(log.Add("node.started", {{"typeId", "core.noop"}}, "next").ok());
  EXPECT_FALSE(ProjectEvent(log.rec.task, log.events.back()).has_value());
  ASSERT_TRUE(log.Add("run.completed").ok());
  EXPECT_FALSE(log.rec.task.status.message.has_value());
}

}  // namespace
}  // namespace a2ad::tasks
