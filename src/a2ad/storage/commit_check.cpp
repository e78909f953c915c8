#include "a2ad/storage/commit_check.hpp"

#include <string>

namespace a2ad::storage {
namespace {

core::Error Invalid(std::string message) {
  return core::Error(core::ErrorCode::kInvalidParams, std::move(message));
}

}  // namespace

core::Result<void> CheckCommitPreconditions(const TaskCommit& commit) {
  const std::string& id = commit.Record().task.id;
  if (id.empty()) return Invalid("task commit: record.task.id is empty");
  if (commit.expected_last_sequence < -1) {
    return Invalid("task commit " + id + ": expected_last_sequence " +
                   std::to_string(commit.expected_last_sequence) + " is below -1");
  }
  for (size_t i = 0; i < commit.events.size(); ++i) {
    const protocol::RunEvent& e = commit.events[i];
    if (e.run_id != id) {
      return Invalid("task commit " + id + ": events[" + std::to_string(i) + "].run_id is '" +
                     e.run_id + "'");
    }
    const int64_t want = commit.expected_last_sequence + 1 + static_cast<int64_t>(i);
    if (e.sequence != want) {
      return Invalid("task commit " + id + ": events[" + std::to_string(i) + "].sequence is " +
                     std::to_string(e.sequence) + ", expected " + std::to_string(want));
    }
  }
  const int64_t last =
      commit.events.empty() ? commit.expected_last_sequence : commit.events.back().sequence;
  if (commit.Record().last_sequence != last) {
    return Invalid("task commit " + id + ": record.last_sequence is " +
                   std::to_string(commit.Record().last_sequence) + ", expected " +
                   std::to_string(last));
  }
  for (const PushConfigRecord& c : commit.push_configs) {
    if (c.task_id != id || c.config.id.empty())
      return Invalid("task commit " + id + ": a push config must name this task and an id");
  }
  for (const OutboxRow& row : commit.outbox) {
    if (row.task_id != id || row.id.empty())
      return Invalid("task commit " + id + ": an outbox row must name this task and an id");
  }
  return core::Ok{};
}

}  // namespace a2ad::storage
