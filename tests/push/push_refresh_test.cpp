// Several replicas (issue 31): a push config deleted through another replica is forgotten by
// the replica that caches it once PushService::Refresh reads the task's configs again (the
// change feed asks for it), so no outbox row is made for it any more; a config cached from a
// commit of this replica that is not yet durable is not forgotten by a read that cannot see
// it yet.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"

namespace a2ad::push {
namespace {
using S = protocol::TaskState;

class PushRefresh : public ::testing::Test {
 protected:
  void SetUp() override {
    net::EgressPolicy policy;
    policy.allow_http = true;
    policy.allow_list = {"127.0.0.1/32"};
    guard_ = std::make_unique<net::UrlGuard>(
        std::move(net::UrlGuard::Create(policy, resolver_)).value());
    push_ = std::make_unique<PushService>(store_, store_, *guard_, clock_, *ids_);
    storage::TaskCommit create;
    create.record = Record(S::kWorking);
    bool created = false;
    store_.Commit(std::move(create), [&](core::Result<void> r) { created = r.ok(); });
    ASSERT_TRUE(created);  // (the memory store commits before it returns)
  }
  static storage::TaskRecord Record(S state) {
    storage::TaskRecord r;
    r.task.id = "t";
    r.task.context_id = "c";
    r.task.status.state = state;
    return r;
  }
  static storage::PushConfigRecord Config(const std::string& id) {
    storage::PushConfigRecord r;
    r.task_id = "t";
    r.config.task_id = "t";
    r.config.id = id;
    r.config.url = "http://127.0.0.1:9/" + id;
    return r;
  }
  // The push configs a transition of the task to input-required is pushed to now (the
  // outbox rows OnCommit adds), with `configs` written by that commit.
  std::vector<std::string> PushedTo(std::vector<storage::PushConfigRecord> configs = {}) {
    const storage::TaskRecord before = Record(S::kWorking);
    storage::TaskCommit commit;
    commit.record = Record(S::kInputRequired);
    commit.push_configs = std::move(configs);
    push_->OnCommit(&before, commit);
    std::vector<std::string> out;
    for (const auto& row : commit.outbox) out.push_back(row.target_id);
    return out;
  }
  using V = std::vector<std::string>;

  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  net::StaticResolver resolver_{{}};
  std::unique_ptr<net::UrlGuard> guard_;
  storage::MemoryTaskStore store_;
  std::unique_ptr<PushService> push_;
};

TEST_F(PushRefresh, AConfigDeletedElsewhereIsForgottenAtTheNextRead) {
  ASSERT_TRUE(store_.PutConfig(Config("a")).ok());  // set through another replica
  ASSERT_TRUE(store_.PutConfig(Config("b")).ok());
  push_->Refresh("t");
  EXPECT_EQ(PushedTo(), (V{"a", "b"}));
  ASSERT_TRUE(store_.DeleteConfig("t", "a").value());  // deleted through another replica
  EXPECT_EQ(PushedTo(), (V{"a", "b"}));                // (not read yet)
  push_->Refresh("t");
  EXPECT_EQ(PushedTo(), (V{"b"}));
}

TEST_F(PushRefresh, AConfigOfACommitInFlightIsKeptUntilItIsKnownStored) {
  // Written by a commit of this replica that the store has not made durable yet.
  EXPECT_EQ(PushedTo({Config("mine")}), (V{"mine"}));
  push_->Refresh("t");  // the store does not have it (yet): kept
  EXPECT_EQ(PushedTo(), (V{"mine"}));
  // Durable (WakingTaskStore confirms it), then deleted elsewhere, then read again.
  ASSERT_TRUE(store_.PutConfig(Config("mine")).ok());
  push_->Confirm("t", {"mine"});
  ASSERT_TRUE(store_.DeleteConfig("t", "mine").value());
  push_->Refresh("t");
  EXPECT_EQ(PushedTo(), V{});
}

TEST_F(PushRefresh, AConfigWrittenWhileTheReadRunsIsNotTakenForDeleted) {
  ASSERT_TRUE(store_.PutConfig(Config("a")).ok());
  ASSERT_TRUE(push_->WarmCache().ok());
  // A read that began before a commit of "a" (an update) was confirmed does not see it
  // removed: here the read is of a store without "a", as one that ran just before its write.
  EXPECT_EQ(PushedTo({Config("a")}), (V{"a"}));  // an update of "a" in flight
  ASSERT_TRUE(store_.DeleteConfig("t", "a").value());
  push_->Refresh("t");
  EXPECT_EQ(PushedTo(), (V{"a"}));
}

}  // namespace
}  // namespace a2ad::push
