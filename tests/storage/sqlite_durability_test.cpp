// SqliteTaskStore durability and fidelity: what was acknowledged is there after a reopen
// or a SIGKILL, and a stored task reads back exactly as it was written.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "sqlite_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::Event;
using storage_test::Ids;
using storage_test::IsOk;
using storage_test::MustOpen;
using storage_test::SqliteTaskStoreTest;

TEST_F(SqliteTaskStoreTest, PersistsAcrossCloseAndReopen) {
  TaskCommit a = Create("task-a", "ctx-1", TaskState::kSubmitted, 1000, 3);
  TaskCommit b = Create("task-b", "ctx-2", TaskState::kWorking, 2000, 1);
  TaskCommit a2 = Append(a.record, TaskState::kCompleted, 3000, 2);
  std::vector<protocol::RunEvent> a_events = a.events;
  a_events.insert(a_events.end(), a2.events.begin(), a2.events.end());
  const TaskRecord a_final = a2.record;
  const TaskRecord b_final = b.record;
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(a))));
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(b))));
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(a2))));
  }  // destructor closes
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  auto got = store->Get("task-a");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, a_final);
  auto events = store->ReadEvents("task-a", -1, 100);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(*events, a_events);
  auto page = store->List(TaskQuery{});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Ids(page->records), (std::vector<std::string>{"task-a", "task-b"}));
  EXPECT_EQ(page->records[1], b_final);
  // And the log continues where it stopped.
  EXPECT_TRUE(IsOk(CommitSync(*store, Append(a_final, TaskState::kCompleted, 4000))));
}

TEST_F(SqliteTaskStoreTest, AcknowledgedCommitsSurviveSigkill) {
  constexpr int kCommits = 25;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    auto opened = SqliteTaskStore::Open(path_);
    if (!opened) ::_exit(3);
    auto& store = **opened;
    for (int i = 0; i < kCommits; ++i) {
      store.Commit(Create("task-" + std::to_string(i), "ctx", TaskState::kWorking, 1000 + i, 2),
                   [fd = fds[1]](core::Result<void> r) {
                     const char byte = r.ok() ? 'k' : 'x';
                     if (::write(fd, &byte, 1) != 1) ::_exit(4);
                   });
    }
    for (;;) ::pause();  // never closes the store: killed with commits acknowledged
  }
  ::close(fds[1]);
  std::string acks;
  char buf[64];
  while (acks.size() < kCommits) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    acks.append(buf, static_cast<size_t>(n));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(fds[0]);
  ASSERT_EQ(acks, std::string(kCommits, 'k'));
  ASSERT_TRUE(WIFSIGNALED(status));

  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < kCommits; ++i) {
    const std::string id = "task-" + std::to_string(i);
    auto got = store->Get(id);
    ASSERT_TRUE(got.ok() && got->has_value()) << id;
    EXPECT_EQ((*got)->last_sequence, 1);
    auto events = store->ReadEvents(id, -1, 10);
    ASSERT_TRUE(events.ok());
    EXPECT_EQ(events->size(), 2u);
  }
}

protocol::Part FilePart(protocol::Part::Kind kind, std::string text) {
  protocol::Part p;
  p.kind = kind;
  p.text = std::move(text);
  p.filename = "report.pdf";
  p.media_type = "application/pdf";
  p.metadata["pages"] = 3;
  return p;
}

protocol::Task RichTask() {
  using protocol::Part;
  protocol::Task t;
  t.id = "0190a3c4-0000-7000-8000-000000000001";
  t.context_id = "ctx-rich";
  t.status.state = TaskState::kInputRequired;
  t.status.timestamp_ms = 1767225600123;
  protocol::Message ask;
  ask.message_id = "m-ask";
  ask.context_id = t.context_id;
  ask.task_id = t.id;
  ask.role = protocol::Role::kAgent;
  ask.parts = {Part::Text("Approve the refund? ✓ \"quoted\"\n")};
  ask.metadata["interruptId"] = "int-1";
  t.status.message = ask;

  protocol::Message user;
  user.message_id = "m-1";
  user.context_id = t.context_id;
  user.task_id = t.id;
  user.role = protocol::Role::kUser;
  Part text = Part::Text("refund order 42");
  text.metadata["lang"] = "en";
  Part data = Part::Data(
      boost::json::object{{"order", 42},
                          {"amount", 19.99},
                          {"negative", -7},
                          {"flag", true},
                          {"none", nullptr},
                          {"list", boost::json::array{1, "x", boost::json::object{{"k", "v"}}}}});
  data.media_type = "application/json";
  user.parts = {text, data, FilePart(Part::Kind::kRaw, "aGVsbG8="),
                FilePart(Part::Kind::kUrl, "https://example.com/r.pdf")};
  user.metadata["source"] = "test";
  user.extensions = {"https://example.com/ext/v1"};
  user.reference_task_ids = {"task-older"};
  t.history = {user, ask};

  protocol::Artifact a;
  a.artifact_id = "art-1";
  a.name = "summary";
  a.description = "what happened";
  a.parts = {Part::Text("done"), Part::Data(boost::json::array{1, 2, 3}),
             FilePart(Part::Kind::kRaw, "AAEC"), FilePart(Part::Kind::kUrl, "https://x.test/a")};
  a.metadata["chunk"] = 1;
  a.extensions = {"https://example.com/ext/v2"};
  protocol::Artifact empty;
  empty.artifact_id = "art-2";
  empty.parts = {Part::Text("")};
  t.artifacts = {a, empty};

  t.metadata["workflowId"] = "wf-refund";
  t.metadata["nested"] = boost::json::object{{"deep", boost::json::object{{"n", 1}}}};
  return t;
}

TEST_F(SqliteTaskStoreTest, SnapshotRoundTripsExactly) {
  TaskCommit c;
  c.record.task = RichTask();
  c.record.skill_id = "refund";
  c.record.created_at_ms = 1767225600000;
  c.record.updated_at_ms = c.record.task.status.timestamp_ms;
  c.record.last_sequence = 0;
  c.events = {Event(c.record.task.id, 0)};
  c.events[0].payload["unicode"] = "żółw 🐢";
  c.events[0].payload["double"] = 0.1;
  const TaskCommit sent = c;
  {
    auto store = MustOpen(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(IsOk(CommitSync(*store, std::move(c))));
    auto got = store->Get(sent.record.task.id);
    ASSERT_TRUE(got.ok() && got->has_value()) << (got.ok() ? "missing" : got.error().message);
    EXPECT_EQ(**got, sent.record);
    EXPECT_EQ((*got)->task.history, sent.record.task.history);
    EXPECT_EQ((*got)->task.artifacts, sent.record.task.artifacts);
    EXPECT_EQ((*got)->task.status, sent.record.task.status);
    EXPECT_EQ((*got)->task.metadata, sent.record.task.metadata);
  }
  auto store = MustOpen(path_);
  ASSERT_NE(store, nullptr);
  auto got = store->Get(sent.record.task.id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, sent.record);
  auto events = store->ReadEvents(sent.record.task.id, -1, 10);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(*events, sent.events);
  auto page = store->List(TaskQuery{});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->records.size(), 1u);
  EXPECT_EQ(page->records[0], sent.record);
}

}  // namespace
}  // namespace a2ad::storage
