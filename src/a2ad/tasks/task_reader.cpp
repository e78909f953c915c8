// TaskReader (task_reader.hpp): tasks/get, ListTasks, records, events, waits and the streams
// that follow a task.
#include "a2ad/tasks/task_reader.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_writer.hpp"

namespace a2ad::tasks {
namespace json = boost::json;
namespace asio = boost::asio;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::Task;

TaskReader::TaskReader(storage::TaskStore& store, ReadExecutor& reads, TaskWriter& writer,
                       std::chrono::milliseconds blocking_timeout)
    : store_(store), reads_(reads), writer_(writer), blocking_timeout_(blocking_timeout) {}

asio::awaitable<Result<std::optional<storage::TaskRecord>>> TaskReader::Load(const std::string& id,
                                                                             bool with_run) {
  co_return co_await writer_.ReadStored(id, with_run);
}

asio::awaitable<Result<storage::TaskRecord>> TaskReader::Visible(const CallContext& ctx,
                                                                 const std::string& id,
                                                                 const char* noun, bool with_run) {
  auto stored = co_await Load(id, with_run);
  if (!stored) co_return std::move(stored).error();
  // Another tenant's task is not found: its existence is not the caller's to learn.
  if (!stored.value() || stored.value()->tenant != ctx.tenant()) co_return NotFound(noun, id);
  co_return std::move(*stored.value());
}

std::pair<std::shared_ptr<TaskSlot>, StreamStart> TaskReader::Attached(const std::string& id,
                                                                       size_t queue_capacity) {
  // Subscribe first, then read the log: every event is in one or the other (or both, and
  // the stream skips sequences it already sent). No gap, no duplicate.
  auto slot = writer_.Acquire(id);
  StreamStart start;
  start.subscription = std::make_shared<Subscription>(queue_capacity);
  start.detach = writer_.Attach(slot, start.subscription);
  return {std::move(slot), std::move(start)};
}

asio::awaitable<Result<StreamStart>> TaskReader::Subscribe(const CallContext& ctx,
                                                           std::string task_id,
                                                           std::optional<StreamCursor> after,
                                                           size_t queue_capacity) {
  auto exists = co_await Visible(ctx, task_id, "task", /*with_run=*/false);
  if (!exists) co_return std::move(exists).error();
  auto attached = Attached(task_id, queue_capacity);
  const std::shared_ptr<TaskSlot>& slot = attached.first;
  StreamStart& start = attached.second;
  if (!after) {
    // Nothing missed: the stored snapshot (read after attaching, so it covers everything the
    // subscription will not see) is where the stream starts.
    auto rec = co_await Load(task_id);
    if (!rec) co_return std::move(rec).error();
    if (!rec.value()) co_return NotFound("task", task_id);
    writer_.Seed(slot, *rec.value());
    start.last_sequence = rec.value()->last_sequence;
    start.task_terminal = protocol::IsTerminal(rec.value()->task.status.state);
    start.backlog.push_back(SnapshotItem(start.last_sequence, rec.value()->task));
    co_return std::move(start);
  }
  auto events = co_await reads_.Run(task_id, [this, &task_id] {
    return store_.ReadEvents(task_id, -1, std::numeric_limits<size_t>::max());
  });
  if (!events) co_return std::move(events).error();
  const bool compacted = events->empty() || events->front().sequence != 0;
  if (compacted) {  // retention pruned the log: only the snapshot is left
    auto rec = co_await Load(task_id);
    if (!rec) co_return std::move(rec).error();
    if (!rec.value()) co_return NotFound("task", task_id);
    start.last_sequence = rec.value()->last_sequence;
    Task snapshot = std::move(rec.value()->task);
    start.task_terminal = protocol::IsTerminal(snapshot.status.state);
    const int64_t now = after->by_generation ? GenerationOf(snapshot) : start.last_sequence;
    if (after->value < now) {
      start.history_compacted = true;
      json::object marker;
      marker["historyCompacted"] = true;
      marker[after->by_generation ? "lastGeneration" : "lastEventId"] = after->value;
      snapshot.metadata["a2ad"] = std::move(marker);
    }
    start.backlog.push_back(SnapshotItem(start.last_sequence, snapshot));
    co_return std::move(start);
  }
  storage::TaskRecord folded;
  for (const auto& e : *events) {
    auto applied = FoldCommittedEvent(folded, e);
    if (!applied) co_return std::move(applied).error();
    const int64_t position = after->by_generation ? GenerationOf(folded.task) : e.sequence;
    if (position > after->value)
      if (auto item = ProjectedItem(folded.task, e)) start.backlog.push_back(std::move(item));
  }
  start.last_sequence = folded.last_sequence;
  start.task_terminal = protocol::IsTerminal(folded.task.status.state);
  if (after->by_generation && after->value > GenerationOf(folded.task))
    co_return Error(ErrorCode::kInvalidParams,
                    "lastGeneration " + std::to_string(after->value) +
                        " is past the task's generation (" +
                        std::to_string(GenerationOf(folded.task)) + ") of task " + task_id,
                    {{"field", "lastGeneration"}});
  if (!after->by_generation && after->value > folded.last_sequence)
    co_return Error(ErrorCode::kInvalidParams,
                    "Last-Event-ID " + std::to_string(after->value) + " is past the last event (" +
                        std::to_string(folded.last_sequence) + ") of task " + task_id,
                    {{"field", "Last-Event-ID"}});
  co_return std::move(start);
}

asio::awaitable<Result<Task>> TaskReader::GetTask(const CallContext& ctx,
                                                  protocol::GetTaskRequest req) {
  auto stored = co_await Visible(ctx, req.id, "task", /*with_run=*/false);  // the task only
  if (!stored) co_return std::move(stored).error();
  // currentGeneration (A2A 1.1): a long poll until the generation passes it, at most as long
  // as a blocking send waits. A task that is done changes no more: answered at once.
  if (const auto seen = req.current_generation; seen && GenerationOf(stored->task) <= *seen &&
                                                !protocol::IsTerminal(stored->task.status.state)) {
    auto newer = co_await WaitForRecord(
        ctx, req.id,
        [seen = *seen](const storage::TaskRecord& r) {
          return GenerationOf(r.task) > seen || protocol::IsTerminal(r.task.status.state);
        },
        blocking_timeout_);
    if (newer && newer->last_sequence > stored->last_sequence)
      co_return Trimmed(Task(newer->task), req.history_length);
  }
  co_return Trimmed(std::move(stored->task), req.history_length);
}

asio::awaitable<Result<protocol::ListTasksResponse>> TaskReader::ListTasks(
    const CallContext& ctx, protocol::ListTasksRequest req) {
  storage::TaskQuery q;
  q.tenant = ctx.tenant();  // the caller's tenant, never the request's
  q.context_id = req.context_id;
  q.state = req.status;
  q.updated_at_or_after_ms = req.status_timestamp_after_ms;
  q.page_size = req.page_size;
  q.page_token = req.page_token;
  auto page = co_await reads_.Run([this, &q] { return store_.List(q); });
  if (!page) {
    if (page.error().code == ErrorCode::kInvalidParams)  // the only one: a bad cursor
      co_return Error(
          ErrorCode::kInvalidParams,
          "params.pageToken: not a token this server issued (" + page.error().message + ")",
          {{"field", "params.pageToken"}});
    co_return std::move(page).error();
  }
  protocol::ListTasksResponse out;
  out.tasks.reserve(page->records.size());
  for (auto& rec : page->records) {
    Task t = Trimmed(std::move(rec.task), req.history_length);
    if (!req.include_artifacts) t.artifacts.clear();
    out.tasks.push_back(std::move(t));
  }
  out.next_page_token = std::move(page->next_page_token);
  out.page_size = req.page_size;
  out.total_size = page->total_size;
  out.unreadable = std::move(page->unreadable);
  co_return out;
}

asio::awaitable<Result<std::optional<storage::TaskRecord>>> TaskReader::GetRecord(
    const CallContext& ctx, std::string id) {
  auto stored = co_await Load(id);
  if (stored && stored.value() && stored.value()->tenant != ctx.tenant())
    co_return std::optional<storage::TaskRecord>();  // another tenant's: not there
  co_return stored;
}

asio::awaitable<Result<storage::TaskPage>> TaskReader::ListRecords(const CallContext& ctx,
                                                                   storage::TaskQuery q) {
  q.tenant = ctx.tenant();
  q.all_tenants = false;
  co_return co_await reads_.Run([this, &q] { return store_.List(q); });
}

asio::awaitable<Result<std::vector<protocol::RunEvent>>> TaskReader::ReadEvents(
    const CallContext& ctx, std::string id, int64_t after_sequence, size_t limit) {
  const std::string tenant = ctx.tenant();
  co_return co_await reads_.Run(
      id, [this, &tenant, &id, after_sequence, limit]() -> Result<std::vector<protocol::RunEvent>> {
        auto stored = store_.Get(id);
        if (!stored) return std::move(stored).error();
        if (!stored.value() || stored.value()->tenant != tenant)
          return std::vector<protocol::RunEvent>();  // as for an unknown run
        return store_.ReadEvents(id, after_sequence, limit);
      });
}

asio::awaitable<RecordPtr> TaskReader::WaitForRecord(
    const CallContext& ctx, std::string id, std::function<bool(const storage::TaskRecord&)> pred,
    std::chrono::milliseconds timeout) {
  // Seed the slot's published record from the store, so a condition already true (or a
  // run nobody committed to since this process started) is seen without a new commit.
  auto stored = co_await Load(id);
  if (stored && stored.value() && stored.value()->tenant != ctx.tenant())
    co_return nullptr;  // another tenant's run: nothing to see
  auto slot = writer_.Acquire(id);
  if (stored && stored.value())
    writer_.NoteDurable(slot,
                        std::make_shared<const storage::TaskRecord>(std::move(*stored.value())));
  co_return co_await writer_.WaitUntil(slot, std::move(pred), timeout);
}

asio::awaitable<Result<StreamStart>> TaskReader::SubscribeRunEvents(const CallContext& ctx,
                                                                    std::string id,
                                                                    int64_t after_sequence,
                                                                    size_t queue_capacity) {
  auto exists = co_await Visible(ctx, id, "run", /*with_run=*/false);
  if (!exists) co_return std::move(exists).error();
  auto attached = Attached(id, queue_capacity);
  const std::shared_ptr<TaskSlot>& slot = attached.first;
  StreamStart& start = attached.second;
  struct Read {
    std::vector<protocol::RunEvent> events;
    std::optional<storage::TaskRecord> record;
  };
  auto read = co_await reads_.Run(id, [this, &id, after_sequence]() -> Result<Read> {
    Read out;
    auto events = store_.ReadEvents(id, after_sequence, std::numeric_limits<size_t>::max());
    if (!events) return std::move(events).error();
    out.events = std::move(events).value();
    auto rec = store_.Get(id);
    if (!rec) return std::move(rec).error();
    out.record = std::move(rec).value();
    return out;
  });
  if (!read) co_return std::move(read).error();
  auto& events = read->events;
  if (!read->record) co_return NotFound("run", id);
  start.last_sequence = after_sequence;
  start.task_terminal =
      protocol::IsTerminal(read->record->task.status.state) || IsTerminalRun(read->record->run);
  for (size_t i = 0; i < events.size(); ++i) {
    auto item = std::make_shared<StreamItem>();
    item->sequence = events[i].sequence;
    item->a2a = false;
    item->run_terminal = start.task_terminal && i + 1 == events.size();
    item->run_event = std::make_shared<const protocol::RunEvent>(std::move(events[i]));
    start.last_sequence = item->sequence;
    start.backlog.push_back(std::move(item));
  }
  start.last_sequence = std::max(start.last_sequence, after_sequence);
  // What a commit seen later (on the change feed) is read from: only a record the backlog
  // reaches (a later one would hide the events between).
  if (read->record->last_sequence == start.last_sequence) writer_.Seed(slot, *read->record);
  start.record = std::make_shared<const storage::TaskRecord>(std::move(*read->record));
  co_return std::move(start);
}

}  // namespace a2ad::tasks
