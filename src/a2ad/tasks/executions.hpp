#pragma once
// Executions: how runs are driven. It starts a run's executor on a strand of its own with the
// ExecutionContext the executor commits, sleeps and checks for a cancel through (Start); it
// takes the run's lease first when there are several replicas; it starts a run again from its
// last committed step after a commit failed for want of a store (RedriveLater), after a pause
// or a resume (Redrive), and after a restart (RecoverUnfinished); it wakes sleeping executions
// (Nudge) and holds the wake timer (wake_timer.hpp) that starts parked runs when they are due.
// TaskService owns one and hands it every run it creates or answers; it knows nothing of
// messages, replies or wire formats.
//
// Counting: every execution, and every other piece of background work the service spawns
// (a cancel's AfterCancel), is counted while it runs (running()); the server drains them at
// shutdown.
//
// Thread safety: every public member may be called from any thread. An execution runs on its
// own strand; its context's commits go through the TaskWriter (task_writer.hpp), which orders
// them per task.
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/storage/cluster.hpp"
#include "a2ad/storage/task_store.hpp"
#include "a2ad/tasks/executor.hpp"

namespace a2ad::tasks {

class ReadExecutor;
class TaskReader;
class TaskWriter;
class WakeTimer;
struct TaskSlot;

class Executions {
 public:
  /// The executor of a skill id, or nullptr (TaskService's registry).
  using ExecutorFor = std::function<Executor*(const std::string& skill_id)>;

  struct Options {
    storage::Cluster* cluster = nullptr;  // several replicas: leases (storage/cluster.hpp)
    /// Called on the read executor after a lease of `task_id` was taken (TaskServiceOptions).
    std::function<void(const std::string& task_id)> refresh_task;
    /// RecoverUnfinished's window for AfterCancel (TaskServiceOptions).
    std::chrono::milliseconds after_cancel_recovery{0};
  };

  /// All references must outlive this object.
  Executions(boost::asio::any_io_executor io, storage::TaskStore& store, const core::Clock& clock,
             TaskWriter& writer, TaskReader& reader, ReadExecutor& reads, ExecutorFor executor_for,
             Options options);
  ~Executions();
  Executions(const Executions&) = delete;
  Executions& operator=(const Executions&) = delete;

  /// Starts the execution of run `rec` by its skill's executor, triggered by `message`.
  /// `epoch`: the slot's execution epoch it belongs to (TaskSlot::Supersede); unset: the
  /// current one. `lease_epoch`: the run's lease when the caller holds it (its creating
  /// commit took it: 1); 0: taken here (several replicas), on the read executor, the execution
  /// starting after it. `hold` is kept until the execution ends (the wake timer counts its
  /// executions so). An unknown skill is logged and nothing runs.
  void Start(std::shared_ptr<TaskSlot> slot, RecordPtr rec, const protocol::Message& message,
             const std::string& skill_id, std::optional<uint64_t> epoch = std::nullopt,
             int64_t lease_epoch = 0, std::shared_ptr<void> hold = {});
  /// Supersedes the run's execution and starts a new one from `rec`, unless it is terminal
  /// (PauseControl's redrive after a pause or a resume).
  void Redrive(const std::shared_ptr<TaskSlot>& slot, const RecordPtr& rec);

  /// TaskService::RecoverUnfinished (task_service.hpp has the contract).
  core::Result<size_t> RecoverUnfinished(bool runs);
  /// TaskService::Nudge.
  void Nudge(const std::string& task_id, const std::string& key, bool forward);

  /// Spawns `work` on the service's executor, counted in running() until it ends.
  void Spawn(boost::asio::awaitable<void> work);

  /// TaskService::StartWakes, NoteWake, StopAccepting.
  void StartWakes();
  bool NoteWake(int64_t at_ms);
  void StopAccepting();
  /// Ends the wake timer's loop; nothing calls back into this object after it.
  void StopWakes();

  /// False once StopAccepting was called.
  bool accepting() const { return accepting_.load(); }
  /// Executions and counted work still running.
  size_t running() const { return running_.load(); }

 private:
  class Context;

  boost::asio::awaitable<void> TakeLeaseThenLaunch(std::shared_ptr<TaskSlot> slot, RecordPtr rec,
                                                   protocol::Message message, std::string skill_id,
                                                   uint64_t in_epoch, std::shared_ptr<void> hold);
  // Start's end, the lease held: runs `executor`. `counted`: running_ and slot->executions
  // count this execution already (while its lease was being taken).
  void Launch(Executor& executor, std::shared_ptr<TaskSlot> slot, RecordPtr rec,
              const protocol::Message& message, const std::string& skill_id, uint64_t in_epoch,
              int64_t lease_epoch, bool counted, std::shared_ptr<void> hold = {});
  // An execution that stopped because the store could not be reached is started again from
  // its last committed step, after 0.5 s, 1 s, ... (at most 30 s apart) while it cannot be,
  // unless another execution drives the run by then.
  void RedriveLater(std::shared_ptr<TaskSlot> slot, uint64_t epoch, int64_t lease_epoch,
                    std::string skill_id, int attempt);
  boost::asio::awaitable<void> RedriveIfStopped(std::shared_ptr<TaskSlot> slot, uint64_t epoch,
                                                int64_t lease_epoch, std::string skill_id,
                                                int attempt);
  boost::asio::awaitable<void> ForwardNudge(std::string task_id, std::string key);
  /// Starts the execution of a run whose wake time is due (WakeTimer::WakeFn). An error: the
  /// store could not be read (the timer tries again).
  boost::asio::awaitable<core::Result<void>> WakeRun(const WakeTimer& timer, storage::Wake wake,
                                                     std::shared_ptr<void> running);

  boost::asio::any_io_executor io_;
  storage::TaskStore& store_;
  const core::Clock& clock_;
  TaskWriter* writer_;
  TaskReader* reader_;
  ReadExecutor* reads_;
  ExecutorFor executor_for_;
  Options options_;
  std::atomic<bool> accepting_{true};
  std::atomic<size_t> running_{0};
  std::shared_ptr<WakeTimer> wakes_;  // made by StartWakes
};

}  // namespace a2ad::tasks
