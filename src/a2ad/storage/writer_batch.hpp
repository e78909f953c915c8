#pragma once
// The end of one batch of a SQL backend's writer (sqlite_writer.cpp, pg_writer.cpp), the same
// for both: once a batch's transaction is settled, the batch observer is told its size and
// time, the commit participant whether it committed, and then every commit's callback gets its
// outcome.
//
// Thread safety: called on the writer thread, as the callbacks expect.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/sql.hpp"

namespace a2ad::storage {

/// `Pending` has `result` (core::Result<void>, the commit's outcome) and `done` (its callback,
/// may be empty). A participant or a callback that throws is logged; the others still run.
template <class Pending>
void SettleBatch(std::vector<Pending>& batch, std::chrono::steady_clock::time_point started,
                 const std::function<void(size_t batch_size, double seconds)>& observer,
                 const CommitParticipant& participant) {
  if (observer)
    observer(batch.size(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (participant.after_batch) {
    const bool committed =
        std::any_of(batch.begin(), batch.end(), [](const Pending& p) { return p.result.ok(); });
    try {
      participant.after_batch(committed);
    } catch (const std::exception& e) {
      core::LogError(std::string("task store: a commit participant threw: ") + e.what());
    }
  }
  for (Pending& p : batch) {
    if (!p.done) continue;
    try {
      p.done(std::move(p.result));
    } catch (const std::exception& e) {
      core::LogError(std::string("task store: commit callback threw: ") + e.what());
    } catch (...) {
      core::LogError("task store: commit callback threw");
    }
  }
}

}  // namespace a2ad::storage
