#include "a2ad/ext/opt/opt_rows.hpp"

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
using storage::sql::Rows;
using storage::sql::Tx;

namespace {

std::string Text(const json::object& o) {
  std::string out;
  protocol::JsonTextWriter(out).Object(o);
  return out;
}

// The objective id `id` names (itself, its plan's, its task's); "" when none.
Result<std::string> ObjectiveIdOf(Tx& tx, OptStore::By by, const std::string& id) {
  if (by == OptStore::By::kObjective) return id;
  auto r = Exec(tx, "find the objective of '" + id + "'",
                by == OptStore::By::kPlan ? "SELECT objective_id FROM opt_plans WHERE id = $1"
                                          : "SELECT objective_id FROM opt_tasks WHERE id = $1",
                {id});
  if (!r) return std::move(r).error();
  return r->size() == 0 ? std::string() : std::string(r->Text(0, 0));
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

// A statement whose rows are not wanted.
Result<void> Run(Tx& tx, std::string_view what, std::string_view sql,
                 const storage::sql::Params& params) {
  auto r = Exec(tx, what, sql, params);
  if (!r) return std::move(r).error();
  return {};
}

// The events of `changes` after `last_sequence`; returns the new last sequence. The last one
// says whether the objective is settled.
Result<int64_t> AppendEvents(Tx& tx, const Objective& o, const std::vector<StatusChange>& changes,
                             int64_t last_sequence, int64_t now_ms) {
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
    if (auto ok = Run(tx, "append event",
                      "INSERT INTO opt_events (objective_id, sequence, at_ms, last, event) VALUES "
                      "($1, $2, $3, $4, $5)",
                      {o.id, last_sequence, now_ms, int64_t{last ? 1 : 0}, Text(e)});
        !ok)
      return std::move(ok).error();
  }
  return last_sequence;
}

// The outbox row of a run to start for plan task `t`.
Result<void> AskStart(Tx& tx, const Objective& o, const Plan& p, const PlanTask& t) {
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
  return Run(tx, "ask for a run",
             "INSERT INTO opt_actions (run_id, kind, objective_id, plan_task_id, request) "
             "VALUES ($1, 'start', $2, $3, $4) ON CONFLICT DO NOTHING",
             {t.a2a_task_id, o.id, t.id, Text(request)});
}

// Writes the objective's row (its version + 1) and every row of `o` that differs from
// `before` (as stored at `version`; nullptr: nothing is). The objective's row is written only
// if it is still at `version`: another server on the same database may have changed the
// objective since it was read (the writer of one server is alone), and then nothing of this
// change may be written (kUnavailable: the caller may try again, on what is stored now).
Result<void> WriteRows(Tx& tx, const Objective& o, const Objective* before, int64_t version,
                       int64_t last_sequence) {
  {
    auto r = Exec(tx, "write objective",
                  "INSERT INTO opt_objectives (id, tenant, status, updated_at_ms, last_sequence, "
                  "version, doc) VALUES ($1, $2, $3, $4, $5, 1, $6) ON CONFLICT (id) DO UPDATE "
                  "SET status = excluded.status, updated_at_ms = excluded.updated_at_ms, "
                  "last_sequence = excluded.last_sequence, version = opt_objectives.version + 1, "
                  "doc = excluded.doc WHERE opt_objectives.version = $7",
                  {o.id, o.tenant, std::string(NameOf(o.status)), o.updated_at_ms, last_sequence,
                   Text(StoredDoc(o)), version});
    if (!r) return std::move(r).error();
    if (r->Affected() != 1)
      return Error(ErrorCode::kUnavailable,
                   "opt: objective '" + o.id + "' was changed meanwhile by another writer",
                   {{"id", o.id}});
  }
  const size_t known_plans = before ? before->plans.size() : 0;
  for (size_t i = 0; i < o.plans.size(); ++i) {
    const Plan& p = o.plans[i];
    const Plan* was = i < known_plans ? &before->plans[i] : nullptr;
    if (!was || RowOf(*was) != RowOf(p)) {
      if (auto ok = Run(tx, "write plan",
                        "INSERT INTO opt_plans (id, objective_id, position, doc) VALUES ($1, $2, "
                        "$3, $4) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
                        {p.id, o.id, int64_t{p.position}, Text(StoredDoc(p))});
          !ok)
        return ok;
    }
    const size_t known = was ? was->tasks.size() : 0;
    for (size_t j = 0; j < p.tasks.size(); ++j) {
      const PlanTask& t = p.tasks[j];
      if (j < known && was->tasks[j] == t) continue;
      if (auto ok = Run(tx, "write plan task",
                        "INSERT INTO opt_tasks (id, objective_id, plan_id, task_index, "
                        "a2a_task_id, doc) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO "
                        "UPDATE SET a2a_task_id = excluded.a2a_task_id, doc = excluded.doc",
                        {t.id, o.id, p.id, int64_t{t.task_index},
                         storage::sql::TextOrNull(t.a2a_task_id), Text(StoredDoc(t))});
          !ok)
        return ok;
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
Result<std::optional<Head>> HeadOf(Tx& tx, OptStore::By by, const std::string& id) {
  auto oid = ObjectiveIdOf(tx, by, id);
  if (!oid) return std::move(oid).error();
  if (oid->empty()) return std::optional<Head>();
  auto r = Exec(tx, "read objective",
                "SELECT tenant, version, last_sequence FROM opt_objectives WHERE id = $1", {*oid});
  if (!r) return std::move(r).error();
  if (r->size() == 0) return std::optional<Head>();
  return std::optional<Head>(Head{*oid, std::string(r->Text(0, 0)), r->Int(0, 1), r->Int(0, 2)});
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

Result<Rows> Exec(Tx& tx, std::string_view what, std::string_view sql,
                  const storage::sql::Params& params) {
  auto r = tx.Exec(sql, params);
  if (r) return r;
  core::Error e = std::move(r).error();
  e.message = "opt: " + std::string(what) + ": " + e.message;
  return e;
}

Result<std::optional<Loaded>> Load(Tx& tx, const std::string& tenant, OptStore::By by,
                                   const std::string& id) {
  auto oid = ObjectiveIdOf(tx, by, id);
  if (!oid) return std::move(oid).error();
  if (oid->empty()) return std::optional<Loaded>();
  Loaded l;
  {
    auto r = Exec(tx, "read objective",
                  "SELECT doc, last_sequence, tenant, version FROM opt_objectives WHERE id = $1",
                  {*oid});
    if (!r) return std::move(r).error();
    if (r->size() == 0) return std::optional<Loaded>();
    if (!tenant.empty() && r->Text(0, 2) != tenant) return std::optional<Loaded>();
    auto o = ObjectiveFromDoc(r->Text(0, 0));
    if (!o) return std::move(o).error();
    l.objective = std::move(o).value();
    l.last_sequence = r->Int(0, 1);
    l.version = r->Int(0, 3);
  }
  std::map<std::string, size_t, std::less<>> plan_at;
  {
    auto r = Exec(tx, "read plans",
                  "SELECT doc FROM opt_plans WHERE objective_id = $1 ORDER BY position", {*oid});
    if (!r) return std::move(r).error();
    for (int i = 0; i < r->size(); ++i) {
      auto p = PlanFromDoc(r->Text(i, 0));
      if (!p) return std::move(p).error();
      plan_at.emplace(p->id, l.objective.plans.size());
      l.objective.plans.push_back(std::move(p).value());
    }
  }
  {
    auto r = Exec(tx, "read plan tasks",
                  "SELECT doc, plan_id FROM opt_tasks WHERE objective_id = $1 ORDER BY plan_id, "
                  "task_index",
                  {*oid});
    if (!r) return std::move(r).error();
    for (int i = 0; i < r->size(); ++i) {
      auto t = TaskFromDoc(r->Text(i, 0));
      if (!t) return std::move(t).error();
      auto at = plan_at.find(r->Text(i, 1));
      if (at == plan_at.end())
        return Error(ErrorCode::kDataCorrupt, "opt: plan task '" + t->id + "' has no plan");
      l.objective.plans[at->second].tasks.push_back(std::move(t).value());
    }
  }
  return std::optional<Loaded>(std::move(l));
}

Result<void> LoadChangeSave(Tx& tx, WriterCache& cache, const std::string& tenant, OptStore::By by,
                            const std::string& id, const OptStore::Change& change, int64_t now_ms,
                            OptStore::Written& out, bool keep_objective,
                            const std::vector<StatusChange>* task_steps) {
  auto head = HeadOf(tx, by, id);
  if (!head) return std::move(head).error();
  if (!head->has_value() || (!tenant.empty() && (*head)->tenant != tenant)) return NotFound(by, id);
  const std::string oid = (*head)->id;
  Loaded* l = cache.Find(oid, (*head)->version);
  if (!l) {
    auto loaded = Load(tx, "", OptStore::By::kObjective, oid);
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
    // The objective's row first: it says whether the objective is still what was read.
    const int64_t seq = l->last_sequence + static_cast<int64_t>(out.changes.size());
    if (auto ok = WriteRows(tx, o, &l->written, l->version, seq); !ok) return ok;
    if (auto appended = AppendEvents(tx, o, out.changes, l->last_sequence, now_ms); !appended)
      return std::move(appended).error();
    for (const auto& [p, t] : starts) {
      if (auto ok = AskStart(tx, o, *p, *t); !ok) return ok;
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
        auto dropped = DropAction(tx, t.a2a_task_id, "start");
        if (!dropped) return std::move(dropped).error();
        if (auto ok = AskCancel(tx, o.tenant, o.owner, t); !ok) return ok;
        ++out.actions;
      }
    Sync(l->written, o);
    l->last_sequence = seq;
    l->version += 1;
    out.last_sequence = seq;
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

Result<void> SaveNew(Tx& tx, const Objective& o, OptStore::Written& out) {
  out.changes = Diff(nullptr, o);
  // Version 0: no objective of that id may be stored yet.
  const int64_t seq = static_cast<int64_t>(out.changes.size()) - 1;
  if (auto ok = WriteRows(tx, o, nullptr, 0, seq); !ok) return ok;
  if (auto appended = AppendEvents(tx, o, out.changes, -1, o.created_at_ms); !appended)
    return std::move(appended).error();
  out.objective = o;
  out.last_sequence = seq;
  return {};
}

Result<void> AskCancel(Tx& tx, const std::string& tenant, const std::string& owner,
                       const PlanTask& t) {
  json::object request{{"tenant", tenant}, {"owner", owner}};
  return Run(tx, "ask to cancel a run",
             "INSERT INTO opt_actions (run_id, kind, objective_id, plan_task_id, request) "
             "VALUES ($1, 'cancel', $2, $3, $4) ON CONFLICT DO NOTHING",
             {t.a2a_task_id, t.objective_id, t.id, Text(request)});
}

Result<bool> DropAction(Tx& tx, const std::string& run_id, const char* kind) {
  auto r = Exec(tx, "drop an outbox row", "DELETE FROM opt_actions WHERE run_id = $1 AND kind = $2",
                {run_id, std::string(kind)});
  if (!r) return std::move(r).error();
  return r->Affected() > 0;
}

}  // namespace a2ad::ext::opt::rows
