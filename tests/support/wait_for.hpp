#pragma once
// Waiting in tests: poll until a condition holds, bounded by a timeout.
//
// A test waits for something it can observe (a status, a count, a log line), never for a fixed
// time "to let something happen": a fixed sleep is too short on a loaded machine (a flake) and
// too long everywhere else. WaitFor polls its predicate at once, then after a short backoff
// (1 ms, doubling up to `interval`), until it holds or `timeout` has passed, and looks once
// more at the deadline. The timeout only bounds how long a failing test takes: make it
// generous. PollUntil does the same over a value fetched each time (a response, a state) and
// returns the last one, for the test to assert on (and print when it is wrong).
//
// Fixed waits that remain in tests are of two kinds only: time that must pass because it is
// what is tested (an expiry, a client that stalls, a load's pacing), and a window in which
// something must NOT happen, which is GiveTimeToMisbehave below, so that it reads as deliberate.
//
// Thread safety: none needed; the predicate runs on the calling thread.
#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

namespace a2ad::testing {

/// Polls `pred` (callable as bool()) until it returns true or `timeout` has passed; whether it
/// did. The first look is immediate and the last one is at (or after) the deadline.
template <class Pred>
bool WaitFor(Pred&& pred, std::chrono::steady_clock::duration timeout = std::chrono::seconds(10),
             std::chrono::steady_clock::duration interval = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::chrono::steady_clock::duration pause = std::chrono::milliseconds(1);
  while (!pred()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min({pause, interval, deadline - now}));
    pause = std::min<std::chrono::steady_clock::duration>(pause * 2, interval);
  }
  return true;
}

/// Calls `fetch` until `pred(value)` holds or `timeout` has passed (polling as WaitFor does);
/// the last value fetched, whether or not it satisfies `pred`. Typical use:
///   auto task = PollUntil([&] { return Get(id); }, [](const auto& t) { return Done(t); });
///   ASSERT_TRUE(Done(task)) << task;
template <class Fetch, class Pred>
auto PollUntil(Fetch&& fetch, Pred&& pred,
               std::chrono::steady_clock::duration timeout = std::chrono::seconds(10),
               std::chrono::steady_clock::duration interval = std::chrono::milliseconds(20)) {
  auto value = fetch();
  bool fetched = true;  // the value for the first look
  WaitFor(
      [&] {
        if (!fetched) value = fetch();
        fetched = false;
        return pred(value);
      },
      timeout, interval);
  return value;
}

/// A fixed wait that proves an ABSENCE: the test then asserts that something did not happen
/// (no further event after a cancel, no push after a delete, a run still running through an
/// outage) within `window`. No event can stand for "nothing happened", so this one sleep is
/// genuinely needed; it is never to be used to let something happen.
inline void GiveTimeToMisbehave(std::chrono::steady_clock::duration window) {
  std::this_thread::sleep_for(window);
}

}  // namespace a2ad::testing
