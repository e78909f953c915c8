// PostgresStore's queued gets (TaskStore::QueueGet, storage/postgres/pg_gets.cpp): the gets
// queued while one is under way go out together in one pipeline, each is answered as Get would
// answer it, in the order queued, and a failure (a cut connection, an id PostgreSQL cannot
// hold, a statement past its timeout) costs the gets it touches a retry or their own error,
// never an answer that belongs to another get or one that never comes.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/storage/postgres/postgres_store.hpp"
#include "pg_cluster.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using storage_test::CommitSync;
using storage_test::Create;
using Answer = core::Result<std::optional<TaskRecord>>;

// A session of the test's own: it holds tasks locked, so that the store's first get waits at
// the server while the test queues the rest behind it.
class Locker {
 public:
  explicit Locker(const std::string& url) : c_(PQconnectdb(url.c_str())) {
    EXPECT_EQ(PQstatus(c_), CONNECTION_OK) << PQerrorMessage(c_);
  }
  ~Locker() { PQfinish(c_); }
  void Run(const char* sql) {
    PGresult* r = PQexec(c_, sql);
    EXPECT_TRUE(PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK)
        << sql << ": " << PQerrorMessage(c_);
    PQclear(r);
  }
  void Lock() {
    Run("BEGIN");
    Run("LOCK TABLE tasks IN ACCESS EXCLUSIVE MODE");
  }
  void Unlock() { Run("COMMIT"); }

 private:
  PGconn* c_;
};

// The answers of queued gets, in the order their callbacks ran.
struct Answers {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<size_t, Answer>> got;  // (index queued, answer)

  void Queue(PostgresStore& store, size_t index, std::string id) {
    store.QueueGet(std::move(id), [this, index](Answer a) {
      std::lock_guard lock(mu);
      got.emplace_back(index, std::move(a));
      cv.notify_all();
    });
  }
  bool WaitFor(size_t n, std::chrono::seconds within = std::chrono::seconds(20)) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, within, [&] { return got.size() >= n; });
  }
};

struct Opened {
  std::string url;
  std::unique_ptr<PostgresStore> store;
  std::mutex mu;
  std::vector<size_t> batches;  // the sizes get_batch_observer saw
};

void Open(Opened& o, int statement_timeout_ms = 30000) {
  o.url = test::FreshPgDatabase();
  PostgresOptions opts;
  opts.statement_timeout_ms = statement_timeout_ms;
  opts.get_batch_observer = [&o](size_t n) {
    std::lock_guard lock(o.mu);
    o.batches.push_back(n);
  };
  auto s = PostgresStore::Open(o.url, std::move(opts));
  ASSERT_TRUE(s) << s.error().message;
  o.store = std::move(s).value();
  EXPECT_TRUE(o.store->QueuesGets());
}

// Waits until the store's first queued get is at the server (waiting for the lock).
void WaitUntilWaitingForTheLock(const std::string& url) {
  for (int i = 0; i < 400; ++i) {
    PGconn* c = PQconnectdb(url.c_str());
    PGresult* r = PQexec(c,
                         "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                         " AND wait_event_type = 'Lock'");
    const bool waiting = PQntuples(r) == 1 && std::string(PQgetvalue(r, 0, 0)) != "0";
    PQclear(r);
    PQfinish(c);
    if (waiting) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the first get never reached the server";
}

// Locks tasks and queues get 0 of `id`, which then waits at the server: the gets the test
// queues next wait behind it and go out together once `locker` unlocks.
void QueueBehindALock(Opened& o, Locker& locker, Answers& answers, const std::string& id) {
  locker.Lock();
  answers.Queue(*o.store, 0, id);
  WaitUntilWaitingForTheLock(o.url);
}

TEST(PgQueuedGets, GetsQueuedMeanwhileGoTogetherAndEachGetsItsOwnAnswerInOrder) {
  Opened o;
  ASSERT_NO_FATAL_FAILURE(Open(o));
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(CommitSync(*o.store, Create("t-" + std::to_string(i))).ok());
  Locker locker(o.url);
  Answers answers;
  QueueBehindALock(o, locker, answers, "t-0");
  // Behind it: known ids and unknown ones, 100 in all.
  std::vector<std::string> ids{"t-0"};
  for (size_t i = 1; i < 101; ++i) {
    ids.push_back(i % 5 == 0 ? "nope-" + std::to_string(i) : "t-" + std::to_string(i % 20));
    answers.Queue(*o.store, i, ids.back());
  }
  locker.Unlock();
  ASSERT_TRUE(answers.WaitFor(ids.size()));
  for (size_t k = 0; k < answers.got.size(); ++k) {
    const auto& [index, answer] = answers.got[k];
    EXPECT_EQ(index, k) << "answered out of the order queued";
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    if (ids[index].starts_with("nope-")) {
      EXPECT_FALSE(answer->has_value()) << ids[index];
    } else {
      ASSERT_TRUE(answer->has_value()) << ids[index];
      EXPECT_EQ((*answer)->task.id, ids[index]);
    }
  }
  // The first alone, the 100 behind it in pipelines of at most 32: 1 + 4 batches.
  std::lock_guard lock(o.mu);
  ASSERT_EQ(o.batches.size(), 5u);
  EXPECT_EQ(o.batches[0], 1u);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(o.batches[i], 32u);
  EXPECT_EQ(o.batches[4], 4u);
  o.store->Close();
}

TEST(PgQueuedGets, AnIdPostgreSqlCannotHoldIsRefusedAloneAndTheGetsAroundItAreAnswered) {
  Opened o;
  ASSERT_NO_FATAL_FAILURE(Open(o));
  ASSERT_TRUE(CommitSync(*o.store, Create("t-1")).ok());
  Locker locker(o.url);
  Answers answers;
  QueueBehindALock(o, locker, answers, "t-1");
  answers.Queue(*o.store, 1, "t-1");
  answers.Queue(*o.store, 2, std::string("t-\0x", 4));  // a NUL: no text of PostgreSQL's
  answers.Queue(*o.store, 3, "t-1");
  locker.Unlock();
  ASSERT_TRUE(answers.WaitFor(4));
  std::vector<Answer*> by_index(4);
  for (auto& [index, answer] : answers.got) by_index[index] = &answer;
  for (size_t i : {0u, 1u, 3u}) {
    ASSERT_TRUE(by_index[i]->ok()) << i << ": " << by_index[i]->error().message;
    ASSERT_TRUE(by_index[i]->value().has_value());
    EXPECT_EQ(by_index[i]->value()->task.id, "t-1");
  }
  ASSERT_FALSE(by_index[2]->ok());
  EXPECT_EQ(by_index[2]->error().code, core::ErrorCode::kInvalidParams);
  o.store->Close();
}

TEST(PgQueuedGets, GetsOnConnectionsTheServerCutAreAskedAgainOnNewOnes) {
  Opened o;
  ASSERT_NO_FATAL_FAILURE(Open(o));
  ASSERT_TRUE(CommitSync(*o.store, Create("t-1")).ok());
  Answers warm;
  warm.Queue(*o.store, 0, "t-1");  // the pool now holds a connection the gets used
  ASSERT_TRUE(warm.WaitFor(1));
  Locker admin(o.url);
  admin.Run(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
      " WHERE datname = current_database() AND pid <> pg_backend_pid()");
  Answers answers;
  for (size_t i = 0; i < 50; ++i) answers.Queue(*o.store, i, "t-1");
  ASSERT_TRUE(answers.WaitFor(50));
  for (auto& [index, answer] : answers.got) {
    ASSERT_TRUE(answer.ok()) << index << ": " << answer.error().message;
    EXPECT_TRUE(answer->has_value());
  }
  o.store->Close();
}

TEST(PgQueuedGets, GetsPastTheStatementTimeoutFailAsUnavailableAndLaterGetsAreAnswered) {
  Opened o;
  ASSERT_NO_FATAL_FAILURE(Open(o, /*statement_timeout_ms=*/200));
  ASSERT_TRUE(CommitSync(*o.store, Create("t-1")).ok());
  Locker locker(o.url);
  Answers answers;
  QueueBehindALock(o, locker, answers, "t-1");
  for (size_t i = 1; i < 4; ++i) answers.Queue(*o.store, i, "t-1");
  // The first times out alone; the three behind it, sent together, time out at the first of
  // them (the others skipped), and are asked again one by one: each its own timeout.
  ASSERT_TRUE(answers.WaitFor(4));
  for (auto& [index, answer] : answers.got) {
    ASSERT_FALSE(answer.ok()) << index;
    EXPECT_EQ(answer.error().code, core::ErrorCode::kUnavailable) << answer.error().message;
    EXPECT_EQ(answer.error().Detail("sqlstate"), "57014") << answer.error().message;
  }
  locker.Unlock();
  Answers later;
  later.Queue(*o.store, 0, "t-1");
  ASSERT_TRUE(later.WaitFor(1));
  ASSERT_TRUE(later.got[0].second.ok()) << later.got[0].second.error().message;
  EXPECT_TRUE(later.got[0].second->has_value());
  o.store->Close();
}

TEST(PgQueuedGets, AfterCloseAGetIsAnsweredUnavailableAtOnce) {
  Opened o;
  ASSERT_NO_FATAL_FAILURE(Open(o));
  o.store->Close();
  Answers answers;
  answers.Queue(*o.store, 0, "t-1");
  ASSERT_EQ(answers.got.size(), 1u);  // before QueueGet returned
  ASSERT_FALSE(answers.got[0].second.ok());
  EXPECT_EQ(answers.got[0].second.error().code, core::ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace a2ad::storage
