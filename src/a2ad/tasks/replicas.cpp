// Several replicas on one database (storage/cluster.hpp): what TaskService does with another
// replica's commits (the change feed) and with the runs it takes over.
//
// A commit of another replica reaches this one as (task id, sequence) on the feed. Nothing is
// done for a task nobody here follows. For one that is followed (a stream, a wait, an
// execution), the task is read back and published like a commit of this process: streams get
// the commits between from the log (TaskWriter::Publish makes them late), waits are woken, the head
// to build on is read again, and an execution whose run was ended elsewhere (a cancel) stops.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <mutex>
#include <string>
#include <unordered_set>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/stored_records.hpp"
#include "a2ad/tasks/executions.hpp"
#include "a2ad/tasks/read_executor.hpp"
#include "a2ad/tasks/task_reader.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/tasks/task_writer.hpp"

namespace a2ad::tasks {
namespace asio = boost::asio;
using protocol::TaskState;

void TaskService::ObserveCommit(const std::string& task_id, int64_t sequence) {
  auto slot = writer_->Find(task_id);
  if (!slot) return;
  bool behind = true;
  {
    // On what the streams and waits were handed (`fanned`), not on `published`, which reads
    // from the store move on (TaskWriter::Seed) without handing anything.
    std::lock_guard pub(slot->pub_mu);
    behind = !(slot->fanned && slot->fanned->last_sequence >= sequence);
  }
  // A commit that leaves the sequence where it was carries a push config alone: only what
  // lives beside the task is read again.
  if (behind) {
    ++slot->failures;  // the head to build on is older than the store's: read it again
    slot->stale = true;
  } else if (!options_.refresh_task) {
    return;
  }
  const auto io = slot->io;  // (read before the move below: argument order is unspecified)
  asio::co_spawn(io, CatchUp(std::move(slot), behind), asio::detached);
}

void TaskService::Resync() {
  if (options_.refresh_all) options_.refresh_all();  // (the feed's thread)
  for (auto& slot : writer_->Live()) {
    const auto io = slot->io;
    asio::co_spawn(io, CatchUp(std::move(slot), true), asio::detached);
  }
}

asio::awaitable<void> TaskService::CatchUp(std::shared_ptr<Slot> slot, bool records) {
  if (options_.refresh_task) {  // (a push config set there, before this replica's next commit)
    const std::string& id = slot->task_id;
    (void)co_await reads_->Run([this, &id]() -> core::Result<bool> {
      options_.refresh_task(id);
      return true;
    });
  }
  if (!records) co_return;
  auto stored = co_await reader_->Load(slot->task_id);
  if (!stored || !stored.value()) co_return;
  auto record = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
  RecordPtr before;
  {
    std::lock_guard pub(slot->pub_mu);
    if (slot->fanned && slot->fanned->last_sequence >= record->last_sequence) co_return;
    before = slot->fanned;
  }
  ++slot->failures;
  slot->stale = true;
  writer_->Publish(slot, record, {}, before, before ? before->last_sequence : -1);
  if (protocol::IsTerminal(record->task.status.state)) {  // cancelled elsewhere: stop here
    slot->cancel_requested = true;
    slot->WakeSleepers();
  }
}

namespace {

// Whether this process gives `task_id` up for the first time (a bounded memory: it forgets
// everything past 10,000 runs, and then says them once more).
bool FirstTimeGivenUp(const std::string& task_id) {
  static std::mutex mu;
  static std::unordered_set<std::string> said;
  std::lock_guard lock(mu);
  if (said.size() >= 10000) said.clear();
  return said.insert(task_id).second;
}

}  // namespace

size_t TaskService::Adopt(const std::vector<storage::Cluster::Claimed>& claimed) {
  size_t started = 0;
  for (const auto& c : claimed) {
    auto stored = store_.Get(c.task_id);
    if (!stored) {  // given up again: the next look (here or elsewhere) takes it
      core::LogWarn("takeover of run " + c.task_id + ": " + stored.error().message);
      (void)options_.cluster->Abandon(c.task_id, c.epoch);
      continue;
    }
    if (!stored.value()) continue;
    auto rec = std::make_shared<const storage::TaskRecord>(std::move(*stored.value()));
    const TaskState state = rec->task.status.state;
    Executor* ex = ExecutorFor(rec->skill_id);
    const protocol::Message* trigger = LastUserMessage(rec->task);
    if (protocol::IsTerminal(state)) {
      (void)options_.cluster->Release(c.task_id, c.epoch);
      continue;
    }
    if (!ex) {  // a skill this replica does not serve (a rolling deploy): for one that does
      const std::string why = "takeover of run " + c.task_id + ": skill '" + rec->skill_id +
                              "' is not served here; given up for another replica";
      // While no replica serves it, the run comes back at every look: said once per process.
      if (FirstTimeGivenUp(c.task_id)) core::LogWarn(why + " (said once)");
      else core::LogDebug(why);
      (void)options_.cluster->Abandon(c.task_id, c.epoch);
      continue;
    }
    if (!trigger) continue;
    // Parked: no execution until it is answered (the replica answering it takes it then) or
    // due; the lease stays here. The wake timer here reads the times of the runs leased here;
    // one due already is started now (the timer may have looked past its time).
    if (std::optional<int64_t> until = storage::ParkedUntil(rec->run)) {
      const bool timed = *until > 0 && ex->WakesParked();
      const bool due = timed && *until <= clock_.NowMs();
      if (timed && !due) NoteWake(*until);
      if (!due) continue;
    }
    core::LogInfo("takeover: run " + c.task_id + " of replica " +
                  (c.from.empty() ? std::string("(none)") : c.from) + " is executed by " +
                  options_.cluster->holder() + " from its last committed step (lease epoch " +
                  std::to_string(c.epoch) + ")");
    if (options_.refresh_task) options_.refresh_task(c.task_id);
    auto slot = writer_->Acquire(c.task_id);
    ++slot->failures;
    slot->stale = true;
    slot->Supersede();  // an execution here of an older lease ends
    runs_->Start(slot, rec, *trigger, rec->skill_id, std::nullopt, c.epoch);
    ++started;
  }
  return started;
}

}  // namespace a2ad::tasks
