// Where TaskService calls its store (task_service.hpp "Threads and locks"): every read runs on
// the read executor, never on an I/O thread and never under a task's lock, so a slow read
// (a network database) stalls only the request that waits for it; a stale cached head is
// re-read before the lock is taken, and again if another commit failed meanwhile. The one
// exception, a read the store answers without waiting (TaskStore::TryGet), stays where it is
// asked, behind any read of its task still on the executor.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/storage/forwarding_task_store.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/builtin/echo_executor.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "gate_executor.hpp"
#include "wait_for.hpp"

namespace a2ad::tasks {
namespace {
namespace asio = boost::asio;
using core::ErrorCode;
using S = protocol::TaskState;

using testing::GateExecutor;

// A store that notes where each read runs (thread, whether the task's lock is held), can
// hold a chosen Get of one task until Open(), and can hold commits and fail them.
class ObservedStore final : public storage::ForwardingTaskStore {
 public:
  using ForwardingTaskStore::ForwardingTaskStore;

  struct Read {
    std::string method;
    std::string task_id;
    std::thread::id thread;
    bool task_locked = false;
  };

  // ---- reads
  core::Result<std::optional<storage::TaskRecord>> Get(std::string_view id) override {
    Note("Get", id);
    bool block = false;
    {
      std::lock_guard lock(mu_);
      if (id == gated_id_ && ++gets_of_gated_ == block_at_) block = true;
    }
    if (block) {
      std::unique_lock lock(mu_);
      blocked_ = true;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    }
    return inner().Get(id);
  }
  // Answers at once only when `answer_now` is set, and then declines the first
  // `decline_now` times (that read goes to Get, on the read executor).
  std::optional<core::Result<std::optional<storage::TaskRecord>>> TryGet(std::string_view id,
                                                                         bool) override {
    if (!answer_now) return std::nullopt;
    Note("TryGet", id);
    {
      std::lock_guard lock(mu_);
      if (decline_now > 0) {
        --decline_now;
        return std::nullopt;
      }
    }
    return inner().Get(id);
  }
  std::atomic<bool> answer_now{false};
  void DeclineNow(int n) {
    std::lock_guard lock(mu_);
    decline_now = n;
  }
  int decline_now = 0;  // under mu_

  core::Result<std::optional<storage::TaskRecord>> FindByDedupKey(std::string_view tenant,
                                                                  std::string_view key) override {
    Note("FindByDedupKey", "");
    return inner().FindByDedupKey(tenant, key);
  }
  core::Result<storage::TaskPage> List(const storage::TaskQuery& q) override {
    Note("List", "");
    return inner().List(q);
  }
  core::Result<std::vector<protocol::RunEvent>> ReadEvents(std::string_view id, int64_t after,
                                                           size_t limit) override {
    Note("ReadEvents", id);
    return inner().ReadEvents(id, after, limit);
  }

  // ---- commits
  void Commit(storage::TaskCommit c, CommitCallback done) override {
    if (!hold) return inner().Commit(std::move(c), std::move(done));
    std::lock_guard lock(mu_);
    held_.emplace_back(std::move(c), std::move(done));
  }
  size_t held() {
    std::lock_guard lock(mu_);
    return held_.size();
  }
  // Ends the oldest held commit: failed (nothing written), or passed on to the store.
  void EndOldest(bool fail) {
    std::pair<storage::TaskCommit, CommitCallback> first;
    {
      std::lock_guard lock(mu_);
      first = std::move(held_.front());
      held_.erase(held_.begin());
    }
    if (fail)
      first.second(core::Error(ErrorCode::kInternal, "injected commit failure"));
    else
      inner().Commit(std::move(first.first), std::move(first.second));
  }
  std::atomic<bool> hold{false};

  // ---- the gate
  // Holds the `nth` Get of `id` from now on until Open().
  void GateGet(const std::string& id, int nth) {
    std::lock_guard lock(mu_);
    gated_id_ = id;
    gets_of_gated_ = 0;
    block_at_ = nth;
    blocked_ = false;
    open_ = false;
  }
  bool blocked() {
    std::lock_guard lock(mu_);
    return blocked_;
  }
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  int gets_of_gated() {
    std::lock_guard lock(mu_);
    return gets_of_gated_;
  }

  std::vector<Read> reads() {
    std::lock_guard lock(mu_);
    return reads_;
  }
  TaskService* service = nullptr;

 private:
  void Note(const char* method, std::string_view id) {
    Read r{method, std::string(id), std::this_thread::get_id(),
           service && !id.empty() && service->task_locked(std::string(id))};
    std::lock_guard lock(mu_);
    reads_.push_back(std::move(r));
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Read> reads_;
  std::string gated_id_;
  int gets_of_gated_ = 0;
  int block_at_ = -1;
  bool blocked_ = false;
  bool open_ = true;
  std::vector<std::pair<storage::TaskCommit, CommitCallback>> held_;
};

class TaskServiceReadsTest : public ::testing::Test {
 protected:
  TaskServiceReadsTest() {
    service_ = std::make_unique<TaskService>(store_, clock_, *ids_, io_.get_executor(),
                                             TaskServiceOptions{});
    service_->RegisterSkill({"echo"}, std::make_shared<EchoExecutor>());
    service_->RegisterSkill({"gate"}, std::make_shared<GateExecutor>());
    store_.service = service_.get();
  }
  ~TaskServiceReadsTest() override {
    store_.Open();  // never leave a read thread waiting
    store_.service = nullptr;
  }

  // Runs the loop (on this thread: the only I/O thread) until `done`.
  void RunUntil(const std::function<bool()>& done) {
    const bool held = testing::WaitFor(
        [&] {
          if (done()) return true;
          io_.restart();
          io_.poll();
          return done();
        },
        std::chrono::seconds(10), std::chrono::milliseconds(1));
    io_.restart();
    ASSERT_TRUE(held) << "timed out";
  }
  template <class T>
  std::shared_ptr<std::optional<T>> Spawn(asio::awaitable<T> aw) {
    auto out = std::make_shared<std::optional<T>>();
    asio::co_spawn(io_, std::move(aw), [out](std::exception_ptr ep, T v) {
      if (ep) std::rethrow_exception(ep);
      out->emplace(std::move(v));
    });
    return out;
  }
  template <class T>
  T Run(asio::awaitable<T> aw) {
    auto out = Spawn(std::move(aw));
    RunUntil([&] { return out->has_value(); });
    return std::move(**out);
  }

  static protocol::SendMessageRequest Send(const std::string& message_id, const std::string& text,
                                           const std::string& skill,
                                           const std::string& task_id = "") {
    protocol::SendMessageRequest r;
    r.message.message_id = message_id;
    r.message.role = protocol::Role::kUser;
    r.message.task_id = task_id;
    r.message.parts.push_back(protocol::Part::Text(text));
    if (task_id.empty()) r.message.metadata["skillId"] = skill;
    return r;
  }

  // Every read so far ran off this (the I/O) thread, without the task's lock.
  void ExpectReadsOffTheIoThreadAndUnlocked() {
    const auto reads = store_.reads();
    ASSERT_FALSE(reads.empty());
    for (const auto& r : reads) {
      EXPECT_NE(r.thread, io_thread_) << r.method << " " << r.task_id << " ran on the I/O thread";
      EXPECT_FALSE(r.task_locked) << r.method << " " << r.task_id << " ran under the task's lock";
    }
  }

  const std::thread::id io_thread_ = std::this_thread::get_id();
  core::SystemClock clock_;
  // Sequential ids: reads of one task id run in order on one of the read executor's 64
  // stripes (read_executor.hpp), so two random ids share a stripe one time in 64, and a test
  // that holds one task's read while another task's are served would then wait on itself.
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeSequentialIdGenerator("task");
  storage::MemoryTaskStore inner_;
  ObservedStore store_{inner_};
  asio::io_context io_;
  std::unique_ptr<TaskService> service_;
  const protocol::CallContext ctx_ =
      protocol::CallContext::Anonymous(protocol::Binding::kJsonRpc, protocol::WireVersion::kV10);
};

TEST_F(TaskServiceReadsTest, ASlowStoreReadDoesNotBlockTheIoThread) {
  auto first = Run(service_->SendMessage(ctx_, Send("m-1", "one", "echo")));
  ASSERT_TRUE(first.ok());
  const std::string id = first->id;

  // tasks/get of that task: its read hangs in the store until released.
  store_.GateGet(id, 1);
  std::thread::id resumed_on;
  auto slow = Spawn([](TaskService& svc, const protocol::CallContext& ctx, std::string task_id,
                       std::thread::id& where) -> asio::awaitable<core::Result<protocol::Task>> {
    protocol::GetTaskRequest req;  // (not braced inside co_await: GCC 12, see OneEvent)
    req.id = task_id;
    auto r = co_await svc.GetTask(ctx, std::move(req));
    where = std::this_thread::get_id();
    co_return r;
  }(*service_, ctx_, id, resumed_on));
  RunUntil([&] { return store_.blocked(); });

  // Meanwhile, on the same single I/O thread, other requests come and go.
  auto other = Run(service_->SendMessage(ctx_, Send("m-2", "two", "echo")));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status.state, S::kCompleted);
  auto listed = Run(service_->ListTasks(ctx_, {}));
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->tasks.size(), 2u);
  auto got_other = Run(service_->GetRecord(ctx_, other->id));
  ASSERT_TRUE(got_other.ok() && got_other->has_value());
  EXPECT_FALSE(slow->has_value()) << "still waiting for its read";

  store_.Open();
  RunUntil([&] { return slow->has_value(); });
  ASSERT_TRUE(slow->value().ok());
  EXPECT_EQ(slow->value()->id, id);
  EXPECT_EQ(resumed_on, io_thread_) << "the request resumes on its own executor";
  ExpectReadsOffTheIoThreadAndUnlocked();
}

// A read the store answers without waiting (TaskStore::TryGet) runs where it is asked and
// crosses no thread; one it declines goes to Get on the read executor as before.
TEST_F(TaskServiceReadsTest, AReadTheStoreAnswersAtOnceStaysOnTheIoThread) {
  auto first = Run(service_->SendMessage(ctx_, Send("m-1", "one", "echo")));
  ASSERT_TRUE(first.ok());
  store_.answer_now = true;
  const size_t before = store_.reads().size();
  protocol::GetTaskRequest req;
  req.id = first->id;
  auto got = Run(service_->GetTask(ctx_, req));
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->status.state, S::kCompleted);
  const auto reads = store_.reads();
  ASSERT_EQ(reads.size(), before + 1);
  EXPECT_EQ(reads.back().method, "TryGet");
  EXPECT_EQ(reads.back().thread, io_thread_);
  EXPECT_FALSE(reads.back().task_locked);
}

// Reads of one task resume in the order they were asked (read_executor.hpp): while one waits
// on the read executor, a later read of the task queues behind it, although the store could
// answer that one at once.
TEST_F(TaskServiceReadsTest, AReadThatCouldAnswerAtOnceWaitsBehindAnEarlierReadOfItsTask) {
  auto first = Run(service_->SendMessage(ctx_, Send("m-1", "one", "echo")));
  ASSERT_TRUE(first.ok());
  const std::string id = first->id;
  store_.answer_now = true;
  store_.DeclineNow(1);
  store_.GateGet(id, 1);
  std::vector<int> resumed;
  auto get = [](TaskService& svc, const protocol::CallContext& ctx, std::string task_id,
                std::vector<int>& order, int n) -> asio::awaitable<core::Result<protocol::Task>> {
    protocol::GetTaskRequest req;
    req.id = task_id;
    auto r = co_await svc.GetTask(ctx, std::move(req));
    order.push_back(n);
    co_return r;
  };
  auto one = Spawn(get(*service_, ctx_, id, resumed, 1));
  RunUntil([&] { return store_.blocked(); });
  auto two = Spawn(get(*service_, ctx_, id, resumed, 2));
  io_.poll();
  EXPECT_FALSE(two->has_value()) << "answered before the earlier read of its task";
  store_.Open();
  RunUntil([&] { return one->has_value() && two->has_value(); });
  ASSERT_TRUE(one->value().ok() && two->value().ok());
  EXPECT_EQ(resumed, (std::vector<int>{1, 2}));
  int try_gets = 0;
  for (const auto& r : store_.reads())
    if (r.method == "TryGet" && r.task_id == id) ++try_gets;
  EXPECT_EQ(try_gets, 1) << "the second read did not ask for an answer at once";
}

TEST_F(TaskServiceReadsTest, AStaleHeadIsReReadOffTheLockAndAgainIfACommitFailedMeanwhile) {
  auto parked = Run(service_->SendMessage(ctx_, Send("start", "go", "gate")));
  ASSERT_TRUE(parked.ok());
  ASSERT_EQ(parked->status.state, S::kInputRequired);
  const std::string id = parked->id;
  const auto stored_before = inner_.Get(id).value();

  // Two replies in flight (their commits held), then the first fails: the cached head is
  // stale, and the second (built on the first) will fail too.
  store_.hold = true;
  auto r1 = Spawn(service_->SendMessage(ctx_, Send("r-1", "ask", "", id)));
  RunUntil([&] { return store_.held() == 1; });
  auto r2 = Spawn(service_->SendMessage(ctx_, Send("r-2", "ask", "", id)));
  RunUntil([&] { return store_.held() == 2; });
  store_.EndOldest(/*fail=*/true);
  RunUntil([&] { return r1->has_value(); });
  ASSERT_FALSE(r1->value().ok());

  // A third reply must re-read the head: its read (the 2nd Get from now, after its
  // visibility check) is held while the second commit fails too.
  store_.GateGet(id, 2);
  auto r3 = Spawn(service_->SendMessage(ctx_, Send("r-3", "accept", "", id)));
  RunUntil([&] { return store_.blocked(); });
  EXPECT_FALSE(service_->task_locked(id)) << "the head is read without the task's lock";
  store_.EndOldest(/*fail=*/true);
  store_.hold = false;
  RunUntil([&] { return r2->has_value(); });
  ASSERT_FALSE(r2->value().ok());
  store_.Open();
  RunUntil([&] { return r3->has_value(); });
  ASSERT_TRUE(r3->value().ok()) << r3->value().error().message;
  EXPECT_EQ(store_.gets_of_gated(), 3) << "visibility, the held read, the read again";

  // Only the third reply was written, on top of what the store had.
  io_.restart();
  io_.run();
  auto events = inner_.ReadEvents(id, stored_before->last_sequence, 100).value();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().type, protocol::kEvMessageReceived);
  EXPECT_EQ(events.front().payload.at("message").at("messageId"), "r-3");
  storage::TaskRecord folded;
  for (const auto& e : inner_.ReadEvents(id, -1, 1000).value())
    ASSERT_TRUE(ApplyEvent(folded, e).ok()) << e.type;
  EXPECT_EQ(folded, *inner_.Get(id).value());
  EXPECT_EQ(folded.task.status.state, S::kCompleted);
  ExpectReadsOffTheIoThreadAndUnlocked();
}

TEST_F(TaskServiceReadsTest, LateStreamItemsAreReadOffTheIoThreadAndInCommitOrder) {
  auto parked = Run(service_->SendMessage(ctx_, Send("start", "go", "gate")));
  ASSERT_TRUE(parked.ok());
  const std::string id = parked->id;
  const int64_t before = inner_.Get(id).value()->last_sequence;
  // A reply whose commit is in flight when a stream attaches: the stream's snapshot misses
  // it, so its items are read back from the log after the commit. ("ask" does not resume:
  // no execution commits meanwhile.)
  store_.hold = true;
  auto reply = Spawn(service_->SendMessage(ctx_, Send("r-1", "ask", "", id)));
  RunUntil([&] { return store_.held() == 1; });
  auto stream = Run(service_->Subscribe(ctx_, id, std::nullopt, 64));
  ASSERT_TRUE(stream.ok());
  EXPECT_EQ(stream->last_sequence, before);
  store_.hold = false;
  store_.EndOldest(/*fail=*/false);
  RunUntil([&] { return reply->has_value(); });
  io_.restart();
  io_.run();
  std::vector<int64_t> sequences;
  while (auto item = stream->subscription->TryNext()) sequences.push_back(item->sequence);
  ASSERT_FALSE(sequences.empty());
  for (size_t i = 1; i < sequences.size(); ++i) EXPECT_LT(sequences[i - 1], sequences[i]);
  EXPECT_EQ(sequences.back(), inner_.Get(id).value()->last_sequence);
  bool read_late = false;
  for (const auto& r : store_.reads()) read_late = read_late || r.method == "ReadEvents";
  EXPECT_TRUE(read_late) << "the in-flight commit's items were made from the log";
  ExpectReadsOffTheIoThreadAndUnlocked();
}

}  // namespace
}  // namespace a2ad::tasks
