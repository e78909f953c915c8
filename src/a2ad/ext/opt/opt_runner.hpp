#pragma once
// OptRunner: executes plans (docs/OPT.md, "Execution"). It works OptStore's outbox: each row
// asks for the run of a plan task to be started (TaskService::StartRun with the run id the
// row names, derived from the plan task's id, so a start made twice is one run) or canceled
// (TaskService::CancelRun). A start row disappears in the transaction that creates its run
// (the commit participant, opt_follow.cpp); a start that cannot be made (the workflow is gone,
// its inputs are refused) fails its plan task with the reason; a cancel row goes once the run
// is canceled or finished. So after a SIGKILL anywhere, the rows left are exactly the runs
// still to start or cancel, and Start() does them.
//
// The runs start in the objective's tenant as its owner, with contextId = the objective's id
// and the opt/v1/* keys in their task's metadata. Rows are worked concurrently (independent
// tasks start together); a row in flight is not taken again, and rows are claimed
// (OptStore::ClaimActions) so another replica does not work them meanwhile. The outbox is read when
// woken (OptStore's listener) and every few seconds besides (a transient failure is retried then).
//
// Thread safety: Wake may be called from any thread; Start and Stop from the app's thread.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "a2ad/core/clock.hpp"
#include "a2ad/ext/opt/opt_store.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::ext::opt {

class OptRunner {
 public:
  /// `store` and `service` outlive the runner's loop (it runs on `io`).
  OptRunner(OptStore& store, tasks::TaskService& service, const boost::asio::any_io_executor& io,
            const core::Clock& clock,
            std::chrono::milliseconds sweep = std::chrono::milliseconds(5000));

  /// Starts working the outbox, beginning with what it holds from before a restart.
  void Start();
  /// The outbox has new rows.
  void Wake();
  /// Stops taking rows (the ones in flight finish or are left for the next start).
  void Stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace a2ad::ext::opt
