#include "a2ad/ext/opt/opt_rows.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <unordered_set>

#include "a2ad/core/clock.hpp"
#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::ext::opt::rows {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using storage::sqlite::Connection;
using storage::sqlite::Stmt;

namespace {

std::string Text(const json::object& o) {
  std::string out;
  protocol::JsonTextWriter(out).Object(o);
  return out;
}

// The objective id `id` names (itself, its plan's, its task's); "" when none.
Result<std::string> ObjectiveIdOf(Connection& db, OptStore::By by, const std::string& id) {
  if (by == OptStore::By::kObjective) return id;
  auto ps = db.Prepare(by == OptStore::By::kPlan
                           ? "SELECT objective_id FROM opt_plans WHERE id = ?1"
                           : "SELECT objective_id FROM opt_tasks WHERE id = ?1");
  if (!ps) return std::move(ps).error();
  Stmt s(*ps);
  s.Bind(1, id);
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return std::string(s.Text(0));
  if (rc == SQLITE_DONE) return std::string();
  return db.Fail("opt: find the objective of '" + id + "'", rc);
}

// What moved from `before` (as stored) to `after`: tasks, then plans, then the objective; a
// new row is a change from "". Rows are only ever appended, so they align by position.
std::vector<StatusChange> Diff(const Objective* before, const Objective& after) {
  std::vector<StatusChange> out;
  auto add = [&](StatusChange::Kind kind, const std::string& id, std::string_view was,
                 std::string_view now) {
    if (was != now) out.push_back({kind, id, std::string(was), std::string(now)});
  };
  const size_t known_plans = before ? before->plans.size() : 0;
  for (size_t i = 0; i < after.plans.size(); ++i) {
    const auto& tasks = after.plans[i].tasks;
    const size_t known = i < known_plans ? before->plans[i].tasks.size() : 0;
    for (size_t j = 0; j < tasks.size(); ++j)
      add(StatusChange::Kind::kTask, tasks[j].id,
          j < known ? NameOf(before->plans[i].tasks[j].status) : "", NameOf(tasks[j].status));
  }
  for (size_t i = 0; i < after.plans.size(); ++i)
    add(StatusChange::Kind::kPlan, after.plans[i].id,
        i < known_plans ? NameOf(before->plans[i].status) : "", NameOf(after.plans[i].status));
  add(StatusChange::Kind::kObjective, after.id, before ? NameOf(before->status) : "",
      NameOf(after.status));
  return out;
}

// `net` (Diff's) with the net change of each task named in `steps` replaced by its steps, in
// their order (tasks first, as Diff has them).
std::vector<StatusChange> WithSteps(std::vector<StatusChange> net,
                                    const std::vector<StatusChange>& steps) {
  std::unordered_set<std::string_view> stepped;
  for (const auto& s : steps) stepped.insert(s.id);
  std::vector<StatusChange> out;
  out.reserve(net.size() + steps.size());
  for (const auto& s : steps) out.push_back(s);
  for (auto& c : net)
    if (c.kind != StatusChange::Kind::kTask || !stepped.contains(c.id)) out.push_back(std::move(c));
  std::stable_partition(out.begin(), out.end(),
                        [](const StatusChange& c) { return c.kind == StatusChange::Kind::kTask; });
  return out;
}

const char* KindName(StatusChange::Kind k) {
  switch (k) {
    case StatusChange::Kind::kObjective:
      return "objective";
    case StatusChange::Kind::kPlan:
      return "plan";
    case StatusChange::Kind::kTask:
      return "task";
  }
  return "?";
}

// The object a change is about, as the wire shows it (a plan without its tasks).
json::object ObjectJson(const Objective& o, const StatusChange& ch) {
  switch (ch.kind) {
    case StatusChange::Kind::kObjective:
      return ToJson(o, false, false);
    case StatusChange::Kind::kPlan:
      for (const auto& p : o.plans)
        if (p.id == ch.id) return ToJson(p, false);
      break;
    case StatusChange::Kind::kTask:
      for (const auto& p : o.plans)
        for (const auto& t : p.tasks)
          if (t.id == ch.id) return ToJson(t);
      break;
  }
  return {};
}

Result<void> Exec(Stmt& s, Connection& db, const char* what) {
  if (int rc = s.Step(); rc != SQLITE_DONE) return db.Fail(what, rc);
  return {};
}

// The events of `changes` after `last_sequence`; returns the new last sequence. The last one
// says whether the objective is settled.
Result<int64_t> AppendEvents(Connection& db, const Objective& o,
                             const std::vector<StatusChange>& changes, int64_t last_sequence,
                             int64_t now_ms) {
  const bool settled = Settled(o);
  for (size_t i = 0; i < changes.size(); ++i) {
    const StatusChange& ch = changes[i];
    json::object e;
    e["objectiveId"] = o.id;
    e["sequence"] = ++last_sequence;
    e["kind"] = KindName(ch.kind);
    e["id"] = ch.id;
    e["status"] = ch.to;
    if (!ch.from.empty()) e["previousStatus"] = ch.from;
    e["at"] = core::FormatTimestamp(now_ms);
    e[KindName(ch.kind)] = ObjectJson(o, ch);
    const bool last = settled && i + 1 == changes.size();
    if (last) e["final"] = true;
    auto ps = db.Prepare(
        "INSERT INTO opt_events (objective_id, sequence, at_ms, last, event) VALUES (?1, ?2, ?3, "
        "?5, ?4)");
    if (!ps) return std::move(ps).error();
    Stmt s(*ps);
    s.Bind(1, o.id);
    s.Bind(2, last_sequence);
    s.Bind(3, now_ms);
    s.Bind(4, Text(e));
    s.Bind(5, int64_t{last ? 1 : 0});
    if (auto ok = Exec(s, db, "opt: append event"); !ok) return std::move(ok).error();
  }
  return last_sequence;
}

// The outbox row of a run to start for plan task `t`.
Result<void> AskStart(Connection& db, const Objective& o, const Plan& p, const PlanTask& t) {
  json::object md;
  md[kObjectiveIdKey] = o.id;
  md[kPlanIdKey] = p.id;
  md[kTaskIndexKey] = t.task_index;
  json::array deps;
  for (const auto& d : t.dependencies) deps.emplace_back(d);
  md[kDependenciesKey] = std::move(deps);
  md[kPlanTaskIdKey] = t.id;
  json::object request{{"tenant", o.tenant}, {"owner", o.owner},       {"skill", t.skill},
                       {"inputs", t.inputs}, {"taskMetadata", std::move(md)}};
  auto ps = db.Prepare(
      "INSERT OR IGNORE INTO opt_actions (run_id, kind, objective_id, plan_task_id, request) "
      "VALUES (?1, 'start', ?2, ?3, ?4)");
  if (!ps) return std::move(ps).error();
  Stmt s(*ps);
  s.Bind(1, t.a2a_task_id);
  s.Bind(2, o.id);
  s.Bind(3, t.id);
  s.Bind(4, Text(request));
  return Exec(s, db, "opt: ask for a run");
}

// Writes every row of `o` that differs from `before` (as stored; nullptr: nothing is) and the
// objective's row (its version + 1).
Result<void> WriteRows(Connection& db, const Objective& o, const Objective* before,
                       int64_t last_sequence) {
  {
    auto ps = db.Prepare(
        "INSERT INTO opt_objectives (id, tenant, status, updated_at_ms, last_sequence, version, "
        "doc) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6) ON CONFLICT (id) DO UPDATE SET status = "
        "excluded.status, updated_at_ms = excluded.updated_at_ms, last_sequence = "
        "excluded.last_sequence, version = version + 1, doc = excluded.doc");
    if (!ps) return std::move(ps).error();
    Stmt s(*ps);
    s.Bind(1, o.id);
    s.Bind(2, o.tenant);
    s.Bind(3, NameOf(o.status));
    s.Bind(4, o.updated_at_ms);
    s.Bind(5, last_sequence);
    s.Bind(6, Text(StoredDoc(o)));
    if (auto ok = Exec(s, db, "opt: write objective"); !ok) return ok;
  }
  const size_t known_plans = before ? before->plans.size() : 0;
  for (size_t i = 0; i < o.plans.size(); ++i) {
    const Plan& p = o.plans[i];
    const Plan* was = i < known_plans ? &before->plans[i] : nullptr;
    if (!was || RowOf(*was) != RowOf(p)) {
      auto ps = db.Prepare(
          "INSERT INTO opt_plans (id, objective_id, position, doc) VALUES (?1, ?2, ?3, ?4) ON "
          "CONFLICT (id) DO UPDATE SET doc = excluded.doc");
      if (!ps) return std::move(ps).error();
      Stmt s(*ps);
      s.Bind(1, p.id);
      s.Bind(2, o.id);
      s.Bind(3, p.position);
      s.Bind(4, Text(StoredDoc(p)));
      if (auto ok = Exec(s, db, "opt: write plan"); !ok) return ok;
    }
    const size_t known = was ? was->tasks.size() : 0;
    for (size_t j = 0; j < p.tasks.size(); ++j) {
      const PlanTask& t = p.tasks[j];
      if (j < known && was->tasks[j] == t) continue;
      auto ps = db.Prepare(
          "INSERT INTO opt_tasks (id, objective_id, plan_id, task_index, a2a_task_id, doc) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO UPDATE SET a2a_task_id = "
          "excluded.a2a_task_id, doc = excluded.doc");
      if (!ps) return std::move(ps).error();
      Stmt s(*ps);
      s.Bind(1, t.id);
      s.Bind(2, o.id);
      s.Bind(3, p.id);
      s.Bind(4, t.task_index);
      if (t.a2a_task_id.empty())
        s.BindNull(5);
      else
        s.Bind(5, t.a2a_task_id);
      s.Bind(6, Text(StoredDoc(t)));
      if (auto ok = Exec(s, db, "opt: write plan task"); !ok) return ok;
    }
  }
  return {};
}

// True when `o` is `before` row for row.
bool Same(const Objective& before, const Objective& o) {
  if (RowOf(before) != RowOf(o) || before.plans.size() != o.plans.size()) return false;
  for (size_t i = 0; i < o.plans.size(); ++i)
    if (RowOf(before.plans[i]) != RowOf(o.plans[i]) || before.plans[i].tasks != o.plans[i].tasks)
      return false;
  return true;
}

// Makes `written` what `o` is, copying only the rows that differ.
void Sync(Objective& written, const Objective& o) {
  if (RowOf(written) != RowOf(o)) RowOf(written) = RowOf(o);
  for (size_t i = 0; i < o.plans.size(); ++i) {
    if (i >= written.plans.size()) {
      written.plans.push_back(o.plans[i]);
      continue;
    }
    Plan& w = written.plans[i];
    const Plan& p = o.plans[i];
    if (RowOf(w) != RowOf(p)) RowOf(w) = RowOf(p);
    for (size_t j = 0; j < p.tasks.size(); ++j) {
      if (j >= w.tasks.size())
        w.tasks.push_back(p.tasks[j]);
      else if (!(w.tasks[j] == p.tasks[j]))
        w.tasks[j] = p.tasks[j];
    }
  }
}

// The objective id `id` names, its stored version, tenant and last event sequence; nullopt
// when there is none.
struct Head {
  std::string id;
  std::string tenant;
  int64_t version = 0;
  int64_t last_sequence = -1;
};
Result<std::optional<Head>> HeadOf(Connection& db, OptStore::By by, const std::string& id) {
  auto oid = ObjectiveIdOf(db, by, id);
  if (!oid) return std::move(oid).error();
  if (oid->empty()) return std::optional<Head>();
  auto ps = db.Prepare("SELECT tenant, version, last_sequence FROM opt_objectives WHERE id = ?1");
  if (!ps) return std::move(ps).error();
  Stmt s(*ps);
  s.Bind(1, *oid);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<Head>();
  if (rc != SQLITE_ROW) return db.Fail("opt: read objective", rc);
  return std::optional<Head>(Head{*oid, std::string(s.Text(0)), s.Int(1), s.Int(2)});
}

}  // namespace

Loaded* WriterCache::Find(const std::string& id, int64_t version) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return nullptr;
  if (it->second.version != version) {
    entries_.erase(it);
    return nullptr;
  }
  return &it->second;
}

Loaded& WriterCache::Put(const std::string& id, Loaded l) {
  if (entries_.size() >= capacity_ && !entries_.contains(id)) entries_.erase(entries_.begin());
  return entries_.insert_or_assign(id, std::move(l)).first->second;
}

Error NotFound(OptStore::By by, const std::string& id) {
  const char* what = by == OptStore::By::kObjective ? "objective"
                     : by == OptStore::By::kPlan    ? "plan"
                                                    : "plan task";
  return Error(ErrorCode::kOptNotFound, std::string(what) + " '" + id + "' not found",
               {{"id", id}});
}

Result<std::optional<Loaded>> Load(Connection& db, const std::string& tenant, OptStore::By by,
                                   const std::string& id) {
  auto oid = ObjectiveIdOf(db, by, id);
  if (!oid) return std::move(oid).error();
  if (oid->empty()) return std::optional<Loaded>();
  Loaded l;
  {
    auto ps = db.Prepare(
        "SELECT doc, last_sequence, tenant, version FROM opt_objectives WHERE id = ?1");
    if (!ps) return std::move(ps).error();
    Stmt s(*ps);
    s.Bind(1, *oid);
    const int rc = s.Step();
    if (rc == SQLITE_DONE) return std::optional<Loaded>();
    if (rc != SQLITE_ROW) return db.Fail("opt: read objective", rc);
    if (!tenant.empty() && s.Text(2) != tenant) return std::optional<Loaded>();
    auto o = ObjectiveFromDoc(s.Text(0));
    if (!o) return std::move(o).error();
    l.objective = std::move(o).value();
    l.last_sequence = s.Int(1);
    l.version = s.Int(3);
  }
  std::map<std::string, size_t, std::less<>> plan_at;
  {
    auto ps = db.Prepare("SELECT doc FROM opt_plans WHERE objective_id = ?1 ORDER BY position");
    if (!ps) return std::move(ps).error();
    Stmt s(*ps);
    s.Bind(1, *oid);
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      auto p = PlanFromDoc(s.Text(0));
      if (!p) return std::move(p).error();
      plan_at.emplace(p->id, l.objective.plans.size());
      l.objective.plans.push_back(std::move(p).value());
    }
    if (rc != SQLITE_DONE) return db.Fail("opt: read plans", rc);
  }
  {
    auto ps = db.Prepare(
        "SELECT doc, plan_id FROM opt_tasks WHERE objective_id = ?1 ORDER BY plan_id, task_index");
    if (!ps) return std::move(ps).error();
    Stmt s(*ps);
    s.Bind(1, *oid);
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      auto t = TaskFromDoc(s.Text(0));
      if (!t) return std::move(t).error();
      auto at = plan_at.find(s.Text(1));
      if (at == plan_at.end())
        return Error(ErrorCode::kDataCorrupt, "opt: plan task '" + t->id + "' has no plan");
      l.objective.plans[at->second].tasks.push_back(std::move(t).value());
    }
    if (rc != SQLITE_DONE) return db.Fail("opt: read plan tasks", rc);
  }
  return std::optional<Loaded>(std::move(l));
}

Result<void> LoadChangeSave(Connection& db, WriterCache& cache, const std::string& tenant,
                            OptStore::By by, const std::string& id, const OptStore::Change& change,
                            int64_t now_ms, OptStore::Written& out, bool keep_objective,
                            const std::vector<StatusChange>* task_steps) {
  auto head = HeadOf(db, by, id);
  if (!head) return std::move(head).error();
  if (!head->has_value() || (!tenant.empty() && (*head)->tenant != tenant)) return NotFound(by, id);
  const std::string oid = (*head)->id;
  Loaded* l = cache.Find(oid, (*head)->version);
  if (!l) {
    auto loaded = Load(db, "", OptStore::By::kObjective, oid);
    if (!loaded) return std::move(loaded).error();
    if (!loaded->has_value()) return NotFound(by, id);
    (*loaded)->written = (*loaded)->objective;
    l = &cache.Put(oid, std::move(**loaded));
  }
  auto result = [&]() -> Result<void> {
    Objective& o = l->objective;
    if (auto applied = change(o); !applied) return applied;
    (void)RollUp(o, now_ms);
    // Runs due now: marked started in this transaction, asked for by the outbox.
    std::vector<std::pair<const Plan*, const PlanTask*>> starts;
    for (PlanTask* t : Startable(o)) {
      MarkStarted(*t, RunIdFor(t->id), now_ms);
      starts.emplace_back(FindPlan(o, t->plan_id), t);
    }
    out.changes = Diff(&l->written, o);
    if (task_steps && !task_steps->empty()) out.changes = WithSteps(std::move(out.changes), *task_steps);
    out.last_sequence = l->last_sequence;
    out.actions = 0;
    if (out.changes.empty() && starts.empty() && Same(l->written, o)) return {};
    o.updated_at_ms = std::max(o.updated_at_ms, now_ms);
    auto seq = AppendEvents(db, o, out.changes, l->last_sequence, now_ms);
    if (!seq) return std::move(seq).error();
    if (auto ok = WriteRows(db, o, &l->written, seq.value()); !ok) return ok;
    for (const auto& [p, t] : starts) {
      if (auto ok = AskStart(db, o, *p, *t); !ok) return ok;
      ++out.actions;
    }
    // Runs of this objective that a caller's decision ended (the task was canceled while its
    // run went on): canceled, and never started if they were not yet.
    for (size_t i = 0; i < o.plans.size(); ++i)
      for (size_t j = 0; j < o.plans[i].tasks.size(); ++j) {
        const PlanTask& t = o.plans[i].tasks[j];
        if (!t.started || t.stopped_by.empty() || !IsTerminal(t.status)) continue;
        const bool known = i < l->written.plans.size() && j < l->written.plans[i].tasks.size();
        if (!known || IsTerminal(l->written.plans[i].tasks[j].status)) continue;
        auto dropped = DropAction(db, t.a2a_task_id, "start");
        if (!dropped) return std::move(dropped).error();
        if (auto ok = AskCancel(db, o.tenant, o.owner, t); !ok) return ok;
        ++out.actions;
      }
    Sync(l->written, o);
    l->last_sequence = seq.value();
    l->version += 1;
    out.last_sequence = seq.value();
    return {};
  }();
  if (!result) {
    cache.Drop(oid);  // the change may have been applied in part
    return result;
  }
  if (keep_objective) out.objective = l->objective;
  else out.objective.id = oid;
  return {};
}

Result<void> SaveNew(Connection& db, const Objective& o, OptStore::Written& out) {
  out.changes = Diff(nullptr, o);
  auto seq = AppendEvents(db, o, out.changes, -1, o.created_at_ms);
  if (!seq) return std::move(seq).error();
  if (auto ok = WriteRows(db, o, nullptr, seq.value()); !ok) return ok;
  out.objective = o;
  out.last_sequence = seq.value();
  return {};
}

Result<void> AskCancel(Connection& db, const std::string& tenant, const std::string& owner,
                       const PlanTask& t) {
  json::object request{{"tenant", tenant}, {"owner", owner}};
  auto ps = db.Prepare(
      "INSERT OR IGNORE INTO opt_actions (run_id, kind, objective_id, plan_task_id, request) "
      "VALUES (?1, 'cancel', ?2, ?3, ?4)");
  if (!ps) return std::move(ps).error();
  Stmt s(*ps);
  s.Bind(1, t.a2a_task_id);
  s.Bind(2, t.objective_id);
  s.Bind(3, t.id);
  s.Bind(4, Text(request));
  return Exec(s, db, "opt: ask to cancel a run");
}

Result<bool> DropAction(Connection& db, const std::string& run_id, const char* kind) {
  auto ps = db.Prepare("DELETE FROM opt_actions WHERE run_id = ?1 AND kind = ?2");
  if (!ps) return std::move(ps).error();
  Stmt s(*ps);
  s.Bind(1, run_id);
  s.Bind(2, std::string_view(kind));
  if (auto ok = Exec(s, db, "opt: drop an outbox row"); !ok) return std::move(ok).error();
  return sqlite3_changes(db.handle()) > 0;
}

}  // namespace a2ad::ext::opt::rows
