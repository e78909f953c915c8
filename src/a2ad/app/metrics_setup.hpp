#pragma once
// The metrics a2ad exposes at GET /metrics (issue 18; core/metrics.hpp), declared in one place
// so the list is readable (docs: docs/REFERENCE.md "Metrics"):
//   a2ad_http_requests_total{operation,status}        counter: requests answered
//   a2ad_http_request_duration_seconds{operation}     histogram: time to the answer (a stream:
//                                                      to its head)
//   a2ad_streams_open                                  gauge: SSE and gRPC streams being served
//   a2ad_tasks{state}                                  gauge: stored tasks (runs) by A2A state
//   a2ad_task_events                                   gauge: rows of the event log
//   a2ad_store_batch_commits / _seconds                histograms: commits per writer batch,
//                                                      the time to write one
//   a2ad_push_attempts_total{outcome}                 counter: delivered, failed, dead
//   a2ad_push_outbox{state}                            gauge: pending and dead rows
//   a2ad_build_info{version}, a2ad_start_time_seconds
// The gauges read from the database are read at each scrape, off the I/O threads.
//
// Thread safety: the endpoint may be called from any I/O thread.
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <string>

#include "a2ad/storage/backend.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::app {

/// Declares the families, registers the database gauges over `db` and the executions of
/// `service` (both outliving the endpoint; on PostgreSQL also its connection pool's) and
/// returns the /metrics body's source.
std::function<boost::asio::awaitable<std::string>()> SetUpMetrics(
    storage::Backend& db, const tasks::TaskService& service, const std::string& version);

/// The store's batch observer (BackendOptions::batch_observer, before the store is opened).
std::function<void(size_t, double)> StoreBatchObserver();

}  // namespace a2ad::app
