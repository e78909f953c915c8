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
// it before recovery (StartWakes); StopAccepting and the service's end stop it.
//
// Thread safety: the loop and its state run on one strand; NoteWake posts to it.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <atomic>
#include <limits>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/tasks/task_writer.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
using core::Result;

namespace {
constexpr size_t kPage = 256;           // wake times read at once
constexpr int64_t kPollMs = 30'000;     // the longest the timer goes without looking
constexpr int64_t kRetryMs = 1'000;     // after the store could not be read
constexpr size_t kMostRunning = 1'024;  // a backlog of due runs is woken this many at a time
constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
}  // namespace

struct TaskService::Wakes {
  explicit Wakes(const asio::any_io_executor& io) : strand(asio::make_strand(io)), timer(strand) {}
  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer timer;
  int64_t armed_at = kNever;  // the wall-clock time the timer is set for
  int64_t noted = kNever;     // the earliest time noted since the loop last read the store
  int64_t cursor_ms = 0;      // the last run woken: (its wake time, its id)
  std::string cursor_id;
  bool failing = false;  // the store could not be read at the last look (said once)
  std::vector<std::weak_ptr<void>> woken;  // one per execution it started, until it ends
  std::atomic<bool> stopped{false};
};

void TaskService::StartWakes() {
  if (wakes_) return;
  auto w = std::make_shared<Wakes>(io_);
  wakes_ = w;
  asio::co_spawn(w->strand, WakeLoop(w), asio::detached);
}

void TaskService::StopWakes() {
  std::shared_ptr<Wakes> w = wakes_;
  if (!w) return;
  w->stopped = true;
  asio::post(w->strand, [w] { w->timer.cancel(); });
}

void TaskService::StopAccepting() {
  accepting_ = false;
  StopWakes();
}

bool TaskService::NoteWake(int64_t at_ms) {
  std::shared_ptr<Wakes> w = wakes_;
  if (!w || w->stopped) return false;
  const core::Clock* clock = &clock_;
  asio::post(w->strand, [clock, w, at_ms] {
    w->noted = std::min(w->noted, at_ms);
    if (at_ms <= w->cursor_ms) {  // the wall clock stepped back: look from there again
      w->cursor_ms = at_ms - 1;
      w->cursor_id.clear();
    }
    if (at_ms >= w->armed_at) return;
    w->armed_at = at_ms;  // the loop is waiting: it looks at the store again then
    w->timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(at_ms - clock->NowMs(), 0)));
  });
  return true;
}

asio::awaitable<void> TaskService::WakeLoop(std::shared_ptr<Wakes> w) {
  const std::string holder = options_.cluster ? options_.cluster->holder() : std::string();
  boost::system::error_code ec;
  for (;;) {
    if (w->stopped) co_return;
    // A backlog (a restart after a long outage) is woken without flooding the process: at
    // most kMostRunning of the executions it started run at once.
    std::erase_if(w->woken, [](const std::weak_ptr<void>& e) { return e.expired(); });
    if (w->woken.size() >= kMostRunning) {
      w->timer.expires_after(std::chrono::milliseconds(50));
      co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    w->noted = kNever;
    const int64_t after_ms = w->cursor_ms;
    const std::string after_id = w->cursor_id;
    const int64_t read_at = clock_.NowMs();  // what is due: as of the read, never later
    auto page = co_await reads_->Run([this, after_ms, &after_id, &holder] {
      return store_.ListWakes(after_ms, after_id, kPage, holder);
    });
    if (w->stopped) co_return;  // (the service may be gone: touch nothing of it)
    int64_t next = clock_.NowMs() + kPollMs;
    bool more = false;
    if (!page) {
      if (!w->failing)
        core::LogWarn("wake timer: the parked runs' wake times cannot be read (tried again "
                      "every second): " + page.error().message);
      w->failing = true;
      next = clock_.NowMs() + kRetryMs;
    } else {
      w->failing = false;
      const std::vector<storage::Wake>& wakes = page.value();
      size_t woken = 0;
      for (const storage::Wake& wake : wakes) {
        if (w->stopped) co_return;
        if (wake.at_ms > read_at) {
          next = std::min(next, wake.at_ms);
          break;
        }
        auto started = co_await WakeRun(w, wake);
        if (!started) {  // the run could not be read: from here again, shortly
          next = clock_.NowMs() + kRetryMs;
          break;
        }
        w->cursor_ms = wake.at_ms;
        w->cursor_id = wake.task_id;
        ++woken;
      }
      more = woken == wakes.size() && wakes.size() == kPage;
    }
    if (more) continue;
    if (w->stopped) co_return;
    next = std::min(next, w->noted);
    w->armed_at = next;
    w->timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(next - clock_.NowMs(), 0)));
    co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    w->armed_at = kNever;  // woke: on time, brought forward by NoteWake, or stopped
  }
}

asio::awaitable<Result<void>> TaskService::WakeRun(std::shared_ptr<Wakes> w, storage::Wake wake) {
  auto stored = co_await Load(wake.task_id);
  if (w->stopped) co_return core::Ok{};
  if (!stored) {
    core::LogWarn("wake timer: run " + wake.task_id + " cannot be read: " +
                  stored.error().message);
    co_return std::move(stored).error();
  }
  if (!stored.value()) co_return core::Ok{};  // deleted meanwhile
  auto rec = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
  if (protocol::IsTerminal(rec->task.status.state)) co_return core::Ok{};
  // Answered or resumed meanwhile: its execution drives it, or it waits for a later time.
  const std::optional<int64_t> until = storage::ParkedUntil(rec->run);
  if (!until || *until <= 0 || *until > clock_.NowMs()) co_return core::Ok{};
  Executor* ex = ExecutorFor(rec->skill_id);
  const protocol::Message* trigger = LastUserMessage(rec->task);
  if (!ex || !ex->WakesParked() || !trigger) co_return core::Ok{};
  auto running = std::make_shared<int>(0);  // held by the execution until it ends
  w->woken.push_back(running);
  StartExecution(Acquire(wake.task_id), rec, *trigger, rec->skill_id, std::nullopt,
                 wake.lease_epoch, std::move(running));
  co_return core::Ok{};
}

}  // namespace a2ad::tasks
