#pragma once
// WakingTaskStore: a TaskStore decorator that tells the delivery worker "new outbox rows are
// durable" the moment a commit carrying them succeeds, so a push leaves right after its
// state change instead of at the worker's next poll, and tells the push service which configs
// a commit made durable (several replicas: PushService::Refresh then knows a config absent
// from the store was deleted, not still in flight). Everything else is forwarded as is;
// the contract is the wrapped store's (task_store.hpp).
//
// Thread safety: that of the wrapped store (`inner`, which must outlive this one). `wake`
// runs after `done`, on the thread that completes the commit (SQLite: its writer thread).
#include <functional>
#include <string>
#include <vector>

#include "a2ad/storage/forwarding_task_store.hpp"

namespace a2ad::push {

class WakingTaskStore final : public storage::ForwardingTaskStore {
 public:
  /// Runs on the store's callback thread after a successful commit; must not block.
  using Confirm = std::function<void(const std::string& task_id,
                                     const std::vector<std::string>& config_ids)>;
  /// `wake` after a commit with outbox rows; `confirm` (may be unset) after a commit that
  /// wrote push configs, naming them: they are in the store from now on.
  WakingTaskStore(storage::TaskStore& inner, std::function<void()> wake, Confirm confirm = {})
      : ForwardingTaskStore(inner), wake_(std::move(wake)), confirm_(std::move(confirm)) {}

  std::optional<core::Result<std::optional<storage::TaskRecord>>> TryGet(std::string_view task_id,
                                                                         bool with_run) override {
    return inner().TryGet(task_id, with_run);  // reads are the wrapped store's
  }
  bool QueuesGets() const override { return inner_const().QueuesGets(); }
  void QueueGet(std::string task_id, GetCallback done) override {
    inner().QueueGet(std::move(task_id), std::move(done));
  }

  void Commit(storage::TaskCommit commit, CommitCallback done) override {
    const bool rows = !commit.outbox.empty();
    std::vector<std::string> configs;
    if (confirm_)
      for (const auto& c : commit.push_configs) configs.push_back(c.config.id);
    if (!rows && configs.empty()) return inner().Commit(std::move(commit), std::move(done));
    std::string task_id = configs.empty() ? std::string() : commit.Record().task.id;
    inner().Commit(std::move(commit), [this, rows, task_id = std::move(task_id),
                                       configs = std::move(configs),
                                       done = std::move(done)](core::Result<void> r) {
      const bool ok = r.ok();
      if (done) done(std::move(r));
      if (!ok) return;
      if (!configs.empty()) confirm_(task_id, configs);
      if (rows && wake_) wake_();
    });
  }

 private:
  std::function<void()> wake_;
  Confirm confirm_;
};

}  // namespace a2ad::push
