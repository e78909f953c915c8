#pragma once
// WakingTaskStore: a TaskStore decorator that tells the delivery worker "new outbox rows are
// durable" the moment a commit carrying them succeeds, so a push leaves right after its
// state change instead of at the worker's next poll. Everything else is forwarded as is;
// the contract is the wrapped store's (task_store.hpp).
//
// Thread safety: that of the wrapped store (`inner`, which must outlive this one). `wake`
// runs after `done`, on the thread that completes the commit (SQLite: its writer thread).
#include <functional>

#include "a2ad/storage/forwarding_task_store.hpp"

namespace a2ad::push {

class WakingTaskStore final : public storage::ForwardingTaskStore {
 public:
  /// `wake` runs on the store's callback thread after a successful commit with outbox rows;
  /// it must not block.
  WakingTaskStore(storage::TaskStore& inner, std::function<void()> wake)
      : ForwardingTaskStore(inner), wake_(std::move(wake)) {}

  void Commit(storage::TaskCommit commit, CommitCallback done) override {
    if (commit.outbox.empty()) return inner().Commit(std::move(commit), std::move(done));
    inner().Commit(std::move(commit), [wake = wake_, done = std::move(done)](core::Result<void> r) {
      const bool ok = r.ok();
      if (done) done(std::move(r));
      if (ok && wake) wake();
    });
  }

 private:
  std::function<void()> wake_;
};

}  // namespace a2ad::push
