// Plan tasks follow the A2A tasks of this host they are linked to (opt_store.hpp, "Following
// tasks"): the task store's commit participant, on its writer thread, inside the transaction
// of each task commit.
#include <sqlite3.h>

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
using storage::SqliteTaskStore;
using storage::sqlite::Connection;
using storage::sqlite::Stmt;

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

void OptStore::FollowTasks() {
  SqliteTaskStore::CommitParticipant p;
  p.in_commit = [this](Connection& db, const SqliteTaskStore::CommittedTask& t) {
    Follow(db, t);
  };
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

void OptStore::ChangeInCommit(Connection& db, const std::string& tenant, By by,
                              const std::string& id, const Change& change, int64_t now_ms,
                              const std::string& what) {
  if (auto saved = db.Exec("SAVEPOINT opt_follow", "opt: savepoint"); !saved) {
    core::LogError(saved.error().message);
    return;
  }
  Written out;
  auto done = rows::LoadChangeSave(db, *cache_, tenant, by, id, change, now_ms, out, false);
  if (!done) {
    core::LogError("opt: " + what + ": " + done.error().message);
    (void)db.Exec("ROLLBACK TO opt_follow", "opt: rollback to savepoint");
  } else {
    if (!out.changes.empty()) followed_objectives_.push_back(out.objective.id);
    if (out.actions > 0) followed_actions_ = true;
  }
  (void)db.Exec("RELEASE opt_follow", "opt: release savepoint");
}

void OptStore::Follow(Connection& db, const SqliteTaskStore::CommittedTask& t) {
  std::vector<PlanTask> linked;
  {
    auto ps = db.Prepare("SELECT doc FROM opt_tasks WHERE a2a_task_id = ?1");
    if (!ps) {
      core::LogError("opt: follow task: " + ps.error().message);
      return;
    }
    Stmt s(*ps);
    s.Bind(1, t.id);
    while (s.Step() == SQLITE_ROW) {
      auto pt = TaskFromDoc(s.Text(0));
      if (!pt) {
        core::LogError("opt: follow task '" + std::string(t.id) + "': " + pt.error().message);
        continue;
      }
      linked.push_back(std::move(pt).value());
    }
  }
  if (linked.empty()) {
    if (t.created && t.context_id.starts_with("obj-")) Join(db, t);
    return;
  }
  const auto state = static_cast<protocol::TaskState>(t.state);
  const TaskStatus to = FromTaskState(state);
  for (const PlanTask& pt : linked) {
    if (!pt.mirrors) continue;
    // The run its plan started exists now: the outbox asks for it no more.
    if (t.created && pt.started)
      if (auto dropped = rows::DropAction(db, pt.a2a_task_id, "start"); !dropped)
        core::LogError("opt: " + dropped.error().message);
    if (IsTerminal(pt.status)) {
      // Canceled by a caller while its run was being started: that run is canceled too.
      if (pt.started && !pt.stopped_by.empty() && !protocol::IsTerminal(state)) {
        if (auto asked = rows::AskCancel(db, std::string(t.tenant), std::string(t.owner), pt);
            !asked)
          core::LogError("opt: " + asked.error().message);
        else
          followed_actions_ = true;
      }
      continue;
    }
    if (pt.status == to) continue;
    const std::string id = pt.id;
    ChangeInCommit(
        db, "", By::kTask, id,
        [&id, to, at = t.at_ms](Objective& o) -> Result<void> {
          // A plan task that cannot move (its plan or objective ended) stays as it is.
          (void)SetTaskStatus(o, id, to, at, true);
          return {};
        },
        t.at_ms, "plan task '" + id + "' could not follow task '" + std::string(t.id) + "'");
  }
}

void OptStore::Join(Connection& db, const SqliteTaskStore::CommittedTask& t) {
  auto parsed = protocol::ParseJson(t.snapshot);
  if (!parsed || !parsed->is_object()) return;
  const json::object& task = parsed->get_object();
  const json::object metadata = protocol::ObjOr(task, "metadata");
  if (protocol::Str(metadata, kObjectiveIdKey) != t.context_id) return;
  const std::string objective_id(t.context_id);
  const std::string plan_id(protocol::Str(metadata, kPlanIdKey));
  const std::string a2a_id(t.id);
  const std::string name = NameFrom(task);
  const TaskStatus status = FromTaskState(static_cast<protocol::TaskState>(t.state));
  const std::string task_id = "task-" + tasks::NameBasedId("opt/v1 joined task\n" + a2a_id);
  const std::string inbox_id = "plan-" + tasks::NameBasedId("opt/v1 inbox\n" + objective_id);
  const Limits limits = limits_;
  ChangeInCommit(
      db, std::string(t.tenant), By::kObjective, objective_id,
      [&](Objective& o) {
        return JoinTask(o, plan_id, inbox_id, task_id, a2a_id, status, name, limits, t.at_ms);
      },
      t.at_ms, "task '" + a2a_id + "' could not join objective '" + objective_id + "'");
}

}  // namespace a2ad::ext::opt
