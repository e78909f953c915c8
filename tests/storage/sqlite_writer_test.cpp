// SqliteTaskStore's writer: a commit to an idle writer is written on the caller's thread,
// commits queued behind a busy writer form a batch (capped at max_batch_commits), a failing
// commit is rolled back alone (savepoints), a failed batch COMMIT fails the whole batch; the
// fault hooks of SqliteOptions drive the failures.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "sqlite_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::CommitAsync;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::IsOk;
using storage_test::MustOpen;
using storage_test::RawDb;
using storage_test::SqliteTaskStoreTest;
using storage_test::WriterGate;

// The writer idle and nothing queued: the caller writes its commit itself, so its callback has
// run, on the caller's thread, when Commit returns, and the commit is readable.
TEST_F(SqliteTaskStoreTest, ACommitToAnIdleWriterIsWrittenOnTheCallersThread) {
  std::vector<size_t> sizes;
  SqliteOptions opts;
  opts.batch_hook = [&sizes](size_t n) { sizes.push_back(n); };
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < 3; ++i) {
    std::thread::id ran_on;
    bool called = false;
    store->Commit(Create("task-" + std::to_string(i)), [&](const core::Result<void>& r) {
      EXPECT_TRUE(IsOk(r));
      ran_on = std::this_thread::get_id();
      called = true;
    });
    ASSERT_TRUE(called) << "commit " << i << " was left to the writer thread";
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    EXPECT_TRUE(store->Get("task-" + std::to_string(i))->has_value());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{1, 1, 1}));
}

// With synchronous=FULL every commit goes to the writer thread: its fsync must not hold the
// caller's thread (an I/O thread of the server).
TEST_F(SqliteTaskStoreTest, WithSynchronousFullTheWriterThreadWritesEveryCommit) {
  SqliteOptions opts;
  opts.synchronous_full = true;
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  std::promise<std::thread::id> ran_on;
  store->Commit(Create("task-1"), [&ran_on](const core::Result<void>& r) {
    EXPECT_TRUE(IsOk(r));
    ran_on.set_value(std::this_thread::get_id());
  });
  EXPECT_NE(ran_on.get_future().get(), std::this_thread::get_id());
}

// Another connection holds the write lock (a migration, a repair, the sqlite3 shell): the
// caller does not wait for it (busy_timeout), the commit goes to the writer thread, which
// waits and writes it once the lock is free. (Had the caller waited, it would have got the
// lock when it was let go and written the commit itself.)
TEST_F(SqliteTaskStoreTest, ACallerNeverWaitsForAnotherConnectionsWriteLock) {
  SqliteOptions opts;
  opts.busy_timeout_ms = 5000;
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  RawDb raw(path_);
  raw.Exec("BEGIN IMMEDIATE");
  std::thread holder([&raw] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    raw.Exec("COMMIT");
  });
  std::promise<std::thread::id> ran_on;
  std::promise<core::Result<void>> result;
  store->Commit(Create("task-1"), [&](core::Result<void> r) {
    ran_on.set_value(std::this_thread::get_id());
    result.set_value(std::move(r));
  });
  holder.join();
  EXPECT_TRUE(IsOk(result.get_future().get()));
  EXPECT_NE(ran_on.get_future().get(), std::this_thread::get_id());
  EXPECT_TRUE(store->Get("task-1")->has_value());
}

// Callers writing their own commits and the writer thread taking the queue in turns: from
// eight threads at once, every commit lands, each task's commits in their order.
TEST_F(SqliteTaskStoreTest, ManyThreadsCommittingAtOnceLoseNothingAndKeepTheirOrder) {
  std::mutex mu;
  std::set<std::thread::id> writers;  // the threads batches were written on
  SqliteOptions opts;
  opts.batch_hook = [&](size_t) {
    std::lock_guard lock(mu);
    writers.insert(std::this_thread::get_id());
  };
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  constexpr int kThreads = 8;
  constexpr int kCommits = 150;
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // One task per thread, appended to without waiting (each append names the sequence
      // the one before leaves: out of order, it would conflict), and a task per append.
      TaskCommit first = Create("seq-" + std::to_string(t));
      TaskRecord head = first.record;
      std::vector<std::future<core::Result<void>>> results;
      results.push_back(CommitAsync(*store, std::move(first)));
      for (int i = 1; i < kCommits; ++i) {
        TaskCommit next = Append(head, TaskState::kWorking, 1000 + i);
        head = next.record;
        results.push_back(CommitAsync(*store, std::move(next)));
        results.push_back(
            CommitAsync(*store, Create("loose-" + std::to_string(t) + "-" + std::to_string(i))));
      }
      for (auto& f : results)
        if (!f.get().ok()) ++failed;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    auto got = store->Get("seq-" + std::to_string(t));
    ASSERT_TRUE(got.ok() && got->has_value());
    EXPECT_EQ((*got)->last_sequence, kCommits - 1);
    auto events = store->ReadEvents("seq-" + std::to_string(t), -1, 1000);
    ASSERT_TRUE(IsOk(events));
    ASSERT_EQ(events->size(), static_cast<size_t>(kCommits));
    for (int i = 0; i < kCommits; ++i) EXPECT_EQ((*events)[i].sequence, i);
  }
  TaskQuery all;
  all.page_size = 1;
  EXPECT_EQ(store->List(all)->total_size, kThreads * kCommits);
  std::lock_guard lock(mu);
  EXPECT_GT(writers.size(), 1u) << "every batch on one thread: no caller wrote its own";
}

TEST_F(SqliteTaskStoreTest, ABatchKeepsItsGoodCommitsWhenOneConflicts) {
  WriterGate gate;
  SqliteOptions opts;
  gate.Install(opts);
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);

  TaskCommit a = Create("task-a", "ctx", TaskState::kSubmitted, 1000, 1);
  const TaskRecord a_record = a.record;
  auto fa = gate.Hold(*store, std::move(a));  // the writer holds batch [a]; the next ones queue up

  TaskCommit b = Create("task-b", "ctx", TaskState::kSubmitted, 1000, 1);
  TaskCommit b2 = Append(b.record, TaskState::kWorking, 2000, 2);  // same batch as b
  const TaskRecord b2_record = b2.record;
  auto fb = CommitAsync(*store, std::move(b));
  auto fdup = CommitAsync(*store, Create("task-a", "other", TaskState::kFailed, 5000, 2));
  auto fb2 = CommitAsync(*store, std::move(b2));
  TaskRecord stale = b2_record;
  stale.last_sequence = 0;
  auto fstale = CommitAsync(*store, Append(stale, TaskState::kFailed, 9000));
  auto fc = CommitAsync(*store, Create("task-c", "ctx", TaskState::kSubmitted, 1000, 1));
  // The same idempotency key twice in one batch: the second creation is the conflict.
  TaskCommit d = Create("task-d", "ctx", TaskState::kSubmitted, 1000, 1);
  d.record.dedup_key = "caller\nmessage-1";
  TaskCommit e = Create("task-e", "ctx", TaskState::kSubmitted, 1000, 2);
  e.record.dedup_key = d.record.dedup_key;
  auto fd = CommitAsync(*store, std::move(d));
  auto fe = CommitAsync(*store, std::move(e));
  gate.Release();

  EXPECT_TRUE(fa.get().ok());
  EXPECT_TRUE(fb.get().ok());
  auto dup = fdup.get();
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, core::ErrorCode::kConflict);
  EXPECT_TRUE(fb2.get().ok());
  auto stale_result = fstale.get();
  ASSERT_FALSE(stale_result.ok());
  EXPECT_EQ(stale_result.error().code, core::ErrorCode::kConflict);
  EXPECT_TRUE(fc.get().ok());
  EXPECT_TRUE(fd.get().ok());
  auto dup_key = fe.get();
  ASSERT_FALSE(dup_key.ok());
  EXPECT_EQ(dup_key.error().code, core::ErrorCode::kConflict);
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 7}));

  EXPECT_EQ(**store->Get("task-a"), a_record);
  EXPECT_EQ(store->ReadEvents("task-a", -1, 10)->size(), 1u);
  EXPECT_EQ(**store->Get("task-b"), b2_record);
  EXPECT_EQ(store->ReadEvents("task-b", -1, 10)->size(), 3u);
  EXPECT_TRUE(store->Get("task-c")->has_value());
  EXPECT_EQ((*store->FindByDedupKey("default", "caller\nmessage-1"))->task.id, "task-d");
  EXPECT_FALSE(store->Get("task-e")->has_value());
  EXPECT_TRUE(store->ReadEvents("task-e", -1, 10)->empty());
}

// A commit's callback is the caller's code: one that throws is logged (storage/writer_batch.hpp),
// and the writer goes on with the next commits instead of taking the process down.
TEST_F(SqliteTaskStoreTest, ACommitCallbackThatThrowsIsLoggedAndTheWriterGoesOn) {
  auto store = MustOpen(path_, SqliteOptions{});
  ASSERT_NE(store, nullptr);
  store->Commit(Create("task-throws"),
                [](const core::Result<void>&) { throw std::runtime_error("a caller's bug"); });
  EXPECT_TRUE(CommitSync(*store, Create("task-after")).ok());
  auto got = store->Get("task-throws");
  EXPECT_TRUE(got.ok() && got->has_value()) << "the commit whose callback threw still landed";
}

TEST_F(SqliteTaskStoreTest, BatchIsCappedAtMaxBatchCommits) {
  WriterGate gate;
  SqliteOptions opts;
  opts.max_batch_commits = 3;
  gate.Install(opts);
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  std::vector<std::future<core::Result<void>>> results;
  results.push_back(gate.Hold(*store, Create("task-0")));
  for (int i = 1; i <= 7; ++i)
    results.push_back(CommitAsync(*store, Create("task-" + std::to_string(i))));
  gate.Release();
  for (auto& f : results) EXPECT_TRUE(f.get().ok());
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 3, 3, 1}));
  EXPECT_EQ(store->List(TaskQuery{})->total_size, 8);
}

TEST_F(SqliteTaskStoreTest, FailCommitHookFailsOnlyThatCommit) {
  WriterGate gate;
  SqliteOptions opts;
  gate.Install(opts);
  std::atomic<int> calls{0};
  opts.fail_commit_hook = [&calls] { return ++calls == 3; };  // the third commit reaching SQL
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);

  TaskCommit a = Create("task-a", "ctx", TaskState::kSubmitted, 1000, 1);
  TaskCommit a2 = Append(a.record, TaskState::kWorking, 2000, 1);
  const TaskRecord a_record = a.record;
  auto fa = gate.Hold(*store, std::move(a));
  auto fb = CommitAsync(*store, Create("task-b"));
  auto fa2 = CommitAsync(*store, std::move(a2));  // third: fails, rolled back alone
  auto fc = CommitAsync(*store, Create("task-c"));
  gate.Release();

  EXPECT_TRUE(fa.get().ok());
  EXPECT_TRUE(fb.get().ok());
  auto failed = fa2.get();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, core::ErrorCode::kInternal);
  EXPECT_TRUE(fc.get().ok());
  EXPECT_EQ(gate.sizes(), (std::vector<size_t>{1, 3}));

  EXPECT_EQ(**store->Get("task-a"), a_record);  // nothing of the failed commit
  EXPECT_EQ(store->ReadEvents("task-a", -1, 10)->size(), 1u);
  EXPECT_TRUE(store->Get("task-b")->has_value());
  EXPECT_TRUE(store->Get("task-c")->has_value());
  // The same change succeeds on retry.
  EXPECT_TRUE(IsOk(CommitSync(*store, Append(a_record, TaskState::kWorking, 2000, 1))));
}

TEST_F(SqliteTaskStoreTest, FailedBatchCommitFailsEveryCommitOfTheBatch) {
  WriterGate gate;
  SqliteOptions opts;
  gate.Install(opts);
  std::atomic<int> batches{0};
  opts.fail_batch_hook = [&batches] { return ++batches == 2; };
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);

  auto f0 = gate.Hold(*store, Create("task-0"));
  auto f1 = CommitAsync(*store, Create("task-1"));
  auto f2 = CommitAsync(*store, Create("task-2"));
  auto fdup = CommitAsync(*store, Create("task-0"));  // fails on its own anyway
  gate.Release();

  EXPECT_TRUE(f0.get().ok());
  for (auto* f : {&f1, &f2}) {
    auto r = f->get();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, core::ErrorCode::kInternal);
  }
  auto dup = fdup.get();
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, core::ErrorCode::kConflict);  // keeps its own error
  EXPECT_FALSE(store->Get("task-1")->has_value());
  EXPECT_FALSE(store->Get("task-2")->has_value());
  EXPECT_TRUE(store->ReadEvents("task-1", -1, 10)->empty());
  // The writer recovers.
  EXPECT_TRUE(IsOk(CommitSync(*store, Create("task-1"))));
  EXPECT_TRUE(store->Get("task-1")->has_value());
}

// Under steady load a background (PASSIVE) checkpoint never copies the frames the writer
// appends while it runs, and the WAL restarts only once every frame is copied: without the
// writer's own checkpoint past 4x the threshold, this WAL grew to the size of everything
// written (tens of MB here; gigabytes a minute under the bench's load).
TEST_F(SqliteTaskStoreTest, TheWalStaysBoundedUnderSteadyWrites) {
  SqliteOptions opts;
  opts.checkpoint_pages = 40;
  auto store = MustOpen(path_, opts);
  ASSERT_NE(store, nullptr);
  const std::string wal = path_ + "-wal";
  std::atomic<bool> writing{true};
  std::uintmax_t largest = 0;
  std::thread watch([&] {
    while (writing) {
      std::error_code ec;
      const auto size = std::filesystem::file_size(wal, ec);
      if (!ec && size > largest) largest = size;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  constexpr int kTasks = 8000;
  std::deque<std::future<core::Result<void>>> inflight;
  int failed = 0;
  for (int i = 0; i < kTasks; ++i) {
    TaskCommit c = Create("task-" + std::to_string(i));
    c.record.task.metadata["padding"] = std::string(2000, 'x');
    inflight.push_back(CommitAsync(*store, std::move(c)));
    if (inflight.size() > 512) {  // keeps the writer busy without an unbounded queue
      failed += inflight.front().get().ok() ? 0 : 1;
      inflight.pop_front();
    }
  }
  for (auto& f : inflight) failed += f.get().ok() ? 0 : 1;
  writing = false;
  watch.join();
  EXPECT_EQ(failed, 0);
  // ~16 MB of text were written, in WAL frames several times that. The WAL holds 4x40 pages,
  // the batch in flight and what is written while one background checkpoint runs (its
  // fsync), which with one caller writing its own commits back to back is a few MB here.
  EXPECT_LT(largest, 8u << 20) << "largest WAL seen: " << largest << " bytes";
  EXPECT_TRUE(store->Get("task-" + std::to_string(kTasks - 1))->has_value());
}

}  // namespace
}  // namespace a2ad::storage
