#pragma once
// TaskReader: the reads of TaskService (task_service.hpp states their contracts, which
// TaskService forwards here): tasks/get and ListTasks, the stored records and events, waits on
// a task's published record, and the streams that follow a task (A2A resubscribe, OpenWOP
// event streams). It writes nothing. A stream or a wait attaches to the task's slot through
// the TaskWriter (task_writer.hpp), which hands it every commit from then on; what came
// before is read from the store: subscribe first, then read, so nothing falls between.
//
// A task of another tenant is not found (kTaskNotFound, or nothing for the reads that say
// so): its existence is not the caller's to learn.
//
// Threads: every store call runs on the read executor, never on an I/O thread; members may
// be called from any I/O thread concurrently.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/call_context.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/storage/task_store.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::tasks {

class ReadExecutor;
class TaskWriter;
struct TaskSlot;

class TaskReader {
 public:
  using CallContext = protocol::CallContext;

  /// `blocking_timeout`: the longest a GetTask long poll (currentGeneration) waits.
  TaskReader(storage::TaskStore& store, ReadExecutor& reads, TaskWriter& writer,
             std::chrono::milliseconds blocking_timeout);

  /// The stored record of `id` (any tenant's): for the service's own work. Without
  /// `with_run` its run may be left empty (TaskStore::TryGet).
  boost::asio::awaitable<core::Result<std::optional<storage::TaskRecord>>> Load(
      const std::string& id, bool with_run = true);
  /// The record of `id` if ctx's tenant may see it; kTaskNotFound ("<noun> <id> not found")
  /// otherwise. Without `with_run` its run may be left empty.
  boost::asio::awaitable<core::Result<storage::TaskRecord>> Visible(const CallContext& ctx,
                                                                    const std::string& id,
                                                                    const char* noun = "task",
                                                                    bool with_run = true);

  // TaskService's reads, as it documents them.
  boost::asio::awaitable<core::Result<protocol::Task>> GetTask(const CallContext& ctx,
                                                               protocol::GetTaskRequest req);
  boost::asio::awaitable<core::Result<protocol::ListTasksResponse>> ListTasks(
      const CallContext& ctx, protocol::ListTasksRequest req);
  boost::asio::awaitable<core::Result<std::optional<storage::TaskRecord>>> GetRecord(
      const CallContext& ctx, std::string id);
  boost::asio::awaitable<core::Result<storage::TaskPage>> ListRecords(const CallContext& ctx,
                                                                      storage::TaskQuery q);
  boost::asio::awaitable<core::Result<std::vector<protocol::RunEvent>>> ReadEvents(
      const CallContext& ctx, std::string id, int64_t after_sequence, size_t limit);
  boost::asio::awaitable<RecordPtr> WaitForRecord(
      const CallContext& ctx, std::string id, std::function<bool(const storage::TaskRecord&)> pred,
      std::chrono::milliseconds timeout);
  boost::asio::awaitable<core::Result<StreamStart>> Subscribe(const CallContext& ctx,
                                                              std::string task_id,
                                                              std::optional<StreamCursor> after,
                                                              size_t queue_capacity);
  boost::asio::awaitable<core::Result<StreamStart>> SubscribeRunEvents(const CallContext& ctx,
                                                                       std::string id,
                                                                       int64_t after_sequence,
                                                                       size_t queue_capacity);

 private:
  /// A stream of `id` attached to its slot, before anything is read for its backlog.
  std::pair<std::shared_ptr<TaskSlot>, StreamStart> Attached(const std::string& id,
                                                             size_t queue_capacity);

  storage::TaskStore& store_;
  ReadExecutor& reads_;
  TaskWriter& writer_;
  const std::chrono::milliseconds blocking_timeout_;
};

}  // namespace a2ad::tasks
