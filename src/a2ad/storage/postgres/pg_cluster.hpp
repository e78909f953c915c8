#pragma once
// PgCluster: leases and the change feed of several replicas on one PostgreSQL database
// (cluster.hpp), over the tables of core migration 3 (pg_schema.cpp): `replicas` (each
// process's registration, expiring in the database's clock, so the machines' clocks do not
// matter) and `run_leases`. Lease statements run on a connection of its own (made again when
// lost); the feed LISTENs on another (a session of its own, as LISTEN needs), polling its
// socket.
//
// Thread safety: as Cluster.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "a2ad/storage/cluster.hpp"

namespace a2ad::storage {
namespace pg {
class Connection;
class Params;
class Rows;
}  // namespace pg

struct ClusterOptions {
  std::string replica_id;  // the replica's name (unique among live replicas)
  std::chrono::milliseconds lease_ttl{10000};
};

class PgCluster final : public Cluster {
 public:
  /// `holder`: "<replica id>/<nonce>" (MakeHolder).
  PgCluster(std::string url, ClusterOptions options, std::string holder);
  ~PgCluster() override;
  static std::string MakeHolder(const std::string& replica_id);

  const std::string& holder() const override { return holder_; }
  const std::string& replica_id() const override { return options_.replica_id; }
  core::Result<void> Heartbeat() override;
  core::Result<int64_t> Acquire(const std::string& task_id) override;
  core::Result<bool> Holds(const std::string& task_id, int64_t epoch) override;
  core::Result<std::optional<int64_t>> ClaimIdle(const std::string& task_id) override;
  core::Result<std::vector<Claimed>> ClaimOrphans(size_t limit) override;
  core::Result<void> Release(const std::string& task_id, int64_t epoch) override;
  core::Result<void> Abandon(const std::string& task_id, int64_t epoch) override;
  core::Result<void> Leave() override;
  core::Result<int64_t> AdoptUnleased() override;
  core::Result<int64_t> LeasesHeld() override;
  void Listen(Feed feed, std::chrono::milliseconds resync_every) override;
  core::Result<void> Nudge(const std::string& task_id, const std::string& key) override;
  void Stop() override;

 private:
  core::Result<pg::Rows> Exec(const char* sql, const pg::Params& params, const char* what);
  void FeedLoop(const Feed& feed, std::chrono::milliseconds resync_every);

  const std::string url_;
  const ClusterOptions options_;
  const std::string holder_;
  std::mutex mu_;  // guards conn_
  std::unique_ptr<pg::Connection> conn_;
  std::atomic<bool> stop_{false};
  std::thread feed_;
};

}  // namespace a2ad::storage
