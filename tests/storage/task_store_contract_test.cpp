// The TaskStore contract (task_store.hpp), run against every backend (STYLE.md #6).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "task_store_backends.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::CommitAsync;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::Event;
using storage_test::Ids;
using storage_test::IsOk;
using storage_test::Record;

using storage_test::BackendNames;
using storage_test::Backends;

template <class Backend>
class TaskStoreContractTest : public storage_test::BackendTest<Backend> {
 protected:
  using storage_test::BackendTest<Backend>::store_;
  using storage_test::BackendTest<Backend>::store;

  TaskRecord MustGet(const std::string& id) {
    auto got = store_->Get(id);
    EXPECT_TRUE(got.ok()) << got.error().message;
    if (!got.ok() || !got->has_value()) {
      ADD_FAILURE() << "task " << id << " not found";
      return {};
    }
    return **got;
  }

  std::vector<protocol::RunEvent> MustRead(const std::string& id, int64_t after = -1,
                                           size_t limit = 1000) {
    auto events = store_->ReadEvents(id, after, limit);
    EXPECT_TRUE(events.ok()) << events.error().message;
    return events.ok() ? *events : std::vector<protocol::RunEvent>{};
  }

  TaskPage MustList(const TaskQuery& q) {
    auto page = store_->List(q);
    EXPECT_TRUE(page.ok()) << page.error().message;
    return page.ok() ? *page : TaskPage{};
  }

};


TYPED_TEST_SUITE(TaskStoreContractTest, Backends, BackendNames);

TYPED_TEST(TaskStoreContractTest, CreateStoresRecordAndEvents) {
  TaskCommit c = Create("task-1", "ctx-1", TaskState::kSubmitted, 1500, 2);
  const TaskCommit sent = c;
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(c))));

  EXPECT_EQ(this->MustGet("task-1"), sent.record);
  EXPECT_EQ(this->MustRead("task-1"), sent.events);
}

TYPED_TEST(TaskStoreContractTest, GetUnknownTaskIsNullopt) {
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("task-1"))));
  auto got = this->store().Get("task-2");
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->has_value());
}

TYPED_TEST(TaskStoreContractTest, DuplicateCreateConflictsAndKeepsTheOriginal) {
  TaskCommit first = Create("task-1", "ctx-1", TaskState::kSubmitted, 1000, 1);
  const TaskRecord original = first.record;
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(first))));

  TaskCommit second = Create("task-1", "ctx-other", TaskState::kWorking, 2000, 3);
  auto r = CommitSync(this->store(), std::move(second));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, core::ErrorCode::kConflict);
  EXPECT_EQ(this->MustGet("task-1"), original);
  EXPECT_EQ(this->MustRead("task-1").size(), 1u);
}

TYPED_TEST(TaskStoreContractTest, WrongExpectedSequenceConflictsAndWritesNothing) {
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Create("task-1", "ctx-1", TaskState::kSubmitted, 1000, 2))));
  const TaskRecord stored = this->MustGet("task-1");  // last_sequence 1

  for (int64_t expected : {0, 2, 7}) {
    TaskRecord pretend = stored;
    pretend.last_sequence = expected;
    auto r = CommitSync(this->store(), Append(pretend, TaskState::kWorking, 2000, 2));
    ASSERT_FALSE(r.ok()) << expected;
    EXPECT_EQ(r.error().code, core::ErrorCode::kConflict) << expected;
  }
  // Appending to a task that does not exist is a conflict too.
  auto missing = CommitSync(this->store(), Append(Record("ghost", "c", TaskState::kWorking, 1, 0),
                                                  TaskState::kWorking, 2000));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, core::ErrorCode::kConflict);

  EXPECT_EQ(this->MustGet("task-1"), stored);
  EXPECT_EQ(this->MustRead("task-1").size(), 2u);
  auto ghost = this->store().Get("ghost");
  ASSERT_TRUE(ghost.ok());
  EXPECT_FALSE(ghost->has_value());
}

TYPED_TEST(TaskStoreContractTest, ViolatedPreconditionsAreInvalidParamsAndWriteNothing) {
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("task-1"))));
  const TaskRecord stored = this->MustGet("task-1");

  std::vector<TaskCommit> bad;
  {
    TaskCommit c = Append(stored, TaskState::kWorking, 2000, 2);
    c.events[1].run_id = "task-other";
    bad.push_back(c);
  }
  {
    TaskCommit c = Append(stored, TaskState::kWorking, 2000, 2);
    c.events[1].sequence = 3;  // gap
    bad.push_back(c);
  }
  {
    TaskCommit c = Append(stored, TaskState::kWorking, 2000, 2);
    c.record.last_sequence = 1;  // should be 2
    bad.push_back(c);
  }
  {
    TaskCommit c = Append(stored, TaskState::kWorking, 2000, 0);
    c.record.last_sequence = 1;  // no events: must stay at expected (0)
    bad.push_back(c);
  }
  {
    TaskCommit c = Create("");
    c.events.clear();
    c.record.last_sequence = -1;
    bad.push_back(c);
  }
  for (size_t i = 0; i < bad.size(); ++i) {
    auto r = CommitSync(this->store(), bad[i]);
    ASSERT_FALSE(r.ok()) << i;
    EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams) << i << ": " << r.error().message;
  }
  EXPECT_EQ(this->MustGet("task-1"), stored);
  EXPECT_EQ(this->MustRead("task-1").size(), 1u);
}

TYPED_TEST(TaskStoreContractTest, SequencesStayGapFreeAcrossCommits) {
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Create("task-1", "ctx-1", TaskState::kSubmitted, 1000, 1))));
  std::vector<protocol::RunEvent> all = {Event("task-1", 0)};
  TaskRecord current = this->MustGet("task-1");
  for (int step = 0; step < 5; ++step) {
    TaskCommit c = Append(current, TaskState::kWorking, 2000 + step, step % 3);  // 0, 1 or 2
    all.insert(all.end(), c.events.begin(), c.events.end());
    const TaskRecord next = c.record;
    ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(c)))) << step;
    current = this->MustGet("task-1");
    EXPECT_EQ(current, next);
  }
  EXPECT_EQ(current.last_sequence, static_cast<int64_t>(all.size()) - 1);
  const auto events = this->MustRead("task-1");
  ASSERT_EQ(events, all);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].sequence, int64_t(i));
}

TYPED_TEST(TaskStoreContractTest, ReadEventsAfterCursorWithLimit) {
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Create("task-1", "ctx-1", TaskState::kWorking, 1000, 6))));
  auto seqs = [](const std::vector<protocol::RunEvent>& events) {
    std::vector<int64_t> out;
    for (const auto& e : events) out.push_back(e.sequence);
    return out;
  };
  EXPECT_EQ(seqs(this->MustRead("task-1", -1, 100)), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(seqs(this->MustRead("task-1", 2, 100)), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(seqs(this->MustRead("task-1", 0, 2)), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(seqs(this->MustRead("task-1", -1, 1)), (std::vector<int64_t>{0}));
  EXPECT_TRUE(this->MustRead("task-1", 5, 100).empty());
  EXPECT_TRUE(this->MustRead("task-1", 1, 0).empty());
  EXPECT_EQ(seqs(this->MustRead("task-1", 4, SIZE_MAX)), (std::vector<int64_t>{5}));
  EXPECT_TRUE(this->MustRead("unknown", -1, 100).empty());
  EXPECT_EQ(this->MustRead("task-1", 3, 1).at(0), Event("task-1", 4));
}

TYPED_TEST(TaskStoreContractTest, CommitWithoutEventsReplacesTheSnapshotOnly) {
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Create("task-1", "ctx-1", TaskState::kSubmitted, 1000, 2))));
  TaskCommit c = Append(this->MustGet("task-1"), TaskState::kWorking, 3000, 0);
  c.record.task.metadata["extra"] = true;
  const TaskRecord want = c.record;
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(c))));
  EXPECT_EQ(this->MustGet("task-1"), want);
  EXPECT_EQ(this->MustGet("task-1").last_sequence, 1);
  EXPECT_EQ(this->MustRead("task-1").size(), 2u);
}

TYPED_TEST(TaskStoreContractTest, ListOrdersByUpdatedDescThenIdDesc) {
  for (auto [id, updated] : std::vector<std::pair<std::string, int64_t>>{
           {"t-a", 100}, {"t-b", 300}, {"t-c", 200}, {"t-d", 300}, {"t-e", 100}}) {
    ASSERT_TRUE(IsOk(CommitSync(this->store(), Create(id, "ctx", TaskState::kWorking, updated))));
  }
  TaskQuery q;
  q.page_size = 100;
  const TaskPage page = this->MustList(q);
  EXPECT_EQ(Ids(page.records), (std::vector<std::string>{"t-d", "t-b", "t-c", "t-e", "t-a"}));
  EXPECT_EQ(page.total_size, 5);
  EXPECT_EQ(page.next_page_token, "");
  EXPECT_EQ(page.records[0], this->MustGet("t-d"));  // full records, not just ids

  // An update moves a task to the front.
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Append(this->MustGet("t-a"), TaskState::kCompleted, 400))));
  EXPECT_EQ(Ids(this->MustList(q).records),
            (std::vector<std::string>{"t-a", "t-d", "t-b", "t-c", "t-e"}));
}

TYPED_TEST(TaskStoreContractTest, ListFiltersByContextStateAndUpdatedAfterInclusive) {
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("a1", "ctx-a", TaskState::kWorking, 100))));
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("a2", "ctx-a", TaskState::kCompleted, 200))));
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("a3", "ctx-a", TaskState::kWorking, 300))));
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("b1", "ctx-b", TaskState::kWorking, 200))));
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("b2", "ctx-b", TaskState::kFailed, 400))));
  // a1 moves from working to input-required: filters see the current state only.
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Append(this->MustGet("a1"), TaskState::kInputRequired, 150))));

  auto list = [&](std::string ctx, std::optional<TaskState> state, std::optional<int64_t> after) {
    TaskQuery q;
    q.context_id = std::move(ctx);
    q.state = state;
    q.updated_at_or_after_ms = after;
    q.page_size = 100;
    TaskPage page = this->MustList(q);
    EXPECT_EQ(page.total_size, static_cast<int32_t>(page.records.size()));
    return Ids(page.records);
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(list("", std::nullopt, std::nullopt), (V{"b2", "a3", "b1", "a2", "a1"}));
  EXPECT_EQ(list("ctx-a", std::nullopt, std::nullopt), (V{"a3", "a2", "a1"}));
  EXPECT_EQ(list("ctx-b", std::nullopt, std::nullopt), (V{"b2", "b1"}));
  EXPECT_EQ(list("ctx-none", std::nullopt, std::nullopt), V{});
  EXPECT_EQ(list("", TaskState::kWorking, std::nullopt), (V{"a3", "b1"}));
  EXPECT_EQ(list("", TaskState::kInputRequired, std::nullopt), (V{"a1"}));
  EXPECT_EQ(list("", TaskState::kCanceled, std::nullopt), V{});
  EXPECT_EQ(list("", std::nullopt, 200), (V{"b2", "a3", "b1", "a2"}));  // 200 is included
  EXPECT_EQ(list("", std::nullopt, 201), (V{"b2", "a3"}));
  EXPECT_EQ(list("ctx-a", TaskState::kWorking, std::nullopt), (V{"a3"}));
  EXPECT_EQ(list("ctx-b", TaskState::kWorking, 200), (V{"b1"}));
  EXPECT_EQ(list("ctx-b", TaskState::kWorking, 201), V{});
}

TYPED_TEST(TaskStoreContractTest, ListFiltersBySkill) {
  for (int i = 0; i < 7; ++i) {
    TaskCommit c = Create("s" + std::to_string(i), "ctx-s", TaskState::kWorking, 100 + i);
    c.record.skill_id = i % 3 == 0 ? "long-delay" : "campaign-brief";
    ASSERT_TRUE(IsOk(CommitSync(this->store(), c)));
  }
  TaskQuery q;
  q.skill_id = "long-delay";
  q.page_size = 2;
  TaskPage first = this->MustList(q);
  EXPECT_EQ(first.total_size, 3);
  EXPECT_EQ(Ids(first.records), (std::vector<std::string>{"s6", "s3"}));
  q.page_token = first.next_page_token;
  EXPECT_EQ(Ids(this->MustList(q).records), std::vector<std::string>{"s0"});
  q = {};
  q.skill_id = "campaign-brief";
  q.state = TaskState::kWorking;
  q.page_size = 100;
  EXPECT_EQ(this->MustList(q).total_size, 4);
  q.skill_id = "none";
  EXPECT_EQ(this->MustList(q).total_size, 0);
}

TYPED_TEST(TaskStoreContractTest, ListPaginationWalksEveryMatchExactlyOnce) {
  // 23 tasks with many equal timestamps, so the cursor must break ties by id.
  for (int i = 0; i < 23; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "task-%02d", i);
    ASSERT_TRUE(IsOk(CommitSync(this->store(), Create(id, i % 2 == 0 ? "even" : "odd",
                                                      TaskState::kWorking, 1000 + (i % 4) * 10))));
  }
  auto walk = [&](TaskQuery q, int32_t want_total) {
    std::vector<std::string> seen;
    int pages = 0;
    for (;;) {
      TaskPage page = this->MustList(q);
      ++pages;
      EXPECT_EQ(page.total_size, want_total);
      EXPECT_LE(page.records.size(), static_cast<size_t>(q.page_size));
      auto ids = Ids(page.records);
      seen.insert(seen.end(), ids.begin(), ids.end());
      if (page.next_page_token.empty()) break;
      EXPECT_EQ(page.records.size(), static_cast<size_t>(q.page_size));
      q.page_token = page.next_page_token;
      if (pages > 50) {
        ADD_FAILURE() << "pagination does not end";
        break;
      }
    }
    return std::make_pair(seen, pages);
  };

  TaskQuery all;
  all.page_size = 100;
  const std::vector<std::string> everything = Ids(this->MustList(all).records);
  ASSERT_EQ(everything.size(), 23u);

  TaskQuery q;
  q.page_size = 5;
  auto [seen, pages] = walk(q, 23);
  EXPECT_EQ(seen, everything);  // same order: no duplicate, no miss
  EXPECT_EQ(pages, 5);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 23u);

  // A page size dividing the match count exactly: the last full page has no token.
  TaskQuery odd;
  odd.context_id = "odd";  // 11 tasks
  odd.page_size = 1;
  auto [odd_seen, odd_pages] = walk(odd, 11);
  EXPECT_EQ(odd_pages, 11);
  std::vector<std::string> want_odd;
  std::copy_if(everything.begin(), everything.end(), std::back_inserter(want_odd),
               [](const std::string& id) { return (id.back() - '0') % 2 == 1; });
  EXPECT_EQ(odd_seen, want_odd);

  TaskQuery recent;
  recent.updated_at_or_after_ms = 1020;  // i % 4 in {2, 3}: 11 tasks
  recent.page_size = 4;
  auto [recent_seen, recent_pages] = walk(recent, 11);
  EXPECT_EQ(recent_pages, 3);
  EXPECT_EQ(recent_seen.size(), 11u);
  EXPECT_EQ(std::set<std::string>(recent_seen.begin(), recent_seen.end()).size(), 11u);
}

TYPED_TEST(TaskStoreContractTest, MalformedPageTokenIsInvalidParams) {
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("task-1"))));
  for (const char* token :
       {"not a token", "%%%", "bm9jb2xvbg" /*nocolon*/, "eDp0YXNr" /*x:task*/, "MTIzOg" /*123:*/}) {
    TaskQuery q;
    q.page_token = token;
    auto page = this->store().List(q);
    ASSERT_FALSE(page.ok()) << token;
    EXPECT_EQ(page.error().code, core::ErrorCode::kInvalidParams) << token;
    EXPECT_NE(page.error().message.find("pageToken"), std::string::npos) << page.error().message;
  }
}

TYPED_TEST(TaskStoreContractTest, CloseDrainsThenRefusesCommits) {
  std::vector<std::future<core::Result<void>>> pending;
  for (int i = 0; i < 20; ++i) {
    pending.push_back(CommitAsync(this->store(), Create("task-" + std::to_string(i))));
  }
  this->store().Close();
  for (auto& f : pending) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);  // drained
    EXPECT_TRUE(f.get().ok());
  }
  auto r = CommitSync(this->store(), Create("late"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, core::ErrorCode::kUnavailable);
  this->store().Close();  // idempotent
  auto got = this->store().Get("task-1");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, core::ErrorCode::kUnavailable);
}

TYPED_TEST(TaskStoreContractTest, ConcurrentWritersAndReaders) {
  constexpr int kWriters = 4;
  constexpr int kTasksPerWriter = 3;
  constexpr int kCommitsPerTask = 20;
  constexpr int kEventsPerCommit = 2;
  auto task_id = [](int w, int t) { return "w" + std::to_string(w) + "-t" + std::to_string(t); };

  std::atomic<bool> writers_done{false};
  std::atomic<int> reader_errors{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      std::map<std::string, int64_t> last_seen;  // sequences never go backwards
      int i = r;
      do {
        const std::string id = task_id(i % kWriters, (i / kWriters) % kTasksPerWriter);
        ++i;
        auto got = this->store().Get(id);
        if (!got.ok()) {
          ++reader_errors;
          continue;
        }
        if (!got->has_value()) continue;
        const int64_t last = (*got)->last_sequence;
        if (last < last_seen[id]) ++reader_errors;
        last_seen[id] = last;
        // The log holds at least what the snapshot (read earlier) says, gap-free from 0.
        auto events = this->store().ReadEvents(id, -1, 10000);
        if (!events.ok() || static_cast<int64_t>(events->size()) < last + 1) {
          ++reader_errors;
          continue;
        }
        for (size_t k = 0; k < events->size(); ++k) {
          if ((*events)[k].sequence != static_cast<int64_t>(k)) ++reader_errors;
        }
        TaskQuery q;
        q.page_size = 5;
        auto page = this->store().List(q);
        if (!page.ok() || page->total_size > kWriters * kTasksPerWriter) ++reader_errors;
        ++reads;
      } while (!writers_done.load());
    });
  }

  std::atomic<int> commit_errors{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      // Fire every commit without waiting (call order per thread is apply order), then wait.
      std::vector<std::future<core::Result<void>>> results;
      std::vector<TaskRecord> current(kTasksPerWriter);
      for (int t = 0; t < kTasksPerWriter; ++t) {
        TaskCommit c = Create(task_id(w, t), "ctx-" + std::to_string(w), TaskState::kSubmitted,
                              1000, kEventsPerCommit);
        current[t] = c.record;
        results.push_back(CommitAsync(this->store(), std::move(c)));
      }
      for (int k = 1; k < kCommitsPerTask; ++k) {
        for (int t = 0; t < kTasksPerWriter; ++t) {
          TaskCommit c = Append(current[t], TaskState::kWorking, 1000 + k, kEventsPerCommit);
          current[t] = c.record;
          results.push_back(CommitAsync(this->store(), std::move(c)));
        }
      }
      for (auto& f : results) {
        if (!f.get().ok()) ++commit_errors;
      }
    });
  }
  for (auto& t : writers) t.join();
  writers_done = true;
  for (auto& t : readers) t.join();

  EXPECT_EQ(commit_errors.load(), 0);
  EXPECT_EQ(reader_errors.load(), 0);
  EXPECT_GT(reads.load(), 0);
  constexpr int64_t kLast = kCommitsPerTask * kEventsPerCommit - 1;
  for (int w = 0; w < kWriters; ++w) {
    for (int t = 0; t < kTasksPerWriter; ++t) {
      const std::string id = task_id(w, t);
      EXPECT_EQ(this->MustGet(id).last_sequence, kLast) << id;
      const auto events = this->MustRead(id, -1, 10000);
      ASSERT_EQ(events.size(), static_cast<size_t>(kLast + 1)) << id;
      for (size_t k = 0; k < events.size(); ++k) EXPECT_EQ(events[k], Event(id, int64_t(k)));
    }
  }
  TaskQuery q;
  EXPECT_EQ(this->MustList(q).total_size, kWriters * kTasksPerWriter);
}

// ---- Retention (PruneEvents) ------------------------------------------------------------

TYPED_TEST(TaskStoreContractTest, PruneDeletesOnlyTheLogsOfTerminalTasksOlderThanTheCutoff) {
  constexpr int64_t kCutoff = 1000;
  struct Spec {
    std::string id;
    TaskState state;
    int64_t updated_at_ms;
    int events;
    bool pruned;
  };
  const std::vector<Spec> specs = {
      {"old-completed", TaskState::kCompleted, 500, 3, true},
      {"old-failed", TaskState::kFailed, 10, 2, true},
      {"old-canceled", TaskState::kCanceled, 999, 1, true},
      {"old-rejected", TaskState::kRejected, 1, 4, true},
      {"old-completed-empty-log", TaskState::kCompleted, 500, 0, true},
      {"boundary-completed", TaskState::kCompleted, kCutoff, 2, false},  // == cutoff: kept
      {"new-failed", TaskState::kFailed, 1500, 2, false},
      {"old-submitted", TaskState::kSubmitted, 1, 2, false},
      {"old-working", TaskState::kWorking, 1, 3, false},
      {"old-input-required", TaskState::kInputRequired, 1, 2, false},
      {"old-auth-required", TaskState::kAuthRequired, 1, 2, false},
  };
  size_t want_deleted = 0;
  for (const Spec& spec : specs) {
    ASSERT_TRUE(IsOk(CommitSync(
        this->store(), Create(spec.id, "ctx", spec.state, spec.updated_at_ms, spec.events))))
        << spec.id;
    if (spec.pruned) want_deleted += static_cast<size_t>(spec.events);
  }
  // A log written by several commits, the last of which made the task terminal.
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Create("old-multi", "ctx2", TaskState::kSubmitted, 100, 2))));
  ASSERT_TRUE(IsOk(
      CommitSync(this->store(), Append(this->MustGet("old-multi"), TaskState::kWorking, 200, 3))));
  ASSERT_TRUE(IsOk(CommitSync(this->store(),
                              Append(this->MustGet("old-multi"), TaskState::kCompleted, 300, 1))));
  want_deleted += 6;

  std::map<std::string, TaskRecord> records;
  std::map<std::string, std::vector<protocol::RunEvent>> logs;
  for (const Spec& spec : specs) {
    records[spec.id] = this->MustGet(spec.id);
    logs[spec.id] = this->MustRead(spec.id);
    ASSERT_EQ(logs[spec.id].size(), static_cast<size_t>(spec.events)) << spec.id;
  }
  TaskQuery all;
  all.page_size = 100;
  const TaskPage page_before = this->MustList(all);
  const TaskRecord multi_before = this->MustGet("old-multi");

  auto pruned = this->store().PruneEvents(kCutoff);
  ASSERT_TRUE(IsOk(pruned));
  EXPECT_EQ(*pruned, want_deleted);

  for (const Spec& spec : specs) {
    EXPECT_EQ(this->MustGet(spec.id), records[spec.id]) << spec.id;  // snapshots unchanged
    if (spec.pruned) {
      EXPECT_TRUE(this->MustRead(spec.id).empty()) << spec.id;
      EXPECT_TRUE(this->MustRead(spec.id, 0).empty()) << spec.id;
    } else {
      EXPECT_EQ(this->MustRead(spec.id), logs[spec.id]) << spec.id;
    }
  }
  EXPECT_EQ(this->MustGet("old-multi"), multi_before);
  EXPECT_EQ(this->MustGet("old-multi").last_sequence, 5);
  EXPECT_TRUE(this->MustRead("old-multi").empty());
  const TaskPage page_after = this->MustList(all);
  EXPECT_EQ(page_after.records, page_before.records);
  EXPECT_EQ(page_after.total_size, page_before.total_size);
  TaskQuery completed;
  completed.state = TaskState::kCompleted;
  completed.page_size = 100;
  EXPECT_EQ(this->MustList(completed).total_size, 4);

  // Idempotent.
  auto again = this->store().PruneEvents(kCutoff);
  ASSERT_TRUE(IsOk(again));
  EXPECT_EQ(*again, 0u);

  // A later cutoff takes the boundary task and the newer terminal one, nothing else.
  auto later = this->store().PruneEvents(2000);
  ASSERT_TRUE(IsOk(later));
  EXPECT_EQ(*later, 4u);
  EXPECT_TRUE(this->MustRead("boundary-completed").empty());
  EXPECT_TRUE(this->MustRead("new-failed").empty());
  for (const char* id :
       {"old-submitted", "old-working", "old-input-required", "old-auth-required"}) {
    EXPECT_EQ(this->MustRead(id), logs[id]) << id;
  }
  // Non-terminal tasks keep everything, however old and however late the cutoff.
  auto everything = this->store().PruneEvents(std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(IsOk(everything));
  EXPECT_EQ(*everything, 0u);
  EXPECT_EQ(this->MustRead("old-working"), logs["old-working"]);
}

TYPED_TEST(TaskStoreContractTest, PruneOnAnEmptyStoreDeletesNothing) {
  auto pruned = this->store().PruneEvents(std::numeric_limits<int64_t>::max());
  ASSERT_TRUE(IsOk(pruned));
  EXPECT_EQ(*pruned, 0u);
}

TYPED_TEST(TaskStoreContractTest, CommitsToAPrunedTaskContinueFromTheSnapshotSequence) {
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Create("task-1", "ctx", TaskState::kCompleted, 500, 3))));
  const TaskRecord stored = this->MustGet("task-1");  // last_sequence 2
  ASSERT_EQ(*this->store().PruneEvents(1000), 3u);
  ASSERT_TRUE(this->MustRead("task-1").empty());

  // The store checks sequences against the snapshot, not against the (empty) log.
  for (int64_t expected : {-1, 0, 1, 3}) {
    TaskCommit c = expected == -1 ? Create("task-1", "ctx", TaskState::kWorking, 600, 1) : [&] {
      TaskRecord pretend = stored;
      pretend.last_sequence = expected;
      return Append(pretend, TaskState::kCompleted, 600, 1);
    }();
    auto r = CommitSync(this->store(), std::move(c));
    ASSERT_FALSE(r.ok()) << expected;
    EXPECT_EQ(r.error().code, core::ErrorCode::kConflict) << expected;
  }
  EXPECT_EQ(this->MustGet("task-1"), stored);
  EXPECT_TRUE(this->MustRead("task-1").empty());

  // A snapshot-only commit, then one with events: sequences 3 and 4.
  TaskCommit touch = Append(stored, TaskState::kCompleted, 600, 0);
  touch.record.task.metadata["touched"] = true;
  ASSERT_TRUE(IsOk(CommitSync(this->store(), touch)));
  EXPECT_EQ(this->MustGet("task-1"), touch.record);
  TaskCommit more = Append(touch.record, TaskState::kCompleted, 700, 2);
  const std::vector<protocol::RunEvent> appended = more.events;
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(more))));
  EXPECT_EQ(this->MustGet("task-1").last_sequence, 4);
  EXPECT_EQ(this->MustRead("task-1"), appended);
  EXPECT_EQ(appended.front().sequence, 3);
  EXPECT_EQ(this->MustRead("task-1", 3), (std::vector<protocol::RunEvent>{Event("task-1", 4)}));
  EXPECT_EQ(this->MustRead("task-1", 2, 1), (std::vector<protocol::RunEvent>{Event("task-1", 3)}));
  EXPECT_EQ(this->MustRead("task-1", 1, 1), (std::vector<protocol::RunEvent>{Event("task-1", 3)}));
  EXPECT_TRUE(this->MustRead("task-1", 4).empty());

  // Still terminal and old: the new events go at the next prune, and the log continues.
  auto pruned = this->store().PruneEvents(1000);
  ASSERT_TRUE(IsOk(pruned));
  EXPECT_EQ(*pruned, 2u);
  EXPECT_TRUE(this->MustRead("task-1").empty());
  ASSERT_TRUE(IsOk(
      CommitSync(this->store(), Append(this->MustGet("task-1"), TaskState::kCompleted, 800, 1))));
  EXPECT_EQ(this->MustRead("task-1"), (std::vector<protocol::RunEvent>{Event("task-1", 5)}));
}

TYPED_TEST(TaskStoreContractTest, PruneConcurrentWithCommitsAndReads) {
  constexpr int64_t kCutoff = 1000;
  constexpr int kWriters = 3;
  constexpr int kCommitsPerWriter = 30;
  constexpr int kEventsPerCommit = 2;
  // Terminal and old before the writers start.
  size_t want_deleted = 0;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("done-" + std::to_string(i), "ctx",
                                                      TaskState::kCompleted, 100 + i, 5))));
    want_deleted += 5;
  }

  std::atomic<int> commit_errors{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      // Each writer drives one live task (working, old timestamps: must keep its log) and
      // creates terminal old tasks as it goes (their logs may go in any prune).
      const std::string live = "live-" + std::to_string(w);
      TaskCommit create = Create(live, "ctx", TaskState::kWorking, 1, kEventsPerCommit);
      TaskRecord current = create.record;
      if (!CommitSync(this->store(), std::move(create)).ok()) ++commit_errors;
      for (int k = 1; k < kCommitsPerWriter; ++k) {
        TaskCommit c = Append(current, TaskState::kWorking, 1 + k, kEventsPerCommit);
        current = c.record;
        if (!CommitSync(this->store(), std::move(c)).ok()) ++commit_errors;
        if (k % 5 == 0) {
          const std::string id = "late-" + std::to_string(w) + "-" + std::to_string(k);
          if (!CommitSync(this->store(), Create(id, "ctx", TaskState::kFailed, 500, 3)).ok()) {
            ++commit_errors;
          }
        }
      }
    });
  }
  std::atomic<bool> writers_done{false};
  std::atomic<int> prune_errors{0};
  std::atomic<size_t> deleted{0};
  std::thread pruner([&] {
    do {
      auto pruned = this->store().PruneEvents(kCutoff);
      if (!pruned.ok()) {
        ++prune_errors;
      } else {
        deleted += *pruned;
      }
    } while (!writers_done.load());
  });
  std::atomic<int> reader_errors{0};
  std::thread reader([&] {
    do {
      for (int w = 0; w < kWriters; ++w) {
        // A live task's log is whole: gap-free from 0, at least up to the snapshot read first.
        const std::string id = "live-" + std::to_string(w);
        auto got = this->store().Get(id);
        if (!got.ok()) ++reader_errors;
        if (!got.ok() || !got->has_value()) continue;
        auto events = this->store().ReadEvents(id, -1, 10000);
        if (!events.ok() || static_cast<int64_t>(events->size()) < (*got)->last_sequence + 1) {
          ++reader_errors;
          continue;
        }
        for (size_t k = 0; k < events->size(); ++k) {
          if ((*events)[k].sequence != static_cast<int64_t>(k)) ++reader_errors;
        }
      }
      for (int i = 0; i < 10; ++i) {
        // A pruned task's log is empty or (mid-prune) a gap-free suffix ending at 4.
        auto events = this->store().ReadEvents("done-" + std::to_string(i), -1, 100);
        if (!events.ok()) {
          ++reader_errors;
          continue;
        }
        for (size_t k = 0; k < events->size(); ++k) {
          if ((*events)[k].sequence != 5 - static_cast<int64_t>(events->size() - k)) {
            ++reader_errors;
          }
        }
      }
    } while (!writers_done.load());
  });
  for (auto& t : writers) t.join();
  writers_done = true;
  pruner.join();
  reader.join();
  EXPECT_EQ(reader_errors.load(), 0);
  auto last = this->store().PruneEvents(kCutoff);
  ASSERT_TRUE(IsOk(last));
  deleted += *last;

  EXPECT_EQ(commit_errors.load(), 0);
  EXPECT_EQ(prune_errors.load(), 0);
  want_deleted += static_cast<size_t>(kWriters) * ((kCommitsPerWriter - 1) / 5) * 3;
  EXPECT_EQ(deleted.load(), want_deleted);
  constexpr int64_t kLast = kCommitsPerWriter * kEventsPerCommit - 1;
  for (int w = 0; w < kWriters; ++w) {
    const std::string id = "live-" + std::to_string(w);
    EXPECT_EQ(this->MustGet(id).last_sequence, kLast);
    const auto events = this->MustRead(id, -1, 10000);
    ASSERT_EQ(events.size(), static_cast<size_t>(kLast + 1)) << id;
    for (size_t k = 0; k < events.size(); ++k) EXPECT_EQ(events[k], Event(id, int64_t(k)));
  }
  for (int i = 0; i < 10; ++i) {
    const std::string id = "done-" + std::to_string(i);
    EXPECT_EQ(this->MustGet(id).last_sequence, 4);
    EXPECT_TRUE(this->MustRead(id).empty()) << id;
  }
  EXPECT_TRUE(this->MustRead("late-0-5").empty());
  EXPECT_EQ(this->MustGet("late-0-5").last_sequence, 2);
}

TYPED_TEST(TaskStoreContractTest, PruneAfterCloseIsUnavailable) {
  ASSERT_TRUE(
      IsOk(CommitSync(this->store(), Create("task-1", "ctx", TaskState::kCompleted, 500, 3))));
  this->store().Close();
  auto pruned = this->store().PruneEvents(1000);
  ASSERT_FALSE(pruned.ok());
  EXPECT_EQ(pruned.error().code, core::ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace a2ad::storage
