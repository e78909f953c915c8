#pragma once
// PauseControl: pausing and resuming runs (TaskService::PauseTask, ResumeTask and PostEvent,
// whose contracts task_service.hpp states; the rules of the log are pause.hpp's). Each pause
// or resume is decided under the task's lock on its newest state and committed through the
// TaskWriter before it is answered; what happens to the run's execution (stopped, started
// again from its log) is its owner's (the `redrive` callback: TaskService's executions), and
// whether a skill can pause is its executor's (Executor::PlanPause, found by `executor_for`).
// A child run waiting with its parent is paused and resumed with it.
//
// Threads: members may be called from any I/O thread concurrently; store reads run on the
// read executor.
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/storage/task_store.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/tasks/pause.hpp"

namespace a2ad::tasks {

class ReadExecutor;
class TaskReader;
class TaskWriter;
struct TaskSlot;

class PauseControl {
 public:
  using CallContext = protocol::CallContext;
  /// The executor of a skill, or nullptr.
  using ExecutorFor = std::function<Executor*(const std::string& skill_id)>;
  /// Supersedes the run's execution and starts a new one from `record` (unless terminal).
  using Redrive = std::function<void(const std::shared_ptr<TaskSlot>&, const RecordPtr& record)>;

  PauseControl(TaskWriter& writer, TaskReader& reader, storage::TaskStore& store,
               ReadExecutor& reads, const core::Clock& clock, core::IdGenerator& ids,
               ExecutorFor executor_for, Redrive redrive);

  /// TaskService::PauseTask.
  boost::asio::awaitable<core::Result<RecordPtr>> Pause(const CallContext& ctx,
                                                        PauseTaskRequest req);
  /// TaskService::ResumeTask.
  boost::asio::awaitable<core::Result<RecordPtr>> Resume(const CallContext& ctx,
                                                         ResumeTaskRequest req);
  /// TaskService::PostEvent.
  boost::asio::awaitable<core::Result<std::vector<std::string>>> PostEvent(
      const CallContext& ctx, std::string name, boost::json::value payload);

 private:
  /// `tenant`'s runs paused until event `name`, found in the store. Blocking (the read
  /// executor).
  core::Result<std::vector<std::string>> RunsWaitingFor(const std::string& tenant,
                                                        const std::string& name);

  TaskWriter& writer_;
  TaskReader& reader_;
  storage::TaskStore& store_;
  ReadExecutor& reads_;
  const core::Clock& clock_;
  core::IdGenerator& ids_;
  const ExecutorFor executor_for_;
  const Redrive redrive_;
};

}  // namespace a2ad::tasks
