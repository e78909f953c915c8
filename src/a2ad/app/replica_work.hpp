#pragma once
// ReplicaWork: this process as one of several replicas on one database (storage/cluster.hpp;
// issue 31). Start registers it, follows the change feed (another replica's commits wake the
// streams, waits and executions here: TaskService::ObserveCommit), adopts the runs nobody
// executes (a dead replica's; an earlier process of this replica's), and starts a thread that
// renews the registration every third of the lease TTL and looks for orphans every quarter of
// it, at most every second (LookEvery; a few at a time, so idle replicas spread them). A dead
// replica's runs go on elsewhere within the TTL plus LookEvery * 1.2 plus the re-drive: with
// the default 8 s TTL, under 10 s. Stop ends the thread; Leave gives every
// lease up at once (SIGTERM: the other replicas take the runs over without waiting for the TTL).
//
// Metrics: a2ad_replica_info{replica}, a2ad_replica_leases_held, a2ad_replica_takeovers_total,
// a2ad_replica_feed_commits_total, a2ad_replica_heartbeat_failures_total.
//
// Thread safety: Start, Stop and Leave from one thread (the composition root).
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/cluster.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::app {

std::chrono::milliseconds LookEvery(std::chrono::milliseconds ttl);

class ReplicaWork {
 public:
  ReplicaWork(storage::Cluster& cluster, tasks::TaskService& service,
              std::chrono::milliseconds lease_ttl);
  ~ReplicaWork() { Stop(); }
  /// Registers, listens, adopts the orphans there are now; then the thread.
  core::Result<void> Start();
  void Stop();
  void Leave();

 private:
  void Loop();
  size_t AdoptOrphans(size_t batch);

  storage::Cluster& cluster_;
  tasks::TaskService& service_;
  const std::chrono::milliseconds ttl_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace a2ad::app
