#pragma once
// Streams of task events (ARCHITECTURE.md "Durability model"): a Subscription is one
// observer's bounded queue of StreamItems, filled by TaskService after each commit and
// drained by one stream writer. Memory is bounded: past `capacity` queued items the
// subscription closes itself as overflowed (the client resumes from its last event id).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "a2ad/protocol/model.hpp"

namespace a2ad::tasks {

/// One logged event's A2A projection, shared by every subscriber (immutable once made).
struct StreamItem {
  int64_t sequence = -1;  // the log sequence it projects (SSE `id:`)
  protocol::StreamEvent event;
  bool terminal = false;     // a status update into a terminal state
  bool interrupted = false;  // a status update into input-required / auth-required

  /// Serialized JSON of the event for one wire form, computed once per item on demand.
  /// kind: 0 = v1.0 StreamResponse, 1 = v0.3 as projected, 2 = v0.3 with final=false.
  const std::string& Json(int kind) const;

 private:
  mutable std::once_flag once_[3];
  mutable std::string json_[3];
};
using StreamItemPtr = std::shared_ptr<const StreamItem>;

class Subscription {
 public:
  explicit Subscription(size_t capacity) : capacity_(capacity) {}

  /// Producer side; any thread; never blocks. Past capacity the subscription closes as
  /// overflowed and drops its queue.
  void Push(StreamItemPtr item);
  /// Ends the subscription (client gone, server stopping). Any thread; idempotent.
  void Close();

  /// Consumer side (one coroutine): the next item, or nullptr after `timeout` with nothing
  /// queued (time for a heartbeat) or once closed and drained (check closed()).
  boost::asio::awaitable<StreamItemPtr> Next(std::chrono::milliseconds timeout);

  bool closed() const;
  bool overflowed() const;
  size_t capacity() const { return capacity_; }

 private:
  void WakeLocked();

  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<StreamItemPtr> queue_;
  bool closed_ = false;
  bool overflowed_ = false;
  bool waiting_ = false;
  std::shared_ptr<boost::asio::steady_timer> timer_;  // lives on the consumer's executor
};

}  // namespace a2ad::tasks
