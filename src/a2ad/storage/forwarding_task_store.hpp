#pragma once
// ForwardingTaskStore: a TaskStore that hands every call to another one. Decorators derive
// from it and override what they change (push::WakingTaskStore wraps Commit; tests count or
// hold commits); the contract stays the wrapped store's (task_store.hpp).
//
// TryGet and QueueGet are the exception: it answers nullopt and queues none (the caller then
// calls Get), so that a decorator that overrides Get is never bypassed; one that leaves reads
// alone forwards them itself.
//
// Thread safety: that of the wrapped store (every call forwards; no state of its own).
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

class ForwardingTaskStore : public TaskStore {
 public:
  explicit ForwardingTaskStore(TaskStore& inner) : inner_(inner) {}

  void Commit(TaskCommit commit, CommitCallback done) override {
    inner_.Commit(std::move(commit), std::move(done));
  }
  core::Result<std::optional<TaskRecord>> Get(std::string_view task_id) override {
    return inner_.Get(task_id);
  }
  core::Result<std::optional<TaskRecord>> FindByDedupKey(std::string_view tenant,
                                                         std::string_view key) override {
    return inner_.FindByDedupKey(tenant, key);
  }
  core::Result<TaskPage> List(const TaskQuery& query) override { return inner_.List(query); }
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                           int64_t after_sequence,
                                                           size_t limit) override {
    return inner_.ReadEvents(task_id, after_sequence, limit);
  }
  core::Result<size_t> PruneEvents(int64_t terminal_before_ms) override {
    return inner_.PruneEvents(terminal_before_ms);
  }
  core::Result<std::optional<std::vector<std::string>>> UnfinishedRunsWaitingFor(
      std::string_view tenant, std::string_view name) override {
    return inner_.UnfinishedRunsWaitingFor(tenant, name);
  }
  core::Result<TaskPage> ListRunnable(std::string_view after_id, size_t limit) override {
    return inner_.ListRunnable(after_id, limit);
  }
  core::Result<std::vector<Wake>> ListWakes(int64_t after_ms, std::string_view after_id,
                                            size_t limit, std::string_view holder) override {
    return inner_.ListWakes(after_ms, after_id, limit, holder);
  }
  void Close() override { inner_.Close(); }

 protected:
  TaskStore& inner() { return inner_; }
  const TaskStore& inner_const() const { return inner_; }

 private:
  TaskStore& inner_;
};

}  // namespace a2ad::storage
