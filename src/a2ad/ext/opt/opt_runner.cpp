#include "a2ad/ext/opt/opt_runner.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <vector>

#include "a2ad/core/log.hpp"

namespace a2ad::ext::opt {
namespace asio = boost::asio;
using core::ErrorCode;

namespace {
constexpr size_t kBatch = 256;  // rows read at a time
}  // namespace

struct OptRunner::State : std::enable_shared_from_this<OptRunner::State> {
  OptStore& store;
  tasks::TaskService& service;
  asio::any_io_executor io;
  const core::Clock& clock;
  std::chrono::milliseconds sweep;
  const std::string claimant;  // OptStore::Claimant()
  asio::strand<asio::any_io_executor> strand;
  asio::steady_timer timer;
  bool woken = false;  // on the strand
  std::atomic<bool> stopping{false};
  std::mutex mu;
  std::set<std::string> in_flight;  // "<kind>\n<run id>"

  State(OptStore& s, tasks::TaskService& svc, const asio::any_io_executor& ex, const core::Clock& c,
        std::chrono::milliseconds every)
      : store(s),
        service(svc),
        io(ex),
        clock(c),
        sweep(every),
        claimant(s.Claimant()),
        strand(asio::make_strand(ex)),
        timer(strand) {}

  static std::string Key(const RunAction& a) {
    return (a.kind == RunAction::Kind::kStart ? "start\n" : "cancel\n") + a.run_id;
  }

  void Wake() {
    asio::post(strand, [self = shared_from_this()] {
      self->woken = true;
      self->timer.cancel();
    });
  }

  asio::awaitable<void> Loop() {
    auto self = shared_from_this();
    while (!stopping) {
      auto pending = co_await store.ClaimActions(claimant, clock.NowMs(), kBatch);
      if (!pending) {
        core::LogWarn("opt: the run outbox could not be read: " + pending.error().message);
      } else {
        for (RunAction& a : pending.value()) {
          {
            std::lock_guard lock(mu);
            if (!in_flight.insert(Key(a)).second) continue;
          }
          asio::co_spawn(io, Do(std::move(a)), asio::detached);
        }
      }
      // Sleep until woken or the sweep (on the strand, where Wake lands).
      co_await asio::post(strand, asio::use_awaitable);
      if (!woken) {
        timer.expires_after(sweep);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      woken = false;
    }
  }

  asio::awaitable<void> Do(RunAction a) {
    auto self = shared_from_this();
    protocol::CallContext ctx;
    ctx.principal.id = a.owner;
    ctx.principal.tenant = a.tenant;
    ctx.binding = protocol::Binding::kInternal;
    std::optional<std::string> failed;
    bool done = false;
    if (a.kind == RunAction::Kind::kStart) {
      tasks::StartRunRequest req;
      req.skill_id = a.skill;
      req.inputs = a.inputs;
      req.run_id = a.run_id;
      req.context_id = a.objective_id;
      req.task_metadata = a.task_metadata;
      req.transport = "opt";
      req.first_steps_inline = true;  // a run that finishes at once is one commit
      auto started = co_await service.StartRun(ctx, std::move(req));
      if (started) {
        // Its creating commit took the row off already, unless it existed before.
        done = started->replayed;
      } else if (started.error().code == ErrorCode::kInvalidParams ||
                 started.error().code == ErrorCode::kUnsupportedOperation) {
        failed = "the run could not be started: " + started.error().message;
        done = true;
      } else if (started.error().code != ErrorCode::kUnavailable) {
        core::LogWarn("opt: run " + a.run_id + " of plan task " + a.plan_task_id +
                      " not started yet: " + started.error().message);
      }
    } else {
      auto canceled = co_await service.CancelRun(ctx, a.run_id, "its plan or objective was ended");
      if (canceled) {
        done = true;
      } else {
        const ErrorCode code = canceled.error().code;
        done = code == ErrorCode::kTaskNotCancelable || code == ErrorCode::kTaskNotFound;
        if (!done && code != ErrorCode::kUnavailable)
          core::LogWarn("opt: run " + a.run_id + " not canceled yet: " + canceled.error().message);
      }
    }
    if (done) {
      auto removed = co_await store.ActionDone(a, std::move(failed), clock.NowMs());
      if (!removed) core::LogWarn("opt: outbox row of run " + a.run_id + ": " + removed.error().message);
    }
    {
      std::lock_guard lock(mu);
      in_flight.erase(Key(a));
    }
  }
};

OptRunner::OptRunner(OptStore& store, tasks::TaskService& service, const asio::any_io_executor& io,
                     const core::Clock& clock, std::chrono::milliseconds sweep)
    : state_(std::make_shared<State>(store, service, io, clock, sweep)) {}

void OptRunner::Start() { asio::co_spawn(state_->strand, state_->Loop(), asio::detached); }

void OptRunner::Wake() { state_->Wake(); }

void OptRunner::Stop() {
  state_->stopping = true;
  state_->Wake();
}

}  // namespace a2ad::ext::opt
