#pragma once
// Cluster: what several replicas on one database need of it (issue 31), offered by an engine
// that replicas share (Backend::Replicas(); nullptr for SQLite and memory, where one process
// holds every run).
//
// Leases. Each process is a holder ("<replica id>/<nonce>"), alive while its registration's
// expiry (renewed by Heartbeat, in the database's clock) is ahead. A run being executed has a
// lease: its holder and a fencing epoch. The creating commit of a task takes it at epoch 1
// (TaskCommit::take_lease); an execution started any other way (an answered gate, a resume, a
// takeover) takes it with Acquire, which moves the epoch on. Every commit of an execution
// carries its epoch (TaskCommit::fence_epoch) and the database refuses it once the epoch
// moved on (kConflict, detail reason "fenced"): a replica that lost a run cannot write to it,
// however late. The commit that ends a task drops its lease. A lease whose holder is dead (its
// registration expired or gone, or an earlier process of the same replica id) is an orphan:
// ClaimOrphans takes a few at a time (skipping rows another replica is claiming), so idle
// replicas spread them.
//
// Change feed. Every commit batch notifies the task ids and sequences it wrote; Listen calls
// `on_commit` on its own thread for each commit of another process, and `on_resync` after the
// listening connection was lost and made again (something may have been missed), every
// `resync_every` as a safety net, and when another process changed what lives beside every
// task (a webhook). A push config deleted by another process comes as `on_commit(task, -1)`:
// the task did not move, what lives beside it did. Nudge goes out on the feed too, to
// `on_nudge` of every other process (a peer's push reached one replica; the run it wakes may
// execute on another).
//
// Thread safety: every member may be called from any thread.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::storage {

class Cluster {
 public:
  struct Claimed {
    std::string task_id;
    int64_t epoch = 0;
    std::string from;  // the dead holder ("" for a lease nobody held)
  };
  virtual ~Cluster() = default;
  /// This process's name in the leases: "<replica id>/<nonce>".
  virtual const std::string& holder() const = 0;
  virtual const std::string& replica_id() const = 0;
  /// Registers (the first time) or renews this process's registration for the lease TTL.
  virtual core::Result<void> Heartbeat() = 0;
  /// Takes `task_id`'s lease whoever holds it; returns the new epoch.
  virtual core::Result<int64_t> Acquire(const std::string& task_id) = 0;
  /// Whether this process still holds `task_id`'s lease at `epoch` (an execution about to
  /// call out of the host: a call made after the run was taken over would be made twice).
  virtual core::Result<bool> Holds(const std::string& task_id, int64_t epoch) = 0;
  /// Takes `task_id`'s lease unless a live process (this one included) holds it; returns the
  /// new epoch, or nothing when it is held. A claim on work beside a run that ended (the
  /// resent cancels of its peers' tasks), which lasts while this process lives: Release it.
  virtual core::Result<std::optional<int64_t>> ClaimIdle(const std::string& task_id) = 0;
  /// Takes up to `limit` orphaned leases.
  virtual core::Result<std::vector<Claimed>> ClaimOrphans(size_t limit) = 0;
  /// Gives `task_id`'s lease up if this process still holds it at `epoch` (a run that needs
  /// no execution: its lease would only be adopted again).
  virtual core::Result<void> Release(const std::string& task_id, int64_t epoch) = 0;
  /// Gives `task_id`'s lease up to whoever looks next (it becomes an orphan) if this process
  /// still holds it at `epoch`: a run taken over that this replica cannot execute.
  virtual core::Result<void> Abandon(const std::string& task_id, int64_t epoch) = 0;
  /// Leaving (SIGTERM): this process's registration expires now, so its runs are orphans
  /// at once.
  virtual core::Result<void> Leave() = 0;
  /// Gives every unfinished run without a lease one nobody holds (an orphan): runs created
  /// by a build without leases (a rolling upgrade). Returns how many.
  virtual core::Result<int64_t> AdoptUnleased() = 0;
  /// The leases this process holds (metrics).
  virtual core::Result<int64_t> LeasesHeld() = 0;
  /// What the change feed hands on (Listen), on its thread.
  struct Feed {
    std::function<void(const std::string& task_id, int64_t sequence)> on_commit;
    std::function<void()> on_resync;
    std::function<void(const std::string& task_id, const std::string& key)> on_nudge;
  };
  /// Starts the change feed's thread; Stop ends it. Once.
  virtual void Listen(Feed feed, std::chrono::milliseconds resync_every) = 0;
  /// Hands (task_id, key) to every other process's Feed::on_nudge. Blocking (one statement).
  virtual core::Result<void> Nudge(const std::string& task_id, const std::string& key) = 0;
  virtual void Stop() = 0;
};

}  // namespace a2ad::storage
