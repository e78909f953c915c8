#pragma once
// The rows of the OPT tables (opt_store.hpp, opt_schema.hpp), shared by the store's writes
// (opt_store.cpp) and the commit participant that follows tasks (opt_follow.cpp). Internal to
// ext/opt. The statements are the same on every engine (storage/sql.hpp).
//
// Thread safety: the functions run in the transaction they are given (the store's writer's for
// writes), one thread at a time.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/ext/opt/opt_model.hpp"
#include "a2ad/ext/opt/opt_store.hpp"
#include "a2ad/storage/sql.hpp"

namespace a2ad::ext::opt::rows {

/// A loaded objective: the tree a change works on, and the tree as it is stored (what a save
/// compares against: only the rows that differ are written).
struct Loaded {
  Objective objective;
  Objective written;
  int64_t last_sequence = -1;
  int64_t version = 0;  // opt_objectives.version of `written`
};

/// The objectives the writer changed lately, parsed (writer thread only): a change of a big
/// objective reads and parses its rows only when they were written by another path since (the
/// row's version tells), so a task transition costs a rollup, not a reload.
class WriterCache {
 public:
  explicit WriterCache(size_t capacity = 32) : capacity_(capacity) {}
  /// The cached objective `id` at `version`; nullptr when absent or stale.
  Loaded* Find(const std::string& id, int64_t version);
  Loaded& Put(const std::string& id, Loaded l);
  void Drop(const std::string& id) { entries_.erase(id); }

 private:
  size_t capacity_;
  std::map<std::string, Loaded, std::less<>> entries_;
};

core::Error NotFound(OptStore::By by, const std::string& id);

/// tx.Exec(sql, params), an error prefixed with "opt: <what>: ".
core::Result<storage::sql::Rows> Exec(storage::sql::Tx& tx, std::string_view what,
                                      std::string_view sql,
                                      const storage::sql::Params& params = {});

/// The whole objective of `id` if it is `tenant`'s ("": whoever's); nullopt otherwise.
core::Result<std::optional<Loaded>> Load(storage::sql::Tx& tx, const std::string& tenant,
                                         OptStore::By by, const std::string& id);

/// Loads the objective of `by`/`id` (from `cache` when it is current there), applies `change`,
/// rolls up, marks the tasks that became ready as started, and saves with the events and
/// outbox rows of what changed; `out` gets what was written (the objective itself only with
/// `keep_objective`). Nothing is written when nothing changed. kOptNotFound when there is no
/// such objective of `tenant` ("": whoever's). On any error the cache forgets the objective.
/// `task_steps`: the task transitions `change` made one after the other (a task that moved
/// twice in it is logged twice); tasks not named there are logged by their net change.
core::Result<void> LoadChangeSave(storage::sql::Tx& tx, WriterCache& cache,
                                  const std::string& tenant, OptStore::By by, const std::string& id,
                                  const OptStore::Change& change, int64_t now_ms,
                                  OptStore::Written& out, bool keep_objective,
                                  const std::vector<StatusChange>* task_steps = nullptr);

/// Writes a whole new objective with its events; kUnavailable when an objective of its id is
/// stored already (another server wrote it meanwhile).
core::Result<void> SaveNew(storage::sql::Tx& tx, const Objective& o, OptStore::Written& out);

/// Adds (if absent) an outbox row canceling run `t.a2a_task_id` of plan task `t`, a run of
/// `owner` in `tenant`.
core::Result<void> AskCancel(storage::sql::Tx& tx, const std::string& tenant,
                             const std::string& owner, const PlanTask& t);
/// Removes the outbox row of `kind` ("start", "cancel") for `run_id`; true if there was one.
core::Result<bool> DropAction(storage::sql::Tx& tx, const std::string& run_id, const char* kind);

}  // namespace a2ad::ext::opt::rows
