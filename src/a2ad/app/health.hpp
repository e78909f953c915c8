#pragma once
// Health (issue 18): what an operator is told when the database cannot be used at startup, and
// the /readyz probe (transport/router.hpp SetReadiness): the database takes a write now, the
// restart's recovery is done, every workflow of the directory loaded.
//
// Thread safety: DatabaseAdvice is pure; the probe may run on any I/O thread at once (it reads
// HealthState's atomics, and queues its write on the store's writer).
#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <string>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/backend.hpp"
#include "a2ad/transport/router.hpp"

namespace a2ad::app {

/// What to do about database error `e` (read from its `sqlite` detail: read-only or not
/// openable, damaged or not a database, a full disk, an I/O error), for the database of
/// `data_dir`; "" when there is nothing specific to say.
std::string DatabaseAdvice(const core::Error& e, const std::string& data_dir);

struct HealthState {
  std::atomic<bool> recovered{false};  // RecoverUnfinished done, the runners started
  std::atomic<size_t> workflows_loaded{0};
  std::atomic<size_t> workflows_refused{0};
};

/// The /readyz probe over `db` (its check bounded by 2 s) and `state`, which outlive it.
transport::Router::ReadinessProbe MakeReadinessProbe(storage::Backend& db,
                                                     const HealthState& state,
                                                     std::string data_dir);

}  // namespace a2ad::app
