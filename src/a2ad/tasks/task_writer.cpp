// The ONLY writer of task state and its fan-out (task_service.hpp): the per-task slots,
// CommitRecord (sequence assignment, fold, one store commit, then publish), the stream items
// of a commit (made late when a stream attached while it was in flight), waits on published
// records, and idempotent creation.
#include "a2ad/tasks/task_writer.hpp"

#include <algorithm>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/tasks/signal.hpp"
#include "a2ad/tasks/task_projection.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::Task;
using protocol::TaskState;

std::vector<EventDraft> OneEvent(std::string type, json::object payload) {
  std::vector<EventDraft> step(1);
  step[0].type = std::move(type);
  step[0].payload = std::move(payload);
  return step;
}

Error NotFound(std::string_view noun, const std::string& id) {
  return Error(ErrorCode::kTaskNotFound, std::string(noun) + " " + id + " not found",
               {{"taskId", id}});
}

const protocol::Message* LastUserMessage(const protocol::Task& task) {
  for (auto it = task.history.rbegin(); it != task.history.rend(); ++it)
    if (it->role == protocol::Role::kUser) return &*it;
  return nullptr;
}

namespace {

// The item's states, from its event.
void NoteStates(StreamItem& item) {
  const protocol::StreamEvent& ev = item.event;
  TaskState s = TaskState::kUnspecified;
  if (ev.kind == protocol::StreamEvent::Kind::kStatusUpdate) s = ev.status_update.status.state;
  if (ev.kind == protocol::StreamEvent::Kind::kTask) s = ev.task.status.state;
  item.terminal = protocol::IsTerminal(s);
  item.interrupted = protocol::IsInterrupted(s);
}

// A new item of logged event `e`: its A2A projection, made in place, or a2a=false.
std::shared_ptr<StreamItem> ItemOf(const Task& after, const protocol::RunEvent& e) {
  auto item = std::make_shared<StreamItem>();
  item->sequence = e.sequence;
  if (ProjectEventInto(after, e, item->event))
    NoteStates(*item);
  else
    item->a2a = false;  // its event holds nothing of use
  return item;
}

}  // namespace

std::shared_ptr<StreamItem> ProjectedItem(const Task& after, const protocol::RunEvent& e) {
  auto item = ItemOf(after, e);
  return item->a2a ? item : nullptr;
}

std::shared_ptr<StreamItem> RunItem(const storage::TaskRecord& after, const protocol::RunEvent& e,
                                    bool with_event) {
  auto item = ItemOf(after.task, e);
  if (with_event) item->run_event = std::make_shared<const protocol::RunEvent>(e);
  item->run_terminal = IsTerminalRun(after.run);
  return item;
}

Task Trimmed(Task task, const std::optional<int32_t>& history_length) {
  protocol::TrimHistory(task, history_length);
  return task;
}

std::shared_ptr<StreamItem> SnapshotItem(int64_t sequence, const Task& task) {
  auto item = std::make_shared<StreamItem>();
  item->sequence = sequence;
  item->event.kind = protocol::StreamEvent::Kind::kTask;
  item->event.task = task;
  NoteStates(*item);
  return item;
}

TaskWriter::TaskWriter(storage::TaskStore& store, const core::Clock& clock, core::IdGenerator& ids,
                       asio::any_io_executor io, ReadExecutor& reads, Options options)
    : store_(store),
      clock_(clock),
      ids_(ids),
      io_(std::move(io)),
      reads_(reads),
      options_(std::move(options)) {}

TaskWriter::SlotPtr TaskWriter::Acquire(const std::string& task_id) {
  std::lock_guard lock(slots_mu_);
  auto& weak = slots_[task_id];
  if (auto slot = weak.lock()) return slot;
  auto slot = std::make_shared<TaskSlot>(task_id, io_);
  weak = slot;
  if (slots_.size() > 4096 && slots_.size() % 1024 == 0) {  // sweep slots nobody holds
    for (auto it = slots_.begin(); it != slots_.end();)
      it = it->second.expired() ? slots_.erase(it) : std::next(it);
  }
  return slot;
}

TaskWriter::SlotPtr TaskWriter::Find(const std::string& task_id) {
  std::lock_guard lock(slots_mu_);
  auto it = slots_.find(task_id);
  return it == slots_.end() ? nullptr : it->second.lock();
}

std::vector<TaskWriter::SlotPtr> TaskWriter::Live() {
  std::vector<SlotPtr> live;
  std::lock_guard lock(slots_mu_);
  for (auto& [id, weak] : slots_)
    if (auto slot = weak.lock()) live.push_back(std::move(slot));
  return live;
}

void TaskWriter::Seed(const SlotPtr& slot, const storage::TaskRecord& stored) {
  auto record = std::make_shared<const storage::TaskRecord>(stored);
  std::lock_guard pub(slot->pub_mu);
  if (!slot->published || slot->published->last_sequence < stored.last_sequence)
    slot->published = record;
  // A stream whose backlog ends here: the commits after it are handed from here on (a stream
  // attached earlier and further back gets them too; what a stream has it skips).
  if (!slot->fanned || slot->fanned->last_sequence > stored.last_sequence) slot->fanned = record;
}

void TaskWriter::NoteDurable(const SlotPtr& slot, RecordPtr stored) {
  std::lock_guard pub(slot->pub_mu);
  if (!slot->published || slot->published->last_sequence < stored->last_sequence)
    slot->published = std::move(stored);
}

namespace {

using StoredAnswer = Result<std::optional<storage::TaskRecord>>;

// store.QueueGet's answer, resumed on the awaiting coroutine's executor.
asio::awaitable<StoredAnswer> QueuedGet(storage::TaskStore& store, const std::string& id) {
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(StoredAnswer)>(
      [&store, &id](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto held = std::make_shared<decltype(handler)>(std::move(handler));
        store.QueueGet(id, [ex, held](StoredAnswer answer) {
          asio::post(ex, [held, answer = std::move(answer)]() mutable {
            std::move (*held)(std::move(answer));
          });
        });
      },
      asio::use_awaitable);
}

}  // namespace

asio::awaitable<Result<std::optional<storage::TaskRecord>>> TaskWriter::ReadStored(
    const std::string& id, bool with_run) {
  if (store_.QueuesGets()) co_return co_await QueuedGet(store_, id);
  co_return co_await reads_.RunOrNow(
      id, [this, &id, with_run] { return store_.TryGet(id, with_run); },
      [this, &id] { return store_.Get(id); });
}

asio::awaitable<Result<void>> TaskWriter::WritePushConfig(storage::PushConfigRecord record) {
  auto slot = Acquire(record.task_id);
  const std::string config_id = record.config.id;
  const int64_t created_at = record.created_at_ms;
  {
    std::lock_guard lock(slot->mu);
    slot->pending_push_configs.push_back(std::move(record));
  }
  // An empty step: the commit carries the config alone (or an earlier commit already took it
  // from the slot; then this one is ordered after that one and completes once it has).
  auto written = co_await CommitRecord(slot, {}, false, {});
  if (!written) {
    // A refused config must not ride along with a later commit (unknown task: no head).
    std::lock_guard lock(slot->mu);
    std::erase_if(slot->pending_push_configs, [&](const storage::PushConfigRecord& r) {
      return r.config.id == config_id && r.created_at_ms == created_at;
    });
    co_return std::move(written).error();
  }
  co_return core::Ok{};
}

asio::awaitable<Result<RecordPtr>> TaskWriter::CommitRecord(SlotPtr slot,
                                                            std::vector<EventDraft> step,
                                                            bool creating,
                                                            Precondition precondition,
                                                            Extension extend, int64_t fence_epoch) {
  // Several replicas: a commit the store refused because another replica's came first (the
  // sequence check) is built again on the newest state, its precondition asked again.
  if (!options_.cluster || creating)
    co_return co_await CommitRecordOnce(slot, std::move(step), creating, precondition, extend,
                                        fence_epoch, nullptr);
  for (int attempt = 0;; ++attempt) {
    std::vector<storage::PushConfigRecord> taken;  // the push configs the attempt carried
    auto r =
        co_await CommitRecordOnce(slot, step, false, precondition, extend, fence_epoch, &taken);
    if (r || attempt == 3 || r.error().Detail("reason") != "sequence") co_return r;
    if (!taken.empty()) {  // the next attempt carries them again
      std::lock_guard lock(slot->mu);
      for (auto& c : taken) slot->pending_push_configs.push_back(std::move(c));
    }
  }
}

asio::awaitable<Result<RecordPtr>> TaskWriter::CommitRecordOnce(
    const SlotPtr& slot, std::vector<EventDraft> step, bool creating,
    const Precondition& precondition, const Extension& extend, int64_t fence_epoch,
    std::vector<storage::PushConfigRecord>* taken) {
  auto signal = std::make_shared<Signal>();
  auto outcome = std::make_shared<Result<RecordPtr>>(Error(ErrorCode::kInternal, "not committed"));
  std::unique_lock lock(slot->mu);
  // The head to build on: the task's newest accepted record. Missing (its first commit in
  // this process) or stale (a commit failed), it is re-read from the store without the
  // lock, then installed under it unless another commit failed meanwhile (read again); if
  // another commit installed a head meanwhile, that one is newer and is used.
  bool head_from_store = false;
  RecordPtr fresh;
  uint64_t fresh_after = 0;  // slot->failures when `fresh` was asked for
  while (!creating && (!slot->head || slot->stale)) {
    if (fresh && fresh_after == slot->failures.load()) {
      slot->head = std::move(fresh);
      slot->stale = false;
      head_from_store = true;
      break;
    }
    fresh_after = slot->failures.load();
    lock.unlock();
    auto stored = co_await ReadStored(slot->task_id);
    if (!stored) co_return std::move(stored).error();
    if (!stored.value()) co_return NotFound("task", slot->task_id);
    fresh = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
    lock.lock();
  }
  if (precondition) {
    if (auto refused = precondition(*slot->head, step)) {
      // A refusal speaks of the state it was decided on: if that state is still being
      // committed, answer once it is durable (the caller may read it next), at most 5 s.
      bool durable = head_from_store;
      if (!durable) {
        std::lock_guard pub(slot->pub_mu);
        durable = slot->published && slot->published->last_sequence >= slot->head->last_sequence;
      }
      if (!durable) {
        const int64_t seq = slot->head->last_sequence;
        std::function<bool(const storage::TaskRecord&)> reached =
            [seq](const storage::TaskRecord& r) { return r.last_sequence >= seq; };
        lock.unlock();
        co_await WaitUntil(slot, std::move(reached), std::chrono::seconds(5));
      }
      co_return std::move(*refused);
    }
    // Nothing to write (a retried reply): the answer is the newest record once it is
    // durable. If its commit may still be in flight, the empty commit below is ordered
    // after it and completes once it has (or fails with it).
    if (step.empty() && !creating) {
      bool durable = head_from_store;
      if (!durable) {
        std::lock_guard pub(slot->pub_mu);
        durable = slot->published && slot->published->last_sequence >= slot->head->last_sequence;
      }
      if (durable) co_return slot->head;
    }
  }
  storage::TaskRecord next = creating ? storage::TaskRecord{} : *slot->head;
  const int64_t expected = next.last_sequence;
  storage::TaskCommit commit;
  commit.expected_last_sequence = expected;
  commit.fence_epoch = creating ? 0 : fence_epoch;
  commit.take_lease = creating && options_.cluster != nullptr;
  const int64_t now = clock_.NowMs();
  // Stream items are made only when a stream is attached, or (`keep`) a new task's stream
  // will take the creating commit's as its backlog: most commits have no observer. A stream
  // that attaches while this commit is in flight, and whose snapshot read misses it, gets the
  // items made after the fact from the stored events (see FanOut).
  const bool keep = creating && slot->keep_creation_items;
  bool subscribed = false;
  {
    std::lock_guard pub(slot->pub_mu);
    subscribed = !slot->subscribers.empty();
  }
  const bool observed = keep || subscribed;
  // The items kept for a new task's own stream, an A2A stream, need no copy of the logged
  // event: only OpenWOP event streams read it, and none can have subscribed to a fresh id.
  std::vector<std::shared_ptr<StreamItem>> made_items;
  // After `step`, the executor's immediate steps ride along in the same commit: asked
  // again after each one (on the record it left) until it has none (bounded).
  for (int round = 0; round < 64; ++round) {
    if (round > 0) {
      if (!extend) break;
      step = extend(next);
      if (step.empty()) break;
    }
    for (auto& draft : step) {
      protocol::RunEvent e;
      e.event_id = ids_.Next();
      e.run_id = slot->task_id;
      e.type = std::move(draft.type);
      e.node_id = std::move(draft.node_id);
      e.payload = std::move(draft.payload);
      e.timestamp_ms = now;
      e.sequence = next.last_sequence + 1;
      // In place: `next` is a copy, dropped on error, so no per-event copy is needed.
      auto applied = FoldCommittedEvent(next, e);
      if (!applied) co_return std::move(applied).error();
      if (observed) made_items.push_back(RunItem(next, e, subscribed));
      commit.events.push_back(std::move(e));
    }
  }
  // The state before this commit (for making stream items late); null when creating.
  RecordPtr before = creating ? nullptr : slot->head;
  auto record = std::make_shared<const storage::TaskRecord>(std::move(next));
  std::vector<StreamItemPtr> items;
  items.reserve(made_items.size());
  for (auto& item : made_items) {
    item->record_after = record;
    items.push_back(std::move(item));
  }
  // Kept for the new task's stream, which attaches after this commit; nobody else knows the
  // fresh id, so no stream is attached now to be handed them (Publish gets none).
  if (keep) slot->creation_items = std::exchange(items, {});
  commit.shared_record = record;
  commit.releases_dedup_key =
      !creating && record->dedup_key.empty() && !slot->head->dedup_key.empty();
  if (creating && !record->dedup_key.empty() && options_.idempotency_retention.count() > 0)
    commit.dedup_takeover_before_ms = now - options_.idempotency_retention.count();
  commit.push_configs = std::exchange(slot->pending_push_configs, {});  // push
  if (taken) *taken = commit.push_configs;
  if (options_.on_commit) options_.on_commit(creating ? nullptr : slot->head.get(), commit);
  slot->head = record;
  // Queued under the lock (Commit does not block): the store applies one task's commits in
  // the order of their sequences. A commit with events has items iff it was observed;
  // without events it has nothing to stream either way.
  store_.Commit(std::move(commit), [this, slot, record, signal, outcome, expected,
                                    before = std::move(before),
                                    items = std::move(items)](Result<void> r) mutable {
    if (!r) {
      ++slot->failures;  // before `stale`: a reader that sees it stale sees the count
      slot->stale = true;
      *outcome = std::move(r).error();
    } else {
      *outcome = record;
      Publish(slot, record, std::move(items), std::move(before), expected);
    }
    signal->Fire();
  });
  lock.unlock();
  co_await signal->Wait();
  co_return std::move(*outcome);
}

void TaskWriter::Publish(const SlotPtr& slot, const RecordPtr& record,
                         std::vector<StreamItemPtr> items, RecordPtr before, int64_t expected) {
  bool start_pump = false;
  {
    std::lock_guard pub(slot->pub_mu);
    if (!slot->published || slot->published->last_sequence < record->last_sequence)
      slot->published = record;
    // The streams get each commit once, in order: a commit already handed to them (the feed
    // saw it first) is not again; commits between the last one handed and this one (another
    // replica's) are read back with it.
    const RecordPtr& fanned = slot->fanned;
    const bool handed = fanned && fanned->last_sequence >= record->last_sequence;
    if (!handed) {
      if (fanned && fanned->last_sequence != expected) {
        items.clear();
        before = fanned;
        expected = fanned->last_sequence;
      }
      slot->fanned = record;
      if (!slot->subscribers.empty() && record->last_sequence > expected) {
        slot->fanout_queue.push_back({std::move(before), record, expected, std::move(items)});
        start_pump = !std::exchange(slot->fanout_running, true);
      }
    }
    auto& ws = slot->waiters;
    for (auto it = ws.begin(); it != ws.end();) {
      if (it->pred(*record)) {
        it->signal->Fire();
        it = ws.erase(it);
      } else {
        ++it;
      }
    }
  }
  // Hand the fan-out to an I/O thread: waking thousands of streams from the writer thread
  // would delay the next commit.
  if (start_pump)
    asio::post(slot->io,
               [this, slot] { asio::co_spawn(slot->io, PumpFanOut(slot), asio::detached); });
}

asio::awaitable<void> TaskWriter::PumpFanOut(SlotPtr slot) {
  for (;;) {
    TaskSlot::FanOutJob job;
    std::vector<std::shared_ptr<Subscription>> subs;
    {
      std::lock_guard pub(slot->pub_mu);  // short: attaching streams wait on it
      if (slot->fanout_queue.empty()) {
        slot->fanout_running = false;
        co_return;
      }
      job = std::move(slot->fanout_queue.front());
      slot->fanout_queue.pop_front();
      std::erase_if(slot->subscribers, [](const auto& sub) { return sub->closed(); });
      subs = slot->subscribers;
    }
    if (subs.empty()) continue;
    // One job at a time, so a commit whose items are read late still reaches the streams
    // before the next commit's.
    std::vector<StreamItemPtr> made = std::move(job.items);
    if (made.empty()) made = co_await LateItems(std::move(job.before), job.record, job.expected);
    for (const auto& sub : subs)
      for (const auto& item : made) sub->Push(item);
  }
}

asio::awaitable<std::vector<StreamItemPtr>> TaskWriter::LateItems(RecordPtr before, RecordPtr after,
                                                                  int64_t expected) {
  // The commit's events, read back from the store and folded from the state before it, so
  // the items are the ones an observed commit makes. If the log was pruned meanwhile (or
  // the read fails), the stream gets the task's snapshot instead: nothing is lost.
  const std::string id = after->task.id;
  const auto count = static_cast<size_t>(after->last_sequence - expected);
  auto events = co_await reads_.Run(
      id, [this, &id, expected, count] { return store_.ReadEvents(id, expected, count); });
  std::vector<StreamItemPtr> made;
  if (events && !events->empty() && events->front().sequence == expected + 1 &&
      events->back().sequence == after->last_sequence) {
    storage::TaskRecord folded = before ? *before : storage::TaskRecord{};
    for (const auto& e : *events) {
      if (!FoldCommittedEvent(folded, e)) {
        made.clear();
        break;
      }
      auto item = RunItem(folded, e);
      item->record_after = after;
      made.push_back(std::move(item));
    }
  }
  if (made.empty()) {
    // Not the events, but the state they led to (A2A streams take a task snapshot; an
    // OpenWOP event stream, which needs the events, ends at it if the run is over).
    auto item = SnapshotItem(after->last_sequence, after->task);
    item->run_terminal = IsTerminalRun(after->run);
    made.push_back(std::move(item));
  }
  co_return made;
}

asio::awaitable<Result<Task>> TaskWriter::CommitStep(SlotPtr slot, std::vector<EventDraft> step,
                                                     int64_t fence_epoch) {
  auto r = co_await CommitRecord(std::move(slot), std::move(step), false, {}, {}, fence_epoch);
  if (!r) co_return std::move(r).error();
  co_return r.value()->task;
}

size_t TaskWriter::subscriber_count(const std::string& task_id) {
  auto slot = Find(task_id);
  if (!slot) return 0;
  std::lock_guard pub(slot->pub_mu);
  return static_cast<size_t>(std::count_if(slot->subscribers.begin(), slot->subscribers.end(),
                                           [](const auto& s) { return !s->closed(); }));
}

bool TaskWriter::task_locked(const std::string& task_id) {
  auto slot = Find(task_id);
  return slot && slot->mu.held();
}

std::shared_ptr<void> TaskWriter::Attach(const SlotPtr& slot,
                                         const std::shared_ptr<Subscription>& sub) {
  {
    std::lock_guard pub(slot->pub_mu);
    slot->subscribers.push_back(sub);
  }
  return std::shared_ptr<void>(nullptr, [slot, sub](void*) {
    sub->Close();
    std::lock_guard pub(slot->pub_mu);
    std::erase(slot->subscribers, sub);
  });
}

asio::awaitable<RecordPtr> TaskWriter::WaitUntil(
    SlotPtr slot, std::function<bool(const storage::TaskRecord&)> pred,
    std::chrono::milliseconds timeout) {
  auto signal = std::make_shared<Signal>();
  {
    std::lock_guard pub(slot->pub_mu);
    if (slot->published && pred(*slot->published)) co_return slot->published;
    slot->waiters.push_back({std::move(pred), signal});
  }
  asio::steady_timer timer(co_await asio::this_coro::executor, timeout);
  timer.async_wait([signal](boost::system::error_code ec) {
    if (!ec) signal->Fire();
  });
  co_await signal->Wait();
  timer.cancel();
  std::lock_guard pub(slot->pub_mu);
  std::erase_if(slot->waiters, [&](const TaskSlot::Waiter& w) { return w.signal == signal; });
  co_return slot->published;
}

asio::awaitable<Result<RecordPtr>> TaskWriter::Create(SlotPtr slot,
                                                      const protocol::CallContext& ctx,
                                                      std::string dedup_key,
                                                      std::vector<EventDraft> step, bool& replayed,
                                                      Extension extend) {
  replayed = false;
  // An earlier creation with the same key (or the same id) is the answer, not a new task.
  // With a key (a fresh id) the store decides atomically; only a conflict needs a read.
  // Keys are the caller's tenant's; a task of another tenant with the same id is not ours.
  const std::string tenant = ctx.tenant();
  auto lookup = [&]() -> asio::awaitable<Result<std::optional<storage::TaskRecord>>> {
    if (!dedup_key.empty())
      co_return co_await reads_.Run(dedup_key, [this, &tenant, &dedup_key] {
        return store_.FindByDedupKey(tenant, dedup_key);
      });
    auto found = co_await ReadStored(slot->task_id);
    if (found && found.value() && found.value()->tenant != tenant)
      co_return Error(ErrorCode::kConflict, "task id " + slot->task_id + " is taken");
    co_return found;
  };
  Result<std::optional<storage::TaskRecord>> existing = std::optional<storage::TaskRecord>();
  if (dedup_key.empty()) existing = co_await lookup();
  if (!existing) co_return std::move(existing).error();
  if (!existing.value()) {
    // The record's tenant, owner and key come from the log (task_projection.hpp).
    json::object& payload = step[0].payload;
    if (!dedup_key.empty()) payload["dedupKey"] = dedup_key;
    payload["tenant"] = tenant;
    payload["owner"] = ctx.caller();
    auto r = co_await CommitRecord(slot, std::move(step), true, {}, std::move(extend));
    if (r || r.error().code != ErrorCode::kConflict) co_return r;
    existing = co_await lookup();  // lost a race with the same key: that one wins
    if (!existing) co_return std::move(existing).error();
    if (!existing.value()) co_return Error(ErrorCode::kInternal, "task vanished while created");
  }
  replayed = true;
  co_return std::make_shared<const storage::TaskRecord>(std::move(*existing.value()));
}

}  // namespace a2ad::tasks
