#pragma once
// Streams of task events (ARCHITECTURE.md "Durability model"): a Subscription is one
// observer's bounded queue of StreamItems, filled by TaskService after each commit and
// drained by one stream writer. Memory is bounded: past `capacity` queued items the
// subscription closes itself as overflowed (the client resumes from its last event id).
//
// Thread safety: Push, Close, closed() and overflowed() may be called from any thread (one
// mutex); Next and TryNext belong to the one consumer. A StreamItem is immutable once
// shared: Json() may be called from any thread (each form is serialized once).
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::tasks {

/// One logged event's A2A projection, shared by every subscriber (immutable once made).
struct StreamItem {
  int64_t sequence = -1;  // the log sequence it projects (SSE `id:`)
  protocol::StreamEvent event;
  bool terminal = false;     // a status update into a terminal state
  bool interrupted = false;  // a status update into input-required / auth-required
  bool a2a = true;           // `event` is set (false: a log entry with no A2A projection)
  // The logged event (live items, but for a new task's first items, which only its own A2A
  // stream reads).
  std::shared_ptr<const protocol::RunEvent> run_event;
  bool run_terminal = false;                            // the run was terminal after this event
  /// The record once the commit of this event was durable (live items; shared, not copied):
  /// OpenWOP's streamMode=values sends its run snapshot.
  std::shared_ptr<const storage::TaskRecord> record_after;
  /// An extension's own event (not a task's: the OPT extension's objective events), as the
  /// JSON every wire form shows; when set, Json() is this for every form.
  std::string raw_json;

  /// The event's JSON text in one wire's shape (protocol/encode.hpp), written once per item
  /// and form on demand.
  const std::string& Json(protocol::Wire wire,
                          protocol::Final final = protocol::Final::kAsProjected) const;

 private:
  // Not std::call_once: glibc's pthread_once makes a futex system call at the end of every
  // first call, contended or not (one per event and form, on every stream's path).
  mutable std::atomic<uint8_t> json_ready_{0};  // a bit per form whose text is written
  mutable std::mutex json_mu_;                  // held while a form's text is written
  mutable std::string json_[5];  // v1.0, then each v0.3 wire as projected and not final
};
using StreamItemPtr = std::shared_ptr<const StreamItem>;

class Subscription : public std::enable_shared_from_this<Subscription> {
 public:
  explicit Subscription(size_t capacity) : capacity_(capacity) {}

  /// Producer side; any thread; never blocks. Past capacity the subscription closes as
  /// overflowed and drops its queue.
  void Push(StreamItemPtr item);
  /// Ends the subscription (client gone, server stopping). Any thread; idempotent.
  void Close();

  /// Consumer side (one coroutine, always on the same executor, which must be a strand or
  /// single-threaded): the next item, or nullptr once the stream was idle for `heartbeat`
  /// (time for a keep-alive) or once closed and drained (check closed()). A push wakes the
  /// consumer with one post; the heartbeat timer is re-armed once per idle period, not per
  /// event. Must be owned by a shared_ptr.
  boost::asio::awaitable<StreamItemPtr> Next(std::chrono::milliseconds heartbeat);

  /// Consumer side: the next queued item if there is one, else nullptr; never waits.
  StreamItemPtr TryNext();

  bool closed() const;
  bool overflowed() const;
  size_t capacity() const { return capacity_; }

 private:
  using Clock = std::chrono::steady_clock;
  /// Takes the parked consumer's resume function (to call after unlocking).
  std::function<void()> TakeWaiterLocked();
  void ArmHeartbeat(std::chrono::milliseconds heartbeat);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<StreamItemPtr> queue_;
  bool closed_ = false;
  bool overflowed_ = false;
  bool heartbeat_due_ = false;
  Clock::time_point last_activity_ = Clock::now();
  std::function<void()> waiter_;  // resumes the parked consumer on its executor
  // Consumer-executor state (touched only by Next and the timer's handler).
  std::optional<boost::asio::steady_timer> timer_;
  bool timer_armed_ = false;
};

}  // namespace a2ad::tasks
