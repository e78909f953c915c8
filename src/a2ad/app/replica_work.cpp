// See replica_work.hpp.
#include "a2ad/app/replica_work.hpp"

#include <algorithm>
#include <random>

#include "a2ad/core/log.hpp"
#include "a2ad/core/metrics.hpp"

namespace a2ad::app {
namespace {
using core::Metrics;
using Type = core::MetricsRegistry::Type;

core::MetricFamily& LeasesHeld() {
  static auto& f = Metrics().Family("a2ad_replica_leases_held", Type::kGauge,
                                    "Runs whose lease this replica holds (it executes them).");
  return f;
}
core::MetricFamily& Takeovers() {
  static auto& f = Metrics().Family(
      "a2ad_replica_takeovers_total", Type::kCounter,
      "Runs this replica took over from a replica that stopped (or from its own earlier process).");
  return f;
}
core::MetricFamily& FeedCommits() {
  static auto& f = Metrics().Family("a2ad_replica_feed_commits_total", Type::kCounter,
                                    "Commits of other replicas seen on the change feed.");
  return f;
}
core::MetricFamily& HeartbeatFailures() {
  static auto& f = Metrics().Family("a2ad_replica_heartbeat_failures_total", Type::kCounter,
                                    "Renewals of this replica's registration that failed.");
  return f;
}
constexpr size_t kAdoptBatch = 16;  // runs taken per look: idle replicas share the rest
}  // namespace

std::chrono::milliseconds LookEvery(std::chrono::milliseconds ttl) {
  return std::min<std::chrono::milliseconds>(ttl / 4, std::chrono::milliseconds(1000));
}

ReplicaWork::ReplicaWork(storage::Cluster& cluster, tasks::TaskService& service,
                         std::chrono::milliseconds lease_ttl)
    : cluster_(cluster), service_(service), ttl_(lease_ttl) {
  Metrics()
      .Family("a2ad_replica_info", Type::kGauge,
              "This replica among the replicas on one database (its id label); always 1.",
              {"replica"})
      .Set({cluster_.replica_id()}, 1);
  // The durability rung (OpenWOP RFC 0158) and the recovery bound it is declared with: the
  // discovery document has no field for them, so /metrics and the README say them.
  Metrics()
      .Family("a2ad_durability_info", Type::kGauge,
              "The durability rung this host serves (OpenWOP RFC 0158); always 1.", {"rung"})
      .Set({"durable-multi-instance"}, 1);
  const auto bound = ttl_ + LookEvery(ttl_) * 6 / 5;
  Metrics()
      .Family("a2ad_replica_recovery_bound_seconds", Type::kGauge,
              "How long after a replica stops a run it executed goes on elsewhere, at most "
              "(the lease TTL plus one look for orphans), before the re-drive itself.")
      .Set({}, std::chrono::duration<double>(bound).count());
  LeasesHeld().Set({}, 0);
  Takeovers().Add({}, 0);
  FeedCommits().Add({}, 0);
  HeartbeatFailures().Add({}, 0);
}

core::Result<void> ReplicaWork::Start() {
  if (auto ok = cluster_.Heartbeat(); !ok) return std::move(ok).error();
  storage::Cluster::Feed feed;
  feed.on_commit = [this](const std::string& id, int64_t seq) {
    FeedCommits().Add({});
    service_.ObserveCommit(id, seq);
  };
  feed.on_resync = [this] { service_.Resync(); };
  feed.on_nudge = [this](const std::string& id, const std::string& key) {
    service_.Nudge(id, key, /*forward=*/false);
  };
  cluster_.Listen(std::move(feed), std::chrono::milliseconds(5000));
  if (auto unleased = cluster_.AdoptUnleased(); !unleased)
    core::LogWarn("replica: leasing unleased runs: " + unleased.error().message);
  else if (unleased.value() > 0)
    core::LogInfo("replica: " + std::to_string(unleased.value()) +
                  " unfinished run(s) had no lease (made by an older build): adopting them");
  // Every orphan there is now (a restart of this replica adopts its own runs at once),
  // renewing the registration between batches (a long adoption must not let it expire).
  size_t adopted = 0;
  for (size_t got = 0; (got = AdoptOrphans(256)) > 0;) {
    adopted += got;
    (void)cluster_.Heartbeat();
  }
  core::LogInfo("replica " + cluster_.holder() + ": leases of " + std::to_string(ttl_.count()) +
                " ms; adopted " + std::to_string(adopted) + " run(s) at start");
  thread_ = std::thread([this] {
    core::SetThreadName("a2ad-replica");
    Loop();
  });
  return core::Ok{};
}

size_t ReplicaWork::AdoptOrphans(size_t batch) {
  auto claimed = cluster_.ClaimOrphans(batch);
  if (!claimed) {
    core::LogWarn("replica: looking for orphaned runs: " + claimed.error().message);
    return 0;
  }
  if (claimed->empty()) return 0;
  Takeovers().Add({}, static_cast<double>(claimed->size()));
  service_.Adopt(*claimed);
  return claimed->size();
}

void ReplicaWork::Loop() {
  using Clock = std::chrono::steady_clock;
  std::mt19937 jitter(std::random_device{}());
  const auto beat_every = ttl_ / 3;
  auto next_beat = Clock::now() + beat_every;
  auto next_look = Clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    const auto now = Clock::now();
    if (now >= next_beat) {
      lock.unlock();
      if (auto ok = cluster_.Heartbeat(); !ok) {
        HeartbeatFailures().Add({});
        core::LogWarn("replica: renewing the registration: " + ok.error().message);
      }
      if (auto held = cluster_.LeasesHeld(); held) LeasesHeld().Set({}, static_cast<double>(*held));
      lock.lock();
      next_beat = now + beat_every;
    }
    if (now >= next_look) {
      lock.unlock();
      // A full batch: more may be waiting; look again at once.
      const bool full = AdoptOrphans(kAdoptBatch) == kAdoptBatch;
      lock.lock();
      // Every quarter of the TTL (at most every second), give or take a fifth, so replicas
      // do not look in step. The recovery bound: the TTL plus this, plus the re-drive.
      const auto every = LookEvery(ttl_);
      std::uniform_int_distribution<int64_t> spread(-every.count() / 5, every.count() / 5);
      next_look =
          full ? Clock::now() : Clock::now() + every + std::chrono::milliseconds(spread(jitter));
    }
    cv_.wait_until(lock, std::min(next_beat, next_look), [this] { return stop_; });
  }
}

void ReplicaWork::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReplicaWork::Leave() {
  Stop();
  if (auto ok = cluster_.Leave(); !ok)
    core::LogWarn("replica: leaving: " + ok.error().message +
                  " (the other replicas take its runs over when its lease expires)");
  else
    core::LogInfo("replica " + cluster_.holder() + " left: its runs are taken over at once");
}

}  // namespace a2ad::app
