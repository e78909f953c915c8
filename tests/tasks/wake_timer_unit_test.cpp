// The wake timer (wake_timer.hpp) on its own, with the wake function a test's: a run whose
// wake fails (its row could not be read) is tried again and never passed over for the runs
// after it; a timer stopped while it reads the store wakes nothing of that read and its loop
// ends. The store's listing is the real MemoryTaskStore's ordering, scripted here by the rows
// the test lists (wake_timer_test runs the timer over a real store and the service).
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/storage/forwarding_task_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/wake_timer.hpp"
#include "wait_for.hpp"

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;

// Lists the given wake rows in (time, id) order after the cursor, as a store does; can hold
// a read until released (a slow database), and counts the reads.
class ListedWakes final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;
  core::Result<std::vector<storage::Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                                     size_t limit, std::string_view) override {
    std::unique_lock lock(mu_);
    ++reads_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return !held_; });
    std::vector<storage::Wake> out;
    for (const auto& w : rows_)
      if ((w.at_ms > after_ms || (w.at_ms == after_ms && w.task_id > after_id)) &&
          out.size() < limit)
        out.push_back(w);
    return out;
  }
  void Set(std::vector<storage::Wake> rows) {
    std::lock_guard lock(mu_);
    rows_ = std::move(rows);
  }
  void Hold(bool held) {
    std::lock_guard lock(mu_);
    held_ = held;
    cv_.notify_all();
  }
  int reads() {
    std::lock_guard lock(mu_);
    return reads_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<storage::Wake> rows_;
  bool held_ = false;
  int reads_ = 0;
};

class WakeTimerUnitTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (timer_) timer_->Stop();
    store_.Hold(false);
    work_.reset();
    if (thread_.joinable()) thread_.join();
  }
  // Starts a timer whose wake of a run fails while `failing` names it.
  void Start() {
    timer_ = std::make_shared<WakeTimer>(
        io_.get_executor(), store_, clock_, reads_, "",
        [this](const WakeTimer&, storage::Wake wake,
               std::shared_ptr<void>) -> asio::awaitable<core::Result<void>> {
          std::lock_guard lock(mu_);
          calls_.push_back(wake.task_id);
          if (wake.task_id == failing_)
            co_return core::Error(core::ErrorCode::kUnavailable, "cannot read " + wake.task_id);
          co_return core::Ok{};
        });
    timer_->Start();
    thread_ = std::thread([this] { io_.run(); });
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }
  void Fail(std::string id) {
    std::lock_guard lock(mu_);
    failing_ = std::move(id);
  }

  core::SystemClock clock_;
  storage::MemoryTaskStore inner_;
  ListedWakes store_{inner_};
  ReadExecutor reads_{1};
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::thread thread_;
  std::shared_ptr<WakeTimer> timer_;
  std::mutex mu_;
  std::vector<std::string> calls_;
  std::string failing_;
};

TEST_F(WakeTimerUnitTest, AWakeThatFailsIsTriedAgainAndTheRunsAfterItWait) {
  const int64_t due = clock_.NowMs() - 1000;
  store_.Set({{"a", due, 0}, {"b", due + 1, 0}});
  Fail("a");
  Start();
  // The failure stops the page at "a": "b" is not woken before "a" is.
  ASSERT_TRUE(testing::WaitFor([&] { return !calls().empty(); }, std::chrono::seconds(5)));
  ASSERT_TRUE(testing::WaitFor([&] { return store_.reads() >= 2; }, std::chrono::seconds(5)))
      << "the timer reads again after a failed wake";
  for (const std::string& id : calls()) EXPECT_EQ(id, "a") << "woken before the run ahead of it";
  Fail("");
  ASSERT_TRUE(testing::WaitFor([&] { return !calls().empty() && calls().back() == "b"; },
                               std::chrono::seconds(5)));
  const std::vector<std::string> seen = calls();
  ASSERT_GE(seen.size(), 3u);
  for (size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_EQ(seen[i], "a") << i;
  EXPECT_EQ(seen.back(), "b");
  // Each woken once it succeeded: nothing more after "b" (the cursor is past both).
  const int reads = store_.reads();
  timer_->Note(clock_.NowMs());  // a look now: lists nothing after the cursor
  ASSERT_TRUE(testing::WaitFor([&] { return store_.reads() > reads; }, std::chrono::seconds(5)));
  EXPECT_EQ(calls(), seen);
}

TEST_F(WakeTimerUnitTest, ATimerStoppedDuringItsReadWakesNothingOfItAndItsLoopEnds) {
  store_.Set({{"a", clock_.NowMs() - 1000, 0}});
  store_.Hold(true);
  Start();
  ASSERT_TRUE(testing::WaitFor([&] { return store_.reads() >= 1; }, std::chrono::seconds(5)));
  timer_->Stop();
  EXPECT_FALSE(timer_->Note(clock_.NowMs())) << "a stopped timer takes no more notes";
  store_.Hold(false);  // the read returns the due run after the stop
  work_.reset();       // the io_context ends once the loop has
  thread_.join();
  EXPECT_TRUE(calls().empty());
  EXPECT_EQ(store_.reads(), 1);
}

}  // namespace
}  // namespace a2ad::tasks
