#pragma once
// WakingTaskStore: a TaskStore decorator that tells the delivery worker "new outbox rows are
// durable" the moment a commit carrying them succeeds, so a push leaves right after its
// state change instead of at the worker's next poll. Everything else is forwarded as is;
// the contract is the wrapped store's (task_store.hpp).
#include <functional>

#include "a2ad/storage/task_store.hpp"

namespace a2ad::push {

class WakingTaskStore final : public storage::TaskStore {
 public:
  /// `wake` runs on the store's callback thread after a successful commit with outbox rows;
  /// it must not block.
  WakingTaskStore(storage::TaskStore& inner, std::function<void()> wake)
      : inner_(inner), wake_(std::move(wake)) {}

  void Commit(storage::TaskCommit commit, CommitCallback done) override {
    if (commit.outbox.empty()) return inner_.Commit(std::move(commit), std::move(done));
    inner_.Commit(std::move(commit), [wake = wake_, done = std::move(done)](core::Result<void> r) {
      const bool ok = r.ok();
      if (done) done(std::move(r));
      if (ok && wake) wake();
    });
  }
  core::Result<std::optional<storage::TaskRecord>> Get(std::string_view task_id) override {
    return inner_.Get(task_id);
  }
  core::Result<std::optional<storage::TaskRecord>> FindByDedupKey(std::string_view key) override {
    return inner_.FindByDedupKey(key);
  }
  core::Result<storage::TaskPage> List(const storage::TaskQuery& query) override {
    return inner_.List(query);
  }
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view task_id,
                                                           int64_t after_sequence,
                                                           size_t limit) override {
    return inner_.ReadEvents(task_id, after_sequence, limit);
  }
  core::Result<size_t> PruneEvents(int64_t terminal_before_ms) override {
    return inner_.PruneEvents(terminal_before_ms);
  }
  void Close() override { inner_.Close(); }

 private:
  storage::TaskStore& inner_;
  std::function<void()> wake_;
};

}  // namespace a2ad::push
