// Executions (executions.hpp): the ExecutionContext an executor gets (commits, durable
// sleeps, cancel), starting an execution on its own strand (a throwing executor fails its
// task), re-driving runs, recovery after a restart, nudges and the wake timer.
#include "a2ad/tasks/executions.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <optional>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/tasks/pause.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/task_reader.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/tasks/task_writer.hpp"
#include "a2ad/tasks/wake_timer.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using protocol::Task;
using protocol::TaskState;

class Executions::Context final : public ExecutionContext {
 public:
  Context(Executions& owner, std::shared_ptr<TaskSlot> slot, RecordPtr record,
          protocol::Message message, std::string skill_id, uint64_t epoch, int64_t lease_epoch)
      : owner_(owner),
        epoch_(epoch),
        lease_epoch_(lease_epoch),
        slot_(std::move(slot)),
        record_(std::move(record)),
        message_(std::move(message)),
        skill_id_(std::move(skill_id)),
        call_(RunCallContext(*record_)) {}
  const std::string& task_id() const override { return slot_->task_id; }
  const std::string& skill_id() const override { return skill_id_; }
  const Task& task() const override { return record_->task; }
  const storage::TaskRecord& record() const override { return *record_; }
  const protocol::Message& message() const override { return message_; }
  asio::awaitable<Result<Task>> Commit(std::vector<EventDraft> step) override {
    auto r = co_await owner_.writer_->CommitStep(slot_, std::move(step), lease_epoch_);
    if (!r) NoteFailure(r.error());
    co_return r;
  }
  // A step of a superseded execution is refused; so is one a pause does not admit
  // (pause.hpp PauseAdmits): reason "paused", and the executor parks.
  asio::awaitable<Result<RecordPtr>> Apply(std::vector<EventDraft> step) override {
    auto slot = slot_;
    const uint64_t epoch = epoch_;
    auto admit = [slot, epoch](const storage::TaskRecord& head,
                               std::vector<EventDraft>& s) -> std::optional<Error> {
      if (slot->epoch.load() != epoch)
        return Error(ErrorCode::kUnsupportedOperation, "a newer execution drives this run",
                     {{"reason", "superseded"}});
      if (!PauseAdmits(head.run, s))
        return Error(ErrorCode::kUnsupportedOperation, "the run is paused", {{"reason", "paused"}});
      return std::nullopt;
    };
    auto r = co_await owner_.writer_->CommitRecord(slot_, std::move(step), false, admit, {},
                                                   lease_epoch_);
    if (!r) NoteFailure(r.error());
    co_return r;
  }
  asio::awaitable<bool> SleepUntil(int64_t epoch_ms) override {
    return Sleep(epoch_ms, std::nullopt);
  }
  asio::awaitable<bool> SleepUntilNudged(int64_t epoch_ms, std::string key) override {
    return Sleep(epoch_ms, std::move(key));
  }
  bool WakeLater(int64_t epoch_ms) override {
    return epoch_ms > owner_.clock_.NowMs() && owner_.NoteWake(epoch_ms);
  }
  asio::awaitable<bool> Sleep(int64_t epoch_ms, std::optional<std::string> key) {
    auto signal = std::make_shared<Signal>();
    {
      std::lock_guard lock(slot_->sleep_mu);
      if (cancel_requested()) co_return false;
      slot_->sleepers.push_back(signal);
      if (key) slot_->nudgeable.emplace_back(std::move(*key), signal);
    }
    const int64_t left = epoch_ms - owner_.clock_.NowMs();
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
      std::erase_if(slot_->nudgeable, [&](const auto& n) { return n.second == signal; });
    }
    co_return !cancel_requested();
  }
  asio::awaitable<bool> HoldsRun() override {
    if (lease_epoch_ == 0 || !owner_.options_.cluster) co_return true;
    const std::string& id = slot_->task_id;
    const int64_t lease = lease_epoch_;
    storage::Cluster* cluster = owner_.options_.cluster;
    auto ask = [cluster, &id, lease]() -> Result<bool> { return cluster->Holds(id, lease); };
    auto held = co_await owner_.reads_->Run(ask);
    if (!held) {  // the database cannot say: stop, and execute the run again once it can
      store_failed_ = true;
      co_return false;
    }
    if (!held.value())
      core::LogInfo("run " + id + ": its lease (epoch " + std::to_string(lease) +
                    ") was taken over by another replica; this execution stops before calling "
                    "out");
    co_return held.value();
  }
  /// A cancel, or a newer execution (Slot::Supersede): stop.
  bool cancel_requested() const override {
    return slot_->cancel_requested.load() || slot_->epoch.load() != epoch_;
  }
  const protocol::CallContext& call_context() const override { return call_; }
  int64_t lease_epoch() const { return lease_epoch_; }
  uint64_t epoch() const { return epoch_; }
  /// A commit failed because the store could not be reached (a database outage): the
  /// execution stops there, and is started again once it can be (RedriveLater).
  bool store_failed() const { return store_failed_.load(); }
  void NoteFailure(const Error& e) {
    if (e.code == ErrorCode::kUnavailable) store_failed_ = true;
  }

 private:
  Executions& owner_;
  const uint64_t epoch_;
  const int64_t lease_epoch_;  // the run's lease (storage/cluster.hpp); 0: no leases
  std::atomic<bool> store_failed_{false};
  std::shared_ptr<TaskSlot> slot_;
  RecordPtr record_;
  protocol::Message message_;
  std::string skill_id_;
  const protocol::CallContext call_;  // the run's own: its tenant and owner
};

Executions::Executions(asio::any_io_executor io, storage::TaskStore& store,
                       const core::Clock& clock, TaskWriter& writer, TaskReader& reader,
                       ReadExecutor& reads, ExecutorFor executor_for, Options options)
    : io_(std::move(io)),
      store_(store),
      clock_(clock),
      writer_(&writer),
      reader_(&reader),
      reads_(&reads),
      executor_for_(std::move(executor_for)),
      options_(std::move(options)) {}

Executions::~Executions() { StopWakes(); }  // the loop ends without touching this

void Executions::Spawn(asio::awaitable<void> work) {
  ++running_;
  asio::co_spawn(io_, std::move(work), [this](const std::exception_ptr&) { --running_; });
}

void Executions::Start(std::shared_ptr<TaskSlot> slot, RecordPtr rec,
                       const protocol::Message& message, const std::string& skill_id,
                       std::optional<uint64_t> epoch, int64_t lease_epoch,
                       std::shared_ptr<void> hold) {
  Executor* executor = executor_for_(skill_id);
  if (!executor) {
    core::LogError("task " + rec->task.id + " names unknown skill '" + skill_id +
                   "'; not executed");
    return;
  }
  const uint64_t in_epoch = epoch ? *epoch : slot->epoch.load();
  // Several replicas: the run is executed here from now on; an execution elsewhere is fenced
  // off (its next commit is refused). The lease is taken off the I/O thread; the execution
  // counts from now (a drain waits for it, a redrive leaves the run to it).
  if (options_.cluster && lease_epoch == 0) {
    ++running_;
    ++slot->executions;
    const auto io = slot->io;  // (read before the move below)
    asio::co_spawn(io,
                   TakeLeaseThenLaunch(std::move(slot), std::move(rec), message, skill_id, in_epoch,
                                       std::move(hold)),
                   asio::detached);
    return;
  }
  Launch(*executor, std::move(slot), std::move(rec), message, skill_id, in_epoch, lease_epoch,
         false, std::move(hold));
}

asio::awaitable<void> Executions::TakeLeaseThenLaunch(std::shared_ptr<TaskSlot> slot, RecordPtr rec,
                                                      protocol::Message message,
                                                      std::string skill_id, uint64_t in_epoch,
                                                      std::shared_ptr<void> hold) {
  const std::string& id = rec->task.id;
  auto taken = co_await reads_->Run([this, &id]() -> Result<int64_t> {
    auto lease = options_.cluster->Acquire(id);
    if (lease && options_.refresh_task) options_.refresh_task(id);  // set on another replica?
    return lease;
  });
  if (!taken) {  // tried again once the database answers (RedriveIfStopped takes it then)
    --slot->executions;
    --running_;
    core::LogWarn("run " + id + " not executed yet: " + taken.error().message);
    if (accepting_) RedriveLater(slot, in_epoch, 0, skill_id, 0);
    co_return;
  }
  Launch(*executor_for_(skill_id), std::move(slot), std::move(rec), message, skill_id, in_epoch,
         taken.value(), true, std::move(hold));
}

void Executions::Launch(Executor& executor, std::shared_ptr<TaskSlot> slot, RecordPtr rec,
                        const protocol::Message& message, const std::string& skill_id,
                        uint64_t in_epoch, int64_t lease_epoch, bool counted,
                        std::shared_ptr<void> hold) {
  auto ctx = std::make_shared<Context>(*this, slot, std::move(rec), message, skill_id, in_epoch,
                                       lease_epoch);
  if (!counted) {
    ++running_;
    ++slot->executions;
  }
  asio::co_spawn(
      asio::make_strand(io_), executor.Execute(ctx),
      [this, ctx, slot = std::move(slot), hold = std::move(hold)](const std::exception_ptr& ep) {
        (void)hold;  // released with this handler, once the execution ended
        --slot->executions;
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
          asio::co_spawn(io_,
                         writer_->CommitStep(
                             slot, OneEvent(protocol::kEvRunFailed, {{"error", std::move(error)}}),
                             ctx->lease_epoch()),
                         [this](const std::exception_ptr&, const Result<Task>&) { --running_; });
          return;
        }
        --running_;
        if (ctx->store_failed() && accepting_)
          RedriveLater(slot, ctx->epoch(), ctx->lease_epoch(), ctx->skill_id(), 0);
      });
}

void Executions::RedriveLater(std::shared_ptr<TaskSlot> slot, uint64_t epoch, int64_t lease_epoch,
                              std::string skill_id, int attempt) {
  auto timer = std::make_shared<asio::steady_timer>(
      io_,
      std::chrono::milliseconds(std::min<int64_t>(int64_t{500} << std::min(attempt, 6), 30000)));
  timer->async_wait([this, timer, slot = std::move(slot), epoch, lease_epoch,
                     skill_id = std::move(skill_id),
                     attempt](boost::system::error_code ec) mutable {
    if (ec || !accepting_) return;
    asio::co_spawn(
        io_, RedriveIfStopped(std::move(slot), epoch, lease_epoch, std::move(skill_id), attempt),
        asio::detached);
  });
}

asio::awaitable<void> Executions::RedriveIfStopped(std::shared_ptr<TaskSlot> slot, uint64_t epoch,
                                                   int64_t lease_epoch, std::string skill_id,
                                                   int attempt) {
  // Another execution drives the run now (a resume, an answer, a takeover): nothing to do.
  if (slot->epoch.load() != epoch || slot->executions.load() > 0) co_return;
  auto stored = co_await reader_->Load(slot->task_id);
  if (!stored) {  // still unreachable: later
    RedriveLater(std::move(slot), epoch, lease_epoch, std::move(skill_id), attempt + 1);
    co_return;
  }
  if (!stored.value() || protocol::IsTerminal(stored.value()->task.status.state)) co_return;
  if (slot->epoch.load() != epoch || slot->executions.load() > 0) co_return;
  auto rec = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
  const protocol::Message* trigger = LastUserMessage(rec->task);
  if (!trigger) co_return;
  core::LogInfo("run " + slot->task_id + ": executed again from its last committed step (a " +
                "commit had failed: the store could not be reached)");
  ++slot->failures;
  slot->stale = true;
  Start(slot, rec, *trigger, skill_id, epoch, lease_epoch);
}

namespace {

// Executor::AfterCancel, then the claim on the ended run given up (on a worker thread: a
// database round trip).
asio::awaitable<void> ResendCancels(Executor* ex, RecordPtr rec, storage::Cluster* cluster,
                                    ReadExecutor* reads, std::optional<int64_t> claim) {
  co_await ex->AfterCancel(rec);
  if (!claim) co_return;
  const std::string id = rec->task.id;
  const int64_t epoch = *claim;
  Result<void> released =
      co_await reads->Run([cluster, &id, epoch] { return cluster->Release(id, epoch); });
  if (!released) core::LogWarn("run " + id + ": giving its claim up: " + released.error().message);
}

}  // namespace

Result<size_t> Executions::RecoverUnfinished(bool runs) {
  // The runs in flight (a parked run is not listed: it needs no execution until it is
  // answered, resumed or due). Collected first, then started: a started run creates child
  // runs, which the listing must not find and start a second time.
  std::vector<storage::TaskRecord> unfinished;
  // Without `runs`, none: the runs are adopted by their leases (several replicas).
  for (std::string after; runs;) {
    auto page = store_.ListRunnable(after, 256);
    if (!page) return std::move(page).error();
    for (const auto& id : page->unreadable)  // the store logged why; the rest recovers
      core::LogWarn("recovery: task " + id + " is skipped: its stored record does not read");
    for (auto& rec : page->records) unfinished.push_back(std::move(rec));
    if (page->next_page_token.empty()) break;
    after = std::move(page->next_page_token);
  }
  size_t n = 0;
  for (const auto& rec : unfinished) {
    const protocol::Message* trigger = LastUserMessage(rec.task);
    if (!trigger) continue;  // (an unknown skill: Start says so)
    Start(writer_->Acquire(rec.task.id), std::make_shared<const storage::TaskRecord>(rec), *trigger,
          rec.skill_id);
    ++n;
  }
  // Cancelled tasks whose work outside the host may not have been stopped: a crash between
  // the cancel's commit and AfterCancel, or a peer that was down then. AfterCancel looks at
  // the run's log and asks only for what is still in flight there.
  storage::TaskQuery q;
  q.all_tenants = true;
  q.state = TaskState::kCanceled;
  q.updated_at_or_after_ms = clock_.NowMs() - options_.after_cancel_recovery.count();
  q.page_size = 100;
  for (;;) {
    auto page = store_.List(q);
    if (!page) return std::move(page).error();
    for (auto& rec : page->records) {
      Executor* ex = executor_for_(rec.skill_id);
      if (!ex) continue;
      // Several replicas starting at once: one resends a run's cancels at a time; the claim
      // (the ended run's lease) lasts while its replica lives and is given up after.
      std::optional<int64_t> claim;
      if (storage::Cluster* cluster = options_.cluster) {
        auto got = cluster->ClaimIdle(rec.task.id);
        if (!got) {
          core::LogWarn("recovery: task " + rec.task.id +
                        ": its peers' cancels are not resent here: " + got.error().message);
          continue;
        }
        if (!got.value()) continue;  // another live replica is resending them
        claim = got.value();
      }
      Spawn(ResendCancels(ex, std::make_shared<const storage::TaskRecord>(rec), options_.cluster,
                          reads_, claim));
    }
    if (page->next_page_token.empty()) break;
    q.page_token = page->next_page_token;
  }
  return n;
}

void Executions::Nudge(const std::string& task_id, const std::string& key, bool forward) {
  bool woke = false;
  if (auto slot = writer_->Find(task_id)) {
    std::lock_guard lock(slot->sleep_mu);
    for (auto& [k, signal] : slot->nudgeable)
      if (k == key) {
        signal->Fire();
        woke = true;
      }
  }
  if (woke || !forward || !options_.cluster) return;
  // Several replicas: the run may sleep on another one.
  asio::co_spawn(io_, ForwardNudge(task_id, key), asio::detached);
}

asio::awaitable<void> Executions::ForwardNudge(std::string task_id, std::string key) {
  auto sent = co_await reads_->Run([this, &task_id, &key]() -> Result<bool> {
    auto r = options_.cluster->Nudge(task_id, key);
    if (!r) return std::move(r).error();
    return true;
  });
  if (!sent)
    core::LogWarn("nudge of run " + task_id +
                  " not handed to the other replicas (it wakes at its "
                  "next timer): " +
                  sent.error().message);
}

// ---- the wake timer (wake_timer.hpp) ----------------------------------------------------

void Executions::StartWakes() {
  if (wakes_) return;
  wakes_ = std::make_shared<WakeTimer>(
      io_, store_, clock_, *reads_, options_.cluster ? options_.cluster->holder() : std::string(),
      [this](const WakeTimer& timer, storage::Wake wake, std::shared_ptr<void> running) {
        return WakeRun(timer, std::move(wake), std::move(running));
      });
  wakes_->Start();
}

void Executions::StopWakes() {
  if (wakes_) wakes_->Stop();
}

void Executions::StopAccepting() {
  accepting_ = false;
  StopWakes();
}

bool Executions::NoteWake(int64_t at_ms) { return wakes_ && wakes_->Note(at_ms); }

asio::awaitable<Result<void>> Executions::WakeRun(const WakeTimer& timer, storage::Wake wake,
                                                  std::shared_ptr<void> running) {
  auto stored = co_await reader_->Load(wake.task_id);
  if (timer.stopped()) co_return core::Ok{};  // (this may be gone: touch nothing)
  if (!stored) {
    core::LogWarn("wake timer: run " + wake.task_id + " cannot be read: " + stored.error().message);
    co_return std::move(stored).error();
  }
  if (!stored.value()) co_return core::Ok{};  // deleted meanwhile
  auto rec = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
  if (protocol::IsTerminal(rec->task.status.state)) co_return core::Ok{};
  // Answered or resumed meanwhile: its execution drives it, or it waits for a later time.
  const std::optional<int64_t> until = storage::ParkedUntil(rec->run);
  if (!until || *until <= 0 || *until > clock_.NowMs()) co_return core::Ok{};
  Executor* ex = executor_for_(rec->skill_id);
  const protocol::Message* trigger = LastUserMessage(rec->task);
  if (!ex || !ex->WakesParked() || !trigger) co_return core::Ok{};
  Start(writer_->Acquire(wake.task_id), rec, *trigger, rec->skill_id, std::nullopt,
        wake.lease_epoch, std::move(running));
  co_return core::Ok{};
}

void Executions::Redrive(const std::shared_ptr<TaskSlot>& slot, const RecordPtr& rec) {
  const uint64_t epoch = slot->Supersede();
  if (protocol::IsTerminal(rec->task.status.state)) return;
  const protocol::Message* m = LastUserMessage(rec->task);
  Start(slot, rec, m ? *m : protocol::Message{}, rec->skill_id, epoch);
}

}  // namespace a2ad::tasks
