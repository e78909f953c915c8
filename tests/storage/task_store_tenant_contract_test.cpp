// The TaskStore contract on tenants and owners (task_store.hpp "Tenants"), run against every
// backend (STYLE.md #6): a task's tenant and owner are set at creation and kept; lists are
// one tenant's unless the server scans every tenant; idempotency keys are unique per tenant.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "task_store_backends.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage {
namespace {

using protocol::TaskState;
using storage_test::Append;
using storage_test::CommitSync;
using storage_test::Create;
using storage_test::Ids;
using storage_test::IsOk;
using V = std::vector<std::string>;

using storage_test::BackendNames;
using storage_test::Backends;

template <class Backend>
class TaskStoreTenantTest : public storage_test::BackendTest<Backend> {
 protected:
  using storage_test::BackendTest<Backend>::store_;
  using storage_test::BackendTest<Backend>::store;

  // Creates `id` in `tenant`, owned by `owner`.
  void Make(const std::string& id, const std::string& tenant, const std::string& owner = "alice",
            const std::string& context = "ctx", TaskState state = TaskState::kWorking,
            int64_t updated = 1000, const std::string& dedup_key = "") {
    TaskCommit c = Create(id, context, state, updated);
    c.record.tenant = tenant;
    c.record.owner = owner;
    c.record.dedup_key = dedup_key;
    ASSERT_TRUE(IsOk(CommitSync(store(), std::move(c)))) << id;
  }

  TaskRecord MustGet(const std::string& id) {
    auto got = store_->Get(id);
    EXPECT_TRUE(got.ok() && got->has_value()) << id;
    return got.ok() && got->has_value() ? **got : TaskRecord{};
  }

  V List(TaskQuery q, int32_t* total = nullptr) {
    q.page_size = 100;
    auto page = store_->List(q);
    EXPECT_TRUE(page.ok()) << page.error().message;
    if (!page.ok()) return {};
    if (total) *total = page->total_size;
    return Ids(page->records);
  }

  static TaskQuery Of(const std::string& tenant) {
    TaskQuery q;
    q.tenant = tenant;
    return q;
  }

};


TYPED_TEST_SUITE(TaskStoreTenantTest, Backends, BackendNames);

TYPED_TEST(TaskStoreTenantTest, ARecordWithoutATenantIsTheDefaultTenantsAnonymousOne) {
  ASSERT_TRUE(IsOk(CommitSync(this->store(), Create("plain"))));
  const TaskRecord got = this->MustGet("plain");
  EXPECT_EQ(got.tenant, "default");
  EXPECT_EQ(got.owner, "anonymous");
  EXPECT_EQ(this->List(TaskQuery{}), V{"plain"});  // a query's tenant defaults the same way
}

TYPED_TEST(TaskStoreTenantTest, TenantAndOwnerAreSetAtCreationAndKept) {
  this->Make("t-1", "acme", "alice");
  TaskRecord first = this->MustGet("t-1");
  EXPECT_EQ(first.tenant, "acme");
  EXPECT_EQ(first.owner, "alice");
  TaskCommit moved = Append(first, TaskState::kCompleted, 2000);
  moved.record.tenant = "other";  // a later commit cannot move the task
  moved.record.owner = "mallory";
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(moved))));
  const TaskRecord after = this->MustGet("t-1");
  EXPECT_EQ(after.task.status.state, TaskState::kCompleted);
  EXPECT_EQ(after.tenant, "acme");
  EXPECT_EQ(after.owner, "alice");
}

TYPED_TEST(TaskStoreTenantTest, ListsAreOneTenantsWithTheirFiltersCountsAndPages) {
  this->Make("a-1", "acme", "alice", "ctx-1", TaskState::kWorking, 100);
  this->Make("a-2", "acme", "bob", "ctx-2", TaskState::kCompleted, 200);
  this->Make("a-3", "acme", "alice", "ctx-1", TaskState::kCompleted, 300);
  this->Make("g-1", "globex", "alice", "ctx-1", TaskState::kWorking, 150);
  this->Make("g-2", "globex", "carol", "ctx-1", TaskState::kCompleted, 250);
  this->Make("d-1", "default", "anonymous", "ctx-1", TaskState::kWorking, 50);

  int32_t total = -1;
  EXPECT_EQ(this->List(this->Of("acme"), &total), (V{"a-3", "a-2", "a-1"}));
  EXPECT_EQ(total, 3);
  EXPECT_EQ(this->List(this->Of("globex"), &total), (V{"g-2", "g-1"}));
  EXPECT_EQ(total, 2);
  EXPECT_EQ(this->List(this->Of("default")), V{"d-1"});
  EXPECT_EQ(this->List(this->Of("nobody"), &total), V{});
  EXPECT_EQ(total, 0);

  TaskQuery by_context = this->Of("acme");
  by_context.context_id = "ctx-1";
  EXPECT_EQ(this->List(by_context), (V{"a-3", "a-1"}));
  TaskQuery by_state = this->Of("globex");
  by_state.state = TaskState::kWorking;
  EXPECT_EQ(this->List(by_state), V{"g-1"});
  TaskQuery by_owner = this->Of("acme");
  by_owner.owner = "alice";
  EXPECT_EQ(this->List(by_owner, &total), (V{"a-3", "a-1"}));
  EXPECT_EQ(total, 2);
  TaskQuery recent = this->Of("acme");
  recent.updated_at_or_after_ms = 200;
  EXPECT_EQ(this->List(recent), (V{"a-3", "a-2"}));

  // Pages stay inside the tenant.
  TaskQuery paged = this->Of("acme");
  paged.page_size = 2;
  auto first = this->store().List(paged);
  ASSERT_TRUE(IsOk(first));
  EXPECT_EQ(Ids(first->records), (V{"a-3", "a-2"}));
  ASSERT_FALSE(first->next_page_token.empty());
  paged.page_token = first->next_page_token;
  auto second = this->store().List(paged);
  ASSERT_TRUE(IsOk(second));
  EXPECT_EQ(Ids(second->records), V{"a-1"});
  EXPECT_EQ(second->next_page_token, "");

  // The server's own scan sees every tenant.
  TaskQuery every;
  every.all_tenants = true;
  every.state = TaskState::kWorking;
  EXPECT_EQ(this->List(every, &total), (V{"g-1", "a-1", "d-1"}));
  EXPECT_EQ(total, 3);
}

TYPED_TEST(TaskStoreTenantTest, AListWithoutATenantIsRefused) {
  TaskQuery q;
  q.tenant.clear();
  auto page = this->store().List(q);
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.error().code, core::ErrorCode::kInvalidParams);
}

TYPED_TEST(TaskStoreTenantTest, IdempotencyKeysAreUniquePerTenant) {
  this->Make("a-1", "acme", "alice", "ctx", TaskState::kSubmitted, 100, "a2a\nalice\nm-1");
  this->Make("g-1", "globex", "alice", "ctx", TaskState::kSubmitted, 100, "a2a\nalice\nm-1");
  TaskCommit again = Create("a-2");
  again.record.tenant = "acme";
  again.record.dedup_key = "a2a\nalice\nm-1";
  auto refused = CommitSync(this->store(), std::move(again));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, core::ErrorCode::kConflict);
  EXPECT_FALSE(this->store().Get("a-2")->has_value());

  auto acme = this->store().FindByDedupKey("acme", "a2a\nalice\nm-1");
  ASSERT_TRUE(IsOk(acme));
  ASSERT_TRUE(acme->has_value());
  EXPECT_EQ((*acme)->task.id, "a-1");
  auto globex = this->store().FindByDedupKey("globex", "a2a\nalice\nm-1");
  ASSERT_TRUE(IsOk(globex));
  ASSERT_TRUE(globex->has_value());
  EXPECT_EQ((*globex)->task.id, "g-1");
  auto nobody = this->store().FindByDedupKey("default", "a2a\nalice\nm-1");
  ASSERT_TRUE(IsOk(nobody));
  EXPECT_FALSE(nobody->has_value());
}

TYPED_TEST(TaskStoreTenantTest, AReleasedKeyCreatesAnotherTaskAndTheFirstKeepsItsKeyLess) {
  this->Make("a-1", "acme", "alice", "ctx", TaskState::kInputRequired, 100, "a2a\nalice\n\nm-1");
  // Without the release, the key stays taken even after an update.
  TaskRecord first = this->MustGet("a-1");
  TaskCommit kept = Append(first, TaskState::kWorking, 200);
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(kept))));
  TaskCommit early = Create("a-2");
  early.record.tenant = "acme";
  early.record.dedup_key = "a2a\nalice\n\nm-1";
  auto refused = CommitSync(this->store(), std::move(early));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, core::ErrorCode::kConflict);

  first = this->MustGet("a-1");
  TaskCommit release = Append(first, TaskState::kWorking, 300);
  release.record.dedup_key.clear();
  release.releases_dedup_key = true;
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(release))));
  auto gone = this->store().FindByDedupKey("acme", "a2a\nalice\n\nm-1");
  ASSERT_TRUE(IsOk(gone));
  EXPECT_FALSE(gone->has_value());
  EXPECT_EQ(this->MustGet("a-1").dedup_key, "");

  TaskCommit again = Create("a-2");
  again.record.tenant = "acme";
  again.record.dedup_key = "a2a\nalice\n\nm-1";
  ASSERT_TRUE(IsOk(CommitSync(this->store(), std::move(again))));
  auto found = this->store().FindByDedupKey("acme", "a2a\nalice\n\nm-1");
  ASSERT_TRUE(IsOk(found));
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->task.id, "a-2");
}

// The idempotency retention window (TaskCommit::dedup_takeover_before_ms): a key held by a
// task created before the cutoff is taken over by the creating commit, atomically (the holder
// loses it, the new task has it); a holder created at or after the cutoff keeps it
// (kConflict), and another tenant's holder is never touched.
TYPED_TEST(TaskStoreTenantTest, AKeyPastItsRetentionIsTakenOverByTheNextTask) {
  const std::string key = "a2a\nalice\n\nm-1";
  this->Make("a-1", "acme", "alice", "ctx", TaskState::kCompleted, 100, key);
  this->Make("g-1", "globex", "alice", "ctx", TaskState::kCompleted, 100, key);
  const int64_t created = this->MustGet("a-1").created_at_ms;
  auto attempt = [&](const std::string& id, int64_t before) {
    TaskCommit c = Create(id);
    c.record.tenant = "acme";
    c.record.dedup_key = key;
    c.dedup_takeover_before_ms = before;
    return CommitSync(this->store(), std::move(c));
  };
  for (int64_t before : {int64_t{0}, created}) {
    auto refused = attempt("a-2", before);
    ASSERT_FALSE(refused.ok()) << before;
    EXPECT_EQ(refused.error().code, core::ErrorCode::kConflict);
    EXPECT_FALSE(this->store().Get("a-2")->has_value());
    EXPECT_EQ(this->MustGet("a-1").dedup_key, key);
  }
  ASSERT_TRUE(IsOk(attempt("a-2", created + 1)));
  EXPECT_EQ(this->MustGet("a-1").dedup_key, "");
  EXPECT_EQ(this->MustGet("a-1").task.status.state, TaskState::kCompleted);
  EXPECT_EQ(this->MustGet("a-2").dedup_key, key);
  auto found = this->store().FindByDedupKey("acme", key);
  ASSERT_TRUE(IsOk(found));
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->task.id, "a-2");
  auto globex = this->store().FindByDedupKey("globex", key);
  ASSERT_TRUE(IsOk(globex) && globex->has_value());
  EXPECT_EQ((*globex)->task.id, "g-1");
  // The new holder is as protected as the first was (it is not older than the cutoff).
  auto third = attempt("a-3", this->MustGet("a-2").created_at_ms);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.error().code, core::ErrorCode::kConflict);
}

}  // namespace
}  // namespace a2ad::storage
