#pragma once
// TaskWriter: the ONLY writer of task state (task_service.hpp), internal to tasks/. It keeps
// a TaskSlot per active task, commits steps (sequence assignment, fold, one store commit,
// then publish), hands each durable commit to the task's streams and waits, and creates tasks
// idempotently. TaskService's request paths, executions, pauses and replicas all write
// through it; it knows nothing of skills, executions or wire formats. Also here: the helpers
// the request paths share with it (stream-item makers, one-event steps).
//
// The lock rule: TaskSlot::mu is held only while a commit is assigned its sequences, folded
// and queued (TaskStore::Commit, which does not block); never across a suspension and never
// around a store read. A head to re-read (first commit in this process, or after a failed
// commit) is read before taking it, and re-checked after: `failures` tells whether another
// commit failed meanwhile, making the read too old (read again).
//
// Threads: every member is safe to call from any I/O thread; store reads run on the read
// executor (read_executor.hpp), commit callbacks on the store's thread (they only publish);
// the fan-out to streams runs on the slot's I/O executor. TaskSlot's members are guarded as
// each one says (mu, pub_mu, sleep_mu, or atomic); the helpers are pure.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/storage/cluster.hpp"
#include "a2ad/storage/task_store.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/tasks/signal.hpp"
#include "a2ad/tasks/subscription.hpp"

namespace a2ad::tasks {

class ReadExecutor;

/// A mutex that can tell whether it is held (TaskWriter::task_locked, for tests that
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
struct TaskSlot {
  TaskSlot(std::string id, boost::asio::any_io_executor executor)
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

class TaskWriter {
 public:
  using SlotPtr = std::shared_ptr<TaskSlot>;
  /// Checked under the task's lock against its newest state before a step is applied;
  /// an error refuses the step (nothing is written). It may complete the step (e.g. with the
  /// events that resolve an interrupt, which depend on that newest state), or empty it:
  /// nothing to write (a retried reply), and the newest record is returned once durable.
  /// Pure: it must not call the store (it runs under the task's lock).
  using Precondition = std::function<std::optional<core::Error>(const storage::TaskRecord&,
                                                                std::vector<EventDraft>& step)>;
  /// More events for the same commit, given the record after `step` (an executor's first
  /// steps riding along with a task's creation).
  using Extension = std::function<std::vector<EventDraft>(const storage::TaskRecord&)>;

  struct Options {
    /// Several replicas: a creating commit takes the run's lease, and a commit refused for
    /// its sequence (another replica's came first) is built again (TaskServiceOptions).
    storage::Cluster* cluster = nullptr;
    /// Inside every commit, under the task's lock (TaskServiceOptions::on_commit).
    std::function<void(const storage::TaskRecord* previous, storage::TaskCommit& commit)> on_commit;
    /// A creation key older than this may be taken over (TaskServiceOptions). 0: never.
    std::chrono::milliseconds idempotency_retention{0};
  };

  /// `reads` runs the writer's store reads (a head to re-read, a creation key, late stream
  /// items) and must outlive the reads the writer has in flight; `io` runs the fan-out.
  TaskWriter(storage::TaskStore& store, const core::Clock& clock, core::IdGenerator& ids,
             boost::asio::any_io_executor io, ReadExecutor& reads, Options options);

  /// The slot of `task_id`, made if no one holds it. Slots nobody holds are swept now and then.
  SlotPtr Acquire(const std::string& task_id);
  /// The slot of `task_id` if someone holds it, else nullptr.
  SlotPtr Find(const std::string& task_id);
  /// Every slot someone holds (a resync catches them all up).
  std::vector<SlotPtr> Live();

  /// Commits `step` on the slot's newest record (`creating`: as the task's first commit),
  /// asking `precondition` first and `extend` after each round; completes once durable (or
  /// refused). `fence_epoch`: the run's lease the commit is fenced by (0: none).
  boost::asio::awaitable<core::Result<RecordPtr>> CommitRecord(
      SlotPtr slot, std::vector<EventDraft> step, bool creating, Precondition precondition,
      Extension extend = {}, int64_t fence_epoch = 0);
  /// CommitRecord without a precondition, answered with the task.
  boost::asio::awaitable<core::Result<protocol::Task>> CommitStep(SlotPtr slot,
                                                                  std::vector<EventDraft> step,
                                                                  int64_t fence_epoch = 0);
  /// Creates the slot's task for ctx's tenant and principal, or finds the one created
  /// before with the same dedup key (or, without a key, the same id): `replayed`.
  boost::asio::awaitable<core::Result<RecordPtr>> Create(SlotPtr slot,
                                                         const protocol::CallContext& ctx,
                                                         std::string dedup_key,
                                                         std::vector<EventDraft> step,
                                                         bool& replayed, Extension extend = {});
  /// TaskService::WritePushConfig.
  boost::asio::awaitable<core::Result<void>> WritePushConfig(storage::PushConfigRecord record);

  /// The slot's newest durable record is at least `stored` (read from the store), and the
  /// streams are handed the commits after it (a stream whose backlog ends there).
  void Seed(const SlotPtr& slot, const storage::TaskRecord& stored);
  /// The slot's newest durable record is at least `stored` (read from the store, for a wait:
  /// what the streams were handed stays as it is).
  void NoteDurable(const SlotPtr& slot, RecordPtr stored);
  /// Hands a durable commit to the task's streams and waits (once each, in order); commits
  /// between `expected` and `record` that the streams were not handed are read back.
  void Publish(const SlotPtr& slot, const RecordPtr& record, std::vector<StreamItemPtr> items,
               RecordPtr before, int64_t expected);

  /// Attaches a stream to the slot; releasing the result closes and detaches it.
  std::shared_ptr<void> Attach(const SlotPtr& slot, const std::shared_ptr<Subscription>& sub);
  /// Waits (at most `timeout`) until a published record satisfies `pred`; the newest
  /// published record (nullptr if none was).
  boost::asio::awaitable<RecordPtr> WaitUntil(SlotPtr slot,
                                              std::function<bool(const storage::TaskRecord&)> pred,
                                              std::chrono::milliseconds timeout);

  /// The stored record of `id`: the store's TryGet on this thread when it answers, else its
  /// Get on the read executor (ReadExecutor::RunOrNow). Without `with_run` its run may be
  /// left empty (TaskStore::TryGet).
  boost::asio::awaitable<core::Result<std::optional<storage::TaskRecord>>> ReadStored(
      const std::string& id, bool with_run = true);

  /// TaskService::subscriber_count and task_locked.
  size_t subscriber_count(const std::string& task_id);
  bool task_locked(const std::string& task_id);

 private:
  boost::asio::awaitable<core::Result<RecordPtr>> CommitRecordOnce(
      const SlotPtr& slot, std::vector<EventDraft> step, bool creating,
      const Precondition& precondition, const Extension& extend, int64_t fence_epoch,
      std::vector<storage::PushConfigRecord>* taken);
  boost::asio::awaitable<void> PumpFanOut(SlotPtr slot);
  /// The stream items of a commit made without them (no stream was attached when it was
  /// made; one attached while it was in flight). Reads the store: on the read executor.
  boost::asio::awaitable<std::vector<StreamItemPtr>> LateItems(RecordPtr before, RecordPtr after,
                                                               int64_t expected);

  storage::TaskStore& store_;
  const core::Clock& clock_;
  core::IdGenerator& ids_;
  boost::asio::any_io_executor io_;
  ReadExecutor& reads_;
  Options options_;
  std::mutex slots_mu_;
  std::unordered_map<std::string, std::weak_ptr<TaskSlot>> slots_;
};

// A one-event step. (Built outside co_await expressions: GCC 12 mis-compiles braced
// initializers holding string literals inside coroutines.)
std::vector<EventDraft> OneEvent(std::string type, boost::json::object payload);

/// kTaskNotFound "<noun> <id> not found" with a taskId detail.
core::Error NotFound(std::string_view noun, const std::string& id);

/// The newest user message of `task`'s history (what starts an execution again), or null.
const protocol::Message* LastUserMessage(const protocol::Task& task);

/// The stream item of logged event `e`'s A2A projection (ProjectEvent), made in place; null
/// when it has none. `after`: the task right after `e` was applied.
std::shared_ptr<StreamItem> ProjectedItem(const protocol::Task& after, const protocol::RunEvent& e);
/// The stream item of one logged event: its A2A projection if it has one, and with
/// `with_event` the raw event (for OpenWOP event streams); `after` is the record the event
/// led to.
std::shared_ptr<StreamItem> RunItem(const storage::TaskRecord& after, const protocol::RunEvent& e,
                                    bool with_event = true);
/// `task` with its history trimmed to `history_length` (the answer of a send or a read).
protocol::Task Trimmed(protocol::Task task, const std::optional<int32_t>& history_length);

/// A task snapshot as a stream item at `sequence`.
std::shared_ptr<StreamItem> SnapshotItem(int64_t sequence, const protocol::Task& task);

}  // namespace a2ad::tasks
