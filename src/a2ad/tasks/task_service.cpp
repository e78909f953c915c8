#include "a2ad/tasks/task_service.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <limits>
#include <utility>

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/accepted_messages.hpp"
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
using RecordPtr = std::shared_ptr<const storage::TaskRecord>;

namespace {
// A one-event step. (Built outside co_await expressions: GCC 12 mis-compiles braced
// initializers holding string literals inside coroutines.)
std::vector<EventDraft> OneEvent(std::string type, json::object payload) {
  std::vector<EventDraft> step(1);
  step[0].type = std::move(type);
  step[0].payload = std::move(payload);
  return step;
}
// Push: an inline config of message/send, to be written with the task's next commit.
storage::PushConfigRecord InlinePushRecord(const std::string& task_id,
                                           protocol::PushNotificationConfig config,
                                           int64_t now_ms) {
  storage::PushConfigRecord r;
  r.task_id = task_id;
  r.config = std::move(config);
  r.created_at_ms = now_ms;
  return r;
}
}  // namespace

/// Per-task state shared by everything touching one task while it is active.
struct TaskService::Slot {
  Slot(std::string id, asio::any_io_executor executor)
      : task_id(std::move(id)), io(std::move(executor)) {}
  const std::string task_id;
  const asio::any_io_executor io;
  // Fan-out to streams runs here, off the store's writer thread, in commit order. Made when
  // a commit first has a stream to feed (guarded by pub_mu): most tasks never do.
  std::optional<asio::strand<asio::any_io_executor>> fanout;

  std::mutex mu;                   // serializes commits: sequence assignment + enqueue order
  RecordPtr head;                  // newest accepted record (possibly not yet durable)
  std::atomic<bool> stale{false};  // a commit failed: reload head from the store

  std::mutex pub_mu;    // guards published + waiters (taken from the writer thread)
  RecordPtr published;  // newest durable record
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

struct TaskService::Accepted {
  std::shared_ptr<Slot> slot;
  RecordPtr record;
  std::string skill_id;
  std::shared_ptr<void> detach;  // set when a subscription was attached
};

namespace {
std::shared_ptr<StreamItem> MakeItem(int64_t sequence, protocol::StreamEvent ev) {
  auto item = std::make_shared<StreamItem>();
  item->sequence = sequence;
  TaskState s = TaskState::kUnspecified;
  if (ev.kind == protocol::StreamEvent::Kind::kStatusUpdate) s = ev.status_update.status.state;
  if (ev.kind == protocol::StreamEvent::Kind::kTask) s = ev.task.status.state;
  item->terminal = protocol::IsTerminal(s);
  item->interrupted = protocol::IsInterrupted(s);
  item->event = std::move(ev);
  return item;
}

// The stream item of one logged event: its A2A projection if it has one, and the raw event
// (for OpenWOP event streams).
StreamItemPtr RunItem(const storage::TaskRecord& after, const protocol::RunEvent& e) {
  std::shared_ptr<StreamItem> item;
  if (auto projected = ProjectEvent(after.task, e)) {
    item = MakeItem(e.sequence, std::move(*projected));
  } else {
    item = std::make_shared<StreamItem>();
    item->sequence = e.sequence;
    item->a2a = false;
  }
  item->run_event = std::make_shared<const protocol::RunEvent>(e);
  item->run_terminal = IsTerminalRun(after.run);
  return item;
}

std::shared_ptr<StreamItem> SnapshotItem(int64_t sequence, const Task& task) {
  protocol::StreamEvent ev;
  ev.kind = protocol::StreamEvent::Kind::kTask;
  ev.task = task;
  return MakeItem(sequence, std::move(ev));
}
}  // namespace

class TaskService::Context final : public ExecutionContext {
 public:
  Context(TaskService& svc, std::shared_ptr<Slot> slot, RecordPtr record, protocol::Message message,
          std::string skill_id)
      : svc_(svc),
        slot_(std::move(slot)),
        record_(std::move(record)),
        message_(std::move(message)),
        skill_id_(std::move(skill_id)) {}
  const std::string& task_id() const override { return slot_->task_id; }
  const std::string& skill_id() const override { return skill_id_; }
  const Task& task() const override { return record_->task; }
  const storage::TaskRecord& record() const override { return *record_; }
  const protocol::Message& message() const override { return message_; }
  asio::awaitable<Result<Task>> Commit(std::vector<EventDraft> step) override {
    return svc_.CommitStep(slot_, std::move(step));
  }
  asio::awaitable<Result<RecordPtr>> Apply(std::vector<EventDraft> step) override {
    return svc_.CommitRecord(slot_, std::move(step), false, {});
  }
  asio::awaitable<bool> SleepUntil(int64_t epoch_ms) override {
    auto signal = std::make_shared<Signal>();
    {
      std::lock_guard lock(slot_->sleep_mu);
      if (slot_->cancel_requested) co_return false;
      slot_->sleepers.push_back(signal);
    }
    const int64_t left = epoch_ms - svc_.clock_.NowMs();
    asio::steady_timer timer(co_await asio::this_coro::executor,
                             std::chrono::milliseconds(std::max<int64_t>(left, 0)));
    timer.async_wait([signal](boost::system::error_code ec) {
      if (!ec) signal->Fire();
    });
    co_await signal->Wait();
    timer.cancel();
    {
      std::lock_guard lock(slot_->sleep_mu);
      std::erase(slot_->sleepers, signal);
    }
    co_return !slot_->cancel_requested;
  }
  bool cancel_requested() const override { return slot_->cancel_requested.load(); }

 private:
  TaskService& svc_;
  std::shared_ptr<Slot> slot_;
  RecordPtr record_;
  protocol::Message message_;
  std::string skill_id_;
};

std::string NameBasedId(std::string_view name) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(name.data()), name.size(), digest);
  unsigned char d[16];
  std::copy(digest, digest + 16, d);
  d[6] = static_cast<unsigned char>((d[6] & 0x0f) | 0x80);  // version 8
  d[8] = static_cast<unsigned char>((d[8] & 0x3f) | 0x80);  // RFC 9562 variant
  return core::FormatUuid(d);
}

TaskService::TaskService(storage::TaskStore& store, const core::Clock& clock,
                         core::IdGenerator& ids, asio::any_io_executor io,
                         TaskServiceOptions options)
    : store_(store), clock_(clock), ids_(ids), io_(std::move(io)), options_(std::move(options)) {}

TaskService::~TaskService() = default;

void TaskService::RegisterSkill(SkillInfo info, std::shared_ptr<Executor> executor) {
  executors_[info.id] = std::move(executor);
  skill_infos_.push_back(std::move(info));
}

std::shared_ptr<TaskService::Slot> TaskService::Acquire(const std::string& task_id) {
  std::lock_guard lock(slots_mu_);
  auto& weak = slots_[task_id];
  if (auto slot = weak.lock()) return slot;
  auto slot = std::make_shared<Slot>(task_id, io_);
  weak = slot;
  if (slots_.size() > 4096 && slots_.size() % 1024 == 0) {  // sweep slots nobody holds
    for (auto it = slots_.begin(); it != slots_.end();)
      it = it->second.expired() ? slots_.erase(it) : std::next(it);
  }
  return slot;
}

asio::awaitable<Result<RecordPtr>> TaskService::CommitRecord(std::shared_ptr<Slot> slot,
                                                             std::vector<EventDraft> step,
                                                             bool creating,
                                                             Precondition precondition,
                                                             Extension extend) {
  auto signal = std::make_shared<Signal>();
  auto outcome = std::make_shared<Result<RecordPtr>>(Error(ErrorCode::kInternal, "not committed"));
  {
    std::lock_guard lock(slot->mu);
    bool head_from_store = false;
    if (!creating && (!slot->head || slot->stale.exchange(false))) {
      auto stored = store_.Get(slot->task_id);
      if (!stored) co_return std::move(stored).error();
      if (!stored.value())
        co_return Error(ErrorCode::kTaskNotFound, "task " + slot->task_id + " not found",
                        {{"taskId", slot->task_id}});
      slot->head = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
      head_from_store = true;
    }
    if (precondition) {
      if (auto refused = precondition(*slot->head, step)) co_return std::move(*refused);
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
    const int64_t now = clock_.NowMs();
    // Stream items are made only when a stream is attached: most commits have no observer.
    // A stream that attaches while this commit is in flight, and whose snapshot read misses
    // it, gets the items made after the fact from the stored events (see the callback).
    bool observed = false;
    {
      std::lock_guard pub(slot->pub_mu);
      observed = !slot->subscribers.empty();
    }
    std::vector<StreamItemPtr> items;
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
        if (observed) items.push_back(RunItem(next, e));
        commit.events.push_back(std::move(e));
      }
    }
    // The state before this commit (for making stream items late); null when creating.
    RecordPtr before = creating ? nullptr : slot->head;
    auto record = std::make_shared<const storage::TaskRecord>(std::move(next));
    commit.shared_record = record;
    commit.push_configs = std::exchange(slot->pending_push_configs, {});  // push
    if (options_.on_commit) options_.on_commit(creating ? nullptr : slot->head.get(), commit);
    slot->head = record;
    // A commit with events has items iff it was observed; without events it has nothing to
    // stream either way.
    store_.Commit(std::move(commit), [this, slot, record, signal, outcome, expected,
                                      before = std::move(before),
                                      items = std::move(items)](Result<void> r) mutable {
      if (!r) {
        slot->stale = true;
        *outcome = std::move(r).error();
      } else {
        *outcome = record;
        std::lock_guard pub(slot->pub_mu);
        if (!slot->published || slot->published->last_sequence < record->last_sequence)
          slot->published = record;
        if (!slot->subscribers.empty() && record->last_sequence > expected) {
          // Hand the fan-out to an I/O thread (the slot's strand keeps commit order): waking
          // thousands of streams from the writer thread would delay the next commit.
          if (!slot->fanout) slot->fanout.emplace(asio::make_strand(slot->io));
          asio::post(*slot->fanout, [this, slot, expected, record, before = std::move(before),
                                     items = std::move(items)] {
            std::vector<std::shared_ptr<Subscription>> subs;
            {
              std::lock_guard fan(slot->pub_mu);  // short: attaching streams wait on it
              std::erase_if(slot->subscribers, [](const auto& sub) { return sub->closed(); });
              subs = slot->subscribers;
            }
            if (subs.empty()) return;
            const auto made = items.empty() ? LateItems(before, *record, expected) : items;
            for (const auto& sub : subs)
              for (const auto& item : made) sub->Push(item);
          });
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
      signal->Fire();
    });
  }
  co_await signal->Wait();
  co_return std::move(*outcome);
}

std::vector<StreamItemPtr> TaskService::LateItems(const RecordPtr& before,
                                                  const storage::TaskRecord& after,
                                                  int64_t expected) {
  // The commit's events, read back from the store and folded from the state before it, so
  // the items are the ones an observed commit makes. If the log was pruned meanwhile (or
  // the read fails), the stream gets the task's snapshot instead: nothing is lost.
  auto events = store_.ReadEvents(after.task.id, expected,
                                  static_cast<size_t>(after.last_sequence - expected));
  std::vector<StreamItemPtr> made;
  if (events && !events->empty() && events->front().sequence == expected + 1 &&
      events->back().sequence == after.last_sequence) {
    storage::TaskRecord folded = before ? *before : storage::TaskRecord{};
    for (const auto& e : *events) {
      if (!FoldCommittedEvent(folded, e)) {
        made.clear();
        break;
      }
      made.push_back(RunItem(folded, e));
    }
  }
  if (made.empty()) {
    // Not the events, but the state they led to (A2A streams take a task snapshot; an
    // OpenWOP event stream, which needs the events, ends at it if the run is over).
    auto item = SnapshotItem(after.last_sequence, after.task);
    item->run_terminal = IsTerminalRun(after.run);
    made.push_back(std::move(item));
  }
  return made;
}

asio::awaitable<Result<Task>> TaskService::CommitStep(std::shared_ptr<Slot> slot,
                                                      std::vector<EventDraft> step, bool creating,
                                                      Precondition precondition) {
  auto r =
      co_await CommitRecord(std::move(slot), std::move(step), creating, std::move(precondition));
  if (!r) co_return std::move(r).error();
  co_return r.value()->task;
}

size_t TaskService::subscriber_count(const std::string& task_id) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(slots_mu_);
    auto it = slots_.find(task_id);
    if (it != slots_.end()) slot = it->second.lock();
  }
  if (!slot) return 0;
  std::lock_guard pub(slot->pub_mu);
  return static_cast<size_t>(std::count_if(slot->subscribers.begin(), slot->subscribers.end(),
                                           [](const auto& s) { return !s->closed(); }));
}

std::shared_ptr<void> TaskService::Attach(const std::shared_ptr<Slot>& slot,
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

asio::awaitable<RecordPtr> TaskService::WaitUntil(
    std::shared_ptr<Slot> slot, std::function<bool(const storage::TaskRecord&)> pred,
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
  std::erase_if(slot->waiters, [&](const Slot::Waiter& w) { return w.signal == signal; });
  co_return slot->published;
}

Executor* TaskService::ExecutorFor(const std::string& skill_id) const {
  auto it = executors_.find(skill_id);
  return it == executors_.end() ? nullptr : it->second.get();
}

void TaskService::StartExecution(std::shared_ptr<Slot> slot, RecordPtr rec,
                                 const protocol::Message& message, const std::string& skill_id) {
  auto it = executors_.find(skill_id);
  if (it == executors_.end()) {
    core::LogError("task " + rec->task.id + " names unknown skill '" + skill_id +
                   "'; not executed");
    return;
  }
  auto ctx = std::make_shared<Context>(*this, slot, std::move(rec), message, skill_id);
  ++running_;
  asio::co_spawn(
      asio::make_strand(io_), it->second->Execute(ctx), [this, ctx, slot](std::exception_ptr ep) {
        if (ep) {
          std::string what = "unknown exception";
          try {
            std::rethrow_exception(ep);
          } catch (const std::exception& e) {
            what = e.what();
          } catch (...) {
          }
          core::LogError("executor of task " + ctx->task_id() + " threw: " + what);
          // A bug must not leave the task hanging: fail it (if it is not final yet).
          json::object error{{"code", "executor_error"}, {"message", what}};
          asio::co_spawn(
              io_,
              CommitStep(slot, OneEvent(protocol::kEvRunFailed, {{"error", std::move(error)}})),
              [this](std::exception_ptr, Result<Task>) { --running_; });
          return;
        }
        --running_;
      });
}

asio::awaitable<Result<RecordPtr>> TaskService::Create(std::shared_ptr<Slot> slot,
                                                       std::string dedup_key,
                                                       std::vector<EventDraft> step, bool& replayed,
                                                       Extension extend) {
  replayed = false;
  // An earlier creation with the same key (or the same id) is the answer, not a new task.
  // With a key (a fresh id) the store decides atomically; only a conflict needs a read.
  auto lookup = [&]() -> Result<std::optional<storage::TaskRecord>> {
    return dedup_key.empty() ? store_.Get(slot->task_id)
                             : store_.FindByDedupKey(storage::kDefaultTenant, dedup_key);
  };
  Result<std::optional<storage::TaskRecord>> existing = std::optional<storage::TaskRecord>();
  if (dedup_key.empty()) existing = lookup();
  if (!existing) co_return std::move(existing).error();
  if (!existing.value()) {
    if (!dedup_key.empty()) step[0].payload["dedupKey"] = dedup_key;
    auto r = co_await CommitRecord(slot, std::move(step), true, {}, std::move(extend));
    if (r || r.error().code != ErrorCode::kConflict) co_return r;
    existing = lookup();  // lost a race with the same key: that one wins
    if (!existing) co_return std::move(existing).error();
    if (!existing.value()) co_return Error(ErrorCode::kInternal, "task vanished while created");
  }
  replayed = true;
  co_return std::make_shared<const storage::TaskRecord>(std::move(*existing.value()));
}

namespace {
// A2A message -> run inputs (issue 4): text parts joined into `prompt`, data parts' fields
// merged in.
json::object InputsOf(const protocol::Message& m) {
  json::object inputs;
  std::string prompt;
  for (const auto& part : m.parts) {
    if (part.kind == protocol::Part::Kind::kText) {
      if (!prompt.empty()) prompt += "\n";
      prompt += part.text;
    } else if (part.kind == protocol::Part::Kind::kData && part.data.is_object()) {
      for (const auto& kv : part.data.get_object()) inputs[kv.key()] = kv.value();
    }
  }
  if (!prompt.empty() && !inputs.contains("prompt")) inputs["prompt"] = prompt;
  return inputs;
}
}  // namespace

Task TaskService::Shape(Task t, const std::optional<int32_t>& history_length) const {
  protocol::TrimHistory(t, history_length);
  return t;
}

asio::awaitable<Result<TaskService::Accepted>> TaskService::Accept(
    protocol::SendMessageRequest& req, std::shared_ptr<Subscription> attach,
    bool first_steps_inline) {
  if (!accepting_) co_return Error(ErrorCode::kUnavailable, "server is shutting down");
  protocol::Message& msg = req.message;
  if (msg.role != protocol::Role::kUser)
    co_return Error(ErrorCode::kInvalidParams,
                    "message.role: a client message must have the user role",
                    {{"field", "message.role"}});
  auto& inline_push = req.configuration.push_notification_config;  // push
  if (inline_push && !options_.vet_push_config)
    co_return Error(ErrorCode::kPushNotificationNotSupported,
                    "push notifications are not enabled on this server");

  const std::string caller = "anonymous";  // no authentication yet: one principal
  std::shared_ptr<Slot> slot;
  std::string skill_id;
  RecordPtr created;
  std::shared_ptr<void> detach;  // attachment of `attach`; dropped (detaching) on error
  if (msg.task_id.empty()) {
    // A new task.
    skill_id = options_.default_skill;
    const json::value* named = msg.metadata.if_contains("skillId");
    if (!named) named = req.metadata.if_contains("skillId");
    if (named) {
      if (!named->is_string())
        co_return Error(ErrorCode::kInvalidParams, "message.metadata.skillId: expected a string",
                        {{"field", "message.metadata.skillId"}});
      skill_id = named->get_string();
    }
    if (!executors_.count(skill_id)) {
      std::string available;
      for (const auto& s : skill_infos_) available += (available.empty() ? "" : ", ") + s.id;
      co_return Error(ErrorCode::kInvalidParams,
                      "message.metadata.skillId: unknown skill '" + skill_id +
                          "'; available skills: " + available,
                      {{"field", "message.metadata.skillId"}});
    }
    // The same caller's same messageId never starts a second run: the id derives from it.
    json::object inputs = InputsOf(msg);
    if (auto refused = ExecutorFor(skill_id)->CheckInputs(inputs)) co_return std::move(*refused);
    const std::string dedup_key = "a2a\n" + caller + "\n" + msg.message_id;
    std::string task_id = ids_.Next();
    const bool context_given = !msg.context_id.empty();
    if (!context_given) msg.context_id = ids_.Next();
    msg.task_id = task_id;
    slot = Acquire(task_id);
    if (inline_push) {  // push: vetted now, written with the creating commit
      auto vetted = co_await options_.vet_push_config(*inline_push, task_id);
      if (!vetted) co_return std::move(vetted).error();
      std::lock_guard lock(slot->mu);
      slot->pending_push_configs.push_back(InlinePushRecord(task_id, *inline_push, clock_.NowMs()));
    }
    json::array tags{json::value("a2a:" + msg.message_id), json::value("a2a:" + msg.context_id)};
    json::object payload{{"contextId", msg.context_id},
                         {"skillId", skill_id},
                         {"message", protocol::v10::MessageToJson(msg)},
                         {"transport", "a2a"},
                         {"tags", std::move(tags)},
                         {"inputs", std::move(inputs)}};
    bool replayed = false;
    Extension first_steps;
    if (first_steps_inline)
      first_steps = [executor = ExecutorFor(skill_id)](const storage::TaskRecord& fresh) {
        return executor->FirstSteps(fresh);
      };
    auto r =
        co_await Create(slot, dedup_key, OneEvent(protocol::kEvTaskSubmitted, std::move(payload)),
                        replayed, std::move(first_steps));
    if (!r) co_return std::move(r).error();
    created = std::move(r).value();
    // A stream attaches once the task is known: a new task has no execution yet (it starts
    // below), so nothing can be missed; a retried send attaches to the existing task and
    // then re-reads it, so its snapshot covers everything the stream will not see.
    if (!replayed) {
      if (attach) detach = Attach(slot, attach);
    } else {
      task_id = created->task.id;
      slot = Acquire(task_id);
      if (attach) {
        detach = Attach(slot, attach);
        auto now = store_.Get(task_id);
        if (!now) co_return std::move(now).error();
        if (now.value())
          created = std::make_shared<const storage::TaskRecord>(std::move(*now.value()));
      }
      if (created->skill_id != skill_id ||
          (context_given && created->task.context_id != msg.context_id)) {
        // Not a retry of the same send: a reused messageId.
        co_return Error(ErrorCode::kInvalidParams,
                        "message.messageId '" + msg.message_id + "' was already used for task " +
                            task_id +
                            " (another skill or context); use a new messageId per message",
                        {{"field", "message.messageId"}});
      }
      co_return Accepted{std::move(slot), std::move(created), std::move(skill_id),
                         std::move(detach)};
    }
  } else {
    // A reply to an existing task.
    auto stored = store_.Get(msg.task_id);
    if (!stored) co_return std::move(stored).error();
    if (!stored.value())
      co_return Error(ErrorCode::kTaskNotFound, "task " + msg.task_id + " not found",
                      {{"taskId", msg.task_id}});
    const storage::TaskRecord& rec = *stored.value();
    if (!msg.context_id.empty() && msg.context_id != rec.task.context_id)
      co_return Error(ErrorCode::kInvalidParams,
                      "message.contextId '" + msg.context_id + "' does not match the contextId '" +
                          rec.task.context_id + "' of task " + msg.task_id,
                      {{"field", "message.contextId"}});
    msg.context_id = rec.task.context_id;
    skill_id = rec.skill_id;
    slot = Acquire(msg.task_id);
    // push: vetted now, written with the commit of the reply if it is accepted
    std::optional<storage::PushConfigRecord> push_record;
    if (inline_push) {
      auto vetted = co_await options_.vet_push_config(*inline_push, msg.task_id);
      if (!vetted) co_return std::move(vetted).error();
      push_record = InlinePushRecord(msg.task_id, *inline_push, clock_.NowMs());
    }
    if (attach) detach = Attach(slot, attach);
    // Decided under the task's lock against its newest state. A reply is idempotent by
    // messageId (accepted_messages.hpp): a retry of an accepted reply writes nothing and is
    // answered with the task as it is now, whatever its state. Of two different replies
    // racing for one interrupt, one wins; the accepted reply moves the task to working
    // (a2a.message.received on an interrupted task, or the executor's node.resumed).
    Executor* executor = ExecutorFor(skill_id);
    auto resumes = std::make_shared<bool>(true);
    auto retried = std::make_shared<bool>(false);
    auto accept_reply = [task_id = msg.task_id, executor, &msg, caller, resumes, retried, slot,
                         push_record = std::move(push_record)](
                            const storage::TaskRecord& current,
                            std::vector<EventDraft>& step) -> std::optional<Error> {
      switch (FindAcceptedMessage(current, msg)) {
        case PriorMessage::kSame:
          *retried = true;
          step.clear();
          return std::nullopt;
        case PriorMessage::kDifferent:
          return Error(ErrorCode::kInvalidParams,
                       "message.messageId: '" + msg.message_id +
                           "' was already used for another message of task " + task_id +
                           "; use a new messageId per message (a retry must repeat the "
                           "message unchanged)",
                       {{"field", "message.messageId"}});
        case PriorMessage::kNone:
          break;
      }
      TaskState s = current.task.status.state;
      if (protocol::IsTerminal(s))
        return Error(ErrorCode::kUnsupportedOperation,
                     "task " + task_id + " is " + std::string(protocol::v03::TaskStateName(s)) +
                         " and accepts no more messages; start a new task in the same context",
                     {{"taskId", task_id}});
      if (!protocol::IsInterrupted(s))
        return Error(ErrorCode::kUnsupportedOperation,
                     "task " + task_id + " is " + std::string(protocol::v03::TaskStateName(s)) +
                         ", not waiting for input",
                     {{"taskId", task_id}});
      if (executor) {
        ResolveRequest rr;
        rr.message = &msg;
        rr.caller = caller;
        rr.via = "a2a";
        auto resolution = executor->Resolve(current, rr);
        if (!resolution) return std::move(resolution).error();
        *resumes = resolution->resumes;
        if (resolution->explicit_resume || !resolution->resumes) step[0].payload["resumes"] = false;
        for (auto& e : resolution->events) step.push_back(std::move(e));
      }
      if (push_record) slot->pending_push_configs.push_back(*push_record);  // under slot->mu
      return std::nullopt;
    };
    json::object payload{{"message", protocol::v10::MessageToJson(msg)}};
    auto r = co_await CommitRecord(slot, OneEvent(protocol::kEvMessageReceived, std::move(payload)),
                                   false, accept_reply);
    if (!r) co_return std::move(r).error();
    created = std::move(r).value();
    if (*retried || !*resumes)
      co_return Accepted{std::move(slot), std::move(created), std::move(skill_id),
                         std::move(detach)};
  }

  // A task its creating commit already finished (inline first steps) has nothing to run.
  if (!protocol::IsTerminal(created->task.status.state))
    StartExecution(slot, created, msg, skill_id);
  co_return Accepted{std::move(slot), std::move(created), std::move(skill_id), std::move(detach)};
}

asio::awaitable<Result<Task>> TaskService::SendMessage(protocol::SendMessageRequest req) {
  // A blocking send waits for the outcome anyway: what the executor can decide at once is
  // committed with the task's creation (a non-blocking send returns the task as submitted).
  auto accepted = co_await Accept(req, nullptr, !req.configuration.return_immediately);
  if (!accepted) co_return std::move(accepted).error();
  Accepted& a = accepted.value();
  if (req.configuration.return_immediately)
    co_return Shape(a.record->task, req.configuration.history_length);
  auto settled = [](const storage::TaskRecord& r) {
    const Task& t = r.task;
    return protocol::IsTerminal(t.status.state) || protocol::IsInterrupted(t.status.state);
  };
  if (settled(*a.record))  // e.g. a retried send whose task already finished
    co_return Shape(a.record->task, req.configuration.history_length);
  RecordPtr latest = co_await WaitUntil(a.slot, settled, options_.blocking_timeout);
  co_return Shape(latest ? latest->task : a.record->task, req.configuration.history_length);
}

asio::awaitable<Result<StreamStart>> TaskService::SendStreamingMessage(
    protocol::SendMessageRequest req, size_t queue_capacity) {
  auto sub = std::make_shared<Subscription>(queue_capacity);
  auto accepted = co_await Accept(req, sub);
  if (!accepted) co_return std::move(accepted).error();
  Accepted& a = accepted.value();
  StreamStart start;
  start.subscription = sub;
  start.detach = std::move(a.detach);
  start.last_sequence = a.record->last_sequence;
  start.backlog.push_back(SnapshotItem(a.record->last_sequence, a.record->task));
  co_return start;
}

Result<StreamStart> TaskService::Subscribe(const std::string& task_id,
                                           std::optional<int64_t> after_sequence,
                                           size_t queue_capacity) {
  auto exists = store_.Get(task_id);
  if (!exists) return std::move(exists).error();
  if (!exists.value())
    return Error(ErrorCode::kTaskNotFound, "task " + task_id + " not found", {{"taskId", task_id}});
  // Subscribe first, then read the log: every event is in one or the other (or both, and
  // the stream skips sequences it already sent). No gap, no duplicate.
  auto slot = Acquire(task_id);
  auto sub = std::make_shared<Subscription>(queue_capacity);
  StreamStart start;
  start.subscription = sub;
  start.detach = Attach(slot, sub);
  if (!after_sequence) {
    // Nothing missed: the stored snapshot (read after attaching, so it covers everything the
    // subscription will not see) is where the stream starts.
    auto rec = store_.Get(task_id);
    if (!rec) return std::move(rec).error();
    if (!rec.value())
      return Error(ErrorCode::kTaskNotFound, "task " + task_id + " not found",
                   {{"taskId", task_id}});
    start.last_sequence = rec.value()->last_sequence;
    start.task_terminal = protocol::IsTerminal(rec.value()->task.status.state);
    start.backlog.push_back(SnapshotItem(start.last_sequence, rec.value()->task));
    return start;
  }
  auto events = store_.ReadEvents(task_id, -1, std::numeric_limits<size_t>::max());
  if (!events) return std::move(events).error();
  const bool compacted = events->empty() || events->front().sequence != 0;
  if (compacted) {  // retention pruned the log: only the snapshot is left
    auto rec = store_.Get(task_id);
    if (!rec) return std::move(rec).error();
    start.last_sequence = rec.value()->last_sequence;
    Task snapshot = std::move(rec.value()->task);
    start.task_terminal = protocol::IsTerminal(snapshot.status.state);
    if (after_sequence && *after_sequence < start.last_sequence) {
      start.history_compacted = true;
      snapshot.metadata["a2ad"] =
          json::object{{"historyCompacted", true}, {"lastEventId", *after_sequence}};
    }
    start.backlog.push_back(SnapshotItem(start.last_sequence, snapshot));
    return start;
  }
  storage::TaskRecord folded;
  for (const auto& e : *events) {
    auto applied = FoldCommittedEvent(folded, e);
    if (!applied) return std::move(applied).error();
    if (after_sequence && e.sequence > *after_sequence)
      if (auto projected = ProjectEvent(folded.task, e))
        start.backlog.push_back(MakeItem(e.sequence, std::move(*projected)));
  }
  start.last_sequence = folded.last_sequence;
  start.task_terminal = protocol::IsTerminal(folded.task.status.state);
  if (after_sequence && *after_sequence > folded.last_sequence)
    return Error(ErrorCode::kInvalidParams,
                 "Last-Event-ID " + std::to_string(*after_sequence) + " is past the last event (" +
                     std::to_string(folded.last_sequence) + ") of task " + task_id,
                 {{"field", "Last-Event-ID"}});
  if (!after_sequence) start.backlog.push_back(SnapshotItem(folded.last_sequence, folded.task));
  return start;
}

Result<Task> TaskService::GetTask(const protocol::GetTaskRequest& req) {
  auto stored = store_.Get(req.id);
  if (!stored) return std::move(stored).error();
  if (!stored.value())
    return Error(ErrorCode::kTaskNotFound, "task " + req.id + " not found", {{"taskId", req.id}});
  return Shape(std::move(stored.value()->task), req.history_length);
}

Result<protocol::ListTasksResponse> TaskService::ListTasks(const protocol::ListTasksRequest& req) {
  storage::TaskQuery q;
  q.context_id = req.context_id;
  q.state = req.status;
  q.updated_at_or_after_ms = req.status_timestamp_after_ms;
  q.page_size = req.page_size;
  q.page_token = req.page_token;
  auto page = store_.List(q);
  if (!page) {
    if (page.error().code == ErrorCode::kInvalidParams)  // the only one: a bad cursor
      return Error(
          ErrorCode::kInvalidParams,
          "params.pageToken: not a token this server issued (" + page.error().message + ")",
          {{"field", "params.pageToken"}});
    return std::move(page).error();
  }
  protocol::ListTasksResponse out;
  out.tasks.reserve(page->records.size());
  for (auto& rec : page->records) {
    Task t = Shape(std::move(rec.task), req.history_length);
    if (!req.include_artifacts) t.artifacts.clear();
    out.tasks.push_back(std::move(t));
  }
  out.next_page_token = std::move(page->next_page_token);
  out.page_size = req.page_size;
  out.total_size = page->total_size;
  out.unreadable = std::move(page->unreadable);
  return out;
}

asio::awaitable<Result<Task>> TaskService::CancelTask(protocol::CancelTaskRequest req) {
  co_return co_await CancelRun(req.id, "canceled by the client");
}

asio::awaitable<Result<Task>> TaskService::CancelRun(std::string run_id, std::string reason,
                                                     std::string parent_run_id) {
  auto stored = store_.Get(run_id);
  if (!stored) co_return std::move(stored).error();
  if (!stored.value())
    co_return Error(ErrorCode::kTaskNotFound, "task " + run_id + " not found",
                    {{"taskId", run_id}});
  auto slot = Acquire(run_id);
  json::object payload{{"reason", reason}, {"cancelledBy", "client"}};
  if (!parent_run_id.empty()) {
    payload["parentRunId"] = parent_run_id;
    payload["cancelledBy"] = "parent";
  }
  auto r = co_await CommitRecord(slot, OneEvent(protocol::kEvRunCancelled, std::move(payload)),
                                 false, {});
  if (!r) {
    if (r.error().code != ErrorCode::kUnsupportedOperation) co_return std::move(r).error();
    auto now = store_.Get(run_id);
    if (now && now.value() && now.value()->task.status.state == TaskState::kCanceled)
      co_return std::move(now.value()->task);  // cancel is idempotent (v1.0 §3.1.5)
    TaskState s = now && now.value() ? now.value()->task.status.state : TaskState::kUnspecified;
    co_return Error(ErrorCode::kTaskNotCancelable,
                    "task " + run_id + " is " + std::string(protocol::v03::TaskStateName(s)) +
                        " and can no longer be canceled",
                    {{"taskId", run_id}});
  }
  slot->cancel_requested = true;
  slot->WakeSleepers();
  // Cascade: the run's unfinished children are cancelled too (DIGEST §4.6 cascade-cancel).
  const RecordPtr& rec = r.value();
  if (auto* children = rec->run.if_contains("childRuns"); children && children->is_array())
    for (const auto& c : children->get_array()) {
      if (!c.is_object() || !c.get_object().contains("runId")) continue;
      const json::value& id = c.get_object().at("runId");
      if (!id.is_string()) continue;
      auto child = co_await CancelRun(std::string(id.get_string()), "parent-cancelled", run_id);
      if (!child && child.error().code != ErrorCode::kTaskNotCancelable &&
          child.error().code != ErrorCode::kTaskNotFound)
        core::LogWarn("cancel of child run " + std::string(id.get_string()) + " of " + run_id +
                      " failed: " + child.error().message);
    }
  co_return rec->task;
}

asio::awaitable<Result<StartedRun>> TaskService::StartRun(StartRunRequest req) {
  if (!accepting_) co_return Error(ErrorCode::kUnavailable, "server is shutting down");
  if (!executors_.count(req.skill_id)) {
    std::string available;
    for (const auto& s : skill_infos_) available += (available.empty() ? "" : ", ") + s.id;
    co_return Error(ErrorCode::kInvalidParams,
                    "workflowId: unknown workflow '" + req.skill_id + "'; available: " + available,
                    {{"field", "workflowId"}});
  }
  if (auto refused = ExecutorFor(req.skill_id)->CheckInputs(req.inputs))
    co_return std::move(*refused);
  const std::string run_id = req.run_id.empty() ? ids_.Next() : req.run_id;
  protocol::Message msg;
  msg.message_id = run_id;
  msg.task_id = run_id;
  msg.context_id = run_id;
  msg.role = protocol::Role::kUser;
  msg.parts.push_back(protocol::Part::Data(req.inputs));
  json::object payload{{"contextId", msg.context_id},
                       {"skillId", req.skill_id},
                       {"message", protocol::v10::MessageToJson(msg)},
                       {"transport", req.transport},
                       {"tags", req.tags},
                       {"inputs", req.inputs}};
  if (!req.metadata.empty()) payload["runMetadata"] = req.metadata;
  if (!req.request_digest.empty()) payload["requestDigest"] = req.request_digest;
  if (!req.parent_run_id.empty()) {
    payload["parentRunId"] = req.parent_run_id;
    payload["parentNodeId"] = req.parent_node_id;
  }
  auto slot = Acquire(run_id);
  StartedRun out;
  auto r = co_await Create(slot, req.dedup_key,
                           OneEvent(protocol::kEvTaskSubmitted, std::move(payload)), out.replayed);
  if (!r) co_return std::move(r).error();
  out.record = std::move(r).value();
  if (!out.replayed) StartExecution(Acquire(out.record->task.id), out.record, msg, req.skill_id);
  co_return out;
}

asio::awaitable<Result<RecordPtr>> TaskService::ResolveInterrupt(const std::string& run_id,
                                                                 ResolveRequest req) {
  auto stored = store_.Get(run_id);
  if (!stored) co_return std::move(stored).error();
  if (!stored.value())
    co_return Error(ErrorCode::kTaskNotFound, "run " + run_id + " not found", {{"taskId", run_id}});
  const std::string skill_id = stored.value()->skill_id;
  Executor* executor = ExecutorFor(skill_id);
  if (!executor)
    co_return Error(ErrorCode::kUnsupportedOperation, "run " + run_id + " has no executor");
  auto slot = Acquire(run_id);
  auto resumes = std::make_shared<bool>(true);
  auto resolve = [&req, executor, resumes](const storage::TaskRecord& current,
                                           std::vector<EventDraft>& step) -> std::optional<Error> {
    auto resolution = executor->Resolve(current, req);
    if (!resolution) return std::move(resolution).error();
    *resumes = resolution->resumes;
    step = std::move(resolution->events);
    if (step.empty()) return Error(ErrorCode::kInternal, "the resolution commits nothing");
    return std::nullopt;
  };
  auto r = co_await CommitRecord(slot, {}, false, resolve);
  if (!r) co_return std::move(r).error();
  RecordPtr rec = std::move(r).value();
  if (*resumes) {
    const protocol::Message* trigger = nullptr;
    for (auto it = rec->task.history.rbegin(); it != rec->task.history.rend(); ++it)
      if (it->role == protocol::Role::kUser) {
        trigger = &*it;
        break;
      }
    protocol::Message none;
    StartExecution(slot, rec, trigger ? *trigger : none, skill_id);
  }
  co_return rec;
}

Result<std::optional<storage::TaskRecord>> TaskService::GetRecord(const std::string& id) {
  return store_.Get(id);
}

Result<storage::TaskPage> TaskService::ListRecords(const storage::TaskQuery& q) {
  return store_.List(q);
}

Result<std::vector<protocol::RunEvent>> TaskService::ReadEvents(const std::string& id,
                                                                int64_t after_sequence,
                                                                size_t limit) {
  return store_.ReadEvents(id, after_sequence, limit);
}

asio::awaitable<RecordPtr> TaskService::WaitForRecord(
    const std::string& id, std::function<bool(const storage::TaskRecord&)> pred,
    std::chrono::milliseconds timeout) {
  auto slot = Acquire(id);
  {
    // Seed the slot's published record from the store, so a condition already true (or a
    // run nobody committed to since this process started) is seen without a new commit.
    auto stored = store_.Get(id);
    if (stored && stored.value()) {
      auto rec = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
      std::lock_guard pub(slot->pub_mu);
      if (!slot->published || slot->published->last_sequence < rec->last_sequence)
        slot->published = rec;
    }
  }
  co_return co_await WaitUntil(slot, std::move(pred), timeout);
}

Result<StreamStart> TaskService::SubscribeRunEvents(const std::string& id, int64_t after_sequence,
                                                    size_t queue_capacity) {
  auto exists = store_.Get(id);
  if (!exists) return std::move(exists).error();
  if (!exists.value())
    return Error(ErrorCode::kTaskNotFound, "run " + id + " not found", {{"taskId", id}});
  auto slot = Acquire(id);
  auto sub = std::make_shared<Subscription>(queue_capacity);
  StreamStart start;
  start.subscription = sub;
  start.detach = Attach(slot, sub);
  auto events = store_.ReadEvents(id, after_sequence, std::numeric_limits<size_t>::max());
  if (!events) return std::move(events).error();
  auto rec = store_.Get(id);
  if (!rec) return std::move(rec).error();
  start.last_sequence = after_sequence;
  start.task_terminal =
      protocol::IsTerminal(rec.value()->task.status.state) || IsTerminalRun(rec.value()->run);
  for (size_t i = 0; i < events->size(); ++i) {
    auto item = std::make_shared<StreamItem>();
    item->sequence = (*events)[i].sequence;
    item->a2a = false;
    item->run_terminal = start.task_terminal && i + 1 == events->size();
    item->run_event = std::make_shared<const protocol::RunEvent>(std::move((*events)[i]));
    start.last_sequence = item->sequence;
    start.backlog.push_back(std::move(item));
  }
  start.last_sequence = std::max(start.last_sequence, after_sequence);
  return start;
}

Result<size_t> TaskService::RecoverUnfinished() {
  // Collect first, then start: a started execution changes the states being listed.
  std::vector<storage::TaskRecord> unfinished;
  for (TaskState state : {TaskState::kSubmitted, TaskState::kWorking, TaskState::kInputRequired,
                          TaskState::kAuthRequired}) {
    const bool parked = state == TaskState::kInputRequired || state == TaskState::kAuthRequired;
    storage::TaskQuery q;
    q.state = state;
    q.page_size = 100;
    for (;;) {
      auto page = store_.List(q);
      if (!page) return std::move(page).error();
      for (const auto& id : page->unreadable)  // the store logged why; the rest recovers
        core::LogWarn("recovery: task " + id + " is skipped: its stored record does not read");
      for (auto& rec : page->records) {
        Executor* ex = ExecutorFor(rec.skill_id);
        if (parked && (!ex || !ex->RecoversParked())) continue;
        unfinished.push_back(std::move(rec));
      }
      if (page->next_page_token.empty()) break;
      q.page_token = page->next_page_token;
    }
  }
  size_t n = 0;
  for (const auto& rec : unfinished) {
    const protocol::Message* trigger = nullptr;
    for (auto it = rec.task.history.rbegin(); it != rec.task.history.rend(); ++it)
      if (it->role == protocol::Role::kUser) {
        trigger = &*it;
        break;
      }
    if (!trigger) continue;
    StartExecution(Acquire(rec.task.id), std::make_shared<const storage::TaskRecord>(rec), *trigger,
                   rec.skill_id);
    ++n;
  }
  return n;
}

}  // namespace a2ad::tasks
