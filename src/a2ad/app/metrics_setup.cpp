#include "a2ad/app/metrics_setup.hpp"

#include <chrono>

#include "a2ad/core/log.hpp"
#include "a2ad/core/metrics.hpp"
#include "a2ad/push/delivery_worker.hpp"
#include "a2ad/storage/postgres/pg_backend.hpp"
#include "a2ad/transport/http/sse_pump.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/v03/codec.hpp"
#include "a2ad/tasks/read_executor.hpp"

namespace a2ad::app {
namespace asio = boost::asio;
using core::Metrics;
using Type = core::MetricsRegistry::Type;

std::function<void(size_t, double)> StoreBatchObserver() {
  auto& commits = Metrics().Family("a2ad_store_batch_commits", Type::kHistogram,
                                   "Task commits written together in one transaction of the store's writer.",
                                   {}, {1, 2, 4, 8, 16, 32, 64, 128, 256});
  auto& seconds = Metrics().Family("a2ad_store_batch_seconds", Type::kHistogram,
                                   "Time to write one batch of task commits (to its COMMIT).", {},
                                   core::LatencyBuckets());
  return [&commits, &seconds](size_t n, double s) {
    commits.Observe({}, static_cast<double>(n));
    seconds.Observe({}, s);
  };
}

std::function<asio::awaitable<std::string>()> SetUpMetrics(storage::Backend& db,
                                                            const tasks::TaskService& service,
                                                            const std::string& version) {
  auto& info = Metrics().Family("a2ad_build_info", Type::kGauge,
                                "The a2ad build serving (its version label); always 1.", {"version"});
  info.Set({version}, 1);
  auto& start = Metrics().Family("a2ad_start_time_seconds", Type::kGauge,
                                 "When this process started, in seconds since the epoch.");
  start.Set({}, static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count()));
  auto& tasks = Metrics().Family("a2ad_tasks", Type::kGauge,
                                 "Stored tasks (runs) by A2A state, read at scrape time.", {"state"});
  auto& events = Metrics().Family("a2ad_task_events", Type::kGauge,
                                  "Rows of the task event log (after retention), read at scrape time.");
  auto& outbox = Metrics().Family("a2ad_push_outbox", Type::kGauge,
                                  "Push outbox rows waiting to be delivered (pending) or given up "
                                  "(dead), read at scrape time.",
                                  {"state"});
  auto& running = Metrics().Family(
      "a2ad_executions_running", Type::kGauge,
      "Runs this process is executing now, read at scrape time; a run parked at a gate or a "
      "pause holds none (its answer, resume or wake time starts one).");
  Metrics().OnScrape([&service, &running] {
    running.Set({}, static_cast<double>(service.running_executions()));
  });
  // Series that exist from the start, at zero (one that appears later confuses rate()).
  transport::StreamsOpen().Set({}, 0);
  for (const char* outcome : {"delivered", "failed", "dead"}) push::PushAttempts().Add({outcome}, 0);
  // Every state a row is shown for, zero included.
  Metrics().OnScrape([&db, &tasks, &events, &outbox] {
    auto counts = db.Count();
    if (!counts) {
      core::LogWarn("metrics: " + counts.error().message);
      return;
    }
    using protocol::TaskState;
    for (TaskState s : {TaskState::kSubmitted, TaskState::kWorking, TaskState::kInputRequired,
                        TaskState::kAuthRequired, TaskState::kCompleted, TaskState::kFailed,
                        TaskState::kCanceled, TaskState::kRejected}) {
      auto it = counts->tasks_by_state.find(static_cast<int64_t>(s));
      tasks.Set({protocol::TaskStateLabel(s)},
                it == counts->tasks_by_state.end() ? 0.0 : static_cast<double>(it->second));
    }
    events.Set({}, static_cast<double>(counts->events));
    outbox.Set({"pending"}, static_cast<double>(counts->outbox_pending));
    outbox.Set({"dead"}, static_cast<double>(counts->outbox_dead));
  });
  if (auto* pg = dynamic_cast<storage::PostgresBackend*>(&db)) {
    auto& conns = Metrics().Family("a2ad_db_pool_connections", Type::kGauge,
                                   "PostgreSQL connections of the read pool, by use.", {"state"});
    auto& waits = Metrics().Family("a2ad_db_pool_waits", Type::kGauge,
                                   "Reads that waited for a pooled PostgreSQL connection, since start.");
    auto& errors = Metrics().Family("a2ad_db_errors", Type::kGauge,
                                    "PostgreSQL statements and connections that failed, since start.");
    Metrics().OnScrape([pg, &conns, &waits, &errors] {
      const auto p = pg->postgres().Pool();
      conns.Set({"in_use"}, static_cast<double>(p.in_use));
      conns.Set({"idle"}, static_cast<double>(p.open - p.in_use));
      waits.Set({}, static_cast<double>(p.waits));
      errors.Set({}, static_cast<double>(p.errors));
    });
  }
  // The scrape reads the database: on a thread of its own, never an I/O thread.
  auto reads = std::make_shared<tasks::ReadExecutor>(1);
  return [reads]() -> asio::awaitable<std::string> {
    auto text = co_await reads->Run([]() -> core::Result<std::string> { return Metrics().Expose(); });
    co_return text ? std::move(text).value() : std::string();
  };
}

}  // namespace a2ad::app
