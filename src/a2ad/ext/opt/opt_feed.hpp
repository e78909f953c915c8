#pragma once
// objectives/subscribe: a stream of one objective's status events (docs/OPT.md,
// "Subscribing"), with the contract of task streams: begun with the events after the
// caller's cursor (the SSE id of the last event it saw, or Last-Event-ID), or without one
// with a snapshot of the whole objective; then live, with no gap and no duplicate; ended
// after the event that leaves nothing under the objective able to change (`final`).
//
// How: the events are the rows OptStore logged (opt_events); after each commit that wrote some,
// OptStore's listener calls Poke(objective), and the feed reads what each watcher of that
// objective has not seen yet and queues it (tasks::Subscription: bounded; a watcher that falls
// too far behind is closed and resumes from its cursor). A subscription and every feed run on
// one thread of the feed's own, one after the other, so a subscription's backlog and its live
// events meet exactly: an event committed before the backlog was read is in it, one committed
// after is fed.
//
// Thread safety: Poke and Subscribe may be called from any thread; Subscribe's awaitable
// completes on the awaiting coroutine's executor.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/ext/opt/opt_store.hpp"
#include "a2ad/tasks/subscription.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::ext::opt {

class OptFeed {
 public:
  explicit OptFeed(OptStore& store);
  /// Waits for the reads in flight.
  ~OptFeed();
  OptFeed(const OptFeed&) = delete;
  OptFeed& operator=(const OptFeed&) = delete;

  /// Objective `objective_id` logged new events (after their commit).
  void Poke(const std::string& objective_id);

  /// A stream of objective `id` of `tenant` (see above), its queue bounded by `capacity`.
  /// kOptNotFound naming `id` (also another tenant's); kInvalidParams naming `cursor_field`
  /// (where the cursor came from) for a cursor beyond the objective's last event.
  boost::asio::awaitable<core::Result<tasks::StreamStart>> Subscribe(
      std::string tenant, std::string id, std::optional<int64_t> after, size_t capacity,
      std::string cursor_field = "params.afterSequence");

 private:
  struct Watcher {
    std::weak_ptr<tasks::Subscription> subscription;
    int64_t delivered = -1;  // the last sequence queued (feed thread only)
  };
  void Feed(const std::string& objective_id);
  core::Result<tasks::StreamStart> Open(const std::string& tenant, const std::string& id,
                                        std::optional<int64_t> after, size_t capacity,
                                        const std::string& cursor_field);

  // The watchers by objective; shared with the streams, which remove theirs when they end
  // (whenever that is: a stream may outlive the feed).
  struct Watchers {
    std::mutex mu;
    std::unordered_map<std::string, std::vector<std::shared_ptr<Watcher>>> by_objective;
  };

  OptStore& store_;
  std::shared_ptr<Watchers> watchers_ = std::make_shared<Watchers>();
  boost::asio::thread_pool thread_{1};
};

}  // namespace a2ad::ext::opt
