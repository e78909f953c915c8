// The wake timer: a run parked with a wake time (a gate's timeout, a pause's timer) holds no
// execution while it waits. Its committed row carries the time (storage::ParkedUntil,
// `tasks.wake_at_ms`); one timer per process reads the times in order from the store
// (TaskStore::ListWakes) and starts the execution of each run that is due, which then fires
// what the time decides (the timeout's answer, the pause's trigger) as it did when it slept.
//
// The timer keeps a cursor (time, run id) of the last run it woke, so a run is woken once per
// wake time even while its execution has not committed yet. A process starts from the
// beginning: every run overdue after a restart is woken then. A commit here that parks a run
// (NoteWake) brings the timer forward; with nothing noted it still looks every kPollMs (runs
// adopted or parked by another replica's commit on a run whose lease is here). With several
// replicas each wakes only the runs whose lease it holds. The server starts it before recovery
// (StartWakes) and StopAccepting ends it.
//
// Thread safety: the loop and its state run on one strand; NoteWake posts to it.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
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
  explicit Wakes(asio::any_io_executor io) : strand(asio::make_strand(io)), timer(strand) {}
  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer timer;
  int64_t armed_at = kNever;  // the wall-clock time the timer is set for
  int64_t noted = kNever;     // the earliest time noted since the loop last read the store
  int64_t cursor_ms = 0;      // the last run woken: (its wake time, its id)
  std::string cursor_id;
  bool failing = false;  // the store could not be read at the last look (said once)
  std::vector<std::shared_ptr<Slot>> woken;  // the runs it started, while they execute
};

void TaskService::StartWakes() {
  if (wakes_) return;
  auto w = std::make_shared<Wakes>(io_);
  wakes_ = w;
  asio::co_spawn(w->strand, WakeLoop(w), asio::detached);
}

void TaskService::StopAccepting() {
  accepting_ = false;
  if (std::shared_ptr<Wakes> w = wakes_) asio::post(w->strand, [w] { w->timer.cancel(); });
}

bool TaskService::NoteWake(int64_t at_ms) {
  std::shared_ptr<Wakes> w = wakes_;
  if (!w) return false;
  asio::post(w->strand, [this, w, at_ms] {
    w->noted = std::min(w->noted, at_ms);
    if (at_ms >= w->armed_at) return;
    w->armed_at = at_ms;  // the loop is waiting: it looks at the store again then
    w->timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(at_ms - clock_.NowMs(), 0)));
  });
  return true;
}

asio::awaitable<void> TaskService::WakeLoop(std::shared_ptr<Wakes> w) {
  const std::string holder = options_.cluster ? options_.cluster->holder() : std::string();
  for (;;) {
    if (!accepting_) co_return;
    // A backlog (a restart after a long outage) is woken without flooding the process: at
    // most kMostRunning of the runs it started execute at once.
    std::erase_if(w->woken, [](const auto& slot) { return slot->executions.load() == 0; });
    if (w->woken.size() >= kMostRunning) {
      w->timer.expires_after(std::chrono::milliseconds(50));
      boost::system::error_code ec;
      co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    w->noted = kNever;
    const int64_t after_ms = w->cursor_ms;
    const std::string after_id = w->cursor_id;
    auto page = co_await reads_->Run([this, after_ms, &after_id, &holder] {
      return store_.ListWakes(after_ms, after_id, kPage, holder);
    });
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
        if (wake.at_ms > clock_.NowMs()) {
          next = std::min(next, wake.at_ms);
          break;
        }
        auto started = co_await WakeRun(w, wake.task_id);
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
    next = std::min(next, w->noted);
    w->armed_at = next;
    w->timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(next - clock_.NowMs(), 0)));
    boost::system::error_code ec;  // cancelled: NoteWake moved it earlier
    co_await w->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec && ec != asio::error::operation_aborted) co_return;
    w->armed_at = kNever;  // (StopAccepting cancels it too: the loop ends at its top)
  }
}

asio::awaitable<Result<void>> TaskService::WakeRun(std::shared_ptr<Wakes> w,
                                                   std::string task_id) {
  auto stored = co_await Load(task_id);
  if (!stored) {
    core::LogWarn("wake timer: run " + task_id + " cannot be read: " + stored.error().message);
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
  auto slot = Acquire(task_id);
  StartExecution(slot, rec, *trigger, rec->skill_id);
  w->woken.push_back(std::move(slot));
  co_return core::Ok{};
}

}  // namespace a2ad::tasks
