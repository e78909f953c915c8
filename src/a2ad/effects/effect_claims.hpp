#pragma once
// EffectClaims: at most one call out per logical invocation in this process (OpenWOP
// idempotency, "concurrent duplicates", layer 2; DIGEST §6.1). Two executions of one run can
// reach the same node's call at once: a pause and its resume supersede an execution that is
// still out on its call (the call is not abandoned), and the execution that replaces it
// reaches the same node. Both mint the same key (the node's idempotency key, or the messageId
// of its A2A message), and the claim on that key is atomic (insert-if-absent under one
// mutex): the first claims it and calls; the others wait and take its result as if they had
// made the call. A result is kept for `keep` after its call ended, for an execution that
// reaches the node just after (the superseded execution's commit of the result is refused,
// so the one that replaced it must log the same result, not call again).
//
// A claimant whose call was interrupted (the result has `interrupted`: its run was cancelled
// or superseded while it waited to retry) leaves nothing: the next waiter claims the key and
// calls with the same key. Across a restart nothing is held: the re-driven node calls again
// with the same key, and the receiver deduplicates (DIGEST §6.1, "across a recovery
// boundary").
//
// Bounds: one entry per call in flight, plus at most `max_kept` finished results (the oldest
// are dropped first).
//
// Thread safety: Run may be called concurrently from any thread and executor.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace a2ad::effects {

class EffectClaims {
 public:
  struct Outcome {
    boost::json::object result;
    bool shared = false;  // another claimant made the call; this is its result
  };
  using Call = std::function<boost::asio::awaitable<boost::json::object>()>;
  using Clock = std::chrono::steady_clock;
  /// What time it is (tests move a time of their own).
  using Now = std::function<Clock::time_point()>;

  explicit EffectClaims(std::chrono::milliseconds keep = std::chrono::seconds(30),
                        size_t max_kept = 1024, Now now = Clock::now)
      : keep_(keep), max_kept_(max_kept), now_(std::move(now)) {}

  /// Calls `call` when `key` is not claimed; otherwise waits for the claimant's result.
  boost::asio::awaitable<Outcome> Run(std::string key, Call call);

  /// Calls in flight and results kept (for tests and metrics).
  size_t in_flight() const;
  size_t kept() const;

 private:
  struct Claim;
  void PurgeLocked(Clock::time_point now);

  const std::chrono::milliseconds keep_;
  const size_t max_kept_;
  const Now now_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Claim>> claims_;        // in flight and kept
  std::deque<std::pair<Clock::time_point, std::string>> kept_;  // finished, oldest first
};

/// The logical invocation id of a node's call (DIGEST §6.1 layer 2): base64url(sha256(
/// "openwop:activity:v2" \0 tenant \0 run \0 node \0 ordinal \0 provider)). The same for every
/// execution of the run, before and after a restart; core.http sends it as Idempotency-Key.
std::string IdempotencyKey(std::string_view tenant, std::string_view run, std::string_view node,
                           int64_t ordinal, std::string_view provider);

/// The OpenWOP concurrent-claim seam's probe (host-sample-test-seams §25): `executors`
/// coroutines, each on its own strand of `pool` (the server's threads), act as executors of one run
/// reaching one effect: each mints the logical invocation id of a core.http node (the key
/// HostEffects uses) and claims it through `claims`; the claimant's effect takes `effect_time`.
/// Answers {logicalInvocationId, mintedIds[], attempted, delivered, shared}.
boost::asio::awaitable<boost::json::object> ProbeConcurrentClaim(
    EffectClaims& claims, boost::asio::any_io_executor pool, int executors,
    std::chrono::milliseconds effect_time = std::chrono::milliseconds(50));

}  // namespace a2ad::effects
