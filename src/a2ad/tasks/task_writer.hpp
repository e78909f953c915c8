#pragma once
// Internal to tasks/ (included only by the files that implement TaskService): the per-task
// state the ONLY writer keeps while a task is active (TaskService::Slot), and the helpers the
// request paths share with it (stream-item makers, one-event steps). The writer itself
// (Acquire, CommitRecord, the fan-out to streams, waits, idempotent creation) is
// task_writer.cpp; see task_service.hpp for the contract.
//
// The lock rule: Slot::mu is held only while a commit is assigned its sequences, folded and
// queued (TaskStore::Commit, which does not block); never across a suspension and never
// around a store read. A head to re-read (first commit in this process, or after a failed
// commit) is read before taking it, and re-checked after: `failures` tells whether another
// commit failed meanwhile, making the read too old (read again).
//
// Thread safety: Slot's members are guarded as each one says (mu, pub_mu, sleep_mu, or
// atomic); the helpers are pure.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/json/object.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/storage/task_store.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/tasks/signal.hpp"
#include "a2ad/tasks/subscription.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::tasks {

/// A mutex that can tell whether it is held (TaskService::task_locked, for tests that
/// check no store call happens under a task's lock). Lockable: use with lock_guard and
/// unique_lock.
class SlotMutex {
 public:
  void lock() {
    mu_.lock();
    held_ = true;
  }
  void unlock() {
    held_ = false;
    mu_.unlock();
  }
  bool held() const { return held_.load(); }

 private:
  std::mutex mu_;
  std::atomic<bool> held_{false};
};

/// Per-task state shared by everything touching one task while it is active.
struct TaskService::Slot {
  using RecordPtr = std::shared_ptr<const storage::TaskRecord>;
  Slot(std::string id, boost::asio::any_io_executor executor)
      : task_id(std::move(id)), io(std::move(executor)) {}
  const std::string task_id;
  const boost::asio::any_io_executor io;  // where the fan-out pump runs

  SlotMutex mu;                       // serializes commits: sequence assignment + enqueue order
  RecordPtr head;                     // newest accepted record (possibly not yet durable)
  std::atomic<bool> stale{false};     // a commit failed: re-read head from the store
  std::atomic<uint64_t> failures{0};  // failed commits so far (incremented before `stale`)
  // A stream of the new task wants its creating commit's items (under `mu`): the commit makes
  // them and leaves them in `creation_items`, for the stream's backlog (AcceptNew).
  bool keep_creation_items = false;
  std::vector<StreamItemPtr> creation_items;

  std::mutex pub_mu;    // guards what follows up to sleep_mu (taken from the writer thread)
  RecordPtr published;  // newest durable record
  RecordPtr fanned;     // the newest record whose commit was handed to the streams (Publish)
  struct Waiter {
    std::function<bool(const storage::TaskRecord&)> pred;
    std::shared_ptr<Signal> signal;
  };
  std::vector<Waiter> waiters;
  std::vector<std::shared_ptr<Subscription>> subscribers;
  // Commits to hand to the subscribers, in commit order, by one pump coroutine at a time on
  // `io` (off the writer thread; late items are read on the read executor).
  struct FanOutJob {
    RecordPtr before;  // the state before the commit (null when creating)
    RecordPtr record;  // the state after it
    int64_t expected = -1;
    std::vector<StreamItemPtr> items;  // empty: make them late
  };
  std::deque<FanOutJob> fanout_queue;
  bool fanout_running = false;

  std::atomic<bool> cancel_requested{false};
  std::atomic<int> executions{0};  // executions of the task running now
  // Which execution may commit (pause.cpp): an execution belongs to the epoch it started in;
  // Supersede moves to the next one (a resume, an immediate pause), after which the older
  // execution's steps are refused and its sleeps end, so one execution drives a run.
  std::atomic<uint64_t> epoch{0};
  // Durable-timer sleeps of the execution, woken early by a cancel or a Supersede.
  std::mutex sleep_mu;
  std::vector<std::shared_ptr<Signal>> sleepers;
  // The sleeps a nudge (TaskService::Nudge) may end, by key; each is in `sleepers` too.
  std::vector<std::pair<std::string, std::shared_ptr<Signal>>> nudgeable;
  uint64_t Supersede() {
    std::lock_guard lock(sleep_mu);
    const uint64_t next = ++epoch;
    WakeAllLocked();
    return next;
  }
  void WakeSleepers() {
    std::lock_guard lock(sleep_mu);
    WakeAllLocked();
  }
  void WakeAllLocked() {
    for (auto& s : sleepers) s->Fire();
    sleepers.clear();
    nudgeable.clear();
  }
  std::vector<storage::PushConfigRecord> pending_push_configs;  // guarded by mu; push
};

// A one-event step. (Built outside co_await expressions: GCC 12 mis-compiles braced
// initializers holding string literals inside coroutines.)
std::vector<EventDraft> OneEvent(std::string type, boost::json::object payload);

/// kTaskNotFound "<noun> <id> not found" with a taskId detail.
core::Error NotFound(std::string_view noun, const std::string& id);

/// The newest user message of `task`'s history (what starts an execution again), or null.
const protocol::Message* LastUserMessage(const protocol::Task& task);

/// The stream item of an A2A stream event at `sequence`.
std::shared_ptr<StreamItem> MakeItem(int64_t sequence, protocol::StreamEvent ev);
/// The stream item of one logged event: its A2A projection if it has one, and the raw event
/// (for OpenWOP event streams); `after` is the record the event led to.
std::shared_ptr<StreamItem> RunItem(const storage::TaskRecord& after, const protocol::RunEvent& e);
/// A task snapshot as a stream item at `sequence`.
std::shared_ptr<StreamItem> SnapshotItem(int64_t sequence, const protocol::Task& task);

}  // namespace a2ad::tasks
