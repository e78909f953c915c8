// The push routes read and write the store off the I/O thread (push_routes.hpp): a database
// round trip on an I/O thread would hold up every other request of that thread. The routes
// run here on the test's own io_context thread over a store that notes the thread of every
// read; none may be that thread.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/push/push_service.hpp"
#include "a2ad/storage/forwarding_task_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/transport/openwop/push_routes.hpp"

namespace a2ad::transport {
namespace {
namespace asio = boost::asio;

// Notes the thread of every Get (the push service's check that a task exists).
class ThreadNotingStore final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;
  core::Result<std::optional<storage::TaskRecord>> Get(std::string_view id) override {
    {
      std::lock_guard lock(mu_);
      threads_.push_back(std::this_thread::get_id());
    }
    return inner().Get(id);
  }
  std::vector<std::thread::id> threads() {
    std::lock_guard lock(mu_);
    return threads_;
  }

 private:
  std::mutex mu_;
  std::vector<std::thread::id> threads_;
};

class PushRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    net::EgressPolicy policy;
    policy.allow_http = true;
    guard_.emplace(std::move(net::UrlGuard::Create(policy, resolver_)).value());
    push_.emplace(memory_, noting_, *guard_, clock_, *ids_);
    service_.emplace(noting_, clock_, *ids_, io_.get_executor(), tasks::TaskServiceOptions{});
    routes_.emplace(*push_, memory_, *service_);
    storage::TaskCommit c;
    c.record.task.id = "t1";
    c.record.task.context_id = "c1";
    c.record.task.status.state = protocol::TaskState::kWorking;
    c.record.skill_id = "echo";
    c.record.last_sequence = -1;
    bool ok = false;
    memory_.Commit(c, [&](core::Result<void> r) { ok = r.ok(); });
    ASSERT_TRUE(ok);
  }

  // Serves `request` on this thread's io_context (the I/O thread here).
  HttpResponse Serve(HttpRequest request) {
    std::optional<HttpResponse> out;
    asio::co_spawn(io_, routes_->Handle(request),
                   [&](std::exception_ptr ep, std::optional<HttpResponse> r) {
                     if (ep) std::rethrow_exception(ep);
                     out = std::move(r);
                   });
    io_.restart();
    io_.run();
    EXPECT_TRUE(out.has_value());
    return out ? std::move(*out) : HttpResponse{};
  }
  void ExpectNoReadOnThisThread(const char* route) {
    const auto threads = noting_.threads();
    EXPECT_FALSE(threads.empty()) << route;
    for (const auto& t : threads) EXPECT_NE(t, std::this_thread::get_id()) << route;
  }

  asio::io_context io_;
  core::SystemClock clock_;
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  net::StaticResolver resolver_{{}};
  storage::MemoryTaskStore memory_;
  ThreadNotingStore noting_{memory_};
  std::optional<net::UrlGuard> guard_;
  std::optional<push::PushService> push_;
  std::optional<tasks::TaskService> service_;
  std::optional<PushRoutes> routes_;
};

TEST_F(PushRoutesTest, TheDeliveriesOfATaskAreReadOffTheIoThread) {
  HttpRequest r;
  r.method = "GET";
  r.target = "/v1/push/deliveries?taskId=t1";
  const HttpResponse got = Serve(r);
  EXPECT_EQ(got.status, 200) << got.body;
  ExpectNoReadOnThisThread("GET /v1/push/deliveries");
}

TEST_F(PushRoutesTest, ARetryOfADeadLetterIsDecidedOffTheIoThread) {
  HttpRequest r;
  r.method = "POST";
  r.target = "/v1/push/deliveries/retry";
  r.body = R"({"taskId":"t1","eventId":"no-such-delivery"})";
  const HttpResponse got = Serve(r);
  EXPECT_EQ(got.status, 400) << got.body;  // the task has no such delivery
  ExpectNoReadOnThisThread("POST /v1/push/deliveries/retry");
}

}  // namespace
}  // namespace a2ad::transport
