// Plan tasks follow the A2A tasks of this host they are linked to (opt_store.hpp, "Following
// tasks"): the task store's commit participant (storage/sql.hpp), on its writer thread, inside
// the transaction of each batch of task commits.
#include <algorithm>

#include "a2ad/core/log.hpp"
#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/ext/opt/opt_rows.hpp"
#include "a2ad/ext/opt/opt_store.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::ext::opt {
namespace json = boost::json;
using core::Result;
using storage::CommittedTask;
using storage::sql::Tx;

namespace {

constexpr size_t kMaxJoinedName = 120;  // bytes of the message's text a joined task is named by

// The first text of the task's first message, cut to kMaxJoinedName bytes (on a UTF-8
// boundary); "" when it has none.
std::string NameFrom(const json::object& task) {
  const json::value* history = task.if_contains("history");
  if (!history || !history->is_array() || history->get_array().empty()) return "";
  const json::value& first = history->get_array().front();
  const json::value* parts = first.is_object() ? first.get_object().if_contains("parts") : nullptr;
  if (!parts || !parts->is_array()) return "";
  for (const auto& p : parts->get_array()) {
    if (!p.is_object()) continue;
    const json::value* text = p.get_object().if_contains("text");
    if (!text || !text->is_string() || text->get_string().empty()) continue;
    std::string s(text->get_string());
    if (s.size() > kMaxJoinedName) {
      size_t cut = kMaxJoinedName;
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
      s.resize(cut);
    }
    return s;
  }
  return "";
}

}  // namespace

namespace {

// What one objective takes from one batch: its plan tasks' new states, in commit order, and the
// tasks that join it.
struct Moves {
  std::string tenant;  // "" : whoever's (plan tasks found by their task's id)
  struct Move {
    std::string plan_task_id;
    TaskStatus to;
    int64_t at_ms;
  };
  std::vector<Move> moves;
  struct Joiner {
    std::string plan_id;
    std::string a2a_id;
    std::string name;
    TaskStatus status;
    int64_t at_ms;
  };
  std::vector<Joiner> joins;
  int64_t at_ms = 0;  // the batch's latest change time
};

}  // namespace

void OptStore::FollowTasks() {
  storage::CommitParticipant p;
  p.before_commit = [this](Tx& tx, const std::vector<CommittedTask>& ts) { Follow(tx, ts); };
  p.after_batch = [this](bool committed) {
    std::vector<std::string> objectives = std::move(followed_objectives_);
    followed_objectives_.clear();
    const bool actions = std::exchange(followed_actions_, false);
    if (!committed) return;
    std::sort(objectives.begin(), objectives.end());
    objectives.erase(std::unique(objectives.begin(), objectives.end()), objectives.end());
    if (listener_.events)
      for (const auto& id : objectives) listener_.events(id);
    if (actions && listener_.actions) listener_.actions();
  };
  db_.SetCommitParticipant(std::move(p));
}

void OptStore::ChangeInCommit(Tx& tx, const std::string& tenant, By by, const std::string& id,
                              const Change& change, int64_t now_ms, const std::string& what,
                              const std::vector<StatusChange>* steps) {
  // A savepoint per objective: one that cannot follow leaves the others and the task commits
  // as they are (and on PostgreSQL a failed statement spoils the transaction until it is
  // rolled back to one).
  if (auto saved = rows::Exec(tx, "savepoint", "SAVEPOINT opt_follow"); !saved) {
    core::LogError(saved.error().message);
    return;
  }
  Written out;
  auto done = rows::LoadChangeSave(tx, *cache_, tenant, by, id, change, now_ms, out, false, steps);
  if (!done) {
    core::LogError("opt: " + what + ": " + done.error().message);
    (void)tx.Exec("ROLLBACK TO SAVEPOINT opt_follow");
  } else {
    if (!out.changes.empty()) followed_objectives_.push_back(out.objective.id);
    if (out.actions > 0) followed_actions_ = true;
  }
  (void)tx.Exec("RELEASE SAVEPOINT opt_follow");
}

void OptStore::Follow(Tx& tx, const std::vector<CommittedTask>& tasks) {
  // One change per objective for the whole batch: a task's states in the order of its commits,
  // then one rollup.
  std::map<std::string, Moves> by_objective;
  for (const CommittedTask& t : tasks) {
    std::vector<PlanTask> linked;
    {
      auto r = rows::Exec(tx, "follow task '" + std::string(t.id) + "'",
                          "SELECT doc FROM opt_tasks WHERE a2a_task_id = $1", {std::string(t.id)});
      if (!r) {
        // The store rolls back to its savepoint what a failed statement spoiled.
        core::LogError(r.error().message);
        return;
      }
      for (int i = 0; i < r->size(); ++i) {
        auto pt = TaskFromDoc(r->Text(i, 0));
        if (!pt) {
          core::LogError("opt: follow task '" + std::string(t.id) + "': " + pt.error().message);
          continue;
        }
        linked.push_back(std::move(pt).value());
      }
    }
    const auto state = static_cast<protocol::TaskState>(t.state);
    const TaskStatus to = FromTaskState(state);
    if (linked.empty()) {
      if (!t.created || !t.context_id.starts_with("obj-")) continue;
      // A task created by a message naming this objective joins it (opt_extension.hpp).
      auto parsed = protocol::ParseJson(t.snapshot);
      if (!parsed || !parsed->is_object()) continue;
      const json::object& task = parsed->get_object();
      const json::object metadata = protocol::ObjOr(task, "metadata");
      if (protocol::Str(metadata, kObjectiveIdKey) != t.context_id) continue;
      Moves& m = by_objective[std::string(t.context_id)];
      m.tenant = t.tenant;
      m.at_ms = std::max(m.at_ms, t.at_ms);
      m.joins.push_back({std::string(protocol::Str(metadata, kPlanIdKey)), std::string(t.id),
                         NameFrom(task), to, t.at_ms});
      continue;
    }
    for (const PlanTask& pt : linked) {
      if (!pt.mirrors) continue;
      // The run its plan started exists now: the outbox asks for it no more.
      if (t.created && pt.started)
        if (auto dropped = rows::DropAction(tx, pt.a2a_task_id, "start"); !dropped)
          core::LogError("opt: " + dropped.error().message);
      if (IsTerminal(pt.status)) {
        // Canceled by a caller while its run was being started: that run is canceled too.
        if (pt.started && !pt.stopped_by.empty() && !protocol::IsTerminal(state)) {
          if (auto asked = rows::AskCancel(tx, std::string(t.tenant), std::string(t.owner), pt);
              !asked)
            core::LogError("opt: " + asked.error().message);
          else
            followed_actions_ = true;
        }
        continue;
      }
      Moves& m = by_objective[pt.objective_id];
      m.at_ms = std::max(m.at_ms, t.at_ms);
      m.moves.push_back({pt.id, to, t.at_ms});
    }
  }
  for (auto& entry : by_objective) {  // (named, not bound: lambdas capture them)
    const std::string& objective_id = entry.first;
    Moves& m = entry.second;
    std::vector<StatusChange> steps;
    const Limits limits = limits_;
    Change change = [&m, &steps, &objective_id, limits](Objective& o) -> Result<void> {
      for (const auto& mv : m.moves) {
        PlanTask* pt = FindTask(o, mv.plan_task_id);
        if (!pt || pt->status == mv.to) continue;
        const std::string was(NameOf(pt->status));
        // A plan task that cannot move (its plan or objective ended) stays as it is.
        if (SetTaskStatus(o, mv.plan_task_id, mv.to, mv.at_ms, true))
          steps.push_back({StatusChange::Kind::kTask, mv.plan_task_id, was, std::string(NameOf(mv.to))});
      }
      for (const auto& j : m.joins) {
        const std::string task_id = "task-" + tasks::NameBasedId("opt/v1 joined task\n" + j.a2a_id);
        const std::string inbox_id = "plan-" + tasks::NameBasedId("opt/v1 inbox\n" + objective_id);
        auto joined =
            JoinTask(o, j.plan_id, inbox_id, task_id, j.a2a_id, j.status, j.name, limits, j.at_ms);
        if (!joined)
          core::LogError("opt: task '" + j.a2a_id + "' could not join objective '" + objective_id +
                         "': " + joined.error().message);
      }
      return {};
    };
    ChangeInCommit(tx, m.tenant, By::kObjective, objective_id,
                   change, m.at_ms, "objective '" + objective_id + "' could not follow its tasks",
                   &steps);
  }
}

}  // namespace a2ad::ext::opt
