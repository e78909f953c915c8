#pragma once
// Builders and helpers shared by the TaskStore tests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <random>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage::storage_test {

/// A fresh directory under the system temp directory, removed (with its content) on
/// destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("a2ad-storage-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
             "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline protocol::RunEvent Event(const std::string& task_id, int64_t sequence) {
  protocol::RunEvent e;
  e.event_id = task_id + "-ev-" + std::to_string(sequence);
  e.run_id = task_id;
  e.type = sequence == 0 ? protocol::kEvTaskSubmitted : protocol::kEvRunStarted;
  e.node_id = sequence % 2 == 0 ? "" : "node-" + std::to_string(sequence);
  e.timestamp_ms = 1767225600000 + sequence;
  e.sequence = sequence;
  e.payload["sequence"] = sequence;
  e.payload["nested"] = boost::json::object{{"list", boost::json::array{1, "two", nullptr}}};
  return e;
}

inline TaskRecord Record(const std::string& id, const std::string& context_id,
                         protocol::TaskState state, int64_t updated_at_ms, int64_t last_sequence) {
  TaskRecord r;
  r.task.id = id;
  r.task.context_id = context_id;
  r.task.status.state = state;
  r.task.status.timestamp_ms = updated_at_ms;
  r.task.metadata["note"] = "record of " + id;
  r.skill_id = "skill-echo";
  r.created_at_ms = 1000;
  r.updated_at_ms = updated_at_ms;
  r.last_sequence = last_sequence;
  return r;
}

/// Creates task `id` with `n_events` events (sequences 0..n-1).
inline TaskCommit Create(const std::string& id, const std::string& context_id = "ctx-1",
                         protocol::TaskState state = protocol::TaskState::kSubmitted,
                         int64_t updated_at_ms = 1000, int n_events = 1) {
  TaskCommit c;
  c.record = Record(id, context_id, state, updated_at_ms, n_events - 1);
  for (int i = 0; i < n_events; ++i) c.events.push_back(Event(id, i));
  c.expected_last_sequence = -1;
  return c;
}

/// Appends `n_events` events to a task whose stored record is `prev`, moving it to `state`.
inline TaskCommit Append(const TaskRecord& prev, protocol::TaskState state, int64_t updated_at_ms,
                         int n_events = 1) {
  TaskCommit c;
  c.record = prev;
  c.record.task.status.state = state;
  c.record.task.status.timestamp_ms = updated_at_ms;
  c.record.updated_at_ms = updated_at_ms;
  c.expected_last_sequence = prev.last_sequence;
  for (int i = 0; i < n_events; ++i) {
    c.events.push_back(Event(prev.task.id, prev.last_sequence + 1 + i));
  }
  c.record.last_sequence = prev.last_sequence + n_events;
  return c;
}

/// For EXPECT_TRUE(IsOk(...)): prints the error on failure.
template <class T>
::testing::AssertionResult IsOk(const core::Result<T>& r) {
  if (r.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << core::ErrorCodeName(r.error().code) << ": " << r.error().message;
}

/// Commits and waits for the callback; returns what it got.
inline core::Result<void> CommitSync(TaskStore& store, TaskCommit commit) {
  std::promise<core::Result<void>> done;
  auto future = done.get_future();
  store.Commit(std::move(commit), [&done](core::Result<void> r) { done.set_value(std::move(r)); });
  return future.get();
}

/// Commits without waiting; the future holds the callback's result.
inline std::future<core::Result<void>> CommitAsync(TaskStore& store, TaskCommit commit) {
  auto done = std::make_shared<std::promise<core::Result<void>>>();
  auto future = done->get_future();
  store.Commit(std::move(commit), [done](core::Result<void> r) { done->set_value(std::move(r)); });
  return future;
}

inline std::vector<std::string> Ids(const std::vector<TaskRecord>& records) {
  std::vector<std::string> ids;
  for (const TaskRecord& r : records) ids.push_back(r.task.id);
  return ids;
}

}  // namespace a2ad::storage::storage_test
