#pragma once
// Signal: a thread-safe, one-shot event a coroutine can co_await: the bridge from a callback
// on another thread (the store's commit callback on its writer thread, a timer, a cancel)
// back into the coroutine that waits for it. TaskService uses it for "commit durable",
// waits on a task's published record (WaitUntil) and durable-timer sleeps.
//
// Contract: Fire() may be called from any thread, any number of times, before or after
// Wait(); the first call wakes the waiter, later calls are no-ops. A Wait() that finds it
// fired goes on without suspending (a commit written on the caller's thread has fired it
// before the caller waits; a post would hand the waiter to another I/O thread for nothing),
// except every kMaxInlineStreak-th in a row on a thread, which yields.
// Otherwise the waiter resumes by a post to its own executor (never inline inside Fire(), so
// a writer-thread callback never runs the waiter's code). At most one Wait() per Signal. Wait()
// cannot be cancelled: to bound it, arrange for a timer to call Fire() (see TaskWriter::WaitUntil).
// The Signal must outlive a pending Wait(): keep it in a shared_ptr held by both sides.
//
// Thread safety: Fire() and Wait() may run concurrently on different threads (one mutex).
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <memory>
#include <mutex>

namespace a2ad::tasks {

class Signal {
 public:
  /// Completes once Fire() has been called (at once, without suspending, if it already was).
  boost::asio::awaitable<void> Wait() {
    if (Fired() && ++inline_streak_ < kMaxInlineStreak) co_return;
    inline_streak_ = 0;
    co_await Suspend();
  }

  /// Of the Wait()s a thread completes one after another without suspending, every this
  /// many-th suspends (by a post) all the same: a run whose every commit is written on its
  /// caller's thread still lets that thread's other work in.
  static constexpr unsigned kMaxInlineStreak = 64;

  void Fire() {
    std::function<void()> resume;
    {
      std::lock_guard lock(mu_);
      if (fired_) return;
      fired_ = true;
      resume.swap(resume_);
    }
    if (resume) resume();
  }

 private:
  bool Fired() const {
    std::lock_guard lock(mu_);
    return fired_;
  }

  boost::asio::awaitable<void> Suspend() {
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void()>(
        [this](auto handler) {
          auto ex = boost::asio::get_associated_executor(handler);
          auto held = std::make_shared<decltype(handler)>(std::move(handler));
          std::function<void()> resume = [ex, held] {
            boost::asio::post(ex, [held]() mutable { std::move (*held)(); });
          };
          std::unique_lock lock(mu_);
          if (fired_) {
            lock.unlock();
            resume();
          } else {
            resume_ = std::move(resume);
          }
        },
        boost::asio::use_awaitable);
  }

  static inline thread_local unsigned inline_streak_ = 0;
  mutable std::mutex mu_;
  bool fired_ = false;
  std::function<void()> resume_;
};

}  // namespace a2ad::tasks
