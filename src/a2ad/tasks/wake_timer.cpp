// The wake timer (wake_timer.hpp): its loop.
#include "a2ad/tasks/wake_timer.hpp"

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/tasks/read_executor.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;

namespace {
constexpr size_t kPage = 256;           // wake times read at once
constexpr int64_t kPollMs = 30'000;     // the longest the timer goes without looking
constexpr int64_t kRetryMs = 1'000;     // after the store could not be read
constexpr size_t kMostRunning = 1'024;  // a backlog of due runs is woken this many at a time
}  // namespace

WakeTimer::WakeTimer(const asio::any_io_executor& io, storage::TaskStore& store,
                     const core::Clock& clock, ReadExecutor& reads, std::string holder, WakeFn wake)
    : store_(store),
      clock_(clock),
      reads_(reads),
      holder_(std::move(holder)),
      wake_(std::move(wake)),
      strand_(asio::make_strand(io)),
      timer_(strand_) {}

void WakeTimer::Start() { asio::co_spawn(strand_, Loop(), asio::detached); }

void WakeTimer::Stop() {
  stopped_ = true;
  asio::post(strand_, [self = shared_from_this()] { self->timer_.cancel(); });
}

bool WakeTimer::Note(int64_t at_ms) {
  if (stopped_) return false;
  asio::post(strand_, [self = shared_from_this(), at_ms] {
    self->noted_ = std::min(self->noted_, at_ms);
    if (at_ms <= self->cursor_ms_) {  // the wall clock stepped back: look from there again
      self->cursor_ms_ = at_ms - 1;
      self->cursor_id_.clear();
    }
    if (at_ms >= self->armed_at_) return;
    self->armed_at_ = at_ms;  // the loop is waiting: it looks at the store again then
    self->timer_.expires_after(
        std::chrono::milliseconds(std::max<int64_t>(at_ms - self->clock_.NowMs(), 0)));
  });
  return true;
}

asio::awaitable<void> WakeTimer::Loop() {
  const auto self = shared_from_this();  // the loop keeps the timer
  boost::system::error_code ec;
  for (;;) {
    if (stopped_) co_return;
    // A backlog (a restart after a long outage) is woken without flooding the process: at
    // most kMostRunning of the executions it started run at once.
    std::erase_if(woken_, [](const std::weak_ptr<void>& e) { return e.expired(); });
    if (woken_.size() >= kMostRunning) {
      timer_.expires_after(std::chrono::milliseconds(50));
      co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    noted_ = kNever;
    const int64_t after_ms = cursor_ms_;
    const std::string after_id = cursor_id_;
    const int64_t read_at = clock_.NowMs();  // what is due: as of the read, never later
    auto page = co_await reads_.Run([this, after_ms, &after_id] {
      return store_.ListWakes(after_ms, after_id, kPage, holder_);
    });
    if (stopped_) co_return;  // (the owner may be gone: touch nothing of it)
    int64_t next = clock_.NowMs() + kPollMs;
    bool more = false;
    if (!page) {
      if (!failing_)
        core::LogWarn(
            "wake timer: the parked runs' wake times cannot be read (tried again "
            "every second): " +
            page.error().message);
      failing_ = true;
      next = clock_.NowMs() + kRetryMs;
    } else {
      failing_ = false;
      const std::vector<storage::Wake>& wakes = page.value();
      size_t woken = 0;
      for (const storage::Wake& wake : wakes) {
        if (stopped_) co_return;
        if (wake.at_ms > read_at) {
          next = std::min(next, wake.at_ms);
          break;
        }
        auto running = std::make_shared<int>(0);  // held by the execution until it ends
        woken_.push_back(running);
        auto started = co_await wake_(*this, wake, std::move(running));
        if (!started) {  // the run could not be read: from here again, shortly
          next = clock_.NowMs() + kRetryMs;
          break;
        }
        cursor_ms_ = wake.at_ms;
        cursor_id_ = wake.task_id;
        ++woken;
      }
      more = woken == wakes.size() && wakes.size() == kPage;
    }
    if (more) continue;
    if (stopped_) co_return;
    next = std::min(next, noted_);
    armed_at_ = next;
    timer_.expires_after(std::chrono::milliseconds(std::max<int64_t>(next - clock_.NowMs(), 0)));
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    armed_at_ = kNever;  // woke: on time, brought forward by Note, or stopped
  }
}

}  // namespace a2ad::tasks
