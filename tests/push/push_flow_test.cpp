// In process, with real parts (SQLite store, loopback HTTP, real signing): an approval-gated
// run pushes exactly once per notified transition (input-required, then completed), each
// push signed with a JWT that verifies against the JWKS, content-free, with the client's
// token. Push's side of the egress guard: what set time refuses and accepts (a host that
// does not resolve yet), and a 3xx being a failed attempt. The workflow engine is not on this
// branch, so a small executor stands in for the approval gate (the same shape as the conformance
// tests' GateExecutor).
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <functional>
#include <future>
#include <thread>
#include <utility>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/push/delivery_worker.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/storage/sqlite/sqlite_push_store.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "wait_for.hpp"
#include "webhook_receiver.hpp"

namespace a2ad::push {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;

// Parks at an approval (input-required); the reply completes it.
class ApprovalGate final : public tasks::Executor {
 public:
  asio::awaitable<void> Execute(std::shared_ptr<tasks::ExecutionContext> ctx) override {
    std::vector<tasks::EventDraft> step;
    if (ctx->task().status.state == protocol::TaskState::kSubmitted) {
      step = Suspend();
    } else if (ctx->task().status.state == protocol::TaskState::kWorking) {
      step = Finish();
    }
    (void)co_await ctx->Commit(std::move(step));
  }

 private:
  static std::vector<tasks::EventDraft> Suspend() {
    std::vector<tasks::EventDraft> s(2);
    s[0].type = "run.started";
    s[1].type = "node.suspended";
    s[1].node_id = "approve";
    protocol::Message ask;
    ask.message_id = "ask";
    ask.role = protocol::Role::kAgent;
    ask.parts.push_back(protocol::Part::Text("secret question about the inputs"));
    s[1].payload["kind"] = "approval";
    s[1].payload["message"] = protocol::MessageToJson(ask);
    return s;
  }
  static std::vector<tasks::EventDraft> Finish() {
    std::vector<tasks::EventDraft> s(2);
    s[0].type = "node.resumed";
    s[0].node_id = "approve";
    s[1].type = "run.completed";
    return s;
  }
};

class PushFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("a2ad-pushflow-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string db = (dir_ / "a2ad.db").string();
    task_store_ = std::move(storage::SqliteTaskStore::Open(db)).value();
    push_store_ = std::move(storage::SqlitePushStore::Open(db)).value();
    keys_ = std::move(KeyStore::Open((dir_ / "keys").string(), clock_, 300000)).value();
    net::EgressPolicy policy;
    policy.allow_http = true;
    policy.allow_list = {"127.0.0.1/32"};
    guard_ = std::make_unique<net::UrlGuard>(
        std::move(net::UrlGuard::Create(policy, resolver_)).value());
    client_ = std::move(net::HttpClient::Create(*guard_)).value();
    push_ = std::make_unique<PushService>(*push_store_, *task_store_, *guard_, clock_, *ids_);
    tasks::TaskServiceOptions opts;
    PushService* p = push_.get();
    opts.vet_push_config = [p](protocol::PushNotificationConfig& c, const std::string& id) {
      return p->Vet(c, id);
    };
    opts.on_commit = [p](const storage::TaskRecord* prev, storage::TaskCommit& c) {
      p->OnCommit(prev, c);
    };
    service_ =
        std::make_unique<tasks::TaskService>(*task_store_, clock_, *ids_, io_.get_executor(), opts);
    service_->RegisterSkill({"approval", "Approval", "gated", {"test"}, {}},
                            std::make_shared<ApprovalGate>());
    DeliveryOptions dopts;
    dopts.issuer = "http://a2ad.test";
    dopts.poll_interval = std::chrono::milliseconds(10);
    dopts.base_backoff = std::chrono::milliseconds(60000);  // a failed attempt stays failed here
    worker_ = std::make_shared<DeliveryWorker>(io_.get_executor(), *push_store_, *client_, *keys_,
                                               clock_, *ids_, dopts);
    worker_->Start();
    work_.emplace(io_.get_executor());
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { io_.run(); });
  }
  void TearDown() override {
    worker_->Stop();
    work_.reset();
    io_.stop();
    for (auto& t : threads_) t.join();
    push_store_->Close();
    task_store_->Close();
    fs::remove_all(dir_);
  }

  protocol::Task Send(protocol::SendMessageRequest req) {
    std::promise<core::Result<protocol::Task>> done;
    asio::co_spawn(io_, service_->SendMessage(ctx_, std::move(req)),
                   [&](std::exception_ptr ep, core::Result<protocol::Task> r) {
                     if (ep) std::rethrow_exception(ep);
                     done.set_value(std::move(r));
                   });
    auto r = done.get_future().get();
    if (!r) throw std::runtime_error(r.error().message);
    return std::move(r).value();
  }

  template <class T>
  T Await(asio::awaitable<T> op) {
    std::promise<T> done;
    asio::co_spawn(io_, std::move(op), [&](std::exception_ptr ep, T r) {
      if (ep) std::rethrow_exception(ep);
      done.set_value(std::move(r));
    });
    return done.get_future().get();
  }

  // The task's outbox rows once every one was attempted (at most ~30 s).
  std::vector<storage::OutboxRow> AttemptedRows(const std::string& task_id, size_t n) {
    std::vector<storage::OutboxRow> attempted;
    testing::WaitFor(
        [&] {
          auto rows = push_->Deliveries(task_id);
          if (!rows || rows->size() != n ||
              !std::all_of(rows->begin(), rows->end(),
                           [](const auto& r) { return r.attempts > 0; }))
            return false;
          attempted = std::move(rows).value();
          return true;
        },
        std::chrono::seconds(30));
    return attempted;
  }

  fs::path dir_;
  asio::io_context io_;  // first: outlives everything holding its executor
  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  // Names resolve only through this table (no real DNS): others do not resolve.
  net::StaticResolver resolver_{{{"internal.example.com", {"10.0.0.5"}}}};
  std::unique_ptr<storage::SqliteTaskStore> task_store_;
  std::unique_ptr<storage::SqlitePushStore> push_store_;
  std::unique_ptr<KeyStore> keys_;
  std::unique_ptr<net::UrlGuard> guard_;
  std::unique_ptr<net::HttpClient> client_;
  std::unique_ptr<PushService> push_;
  std::unique_ptr<tasks::TaskService> service_;
  const protocol::CallContext ctx_ =
      protocol::CallContext::Anonymous(protocol::Binding::kInternal, protocol::WireVersion::kV10);
  std::shared_ptr<DeliveryWorker> worker_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
};

protocol::SendMessageRequest Message(const std::string& text, const std::string& task_id = "") {
  protocol::SendMessageRequest req;
  req.message.message_id = "m-" + text;
  req.message.role = protocol::Role::kUser;
  req.message.task_id = task_id;
  req.message.parts.push_back(protocol::Part::Text(text));
  req.message.metadata["skillId"] = "approval";
  return req;
}

TEST_F(PushFlow, ApprovalGatedRunPushesOncePerTransitionWithVerifiableJwts) {
  testing::WebhookReceiver rx;
  auto req = Message("private inputs");
  protocol::PushNotificationConfig cfg;
  cfg.url = rx.Url("/push");
  cfg.token = "client-token-1";
  cfg.wire_version = "1.0";
  req.configuration.push_notification_config = cfg;
  protocol::Task parked = Send(std::move(req));
  ASSERT_EQ(parked.status.state, protocol::TaskState::kInputRequired);
  ASSERT_EQ(rx.WaitFor(1), 1u);

  protocol::Task done = Send(Message("approve", parked.id));
  ASSERT_EQ(done.status.state, protocol::TaskState::kCompleted);
  ASSERT_EQ(rx.WaitFor(2), 2u);

  // Every outbox row is delivered: nothing else will be sent for this (terminal) task.
  // (The receiver may see a request before the worker records the outcome: wait for it.)
  auto all_delivered = [&] {
    auto rows = push_->Deliveries(parked.id);
    if (!rows || rows->size() != 2) return false;
    for (const auto& r : *rows)
      if (r.state != storage::OutboxState::kDelivered) return false;
    return true;
  };
  testing::WaitFor(all_delivered, std::chrono::seconds(30));
  auto rows = push_->Deliveries(parked.id);
  ASSERT_TRUE(rows);
  ASSERT_EQ(rows->size(), 2u);
  for (const auto& r : *rows) {
    EXPECT_EQ(r.state, storage::OutboxState::kDelivered) << r.last_error;
    EXPECT_EQ(r.attempts, 1);
  }
  auto got = rx.requests();
  ASSERT_EQ(got.size(), 2u);

  JwtVerifier verifier({"http://a2ad.test", rx.Url("/push")}, clock_);
  ASSERT_TRUE(verifier.SetJwks(keys_->Jwks()));
  const char* states[] = {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED"};
  for (size_t i = 0; i < got.size(); ++i) {
    const auto& r = got[i];
    EXPECT_EQ(r.target, "/push");
    EXPECT_EQ(r.Header("Content-Type"), "application/a2a+json");
    EXPECT_EQ(r.Header("X-A2A-Notification-Token"), "client-token-1");
    ASSERT_EQ(r.Header("Authorization").rfind("Bearer ", 0), 0u);
    auto claims = verifier.Verify(r.Header("Authorization").substr(7));
    ASSERT_TRUE(claims) << claims.error().message;
    EXPECT_EQ(claims->at("taskId"), json::value(parked.id));
    EXPECT_EQ(claims->at("eventId"), json::value(r.Header("X-A2A-Event-Id")));
    json::value body = json::parse(r.body);
    EXPECT_EQ(body.at("statusUpdate").at("taskId"), json::value(parked.id));
    EXPECT_EQ(body.at("statusUpdate").at("status").at("state"), json::value(states[i]));
    EXPECT_EQ(body.at("statusUpdate").at("metadata").at("eventId"),
              json::value(r.Header("X-A2A-Event-Id")));
    // Content-free: neither the run's inputs nor the agent's question.
    EXPECT_EQ(r.body.find("private inputs"), std::string::npos);
    EXPECT_EQ(r.body.find("secret question"), std::string::npos);
    EXPECT_FALSE(body.at("statusUpdate").at("status").as_object().contains("message"));
  }
  EXPECT_NE(got[0].Header("X-A2A-Event-Id"), got[1].Header("X-A2A-Event-Id"));
}

TEST_F(PushFlow, InlineConfigIsStoredWithTheTaskAndARefusedUrlRefusesTheSend) {
  auto req = Message("x");
  protocol::PushNotificationConfig cfg;
  cfg.url = "http://10.0.0.7/hook";
  req.configuration.push_notification_config = cfg;
  std::promise<core::Result<protocol::Task>> done;
  asio::co_spawn(io_, service_->SendMessage(ctx_, std::move(req)),
                 [&](std::exception_ptr, core::Result<protocol::Task> r) { done.set_value(r); });
  auto r = done.get_future().get();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, core::ErrorCode::kInvalidParams);
  EXPECT_NE(r.error().message.find("private"), std::string::npos) << r.error().message;
  auto listed = task_store_->List(storage::TaskQuery{});
  EXPECT_EQ(listed->total_size, 0);  // no task was created

  testing::WebhookReceiver rx;
  auto ok = Message("y");
  cfg.url = rx.Url();
  cfg.id = "mine";
  ok.configuration.push_notification_config = cfg;
  protocol::Task t = Send(std::move(ok));
  auto stored = push_->GetConfig(t.id, "mine");
  ASSERT_TRUE(stored) << stored.error().message;
  EXPECT_EQ(stored->url, rx.Url());
}

// The A2A TCK issue: a client may register https://example.com/webhook on a machine that
// cannot resolve it. Set time accepts a name that does not resolve (on every way in); each
// delivery vets it again and fails, and is retried, like one to any unreachable host.
TEST_F(PushFlow, AnUnresolvableHostIsAcceptedWhenSetAndFailsEachDelivery) {
  auto req = Message("x");
  protocol::PushNotificationConfig cfg;
  cfg.url = "https://nowhere.example.com/webhook";  // not in the test's DNS table
  req.configuration.push_notification_config = cfg;
  protocol::Task parked = Send(std::move(req));  // the inline config of message/send
  ASSERT_EQ(parked.status.state, protocol::TaskState::kInputRequired);

  protocol::PushNotificationConfig later;
  later.task_id = parked.id;
  later.id = "later";
  later.url = "https://also-nowhere.example.com/hook";
  auto set = Await(push_->SetConfig(later));  // tasks/pushNotificationConfig/set
  ASSERT_TRUE(set) << set.error().message;
  auto hook = Await(push_->RegisterWebhook("https://nowhere.example.com/openwop", {"run.completed"},
                                           "", ""));  // POST /v1/webhooks
  ASSERT_TRUE(hook) << hook.error().message;

  // Refused at once, as before: a name that resolves to a private address, a literal one.
  later.url = "https://internal.example.com/hook";
  auto private_name = Await(push_->SetConfig(later));
  ASSERT_FALSE(private_name);
  EXPECT_EQ(private_name.error().code, core::ErrorCode::kInvalidParams);
  EXPECT_EQ(private_name.error().message.rfind("pushNotificationConfig.url: webhook URL", 0), 0u)
      << private_name.error().message;
  EXPECT_NE(private_name.error().message.find("resolves to 10.0.0.5"), std::string::npos);
  auto literal = Await(push_->RegisterWebhook("https://10.0.0.7/hook", {"run.completed"}, "", ""));
  ASSERT_FALSE(literal);
  EXPECT_EQ(literal.error().message.rfind("webhook URL", 0), 0u) << literal.error().message;
  ASSERT_FALSE(literal.error().details.empty());
  EXPECT_EQ(literal.error().details[0],
            core::ErrorDetail("reason", "webhook_url_rejected"));  // the wire code

  // Delivery: vetted again, fails, stays pending for a retry.
  auto rows = AttemptedRows(parked.id, 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, storage::OutboxState::kPending);
  EXPECT_EQ(rows[0].attempts, 1);
  EXPECT_GT(rows[0].next_attempt_at_ms, rows[0].created_at_ms);
  EXPECT_NE(rows[0].last_error.find("'nowhere.example.com' does not resolve"), std::string::npos)
      << rows[0].last_error;
}

TEST_F(PushFlow, ARedirectIsAFailedAttemptAndIsNotFollowed) {
  testing::WebhookReceiver elsewhere;
  testing::WebhookReceiver rx;
  rx.Script({302});
  rx.SetLocation(elsewhere.Url("/moved"));
  auto req = Message("r");
  protocol::PushNotificationConfig cfg;
  cfg.url = rx.Url("/push");
  req.configuration.push_notification_config = cfg;
  protocol::Task parked = Send(std::move(req));
  auto rows = AttemptedRows(parked.id, 1);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].state, storage::OutboxState::kPending);
  EXPECT_EQ(rows[0].last_error, "redirect (302) not followed");
  EXPECT_EQ(rx.count(), 1u);
  EXPECT_EQ(elsewhere.count(), 0u);
}

// A push store whose AllWebhooks runs `during_read` once, after it has read: what another
// thread does while the webhooks are read again (PushService::RefreshWebhooks, the change
// feed's resync). Everything else goes to `inner`.
using core::Result;

class ReadRacingPushStore final : public storage::PushStore {
 public:
  explicit ReadRacingPushStore(storage::PushStore& inner) : inner_(inner) {}
  std::function<void()> during_read;

  Result<void> PutConfig(const storage::PushConfigRecord& r) override {
    return inner_.PutConfig(r);
  }
  Result<std::optional<storage::PushConfigRecord>> GetConfig(std::string_view t,
                                                             std::string_view c) override {
    return inner_.GetConfig(t, c);
  }
  Result<std::vector<storage::PushConfigRecord>> ListConfigs(std::string_view t) override {
    return inner_.ListConfigs(t);
  }
  Result<bool> DeleteConfig(std::string_view t, std::string_view c) override {
    return inner_.DeleteConfig(t, c);
  }
  Result<std::vector<storage::PushConfigRecord>> AllConfigs() override {
    return inner_.AllConfigs();
  }
  Result<void> Enqueue(const std::vector<storage::OutboxRow>& rows) override {
    return inner_.Enqueue(rows);
  }
  Result<std::vector<storage::OutboxRow>> DueOutbox(int64_t now, size_t limit) override {
    return inner_.DueOutbox(now, limit);
  }
  Result<std::optional<int64_t>> NextDueAt() override { return inner_.NextDueAt(); }
  Result<void> UpdateOutbox(const storage::OutboxRow& row) override {
    return inner_.UpdateOutbox(row);
  }
  Result<void> UpdateOutboxBatch(const std::vector<storage::OutboxRow>& rows) override {
    return inner_.UpdateOutboxBatch(rows);
  }
  Result<std::vector<storage::OutboxRow>> ListOutbox(std::string_view t) override {
    return inner_.ListOutbox(t);
  }
  Result<std::vector<storage::OutboxRow>> ListDead(size_t limit) override {
    return inner_.ListDead(limit);
  }
  Result<void> PutWebhook(const storage::WebhookRecord& r) override { return inner_.PutWebhook(r); }
  Result<std::optional<storage::WebhookRecord>> GetWebhook(std::string_view id) override {
    return inner_.GetWebhook(id);
  }
  Result<bool> DeleteWebhook(std::string_view id) override { return inner_.DeleteWebhook(id); }
  Result<std::vector<storage::WebhookRecord>> AllWebhooks() override {
    auto read = inner_.AllWebhooks();
    if (auto f = std::exchange(during_read, {})) f();
    return read;
  }

 private:
  storage::PushStore& inner_;
};

// The webhooks read again (the change feed's resync) while one is registered here: the
// registration is not lost from the cache (it was: the read, made before it, replaced the
// cache after it, and the webhook got no deliveries until the next resync). The same for a
// deletion: a deleted webhook does not come back.
TEST_F(PushFlow, AWebhookRegisteredOrDeletedWhileTheWebhooksAreReadAgainIsKept) {
  ReadRacingPushStore racing(*push_store_);
  PushService push(racing, *task_store_, *guard_, clock_, *ids_);
  std::string id;
  racing.during_read = [&] {
    auto hook = Await(
        push.RegisterWebhook("https://nowhere.example.com/openwop", {"run.completed"}, "", ""));
    ASSERT_TRUE(hook) << hook.error().message;
    id = hook->webhook_id;
  };
  push.RefreshWebhooks();
  ASSERT_FALSE(id.empty());
  auto listed = push.ListWebhooks("default");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, id);

  racing.during_read = [&] { ASSERT_TRUE(push.DeleteWebhook(id, "default")); };
  push.RefreshWebhooks();
  EXPECT_TRUE(push.ListWebhooks("default").empty());
}

}  // namespace
}  // namespace a2ad::push
