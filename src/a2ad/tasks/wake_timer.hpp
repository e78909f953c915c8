#pragma once
// The wake timer: a run parked with a wake time (a gate's timeout, a pause's timer) holds no
// execution while it waits. Its committed row carries the time (storage::ParkedUntil,
// `tasks.wake_at_ms`); one timer per process reads the times in order from the store
// (TaskStore::ListWakes) and starts the execution of each run that is due, which then fires
// what the time decides (the timeout's answer, the pause's trigger) as it did when it slept.
//
// The timer keeps a cursor (time, run id) of the last run it woke, so a run is woken once per
// wake time even while its execution has not committed yet. Only rows due at the time of the
// read that listed them are woken, so the cursor never passes a time a later park could still
// take; a time noted below the cursor (the wall clock stepped back) moves it back. A process
// starts from the beginning: every run overdue after a restart is woken then. A commit here
// that parks a run (NoteWake) brings the timer forward; with nothing noted it still looks
// every kPollMs. With several replicas each wakes only the runs whose lease it holds, at that
// lease's epoch (a newer lease, an answer elsewhere, fences the woken execution off). A run
// whose firing fails (the store refused the timeout's answer) is not woken again by this
// process: as before the timer, when its sleeping execution did the same. The server starts
// it before recovery (TaskService::StartWakes); StopAccepting and the service's end stop it.
//
// The timer knows the store's wake times and nothing of runs: what a due run is woken with
// is its owner's (TaskService::WakeRun reads the run again and starts its execution).
//
// Thread safety: the loop and its state run on one strand; Note and Stop may be called from
// any thread and post to it.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::tasks {

class ReadExecutor;

class WakeTimer : public std::enable_shared_from_this<WakeTimer> {
 public:
  /// Wakes due run `wake`: an error when the run could not be read (the timer tries again
  /// shortly). `running` is kept by the execution it starts until that ends (the timer counts
  /// them); dropped if none starts. Called on the timer's strand, never once stopped().
  using WakeFn = std::function<boost::asio::awaitable<core::Result<void>>(
      const WakeTimer& timer, storage::Wake wake, std::shared_ptr<void> running)>;

  /// `holder`: with several replicas, this replica (only the runs it holds the lease of);
  /// empty: every run. `reads` and everything `wake` uses must outlive Stop.
  WakeTimer(const boost::asio::any_io_executor& io, storage::TaskStore& store,
            const core::Clock& clock, ReadExecutor& reads, std::string holder, WakeFn wake);

  /// Starts the loop (once).
  void Start();
  /// A run is parked until `at_ms`: the timer looks at the store again by then. False once
  /// stopped.
  bool Note(int64_t at_ms);
  /// Ends the loop; after it the loop touches nothing but the timer itself.
  void Stop();
  bool stopped() const { return stopped_.load(); }

 private:
  boost::asio::awaitable<void> Loop();

  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  storage::TaskStore& store_;
  const core::Clock& clock_;
  ReadExecutor& reads_;
  const std::string holder_;
  const WakeFn wake_;
  boost::asio::strand<boost::asio::any_io_executor> strand_;
  boost::asio::steady_timer timer_;
  // On the strand:
  int64_t armed_at_ = kNever;  // the wall-clock time the timer is set for
  int64_t noted_ = kNever;     // the earliest time noted since the loop last read the store
  int64_t cursor_ms_ = 0;      // the last run woken: (its wake time, its id)
  std::string cursor_id_;
  bool failing_ = false;  // the store could not be read at the last look (said once)
  std::vector<std::weak_ptr<void>> woken_;  // one per execution it started, until it ends
  std::atomic<bool> stopped_{false};
};

}  // namespace a2ad::tasks
