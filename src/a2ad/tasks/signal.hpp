#pragma once
// Signal: a thread-safe, one-shot event a coroutine can co_await. Fire() may be called from
// any thread (e.g. the store's writer thread) any number of times; the first call wakes the
// waiter on the waiter's own executor, later calls are no-ops. At most one waiter.
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
  /// Completes once Fire() has been called (immediately if it already was).
  boost::asio::awaitable<void> Wait() {
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
  mutable std::mutex mu_;
  bool fired_ = false;
  std::function<void()> resume_;
};

}  // namespace a2ad::tasks
