#pragma once
// Where objectives live: tables of the task store's database, whichever engine holds it
// (component "opt", its own migrations per engine: opt_schema.hpp): one JSON document per
// objective, plan and plan task (opt_json.hpp); a log of status events per objective with a
// gap-free sequence (what objectives/subscribe replays); and an outbox of runs to start or
// cancel (opt_actions; OptRunner acts on it). The statements are the same on every engine
// (storage/sql.hpp).
//
// A change loads the whole objective (objective, plans, tasks) in the writer's transaction,
// applies the caller's function to it (opt_model.hpp), rolls it up (RollUp), marks the tasks
// that became ready to run as started (Startable: their run ids are derived from their ids),
// and writes back every row whose document changed, one event per status that moved, and one
// outbox row per run to start or cancel, in that ONE transaction: a stored objective is
// always the rollup of its stored tasks, and a run is asked for exactly when the change that
// makes it due is durable. Changes go through the store's writer queue (Backend::Write), so
// they are ordered with task commits and never contend with them for the database's locks.
// Reads run on a small pool of threads of their own (never on an I/O thread), each in one
// read transaction (one snapshot).
//
// Several servers on one database (PostgreSQL): each has its own writer, so a change checks
// that the objective's row is still at the version it read; if another server wrote it
// meanwhile, nothing is written and the change fails with kUnavailable (try again).
//
// Following tasks (FollowTasks): a plan task linked to a task of this host, or started as a
// run by its plan, takes that task's state in the transaction of the task's own commit (the
// task store's commit participant), and so does the rollup above it; a task created by a
// message naming an objective (opt/v1/objectiveId in its metadata, its contextId the
// objective's id) joins that objective in the transaction that creates it.
//
// Tenants: every objective belongs to the tenant that created it; a lookup from another
// tenant finds nothing (kOptNotFound), as with tasks.
//
// Thread safety: every member may be called from any thread; the awaitables complete on the
// awaiting coroutine's executor. The listener is called on the store's writer thread after
// the commit it reports and must not block.
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/ext/opt/opt_model.hpp"
#include "a2ad/storage/backend.hpp"
#include "a2ad/storage/schema_migrations.hpp"
#include "a2ad/storage/sql.hpp"
#include "a2ad/tasks/read_executor.hpp"

namespace a2ad::ext::opt {
namespace rows {
class WriterCache;
}

/// The id of the run that executes plan task `plan_task_id` (a name-based UUID: the same
/// task always names the same run, which makes its start idempotent).
std::string RunIdFor(const std::string& plan_task_id);

/// One run the outbox asks for: started for a plan task, or canceled because a caller ended
/// its plan or objective.
struct RunAction {
  enum class Kind { kStart, kCancel };
  Kind kind = Kind::kStart;
  std::string run_id;
  std::string objective_id;
  std::string plan_task_id;
  std::string tenant;  // the objective's: the run is its owner's, in its tenant
  std::string owner;
  // kStart only:
  std::string skill;
  boost::json::object inputs;
  boost::json::object task_metadata;  // the opt/v1/* keys of the run's A2A task
};

/// One logged event of an objective (opt_events).
struct OptEvent {
  int64_t sequence = -1;
  std::string json;   // the event object (docs/OPT.md "Subscribing")
  bool last = false;  // nothing under the objective changes after it (Settled)
};

class OptStore {
 public:
  /// The tables (component "opt", a list of steps per engine): for the backend's components
  /// (app/backends.hpp), which bring them to their latest version.
  static storage::ComponentMigrations Migrations();

  /// `limits` bound the plans that tasks joining by message make and fill. `db` holds the
  /// tables of Migrations() and outlives the store.
  OptStore(storage::Backend& db, Limits limits, size_t read_threads = 2);
  ~OptStore();

  /// What a change wrote: the objective after it (whole), the statuses that moved and whether
  /// runs were asked for.
  struct Written {
    Objective objective;
    std::vector<StatusChange> changes;
    int64_t last_sequence = -1;  // of the objective's event log
    size_t actions = 0;          // outbox rows written
  };
  /// What names the objective a change or read is about.
  enum class By { kObjective, kPlan, kTask };
  /// A change, applied to the freshly loaded objective on the writer thread. An error leaves
  /// everything as it was and is the caller's answer.
  using Change = std::function<core::Result<void>(Objective&)>;

  /// Told after every commit that wrote events (the objective's id) or outbox rows.
  struct Listener {
    std::function<void(const std::string& objective_id)> events;
    std::function<void()> actions;
  };
  /// Set once, before serving.
  void SetListener(Listener listener);

  /// Stores the new objective `o` (no plans yet), with its "created" event. `if_absent`: an
  /// objective of that id stored already is the answer (nothing is written).
  boost::asio::awaitable<core::Result<Written>> Create(Objective o, bool if_absent = false);
  /// Loads the objective of `id` (an objective, plan or plan task id of `tenant`), applies
  /// `change`, rolls up at `now_ms` and writes (see above). kOptNotFound naming `id`.
  boost::asio::awaitable<core::Result<Written>> Update(std::string tenant, By by, std::string id,
                                                       Change change, int64_t now_ms);
  /// tasks/link: links plan task `plan_task_id` (of `tenant`) to A2A task `a2a_task_id`. A
  /// task of this host in `tenant` lends its state, read in the same transaction (so no
  /// change of it is missed), and is followed from then on (FollowTasks); any other id is
  /// another agent's task.
  boost::asio::awaitable<core::Result<Written>> Link(std::string tenant, std::string plan_task_id,
                                                     std::string a2a_task_id, int64_t now_ms);
  /// Registers the task store's commit participant (see "Following tasks" above). Call once,
  /// before serving.
  void FollowTasks();

  /// The whole objective of `id` (of `tenant`). kOptNotFound naming `id`.
  boost::asio::awaitable<core::Result<Objective>> Get(std::string tenant, By by, std::string id);

  struct Page {
    std::vector<Objective> objectives;  // without plans
    std::string next_page_token;        // "" on the last page
    int64_t total_size = 0;
  };
  /// A page of `tenant`'s objectives, newest change first (then id), optionally of one
  /// status. kInvalidParams for a malformed token (named pageToken).
  boost::asio::awaitable<core::Result<Page>> List(std::string tenant,
                                                  std::optional<ObjectiveStatus> status,
                                                  int page_size, std::string page_token);

  /// The events of objective `objective_id` after `after` (at most `limit`), in order.
  /// Blocking: call it off the I/O threads (the feed's reads, opt_feed.hpp).
  core::Result<std::vector<OptEvent>> ReadEvents(const std::string& objective_id, int64_t after,
                                                 size_t limit);
  /// The objective of `id` of `tenant` with the sequence of its last event, read together
  /// (one snapshot). Blocking, like ReadEvents. kOptNotFound naming `id`.
  core::Result<std::pair<Objective, int64_t>> Snapshot(const std::string& tenant,
                                                       const std::string& id);

  /// The outbox: up to `limit` runs to start or cancel, oldest first, claimed for
  /// `claimant` until now_ms + kClaimMs: rows nobody claimed, `claimant`'s own (renewed) and
  /// claims that expired. Another claimant is not handed a row while its claim runs, so
  /// several replicas work each row once (a row worked twice is still one run: its run id is
  /// fixed, and a cancel is idempotent). A write, ordered with the task commits.
  boost::asio::awaitable<core::Result<std::vector<RunAction>>> ClaimActions(std::string claimant,
                                                                            int64_t now_ms,
                                                                            size_t limit);
  static constexpr int64_t kClaimMs = 30000;
  /// Who this process claims as: its replica id on an engine shared by replicas
  /// (Backend::Replicas()), "local" otherwise. A restarted replica takes its claims back.
  std::string Claimant() const;
  /// Removes `a` from the outbox; with `failed` (a start that cannot be made: why), its plan
  /// task fails with that reason, in the same transaction.
  boost::asio::awaitable<core::Result<Written>> ActionDone(RunAction a,
                                                           std::optional<std::string> failed,
                                                           int64_t now_ms);

  const Limits& limits() const { return limits_; }

 private:
  boost::asio::awaitable<core::Result<Written>> RunWrite(
      std::function<core::Result<void>(storage::sql::Tx&, Written&)> job);
  // The commit participant (opt_follow.cpp), on the writer thread.
  void Follow(storage::sql::Tx& tx, const std::vector<storage::CommittedTask>& tasks);
  /// Runs `change` in a savepoint of the batch's transaction; what it cannot do is logged.
  void ChangeInCommit(storage::sql::Tx& tx, const std::string& tenant, By by, const std::string& id,
                      const Change& change, int64_t now_ms, const std::string& what,
                      const std::vector<StatusChange>* steps);

  storage::Backend& db_;
  const Limits limits_;
  Listener listener_;
  // Writer thread only: the objectives it changed lately (opt_rows.hpp), and what the commit
  // participant wrote in the batch being written.
  std::unique_ptr<rows::WriterCache> cache_;
  std::vector<std::string> followed_objectives_;
  bool followed_actions_ = false;
  std::unique_ptr<tasks::ReadExecutor> reads_;
};

}  // namespace a2ad::ext::opt
