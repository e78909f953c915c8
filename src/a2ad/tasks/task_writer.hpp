#pragma once
// Internal to tasks/ (included only by the files that implement TaskService): the per-task
// state the ONLY writer keeps while a task is active (TaskService::Slot), and the helpers the
// request paths share with it (stream-item makers, one-event steps). The writer itself
// (Acquire, CommitRecord, the fan-out to streams, waits, idempotent creation) is
// task_writer.cpp; see task_service.hpp for the contract.
//
// Thread safety: Slot's members are guarded as each one says (mu, pub_mu, sleep_mu, or
// atomic); the helpers are pure.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json/object.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
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

/// Per-task state shared by everything touching one task while it is active.
struct TaskService::Slot {
  Slot(std::string id, boost::asio::any_io_executor executor)
      : task_id(std::move(id)), io(std::move(executor)) {}
  const std::string task_id;
  const boost::asio::any_io_executor io;
  // Fan-out to streams runs here, off the store's writer thread, in commit order. Made when
  // a commit first has a stream to feed (guarded by pub_mu): most tasks never do.
  std::optional<boost::asio::strand<boost::asio::any_io_executor>> fanout;

  std::mutex mu;  // serializes commits: sequence assignment + enqueue order
  std::shared_ptr<const storage::TaskRecord>
      head;                        // newest accepted record (possibly not yet durable)
  std::atomic<bool> stale{false};  // a commit failed: reload head from the store

  std::mutex pub_mu;  // guards published + waiters (taken from the writer thread)
  std::shared_ptr<const storage::TaskRecord> published;  // newest durable record
  struct Waiter {
    std::function<bool(const storage::TaskRecord&)> pred;
    std::shared_ptr<Signal> signal;
  };
  std::vector<Waiter> waiters;
  std::vector<std::shared_ptr<Subscription>> subscribers;

  std::atomic<bool> cancel_requested{false};
  // Durable-timer sleeps of the execution, woken early by a cancel.
  std::mutex sleep_mu;
  std::vector<std::shared_ptr<Signal>> sleepers;
  void WakeSleepers() {
    std::lock_guard lock(sleep_mu);
    for (auto& s : sleepers) s->Fire();
    sleepers.clear();
  }
  std::vector<storage::PushConfigRecord> pending_push_configs;  // guarded by mu; push
};

// A one-event step. (Built outside co_await expressions: GCC 12 mis-compiles braced
// initializers holding string literals inside coroutines.)
std::vector<EventDraft> OneEvent(std::string type, boost::json::object payload);

/// The stream item of an A2A stream event at `sequence`.
std::shared_ptr<StreamItem> MakeItem(int64_t sequence, protocol::StreamEvent ev);
/// The stream item of one logged event: its A2A projection if it has one, and the raw event
/// (for OpenWOP event streams); `after` is the record the event led to.
StreamItemPtr RunItem(const storage::TaskRecord& after, const protocol::RunEvent& e);
/// A task snapshot as a stream item at `sequence`.
std::shared_ptr<StreamItem> SnapshotItem(int64_t sequence, const protocol::Task& task);

}  // namespace a2ad::tasks
