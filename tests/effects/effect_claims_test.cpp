// EffectClaims: executors of one run racing to one call make it once, on real threads.
#include "a2ad/effects/effect_claims.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>
#include <thread>
#include <vector>

namespace a2ad::effects {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using namespace std::chrono_literals;

// Runs `make(pool)` on a pool of 4 threads and returns what it answers; `pool` is the pool's
// own executor (strands made of it run in parallel).
template <typename T, typename Make>
T RunOnPool(Make make) {
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&io] { io.run(); });
  auto fut = asio::co_spawn(asio::make_strand(io), make(asio::any_io_executor(io.get_executor())),
                            asio::use_future);
  T out = fut.get();
  work.reset();
  io.stop();
  for (auto& t : threads) t.join();
  return out;
}

asio::awaitable<json::object> Delayed(std::atomic<int>& calls, json::object result,
                                      std::chrono::milliseconds d) {
  ++calls;
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
  co_return result;
}

// `n` claimants of one key started together; answers how many were shared results.
asio::awaitable<int> Race(asio::any_io_executor ex, EffectClaims& claims, std::atomic<int>& calls,
                          int n, json::object result) {
  std::vector<std::future<EffectClaims::Outcome>> outs;
  for (int i = 0; i < n; ++i)
    outs.push_back(
        asio::co_spawn(asio::make_strand(ex),
                       claims.Run("k", [&calls, result] { return Delayed(calls, result, 30ms); }),
                       asio::use_future));
  int shared = 0;
  for (auto& f : outs) {
    auto o = f.get();
    EXPECT_EQ(o.result, result);
    shared += o.shared ? 1 : 0;
  }
  co_return shared;
}

TEST(EffectClaims, ConcurrentClaimantsOfOneKeyMakeOneCallAndAllGetItsResult) {
  EffectClaims claims;
  std::atomic<int> calls{0};
  const json::object result{{"response", json::object{{"status", 200}}}};
  const int shared = RunOnPool<int>([&](auto ex) { return Race(ex, claims, calls, 8, result); });
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(shared, 7);
  EXPECT_EQ(claims.in_flight(), 0u);
  EXPECT_EQ(claims.kept(), 1u);
}

// As HostEffects claims a call: from inside a coroutine, the call a named object capturing
// shared state, the claim awaited as a child coroutine.
asio::awaitable<bool> ClaimAsAChild(EffectClaims& claims, std::shared_ptr<std::atomic<int>> calls,
                                    json::object result) {
  EffectClaims::Call call = [calls, result] { return Delayed(*calls, result, 30ms); };
  EffectClaims::Outcome out = co_await claims.Run("child", std::move(call));
  EXPECT_EQ(out.result, result);
  co_return out.shared;
}

asio::awaitable<int> RaceChildren(asio::any_io_executor ex, EffectClaims& claims,
                                  std::shared_ptr<std::atomic<int>> calls, int n) {
  std::vector<std::future<bool>> outs;
  for (int i = 0; i < n; ++i)
    outs.push_back(asio::co_spawn(asio::make_strand(ex),
                                  ClaimAsAChild(claims, calls, json::object{{"n", 1}}),
                                  asio::use_future));
  int shared = 0;
  for (auto& f : outs) shared += f.get() ? 1 : 0;
  co_return shared;
}

TEST(EffectClaims, ClaimantsAwaitingItAsAChildCoroutineShareOneCall) {
  EffectClaims claims;
  auto calls = std::make_shared<std::atomic<int>>(0);
  const int shared = RunOnPool<int>([&](auto ex) { return RaceChildren(ex, claims, calls, 8); });
  EXPECT_EQ(calls->load(), 1);
  EXPECT_EQ(shared, 7);
  EXPECT_EQ(calls.use_count(), 1) << "every copy of the call's state is released";
}

TEST(EffectClaims, ALateClaimantWithinTheKeepWindowTakesTheResultAndAfterItCallsAgain) {
  // The claims' time is the test's: the window is judged against it, not the machine's pace.
  std::atomic<int64_t> now_ms{0};
  EffectClaims claims(100ms, 1024, [&now_ms] {
    return EffectClaims::Clock::time_point(std::chrono::milliseconds(now_ms.load()));
  });
  std::atomic<int> calls{0};
  const json::object result{{"ok", true}};
  auto once = [&] {
    return RunOnPool<EffectClaims::Outcome>([&](auto) {
      return claims.Run("k", [&calls, result] { return Delayed(calls, result, 1ms); });
    });
  };
  EXPECT_FALSE(once().shared);
  EXPECT_TRUE(once().shared);  // the superseded execution's result, for its successor
  EXPECT_EQ(calls.load(), 1);
  now_ms = 99;
  EXPECT_TRUE(once().shared);  // still within the window
  EXPECT_EQ(calls.load(), 1);
  now_ms = 150;
  EXPECT_FALSE(once().shared);  // the window is over: a new call (same key)
  EXPECT_EQ(calls.load(), 2);
}

TEST(EffectClaims, AnInterruptedCallLeavesNothingAndTheNextClaimantCalls) {
  EffectClaims claims;
  std::atomic<int> calls{0};
  auto with = [&](json::object r) {
    return RunOnPool<EffectClaims::Outcome>(
        [&](auto) { return claims.Run("k", [&calls, r] { return Delayed(calls, r, 1ms); }); });
  };
  EXPECT_TRUE(with(json::object{{"interrupted", true}}).result.contains("interrupted"));
  EXPECT_EQ(claims.kept(), 0u);
  auto second = with(json::object{{"ok", true}});
  EXPECT_FALSE(second.shared);
  EXPECT_EQ(calls.load(), 2);
}

TEST(EffectClaims, DifferentKeysDoNotWaitForEachOther) {
  EffectClaims claims;
  std::atomic<int> calls{0};
  RunOnPool<int>([&](asio::any_io_executor ex) -> asio::awaitable<int> {
    auto a = asio::co_spawn(asio::make_strand(ex),
                            claims.Run("a",
                                       [&calls] {
                                         return Delayed(calls, json::object{{"k", "a"}}, 20ms);
                                       }),
                            asio::use_future);
    auto b = asio::co_spawn(asio::make_strand(ex),
                            claims.Run("b",
                                       [&calls] {
                                         return Delayed(calls, json::object{{"k", "b"}}, 20ms);
                                       }),
                            asio::use_future);
    EXPECT_EQ(a.get().result.at("k"), "a");
    EXPECT_EQ(b.get().result.at("k"), "b");
    co_return 0;
  });
  EXPECT_EQ(calls.load(), 2);
}

TEST(EffectClaims, KeptResultsAreBounded) {
  EffectClaims claims(std::chrono::hours(1), 3);
  std::atomic<int> calls{0};
  for (int i = 0; i < 10; ++i)
    RunOnPool<EffectClaims::Outcome>([&](auto) {
      return claims.Run("k" + std::to_string(i), [&calls] {
        return Delayed(calls, json::object{{"ok", true}}, 0ms);
      });
    });
  // The purge runs at the next claim: at most max_kept + the newest.
  EXPECT_LE(claims.kept(), 4u);
  EXPECT_EQ(calls.load(), 10);
}

TEST(EffectClaims, TheSeamProbeReportsOneIdentityAndOneDelivery) {
  EffectClaims claims;
  for (int executors : {2, 5, 32}) {
    json::object out = RunOnPool<json::object>(
        [&](auto ex) { return ProbeConcurrentClaim(claims, ex, executors, 30ms); });
    EXPECT_EQ(out.at("attempted").as_int64(), executors);
    EXPECT_EQ(out.at("delivered").as_int64(), 1) << json::serialize(out);
    EXPECT_EQ(out.at("shared").as_int64(), executors - 1);
    const auto& ids = out.at("mintedIds").as_array();
    ASSERT_EQ(ids.size(), static_cast<size_t>(executors));
    for (const auto& id : ids) EXPECT_EQ(id, out.at("logicalInvocationId"));
  }
}

TEST(EffectClaims, TheLogicalInvocationIdIsStableAndNamesEveryPart) {
  const std::string k = IdempotencyKey("t", "run-1", "node-a", 0, "core.http");
  EXPECT_EQ(k, IdempotencyKey("t", "run-1", "node-a", 0, "core.http"));
  EXPECT_EQ(k.size(), 43u);  // base64url of 32 bytes, unpadded
  EXPECT_NE(k, IdempotencyKey("u", "run-1", "node-a", 0, "core.http"));
  EXPECT_NE(k, IdempotencyKey("t", "run-2", "node-a", 0, "core.http"));
  EXPECT_NE(k, IdempotencyKey("t", "run-1", "node-b", 0, "core.http"));
  EXPECT_NE(k, IdempotencyKey("t", "run-1", "node-a", 1, "core.http"));
  EXPECT_NE(k, IdempotencyKey("t", "run-1", "node-a", 0, "core.other"));
  // The parts are delimited: moving a character across a boundary changes the key.
  EXPECT_NE(IdempotencyKey("ab", "c", "n", 0, "p"), IdempotencyKey("a", "bc", "n", 0, "p"));
}

}  // namespace
}  // namespace a2ad::effects
