// Issue 29, 9: a push config set while the task's last step is being committed must not miss
// that step. A config acknowledged while the task is not terminal sees every later
// transition: PushService::SetConfig writes the config as a commit of its task
// (TaskService::WritePushConfig), ordered with the task's commits under its lock.
//
// The race is forced: the store holds the task's completing commit (accepted, not yet
// durable) while the config is set. Before the fix, the set was acknowledged at once, a read
// of the task then said input-required/working, and the completion was committed with no
// outbox row for the config. Then the same race is run loose, many times, on real threads.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdio>
#include <future>
#include <mutex>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/storage/forwarding_task_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "wait_for.hpp"

namespace a2ad::push {
namespace {
namespace asio = boost::asio;
using S = protocol::TaskState;

// Parks at a gate; the reply completes the run.
class Gate final : public tasks::Executor {
 public:
  asio::awaitable<void> Execute(std::shared_ptr<tasks::ExecutionContext> ctx) override {
    std::vector<tasks::EventDraft> step;
    if (ctx->task().status.state == S::kSubmitted) {
      step.push_back({protocol::kEvRunStarted, "", {}});
      step.push_back({protocol::kEvInputRequired, "gate", {{"kind", "approval"}}});
    } else {
      step.push_back({protocol::kEvRunCompleted, "", {}});
    }
    (void)co_await ctx->Commit(std::move(step));
  }
};

// Holds every commit whose record is terminal while `hold` is set.
class HoldTerminal final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;
  void Commit(storage::TaskCommit c, CommitCallback done) override {
    {
      std::lock_guard lock(mu_);
      if (hold_ && protocol::IsTerminal(c.Record().task.status.state)) {
        held_.emplace_back(std::move(c), std::move(done));
        return;
      }
    }
    inner().Commit(std::move(c), std::move(done));
  }
  void Hold() {
    std::lock_guard lock(mu_);
    hold_ = true;
  }
  void Release() {
    std::vector<std::pair<storage::TaskCommit, CommitCallback>> held;
    {
      std::lock_guard lock(mu_);
      hold_ = false;
      held = std::exchange(held_, {});
    }
    for (auto& [c, done] : held) inner().Commit(std::move(c), std::move(done));
  }
  size_t held() {
    std::lock_guard lock(mu_);
    return held_.size();
  }

 private:
  std::mutex mu_;
  bool hold_ = false;
  std::vector<std::pair<storage::TaskCommit, CommitCallback>> held_;
};

class PushConfigRace : public ::testing::Test {
 protected:
  void SetUp() override {
    net::EgressPolicy policy;
    policy.allow_http = true;
    policy.allow_list = {"127.0.0.1/32"};
    guard_ = std::make_unique<net::UrlGuard>(
        std::move(net::UrlGuard::Create(policy, resolver_)).value());
    push_ = std::make_unique<PushService>(inner_, store_, *guard_, clock_, *ids_);
    tasks::TaskServiceOptions opts;
    PushService* p = push_.get();
    opts.vet_push_config = [p](protocol::PushNotificationConfig& c, const std::string& id) {
      return p->Vet(c, id);
    };
    opts.on_commit = [p](const storage::TaskRecord* prev, storage::TaskCommit& c) {
      p->OnCommit(prev, c);
    };
    service_ = std::make_unique<tasks::TaskService>(store_, clock_, *ids_, io_.get_executor(), opts);
    service_->RegisterSkill({"gate"}, std::make_shared<Gate>());
    tasks::TaskService* svc = service_.get();
    push_->SetConfigWriter(
        [svc](storage::PushConfigRecord r) { return svc->WritePushConfig(std::move(r)); });
    work_.emplace(io_.get_executor());
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    store_.Release();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
  }

  template <class T>
  std::future<T> Spawn(asio::awaitable<T> op, std::function<void(const T&)> at_answer = {}) {
    auto done = std::make_shared<std::promise<T>>();
    auto future = done->get_future();
    asio::co_spawn(io_, std::move(op), [done, at_answer](std::exception_ptr ep, T r) {
      if (ep) std::rethrow_exception(ep);
      if (at_answer) at_answer(r);
      done->set_value(std::move(r));
    });
    return future;
  }

  protocol::SendMessageRequest Message(const std::string& id, const std::string& task_id = "") {
    protocol::SendMessageRequest r;
    r.message.message_id = id;
    r.message.role = protocol::Role::kUser;
    r.message.task_id = task_id;
    r.message.parts.push_back(protocol::Part::Text("go"));
    if (task_id.empty()) r.message.metadata["skillId"] = "gate";
    return r;
  }
  std::string Parked(const std::string& message_id) {
    auto t = Spawn(service_->SendMessage(ctx_, Message(message_id))).get();
    EXPECT_TRUE(t.ok());
    EXPECT_EQ(t->status.state, S::kInputRequired);
    return t->id;
  }
  protocol::PushNotificationConfig Config(const std::string& task_id, const std::string& id) {
    protocol::PushNotificationConfig c;
    c.task_id = task_id;
    c.id = id;
    c.url = "http://127.0.0.1:9/hook";
    return c;
  }
  S StoredState(const std::string& id) { return inner_.Get(id).value()->task.status.state; }
  bool CompletionPushed(const std::string& task_id, const std::string& config_id) {
    for (const auto& row : inner_.ListOutbox(task_id).value())
      if (row.target_id == config_id && (row.body.find("\"completed\"") != std::string::npos ||
                                         row.body.find("TASK_STATE_COMPLETED") != std::string::npos))
        return true;
    return false;
  }

  asio::io_context io_;
  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  net::StaticResolver resolver_{{}};
  std::unique_ptr<net::UrlGuard> guard_;
  storage::MemoryTaskStore inner_;
  HoldTerminal store_{inner_};
  std::unique_ptr<PushService> push_;
  std::unique_ptr<tasks::TaskService> service_;
  const protocol::CallContext ctx_ =
      protocol::CallContext::Anonymous(protocol::Binding::kInternal, protocol::WireVersion::kV10);
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
};

TEST_F(PushConfigRace, AConfigSetWhileTheLastStepIsInFlightIsOrderedWithIt) {
  const std::string id = Parked("start");
  store_.Hold();
  auto reply = Spawn(service_->SendMessage(ctx_, Message("accept", id)));
  testing::WaitFor([&] { return store_.held() > 0; }, std::chrono::seconds(5));
  ASSERT_EQ(store_.held(), 1u) << "the completing commit is in flight";

  // What a client would read right after the set was acknowledged.
  std::atomic<int> state_at_ack{-1};
  auto set = Spawn(push_->SetConfig(Config(id, "late")),
                   std::function<void(const core::Result<protocol::PushNotificationConfig>&)>(
                       [&](const auto&) { state_at_ack = static_cast<int>(StoredState(id)); }));
  // The set cannot be acknowledged before the commit it is ordered after is durable.
  EXPECT_EQ(set.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  store_.Release();
  ASSERT_TRUE(set.get().ok());
  ASSERT_TRUE(reply.get().ok());
  EXPECT_EQ(StoredState(id), S::kCompleted);
  EXPECT_EQ(state_at_ack.load(), static_cast<int>(S::kCompleted));
  // Stored all the same (tasks/pushNotificationConfig/get finds it), but nothing is pushed
  // for a task that was already terminal when the config came.
  EXPECT_TRUE(inner_.GetConfig(id, "late").value().has_value());
  EXPECT_FALSE(CompletionPushed(id, "late"));
}

// Loose, on real threads: the reply and the set race for each task. Whichever wins, a
// config acknowledged while the task read as not terminal gets the completion's push.
TEST_F(PushConfigRace, NoAcknowledgedConfigMissesALaterTransition) {
  int acked_before_end = 0;
  for (int i = 0; i < 50; ++i) {
    const std::string id = Parked("start-" + std::to_string(i));
    std::atomic<int> state_at_ack{-1};
    auto reply = Spawn(service_->SendMessage(ctx_, Message("accept-" + std::to_string(i), id)));
    auto set = Spawn(push_->SetConfig(Config(id, "c")),
                     std::function<void(const core::Result<protocol::PushNotificationConfig>&)>(
                         [&](const auto&) { state_at_ack = static_cast<int>(StoredState(id)); }));
    ASSERT_TRUE(set.get().ok());
    ASSERT_TRUE(reply.get().ok());
    testing::WaitFor([&] { return StoredState(id) == S::kCompleted; }, std::chrono::seconds(5));
    ASSERT_EQ(StoredState(id), S::kCompleted);
    if (!protocol::IsTerminal(static_cast<S>(state_at_ack.load()))) {
      ++acked_before_end;
      EXPECT_TRUE(CompletionPushed(id, "c")) << "task " << id << " (iteration " << i << ")";
    }
  }
  std::printf("acknowledged before the end: %d of 50\n", acked_before_end);
}

}  // namespace
}  // namespace a2ad::push
