#pragma once
// ReadExecutor: where TaskService runs the store calls that may block (TaskStore::Get, List,
// ReadEvents, FindByDedupKey; task_store.hpp "Threads"), so that no I/O thread ever waits for
// a database: a few dedicated threads (an asio::thread_pool) run them, and the coroutine that
// asked resumes on its own executor with the result. On a network database it is what keeps
// one slow query from stalling every connection served by that I/O thread. On SQLite a read
// of one task from the page cache costs its decode (tens of microseconds for a task of a
// few messages, more for a long history), and two thread hops cost as much (RunOrNow below).
//
// Contract of Run(fn): `fn` (a callable returning core::Result<T>, which must not touch
// anything the I/O threads change without a lock) runs once on a pool thread; its result is
// delivered by a post to the awaiting coroutine's executor (never inline on the pool
// thread). An exception thrown by `fn` becomes kInternal. Not cancellable; the awaiting
// coroutine keeps `fn` (and what it captures by reference) alive until it resumes.
//
// Order: Run(key, fn) runs the reads of one key (a task id) one after the other, in the
// order they were asked, and posts their results in that order (a strand per stripe of
// keys): two requests on one task resume in arrival order on a single-threaded loop, as
// they would without the pool, and "of two racing replies the first wins" stays true there.
// Reads of different tasks run in parallel. Run(fn) has no order.
//
// RunOrNow(key, now, fn): first `now` on the calling thread, when no read of key's stripe is
// queued or running (so the order above still holds); if it answers (TaskStore::TryGet: a
// read that needs no waiting), that is the result at once, and no thread is crossed.
// Otherwise Run(key, fn).
//
// Inline mode: with 0 threads, Run(fn) calls `fn` in the awaiting coroutine, at once. That
// is for single-threaded deterministic harnesses (the fuzz targets drive one io_context by
// polling it and must see every answer before they move on); a server uses >= 1 thread.
//
// Thread safety: Run may be called from any thread. The destructor waits for the reads in
// flight (they must end: a read blocked forever blocks it) and drops their results.
#include <atomic>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::tasks {

class ReadExecutor {
 public:
  /// `threads` 0 for inline mode (above).
  explicit ReadExecutor(size_t threads) {
    if (threads == 0) return;
    pool_.emplace(threads);
    stripes_.reserve(kStripes);
    for (size_t i = 0; i < kStripes; ++i)
      stripes_.push_back(boost::asio::make_strand(pool_->get_executor()));
    pending_ = std::make_unique<std::atomic<uint32_t>[]>(kStripes);
  }
  ~ReadExecutor() {
    if (pool_) pool_->join();
  }
  ReadExecutor(const ReadExecutor&) = delete;
  ReadExecutor& operator=(const ReadExecutor&) = delete;

  /// Runs `fn` on a read thread after the reads of `key` asked before; completes with its
  /// result on the caller's executor.
  template <class Fn>
  auto Run(std::string_view key, Fn fn) -> boost::asio::awaitable<std::invoke_result_t<Fn&>> {
    if (!pool_) return Inline(std::move(fn));
    const size_t stripe = StripeOf(key);
    return On(stripes_[stripe], std::move(fn), &pending_[stripe]);
  }

  /// `now()` (returning std::optional of Fn's result) at once if nothing of `key` is pending
  /// and it answers; else Run(key, fn).
  template <class Now, class Fn>
  auto RunOrNow(std::string_view key, Now now, Fn fn)
      -> boost::asio::awaitable<std::invoke_result_t<Fn&>> {
    if (pool_ && pending_[StripeOf(key)].load(std::memory_order_acquire) == 0)
      if (auto answer = Try(now)) return Ready(std::move(*answer));
    return Run(key, std::move(fn));
  }

  /// Runs `fn` on a read thread (no order); completes with its result on the caller's
  /// executor.
  template <class Fn>
  auto Run(Fn fn) -> boost::asio::awaitable<std::invoke_result_t<Fn&>> {
    if (!pool_) return Inline(std::move(fn));
    return On(pool_->get_executor(), std::move(fn));
  }

  /// True on one of this executor's threads (for checks and tests).
  bool running_in_this_thread() { return pool_ && pool_->get_executor().running_in_this_thread(); }

 private:
  static constexpr size_t kStripes = 64;
  using Stripe = boost::asio::strand<boost::asio::thread_pool::executor_type>;

  size_t StripeOf(std::string_view key) const {
    return std::hash<std::string_view>()(key) % kStripes;
  }

  // `pending` (a stripe's count, or null) counts the read from its post until the caller
  // resumes with its result.
  template <class Executor, class Fn>
  auto On(Executor ex, Fn fn, std::atomic<uint32_t>* pending = nullptr)
      -> boost::asio::awaitable<std::invoke_result_t<Fn&>> {
    using R = std::invoke_result_t<Fn&>;
    return boost::asio::async_initiate<const boost::asio::use_awaitable_t<>&, void(R)>(
        [ex, pending](auto handler, Fn f) {
          auto resume_on = boost::asio::get_associated_executor(handler);
          if (pending) pending->fetch_add(1, std::memory_order_acq_rel);
          boost::asio::post(ex, [f = std::move(f), handler = std::move(handler),
                                 resume_on = std::move(resume_on), pending]() mutable {
            R result = Invoke(f);
            boost::asio::post(resume_on, [handler = std::move(handler), result = std::move(result),
                                          pending]() mutable {
              if (pending) pending->fetch_sub(1, std::memory_order_acq_rel);
              std::move(handler)(std::move(result));
            });
          });
        },
        boost::asio::use_awaitable, std::move(fn));
  }

  template <class R>
  static auto Ready(R result) -> boost::asio::awaitable<R> {
    co_return std::move(result);
  }

  // `now()`, an exception counted as no answer (Run then asks `fn`, which reports it).
  template <class Now>
  static std::invoke_result_t<Now&> Try(Now& now) {
    try {
      return now();
    } catch (...) {
      return std::nullopt;
    }
  }

  template <class Fn>
  static auto Inline(Fn fn) -> boost::asio::awaitable<std::invoke_result_t<Fn&>> {
    co_return Invoke(fn);
  }

  template <class Fn>
  static std::invoke_result_t<Fn&> Invoke(Fn& f) {
    try {
      return f();
    } catch (const std::exception& e) {
      return core::Error(core::ErrorCode::kInternal, std::string("store read threw: ") + e.what());
    } catch (...) {
      return core::Error(core::ErrorCode::kInternal, "store read threw");
    }
  }

  std::optional<boost::asio::thread_pool> pool_;
  std::vector<Stripe> stripes_;
  std::unique_ptr<std::atomic<uint32_t>[]> pending_;  // per stripe: reads not yet resumed
};

}  // namespace a2ad::tasks
