// The A2A operations of TaskService: message/send and message/stream (a new task, or a reply
// to an interrupted one), tasks/get, ListTasks, tasks/cancel and resubscribe. A send reads
// top to bottom: SendMessage -> Accept -> AcceptNew | AcceptReply -> the writer
// (TaskWriter, task_writer.cpp: Create / CommitRecord) -> Executions::Start (executions.cpp).
#include "a2ad/tasks/task_service.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/tasks/accepted_messages.hpp"
#include "a2ad/tasks/builtin/skill_chooser.hpp"
#include "a2ad/tasks/executions.hpp"
#include "a2ad/tasks/pause_control.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_reader.hpp"
#include "a2ad/tasks/task_writer.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::Task;
using protocol::TaskState;

namespace {

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

struct TaskService::Accepted {
  std::shared_ptr<Slot> slot;
  RecordPtr record;
  std::string skill_id;
  std::shared_ptr<void> detach;  // set when a subscription was attached
  /// A new task's creating commit as a stream shows it (the task as submitted, then each
  /// event), when a stream asked for it; empty otherwise.
  std::vector<StreamItemPtr> creation_items;
};

TaskService::TaskService(storage::TaskStore& store, const core::Clock& clock,
                         core::IdGenerator& ids, asio::any_io_executor io,
                         TaskServiceOptions options)
    : store_(store),
      clock_(clock),
      ids_(ids),
      io_(std::move(io)),
      options_(std::move(options)),
      reads_(std::make_unique<ReadExecutor>(options_.read_threads)) {
  writer_ = std::make_unique<TaskWriter>(
      store_, clock_, ids_, io_, *reads_,
      TaskWriter::Options{.cluster = options_.cluster,
                          .on_commit = options_.on_commit,
                          .idempotency_retention = options_.idempotency_retention});
  reader_ = std::make_unique<TaskReader>(store_, *reads_, *writer_, options_.blocking_timeout);
  pauses_ = std::make_unique<PauseControl>(
      *writer_, *reader_, store_, *reads_, clock_, ids_,
      [this](const std::string& skill_id) { return ExecutorFor(skill_id); },
      [this](const std::shared_ptr<Slot>& slot, const RecordPtr& rec) {
        runs_->Redrive(slot, rec);
      });
  // Not a skill of the card: what a message naming none starts (skill_chooser.hpp).
  executors_[kChooseSkill] = std::make_shared<SkillChooser>(
      [this]() -> const std::vector<SkillInfo>& { return skill_infos_; },
      [this](const std::string& id) { return ExecutorFor(id); });
  runs_ = std::make_unique<Executions>(
      io_, store_, clock_, *writer_, *reader_, *reads_,
      [this](const std::string& id) { return ExecutorFor(id); },
      Executions::Options{.cluster = options_.cluster,
                          .refresh_task = options_.refresh_task,
                          .after_cancel_recovery = options_.after_cancel_recovery});
}

TaskService::~TaskService() { runs_->StopWakes(); }  // the loop ends without touching this

// ---- the server's own work: Executions (executions.hpp) ------------------------------------

Result<size_t> TaskService::RecoverUnfinished(bool runs) { return runs_->RecoverUnfinished(runs); }
void TaskService::Nudge(const std::string& task_id, const std::string& key, bool forward) {
  runs_->Nudge(task_id, key, forward);
}
bool TaskService::NoteWake(int64_t at_ms) { return runs_->NoteWake(at_ms); }
void TaskService::StopAccepting() { runs_->StopAccepting(); }
void TaskService::StartWakes() { runs_->StartWakes(); }
size_t TaskService::running_executions() const { return runs_->running(); }

void TaskService::RegisterSkill(SkillInfo info, std::shared_ptr<Executor> executor) {
  executors_[info.id] = std::move(executor);
  skill_infos_.push_back(std::move(info));
}

Executor* TaskService::ExecutorFor(const std::string& skill_id) const {
  auto it = executors_.find(skill_id);
  return it == executors_.end() ? nullptr : it->second.get();
}

std::string TaskService::AvailableSkills() const {
  std::string available;
  for (const auto& s : skill_infos_) available += (available.empty() ? "" : ", ") + s.id;
  return available;
}

asio::awaitable<Result<void>> TaskService::WritePushConfig(storage::PushConfigRecord record) {
  co_return co_await writer_->WritePushConfig(std::move(record));
}

size_t TaskService::subscriber_count(const std::string& task_id) {
  return writer_->subscriber_count(task_id);
}

bool TaskService::task_locked(const std::string& task_id) { return writer_->task_locked(task_id); }

// ---- reads (TaskReader, task_reader.cpp) ---------------------------------------------------

asio::awaitable<Result<Task>> TaskService::GetTask(const CallContext& ctx,
                                                   protocol::GetTaskRequest req) {
  co_return co_await reader_->GetTask(ctx, std::move(req));
}

asio::awaitable<Result<protocol::ListTasksResponse>> TaskService::ListTasks(
    const CallContext& ctx, protocol::ListTasksRequest req) {
  co_return co_await reader_->ListTasks(ctx, std::move(req));
}

asio::awaitable<Result<std::optional<storage::TaskRecord>>> TaskService::GetRecord(
    const CallContext& ctx, std::string id) {
  co_return co_await reader_->GetRecord(ctx, std::move(id));
}

asio::awaitable<Result<storage::TaskPage>> TaskService::ListRecords(const CallContext& ctx,
                                                                    storage::TaskQuery q) {
  co_return co_await reader_->ListRecords(ctx, std::move(q));
}

asio::awaitable<Result<std::vector<protocol::RunEvent>>> TaskService::ReadEvents(
    const CallContext& ctx, std::string id, int64_t after_sequence, size_t limit) {
  co_return co_await reader_->ReadEvents(ctx, std::move(id), after_sequence, limit);
}

asio::awaitable<RecordPtr> TaskService::WaitForRecord(
    const CallContext& ctx, std::string id, std::function<bool(const storage::TaskRecord&)> pred,
    std::chrono::milliseconds timeout) {
  co_return co_await reader_->WaitForRecord(ctx, std::move(id), std::move(pred), timeout);
}

asio::awaitable<Result<StreamStart>> TaskService::Subscribe(const CallContext& ctx,
                                                            std::string task_id,
                                                            std::optional<StreamCursor> after,
                                                            size_t queue_capacity) {
  co_return co_await reader_->Subscribe(ctx, std::move(task_id), after, queue_capacity);
}

asio::awaitable<Result<StreamStart>> TaskService::SubscribeRunEvents(const CallContext& ctx,
                                                                     std::string id,
                                                                     int64_t after_sequence,
                                                                     size_t queue_capacity) {
  co_return co_await reader_->SubscribeRunEvents(ctx, std::move(id), after_sequence,
                                                 queue_capacity);
}

// ---- message/send, message/stream ----------------------------------------------------------

asio::awaitable<Result<Task>> TaskService::SendMessage(const CallContext& ctx,
                                                       protocol::SendMessageRequest req) {
  // A blocking send waits for the outcome anyway: what the executor can decide at once is
  // committed with the task's creation (a non-blocking send returns the task as submitted).
  auto accepted = co_await Accept(ctx, req, nullptr, !req.configuration.return_immediately);
  if (!accepted) co_return std::move(accepted).error();
  Accepted& a = accepted.value();
  if (req.configuration.return_immediately)
    co_return Trimmed(a.record->task, req.configuration.history_length);
  // Settled: terminal, waiting for input, or paused (pause.hpp): a pause may last for days.
  auto settled = [](const storage::TaskRecord& r) {
    const Task& t = r.task;
    return protocol::IsTerminal(t.status.state) || protocol::IsInterrupted(t.status.state) ||
           OpenPause(r.run) != nullptr;
  };
  if (settled(*a.record))  // e.g. a retried send whose task already finished
    co_return Trimmed(a.record->task, req.configuration.history_length);
  RecordPtr latest = co_await writer_->WaitUntil(a.slot, settled, options_.blocking_timeout);
  co_return Trimmed(latest ? latest->task : a.record->task, req.configuration.history_length);
}

asio::awaitable<Result<StreamStart>> TaskService::SendStreamingMessage(
    const CallContext& ctx, protocol::SendMessageRequest req, size_t queue_capacity) {
  auto sub = std::make_shared<Subscription>(queue_capacity);
  // As a blocking send, what the executor decides at once rides with the creating commit,
  // and the stream of a new task begins with that commit's items (the task as submitted
  // first, then each event) as if they had been committed one by one; its backlog, so the
  // subscription's queue limit applies only to what comes later.
  auto accepted = co_await Accept(ctx, req, sub, true);
  if (!accepted) co_return std::move(accepted).error();
  Accepted& a = accepted.value();
  StreamStart start;
  start.subscription = sub;
  start.detach = std::move(a.detach);
  start.last_sequence = a.record->last_sequence;
  if (!a.creation_items.empty())
    start.backlog = std::move(a.creation_items);
  else
    start.backlog.push_back(SnapshotItem(a.record->last_sequence, a.record->task));
  co_return start;
}

asio::awaitable<Result<TaskService::Accepted>> TaskService::Accept(
    const CallContext& ctx, protocol::SendMessageRequest& req, std::shared_ptr<Subscription> attach,
    bool first_steps_inline) {
  if (!runs_->accepting()) co_return Error(ErrorCode::kUnavailable, "server is shutting down");
  if (req.message.role != protocol::Role::kUser)
    co_return Error(ErrorCode::kInvalidParams,
                    "message.role: a client message must have the user role",
                    {{"field", "message.role"}});
  if (req.configuration.push_notification_config && !options_.vet_push_config)  // push
    co_return Error(ErrorCode::kPushNotificationNotSupported,
                    "push notifications are not enabled on this server");
  if (req.message.task_id.empty())
    co_return co_await AcceptNew(ctx, req, std::move(attach), first_steps_inline);
  co_return co_await AcceptReply(ctx, req, std::move(attach));
}

Result<std::string> TaskService::SkillOf(const protocol::SendMessageRequest& req) const {
  const json::value* named = req.message.metadata.if_contains("skillId");
  if (!named) named = req.metadata.if_contains("skillId");
  if (!named) return options_.default_skill;
  if (!named->is_string())
    return Error(ErrorCode::kInvalidParams, "message.metadata.skillId: expected a string",
                 {{"field", "message.metadata.skillId"}});
  return std::string(named->get_string());
}

std::optional<protocol::Message> TaskService::DirectReply(const protocol::SendMessageRequest& req) {
  const protocol::Message& msg = req.message;
  if (!msg.task_id.empty()) return std::nullopt;
  auto skill_id = SkillOf(req);
  if (!skill_id) return std::nullopt;  // AcceptNew words the refusal
  const Executor* executor = ExecutorFor(*skill_id);
  if (!executor) return std::nullopt;
  auto reply = executor->DirectReply(msg);
  if (!reply) return std::nullopt;
  reply->message_id = ids_.Next();
  reply->context_id = msg.context_id.empty() ? ids_.Next() : msg.context_id;
  reply->task_id.clear();
  reply->role = protocol::Role::kAgent;
  return reply;
}

asio::awaitable<Result<TaskService::Accepted>> TaskService::AcceptNew(
    const CallContext& ctx, protocol::SendMessageRequest& req, std::shared_ptr<Subscription> attach,
    bool first_steps_inline) {
  protocol::Message& msg = req.message;
  auto named_skill = SkillOf(req);
  if (!named_skill) co_return std::move(named_skill).error();
  std::string skill_id = std::move(named_skill).value();
  // A message naming no skill (and no --default-skill): "/<skill> ..." runs that skill, a lone
  // choosable skill runs, else the chooser asks which (builtin/skill_chooser.hpp).
  std::string slash_prompt;
  bool slash = false;
  if (skill_id.empty()) {
    for (const auto& part : msg.parts)
      if (part.kind == protocol::Part::Kind::kText) {
        skill_id = SlashCommandSkill(part.text, skill_infos_, slash_prompt);
        slash = !skill_id.empty();
        break;
      }
    if (skill_id.empty()) {
      const auto choosable = ChoosableSkills(skill_infos_);
      skill_id = choosable.size() == 1 ? choosable.front()->id : std::string(kChooseSkill);
    }
  }
  Executor* executor = ExecutorFor(skill_id);
  if (!executor)
    co_return Error(ErrorCode::kInvalidParams,
                    "message.metadata.skillId: unknown skill '" + skill_id +
                        "'; available skills: " + AvailableSkills(),
                    {{"field", "message.metadata.skillId"}});
  json::object inputs = InputsOf(msg);
  if (slash) {  // the command is not part of the prompt
    if (slash_prompt.empty())
      inputs.erase("prompt");
    else
      inputs["prompt"] = slash_prompt;
  }
  if (auto refused = executor->CheckInputs(inputs)) co_return std::move(*refused);
  json::object task_metadata;  // an extension's keys (TaskServiceOptions::prepare_new_task)
  if (options_.prepare_new_task) {
    auto prepared = co_await options_.prepare_new_task(ctx, req, task_metadata);
    if (!prepared) co_return std::move(prepared).error();
  }
  // The same caller's same messageId in the same conversation never starts a second run
  // within the idempotency retention window (accepted_messages.hpp): the key names the
  // principal and the contextId the client gave (a messageId reused in another context is
  // another message), and the store keeps keys per tenant.
  const bool context_given = !msg.context_id.empty();
  const std::string dedup_key =
      A2aDedupKey(ctx.caller(), msg.context_id, msg.message_id,
                  executor->ReusesFirstMessageIds() ? DedupRelease::kWhenAddressed
                                                    : DedupRelease::kRetention);
  std::string task_id = ids_.Next();
  const std::string fresh_id = task_id;  // unused if this is a retry
  if (!context_given) msg.context_id = ids_.Next();
  msg.task_id = task_id;
  auto slot = writer_->Acquire(task_id);
  if (auto& inline_push = req.configuration.push_notification_config) {
    // push: vetted now, written with the creating commit
    auto vetted = co_await options_.vet_push_config(*inline_push, task_id);
    if (!vetted) co_return std::move(vetted).error();
    std::lock_guard lock(slot->mu);
    slot->pending_push_configs.push_back(InlinePushRecord(task_id, *inline_push, clock_.NowMs()));
  }
  json::array tags{json::value("a2a:" + msg.message_id), json::value("a2a:" + msg.context_id)};
  json::object payload{{"contextId", msg.context_id},
                       {"skillId", skill_id},
                       {"message", protocol::MessageToJson(msg)},
                       {"transport", "a2a"},
                       {"tags", std::move(tags)},
                       {"inputs", std::move(inputs)}};
  if (!task_metadata.empty()) payload["taskMetadata"] = std::move(task_metadata);
  json::object run_metadata;  // the run is a child of the caller's span (core/trace.hpp)
  KeepTraceparent(run_metadata, ctx.traceparent);
  if (!run_metadata.empty()) payload["runMetadata"] = std::move(run_metadata);
  TaskWriter::Extension first_steps;
  if (first_steps_inline)
    first_steps = [executor](const storage::TaskRecord& fresh) {
      return executor->FirstSteps(fresh);
    };
  // A stream gets the creating commit's items (its backlog; the fresh id is nobody else's).
  if (attach) {
    std::lock_guard lock(slot->mu);
    slot->keep_creation_items = true;
  }
  bool replayed = false;
  auto r = co_await writer_->Create(slot, ctx, dedup_key,
                                    OneEvent(protocol::kEvTaskSubmitted, std::move(payload)),
                                    replayed, std::move(first_steps));
  if (!r) co_return std::move(r).error();
  RecordPtr created = std::move(r).value();
  // A stream attaches once the task is known: a new task has no execution yet (it starts
  // below), so nothing can be missed; a retried send attaches to the existing task and
  // then re-reads it, so its snapshot covers everything the stream will not see.
  std::shared_ptr<void> detach;  // dropped (detaching) on error
  if (!replayed) {
    std::vector<StreamItemPtr> creation_items;
    if (attach) {
      detach = writer_->Attach(slot, attach);
      std::lock_guard lock(slot->mu);
      creation_items = std::exchange(slot->creation_items, {});
      slot->keep_creation_items = false;
    }
    // A task its creating commit already finished (inline first steps) has nothing to run.
    if (!protocol::IsTerminal(created->task.status.state))
      runs_->Start(slot, created, msg, skill_id, std::nullopt, options_.cluster ? 1 : 0);
    co_return Accepted{std::move(slot), std::move(created), std::move(skill_id), std::move(detach),
                       std::move(creation_items)};
  }
  task_id = created->task.id;
  slot = writer_->Acquire(task_id);
  if (attach) {
    detach = writer_->Attach(slot, attach);
    auto now = co_await reader_->Load(task_id);
    if (!now) co_return std::move(now).error();
    if (now.value()) created = std::make_shared<const storage::TaskRecord>(std::move(*now.value()));
  }
  if (created->skill_id != skill_id ||
      (context_given && created->task.context_id != msg.context_id)) {
    // Not a retry of the same send: a reused messageId.
    co_return Error(ErrorCode::kInvalidParams,
                    "message.messageId '" + msg.message_id + "' was already used for task " +
                        task_id + " (another skill or context); use a new messageId per message",
                    {{"field", "message.messageId"}});
  }
  if (auto& inline_push = req.configuration.push_notification_config) {
    // A retry is applied idempotently: the push config it carries is upserted on the task
    // the first attempt started (a no-op when that attempt wrote it already). A config
    // without an id gets that task's id, as it would have then.
    if (inline_push->id == fresh_id) inline_push->id = task_id;
    inline_push->task_id = task_id;
    {
      std::lock_guard lock(slot->mu);
      slot->pending_push_configs.push_back(InlinePushRecord(task_id, *inline_push, clock_.NowMs()));
    }
    auto pushed = co_await writer_->CommitRecord(slot, {}, false, {});
    if (!pushed) co_return std::move(pushed).error();
    created = std::move(pushed).value();
  }
  co_return Accepted{std::move(slot), std::move(created), std::move(skill_id), std::move(detach)};
}

asio::awaitable<Result<TaskService::Accepted>> TaskService::AcceptReply(
    const CallContext& ctx, protocol::SendMessageRequest& req,
    std::shared_ptr<Subscription> attach) {
  protocol::Message& msg = req.message;
  const std::string task_id = msg.task_id;
  auto stored = co_await reader_->Visible(ctx, task_id);
  if (!stored) co_return std::move(stored).error();
  if (!msg.context_id.empty() && msg.context_id != stored->task.context_id)
    co_return Error(ErrorCode::kInvalidParams,
                    "message.contextId '" + msg.context_id + "' does not match the contextId '" +
                        stored->task.context_id + "' of task " + task_id,
                    {{"field", "message.contextId"}});
  msg.context_id = stored->task.context_id;
  std::string skill_id = stored->skill_id;
  auto slot = writer_->Acquire(task_id);
  // push: vetted now, written with the commit of the reply if it is accepted
  std::optional<storage::PushConfigRecord> push_record;
  if (auto& inline_push = req.configuration.push_notification_config) {
    auto vetted = co_await options_.vet_push_config(*inline_push, task_id);
    if (!vetted) co_return std::move(vetted).error();
    push_record = InlinePushRecord(task_id, *inline_push, clock_.NowMs());
  }
  std::shared_ptr<void> detach;  // dropped (detaching) on error
  if (attach) detach = writer_->Attach(slot, attach);
  // Decided under the task's lock against its newest state. A reply is idempotent by
  // (principal, messageId, parts) (accepted_messages.hpp): a retry of an accepted reply writes
  // nothing and is answered with the task as it is now, whatever its state. Of two
  // different replies racing for one interrupt, one wins; the accepted reply moves the task
  // to working (a2a.message.received on an interrupted task, or the executor's
  // node.resumed).
  Executor* executor = ExecutorFor(skill_id);
  const std::string caller = ctx.caller();
  const protocol::Principal principal = ctx.principal;
  auto resumes = std::make_shared<bool>(true);
  auto retried = std::make_shared<bool>(false);
  const std::optional<int64_t> if_match = req.configuration.if_generation_match;
  auto accept_reply = [&task_id, executor, &msg, &caller, &principal, resumes, retried, slot,
                       if_match, push_record = std::move(push_record)](
                          const storage::TaskRecord& current,
                          std::vector<EventDraft>& step) -> std::optional<Error> {
    switch (FindAcceptedMessage(current, msg, caller)) {
      case PriorMessage::kSame:
        *retried = true;
        step.clear();
        return std::nullopt;
      case PriorMessage::kDifferent:  // another message under a reused messageId
      case PriorMessage::kNone:
        break;
    }
    // ifGenerationMatch (A2A 1.1): the caller's view of the task must be the newest.
    if (const int64_t now = GenerationOf(current.task); if_match && *if_match != now)
      return Error(ErrorCode::kGenerationMismatch,
                   "Task generation mismatch: expected " + std::to_string(*if_match) +
                       " but current generation is " + std::to_string(now),
                   {{"taskId", task_id},
                    {"expectedGeneration", std::to_string(*if_match)},
                    {"currentGeneration", std::to_string(now)}});
    TaskState s = current.task.status.state;
    if (protocol::IsTerminal(s))
      return Error(ErrorCode::kUnsupportedOperation,
                   "task " + task_id + " is " + std::string(protocol::TaskStateLabel(s)) +
                       " and accepts no more messages; start a new task in the same context",
                   {{"taskId", task_id}});
    if (!protocol::IsInterrupted(s) && executor && executor->TakesMessagesWhileWorking()) {
      *resumes = false;  // logged into the history; the running execution goes on
      if (push_record) slot->pending_push_configs.push_back(*push_record);  // under slot->mu
      return std::nullopt;
    }
    if (const json::object* pause = OpenPause(current.run))
      return Error(ErrorCode::kUnsupportedOperation,
                   "task " + task_id + " is " + PausedStateName(*pause) +
                       ": a message does not resume it; resume it with tasks/resume "
                       "(ResumeTask) and its handle, or cancel it",
                   {{"taskId", task_id}, {"reason", "task_paused"}});
    if (!protocol::IsInterrupted(s))
      return Error(ErrorCode::kUnsupportedOperation,
                   "task " + task_id + " is " + std::string(protocol::TaskStateLabel(s)) +
                       ", not waiting for input",
                   {{"taskId", task_id}});
    if (executor) {
      ResolveRequest rr;
      rr.message = &msg;
      rr.caller = caller;
      rr.principal = principal;
      rr.via = "a2a";
      auto resolution = executor->Resolve(current, rr);
      if (!resolution) return std::move(resolution).error();
      *resumes = resolution->resumes && !resolution->changes_nothing;
      if (resolution->changes_nothing) {
        // An answer that changes nothing (the same quorum vote again): written as a retry
        // is, not at all; the reply is the task as it is (with the tally).
        step.clear();
        return std::nullopt;
      }
      if (resolution->explicit_resume || !resolution->resumes) step[0].payload["resumes"] = false;
      for (auto& e : resolution->events) step.push_back(std::move(e));
    }
    if (push_record) slot->pending_push_configs.push_back(*push_record);  // under slot->mu
    return std::nullopt;
  };
  json::object payload{{"message", protocol::MessageToJson(msg)}, {"caller", caller}};
  auto r = co_await writer_->CommitRecord(
      slot, OneEvent(protocol::kEvMessageReceived, std::move(payload)), false, accept_reply);
  if (!r) co_return std::move(r).error();
  RecordPtr after = std::move(r).value();
  // The record's skill: a chooser's task becomes the chosen skill's run here.
  skill_id = after->skill_id;
  if (!*retried && *resumes && !protocol::IsTerminal(after->task.status.state))
    runs_->Start(slot, after, msg, skill_id);
  co_return Accepted{std::move(slot), std::move(after), std::move(skill_id), std::move(detach)};
}

// ---- pausing (PauseControl, pause.cpp) -----------------------------------------------------

asio::awaitable<Result<RecordPtr>> TaskService::PauseTask(const CallContext& ctx,
                                                          PauseTaskRequest req) {
  co_return co_await pauses_->Pause(ctx, std::move(req));
}

asio::awaitable<Result<RecordPtr>> TaskService::ResumeTask(const CallContext& ctx,
                                                           ResumeTaskRequest req) {
  co_return co_await pauses_->Resume(ctx, std::move(req));
}

asio::awaitable<Result<std::vector<std::string>>> TaskService::PostEvent(const CallContext& ctx,
                                                                         std::string name,
                                                                         json::value payload) {
  co_return co_await pauses_->PostEvent(ctx, std::move(name), std::move(payload));
}

// ---- tasks/cancel --------------------------------------------------------------------------

asio::awaitable<Result<Task>> TaskService::CancelTask(const CallContext& ctx,
                                                      protocol::CancelTaskRequest req) {
  co_return co_await CancelRun(ctx, req.id, "canceled by the client");
}

}  // namespace a2ad::tasks
