#include "a2ad/ext/opt/opt_rows.hpp"

#include <sqlite3.h>

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

using StatusMap = std::map<std::string, std::pair<StatusChange::Kind, std::string>, std::less<>>;

// Every status of `o` by id, with its kind (for the events of a change).
StatusMap Statuses(const Objective& o) {
  StatusMap out;
  out[o.id] = {StatusChange::Kind::kObjective, std::string(NameOf(o.status))};
  for (const auto& p : o.plans) {
    out[p.id] = {StatusChange::Kind::kPlan, std::string(NameOf(p.status))};
    for (const auto& t : p.tasks)
      out[t.id] = {StatusChange::Kind::kTask, std::string(NameOf(t.status))};
  }
  return out;
}

// What moved from `before` to `after`: tasks, then plans, then the objective; a new row is a
// change from "".
std::vector<StatusChange> Diff(const StatusMap& before, const Objective& after) {
  std::vector<StatusChange> out;
  auto add = [&](StatusChange::Kind kind, const std::string& id, std::string_view now) {
    auto it = before.find(id);
    std::string was = it == before.end() ? "" : it->second.second;
    if (was != now) out.push_back({kind, id, std::move(was), std::string(now)});
  };
  for (const auto& p : after.plans)
    for (const auto& t : p.tasks) add(StatusChange::Kind::kTask, t.id, NameOf(t.status));
  for (const auto& p : after.plans) add(StatusChange::Kind::kPlan, p.id, NameOf(p.status));
  add(StatusChange::Kind::kObjective, after.id, NameOf(after.status));
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

// Writes every row of `o` whose document differs from `docs` and the objective's row
// (version + 1).
Result<void> WriteRows(Connection& db, const Objective& o,
                       const std::map<std::string, std::string, std::less<>>& docs,
                       int64_t last_sequence) {
  auto changed = [&](const std::string& id, const std::string& text) {
    auto it = docs.find(id);
    return it == docs.end() || it->second != text;
  };
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
  for (const auto& p : o.plans) {
    const std::string text = Text(StoredDoc(p));
    if (changed(p.id, text)) {
      auto ps = db.Prepare(
          "INSERT INTO opt_plans (id, objective_id, position, doc) VALUES (?1, ?2, ?3, ?4) ON "
          "CONFLICT (id) DO UPDATE SET doc = excluded.doc");
      if (!ps) return std::move(ps).error();
      Stmt s(*ps);
      s.Bind(1, p.id);
      s.Bind(2, o.id);
      s.Bind(3, p.position);
      s.Bind(4, text);
      if (auto ok = Exec(s, db, "opt: write plan"); !ok) return ok;
    }
    for (const auto& t : p.tasks) {
      const std::string ttext = Text(StoredDoc(t));
      if (!changed(t.id, ttext)) continue;
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
      s.Bind(6, ttext);
      if (auto ok = Exec(s, db, "opt: write plan task"); !ok) return ok;
    }
  }
  return {};
}

// Every row of `o` as its stored document (to tell later what a change touched).
bool SameDocs(const Objective& o, const std::map<std::string, std::string, std::less<>>& docs) {
  auto same = [&](const std::string& id, const json::object& doc) {
    auto it = docs.find(id);
    return it != docs.end() && it->second == Text(doc);
  };
  if (!same(o.id, StoredDoc(o))) return false;
  for (const auto& p : o.plans) {
    if (!same(p.id, StoredDoc(p))) return false;
    for (const auto& t : p.tasks)
      if (!same(t.id, StoredDoc(t))) return false;
  }
  return true;
}

}  // namespace

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
    auto ps = db.Prepare("SELECT doc, last_sequence, tenant FROM opt_objectives WHERE id = ?1");
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
    l.docs.emplace(*oid, std::string(s.Text(0)));
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
      l.docs.emplace(p->id, std::string(s.Text(0)));
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
      l.docs.emplace(t->id, std::string(s.Text(0)));
      l.objective.plans[at->second].tasks.push_back(std::move(t).value());
    }
    if (rc != SQLITE_DONE) return db.Fail("opt: read plan tasks", rc);
  }
  return std::optional<Loaded>(std::move(l));
}

Result<void> LoadChangeSave(Connection& db, const std::string& tenant, OptStore::By by,
                            const std::string& id, const OptStore::Change& change, int64_t now_ms,
                            OptStore::Written& out) {
  auto loaded = Load(db, tenant, by, id);
  if (!loaded) return std::move(loaded).error();
  if (!loaded->has_value()) return NotFound(by, id);
  Loaded& l = **loaded;
  Objective& o = l.objective;
  const StatusMap before = Statuses(o);
  if (auto applied = change(o); !applied) return applied;
  (void)RollUp(o, now_ms);
  // Runs due now: marked started in this transaction, asked for by the outbox.
  std::vector<std::pair<const Plan*, const PlanTask*>> starts;
  for (PlanTask* t : Startable(o)) {
    MarkStarted(*t, RunIdFor(t->id), now_ms);
    starts.emplace_back(FindPlan(o, t->plan_id), t);
  }
  out.changes = Diff(before, o);
  out.last_sequence = l.last_sequence;
  out.actions = 0;
  if (out.changes.empty() && starts.empty() && SameDocs(o, l.docs)) {
    out.objective = std::move(o);
    return {};
  }
  o.updated_at_ms = std::max(o.updated_at_ms, now_ms);
  auto seq = AppendEvents(db, o, out.changes, l.last_sequence, now_ms);
  if (!seq) return std::move(seq).error();
  if (auto ok = WriteRows(db, o, l.docs, seq.value()); !ok) return ok;
  for (const auto& [p, t] : starts) {
    if (auto ok = AskStart(db, o, *p, *t); !ok) return ok;
    ++out.actions;
  }
  // Runs of this objective that a caller's decision ended (the task was canceled while its
  // run went on): canceled, and never started if they were not yet.
  for (const auto& p : o.plans)
    for (const auto& t : p.tasks) {
      if (!t.started || t.stopped_by.empty() || !IsTerminal(t.status)) continue;
      auto was = before.find(t.id);
      if (was == before.end() || IsTerminal(*TaskStatusNamed(was->second.second))) continue;
      auto dropped = DropAction(db, t.a2a_task_id, "start");
      if (!dropped) return std::move(dropped).error();
      if (auto ok = AskCancel(db, o.tenant, o.owner, t); !ok) return ok;
      ++out.actions;
    }
  out.last_sequence = seq.value();
  out.objective = std::move(o);
  return {};
}

Result<void> SaveNew(Connection& db, const Objective& o, OptStore::Written& out) {
  out.changes = Diff({}, o);
  auto seq = AppendEvents(db, o, out.changes, -1, o.created_at_ms);
  if (!seq) return std::move(seq).error();
  if (auto ok = WriteRows(db, o, {}, seq.value()); !ok) return ok;
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
