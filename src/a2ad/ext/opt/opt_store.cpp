#include "a2ad/ext/opt/opt_store.hpp"

#include <sqlite3.h>

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "a2ad/core/log.hpp"
#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/ext/opt/opt_rows.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/storage/page_cursor.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::ext::opt {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using storage::sqlite::Connection;
using storage::sqlite::Stmt;

namespace {

// Version 1 of the component "opt". Frozen once released: a change is a new step.
//   opt_objectives  one row per objective: its tenant, status and change time (for listing),
//                   the sequence of its last event, a version bumped by every write
//   opt_plans, opt_tasks  one JSON document per plan and plan task (opt_json.hpp)
//   opt_events      every status that moved, per objective, gap-free (objectives/subscribe)
//   opt_actions     the outbox of runs to start or cancel (OptRunner)
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE opt_objectives (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  status TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  last_sequence INTEGER NOT NULL,
  version INTEGER NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX opt_objectives_by_tenant ON opt_objectives (tenant, updated_at_ms DESC, id DESC);
CREATE TABLE opt_plans (
  id TEXT PRIMARY KEY,
  objective_id TEXT NOT NULL REFERENCES opt_objectives (id),
  position INTEGER NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX opt_plans_by_objective ON opt_plans (objective_id, position);
CREATE TABLE opt_tasks (
  id TEXT PRIMARY KEY,
  objective_id TEXT NOT NULL REFERENCES opt_objectives (id),
  plan_id TEXT NOT NULL REFERENCES opt_plans (id),
  task_index INTEGER NOT NULL,
  a2a_task_id TEXT,
  doc TEXT NOT NULL
);
CREATE INDEX opt_tasks_by_objective ON opt_tasks (objective_id, plan_id, task_index);
CREATE INDEX opt_tasks_by_a2a_task ON opt_tasks (a2a_task_id) WHERE a2a_task_id IS NOT NULL;
CREATE TABLE opt_events (
  objective_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  at_ms INTEGER NOT NULL,
  last INTEGER NOT NULL,
  event TEXT NOT NULL,
  PRIMARY KEY (objective_id, sequence)
) WITHOUT ROWID;
CREATE TABLE opt_actions (
  run_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  objective_id TEXT NOT NULL,
  plan_task_id TEXT NOT NULL,
  request TEXT NOT NULL,
  PRIMARY KEY (run_id, kind)
);
)sql";

// The state of task `id` of this host if it is `tenant`'s, read from the task store's own
// table (its `tasks` rows, sqlite_schema.hpp) in the writer's transaction; nullopt otherwise.
Result<std::optional<protocol::TaskState>> LocalTaskState(Connection& db, const std::string& tenant,
                                                          const std::string& id) {
  auto ps = db.Prepare("SELECT state, tenant FROM tasks WHERE id = ?1");
  if (!ps) return std::move(ps).error();
  Stmt s(*ps);
  s.Bind(1, id);
  const int rc = s.Step();
  if (rc == SQLITE_DONE || (rc == SQLITE_ROW && s.Text(1) != tenant))
    return std::optional<protocol::TaskState>();
  if (rc != SQLITE_ROW) return db.Fail("opt: read the state of task '" + id + "'", rc);
  return std::optional<protocol::TaskState>(static_cast<protocol::TaskState>(s.Int(0)));
}

Result<RunAction> ActionFrom(std::string_view run_id, std::string_view kind,
                             std::string_view objective_id, std::string_view plan_task_id,
                             std::string_view request) {
  RunAction a;
  a.kind = kind == "cancel" ? RunAction::Kind::kCancel : RunAction::Kind::kStart;
  a.run_id = run_id;
  a.objective_id = objective_id;
  a.plan_task_id = plan_task_id;
  auto doc = protocol::ParseJson(request);
  if (!doc || !doc->is_object())
    return Error(ErrorCode::kDataCorrupt, "opt: outbox row of run '" + a.run_id + "' is not JSON");
  const json::object& r = doc->get_object();
  a.tenant = protocol::Str(r, "tenant");
  a.owner = protocol::Str(r, "owner");
  a.skill = protocol::Str(r, "skill");
  a.inputs = protocol::ObjOr(r, "inputs");
  a.task_metadata = protocol::ObjOr(r, "taskMetadata");
  return a;
}

}  // namespace

std::string RunIdFor(const std::string& plan_task_id) {
  return tasks::NameBasedId("opt/v1 run of plan task\n" + plan_task_id);
}

storage::ComponentMigrations OptStore::Migrations() { return {"opt", {{1, kSchemaV1}}}; }

OptStore::OptStore(storage::SqliteTaskStore& db, Limits limits, size_t read_threads)
    : db_(db),
      limits_(limits),
      cache_(std::make_unique<rows::WriterCache>()),
      reads_(std::make_unique<tasks::ReadExecutor>(read_threads)) {}

OptStore::~OptStore() = default;

void OptStore::SetListener(Listener listener) { listener_ = std::move(listener); }

asio::awaitable<Result<OptStore::Written>> OptStore::RunWrite(
    std::function<Result<void>(Connection&, Written&)> job) {
  using Sig = void(Result<Written>);
  return asio::async_initiate<const asio::use_awaitable_t<>&, Sig>(
      [this](auto handler, std::function<Result<void>(Connection&, Written&)> work) {
        auto ex = asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto out = std::make_shared<Written>();
        db_.Write([work = std::move(work), out](Connection& db) { return work(db, *out); },
                  [this, h, ex, out](Result<void> r) {
                    if (r) {  // durable now: tell who follows the objective or the outbox
                      if (!out->changes.empty() && listener_.events)
                        listener_.events(out->objective.id);
                      if (out->actions > 0 && listener_.actions) listener_.actions();
                    }
                    asio::post(ex, [h, out, r = std::move(r)]() mutable {
                      if (r)
                        std::move (*h)(Result<Written>(std::move(*out)));
                      else
                        std::move (*h)(Result<Written>(std::move(r).error()));
                    });
                  });
      },
      asio::use_awaitable, std::move(job));
}

asio::awaitable<Result<OptStore::Written>> OptStore::Create(Objective o, bool if_absent) {
  return RunWrite([o = std::move(o), if_absent](Connection& db, Written& out) -> Result<void> {
    if (if_absent) {
      auto stored = rows::Load(db, "", By::kObjective, o.id);
      if (!stored) return std::move(stored).error();
      if (stored->has_value()) {
        if ((*stored)->objective.tenant != o.tenant)
          return Error(ErrorCode::kConflict, "objective id '" + o.id + "' is taken");
        out.objective = std::move((*stored)->objective);
        out.last_sequence = (*stored)->last_sequence;
        return {};
      }
    }
    return rows::SaveNew(db, o, out);
  });
}

asio::awaitable<Result<OptStore::Written>> OptStore::Update(std::string tenant, By by,
                                                            std::string id, Change change,
                                                            int64_t now_ms) {
  return RunWrite([this, tenant = std::move(tenant), by, id = std::move(id),
                   change = std::move(change), now_ms](Connection& db, Written& out) -> Result<void> {
    return rows::LoadChangeSave(db, *cache_, tenant, by, id, change, now_ms, out, true);
  });
}

asio::awaitable<Result<OptStore::Written>> OptStore::Link(std::string tenant,
                                                          std::string plan_task_id,
                                                          std::string a2a_task_id,
                                                          int64_t now_ms) {
  return RunWrite([this, tenant = std::move(tenant), id = std::move(plan_task_id),
                   a2a = std::move(a2a_task_id), now_ms](Connection& db, Written& out) -> Result<void> {
    auto state = LocalTaskState(db, tenant, a2a);
    if (!state) return std::move(state).error();
    const bool local = state->has_value();
    const TaskStatus status = local ? FromTaskState(**state) : TaskStatus::kPending;
    return rows::LoadChangeSave(
        db, *cache_, tenant, By::kTask, id,
        [&](Objective& o) { return LinkTask(o, id, a2a, local, status, now_ms); }, now_ms, out,
        true);
  });
}

asio::awaitable<Result<Objective>> OptStore::Get(std::string tenant, By by, std::string id) {
  return reads_->Run([this, tenant = std::move(tenant), by, id = std::move(id)]() -> Result<Objective> {
    std::optional<Objective> found;
    auto read = db_.Read([&](Connection& db) -> Result<void> {
      auto l = rows::Load(db, tenant, by, id);
      if (!l) return std::move(l).error();
      if (l->has_value()) found = std::move((*l)->objective);
      return {};
    });
    if (!read) return std::move(read).error();
    if (!found) return rows::NotFound(by, id);
    return std::move(*found);
  });
}

Result<std::vector<OptEvent>> OptStore::ReadEvents(const std::string& objective_id, int64_t after,
                                                   size_t limit) {
  std::vector<OptEvent> out;
  auto read = db_.Read([&](Connection& db) -> Result<void> {
    auto ps = db.Prepare(
        "SELECT sequence, event, last FROM opt_events WHERE objective_id = ?1 AND sequence > ?2 "
        "ORDER BY sequence LIMIT ?3");
    if (!ps) return std::move(ps).error();
    Stmt s(*ps);
    s.Bind(1, objective_id);
    s.Bind(2, after);
    s.Bind(3, static_cast<int64_t>(limit));
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      OptEvent e;
      e.sequence = s.Int(0);
      e.json = s.Text(1);
      e.last = s.Int(2) != 0;
      out.push_back(std::move(e));
    }
    if (rc != SQLITE_DONE) return db.Fail("opt: read events", rc);
    return {};
  });
  if (!read) return std::move(read).error();
  return out;
}

Result<std::pair<Objective, int64_t>> OptStore::Snapshot(const std::string& tenant,
                                                         const std::string& id) {
  std::optional<rows::Loaded> found;
  auto read = db_.Read([&](Connection& db) -> Result<void> {
    auto l = rows::Load(db, tenant, By::kObjective, id);
    if (!l) return std::move(l).error();
    found = std::move(l).value();
    return {};
  });
  if (!read) return std::move(read).error();
  if (!found) return rows::NotFound(By::kObjective, id);
  return std::make_pair(std::move(found->objective), found->last_sequence);
}

asio::awaitable<Result<std::vector<RunAction>>> OptStore::PendingActions(size_t limit) {
  return reads_->Run([this, limit]() -> Result<std::vector<RunAction>> {
    std::vector<RunAction> out;
    auto read = db_.Read([&](Connection& db) -> Result<void> {
      auto ps = db.Prepare(
          "SELECT run_id, kind, objective_id, plan_task_id, request FROM opt_actions "
          "ORDER BY rowid LIMIT ?1");
      if (!ps) return std::move(ps).error();
      Stmt s(*ps);
      s.Bind(1, static_cast<int64_t>(limit));
      int rc;
      while ((rc = s.Step()) == SQLITE_ROW) {
        auto a = ActionFrom(s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4));
        if (!a) return std::move(a).error();
        out.push_back(std::move(a).value());
      }
      if (rc != SQLITE_DONE) return db.Fail("opt: read the outbox", rc);
      return {};
    });
    if (!read) return std::move(read).error();
    return out;
  });
}

asio::awaitable<Result<OptStore::Written>> OptStore::ActionDone(RunAction a,
                                                                std::optional<std::string> failed,
                                                                int64_t now_ms) {
  return RunWrite([this, a = std::move(a), failed = std::move(failed), now_ms](
                      Connection& db, Written& out) -> Result<void> {
    const char* kind = a.kind == RunAction::Kind::kStart ? "start" : "cancel";
    auto dropped = rows::DropAction(db, a.run_id, kind);
    if (!dropped) return std::move(dropped).error();
    if (!failed) return {};
    auto changed = rows::LoadChangeSave(
        db, *cache_, "", By::kTask, a.plan_task_id,
        [&](Objective& o) { return FailStart(o, a.plan_task_id, *failed, now_ms); }, now_ms, out,
        true);
    // An objective deleted meanwhile (none is, today) leaves nothing to fail.
    if (!changed && changed.error().code == ErrorCode::kOptNotFound) return {};
    return changed;
  });
}

asio::awaitable<Result<OptStore::Page>> OptStore::List(std::string tenant,
                                                       std::optional<ObjectiveStatus> status,
                                                       int page_size, std::string page_token) {
  return reads_->Run([this, tenant = std::move(tenant), status, page_size,
                      page_token = std::move(page_token)]() -> Result<Page> {
    std::optional<storage::PageCursor> cursor;
    if (!page_token.empty()) {
      auto c = storage::DecodePageToken(page_token);
      if (!c) return std::move(c).error();
      cursor = std::move(c).value();
    }
    Page page;
    auto read = db_.Read([&](Connection& db) -> Result<void> {
      const std::string filter =
          std::string(" WHERE tenant = :tenant") + (status ? " AND status = :status" : "");
      {
        auto ps = db.Prepare("SELECT count(*) FROM opt_objectives" + filter);
        if (!ps) return std::move(ps).error();
        Stmt s(*ps);
        s.Bind(":tenant", tenant);
        if (status) s.Bind(":status", NameOf(*status));
        if (int rc = s.Step(); rc != SQLITE_ROW) return db.Fail("opt: count objectives", rc);
        page.total_size = s.Int(0);
      }
      auto ps = db.Prepare("SELECT doc, updated_at_ms, id FROM opt_objectives" + filter +
                                (cursor ? " AND (updated_at_ms < :at OR (updated_at_ms = :at "
                                          "AND id < :id))"
                                        : "") +
                                " ORDER BY updated_at_ms DESC, id DESC LIMIT :limit");
      if (!ps) return std::move(ps).error();
      Stmt s(*ps);
      s.Bind(":tenant", tenant);
      if (status) s.Bind(":status", NameOf(*status));
      if (cursor) {
        s.Bind(":at", cursor->updated_at_ms);
        s.Bind(":id", cursor->task_id);
      }
      s.Bind(":limit", static_cast<int64_t>(page_size) + 1);
      int rc;
      storage::PageCursor last;
      while ((rc = s.Step()) == SQLITE_ROW) {
        if (static_cast<int>(page.objectives.size()) == page_size) {
          page.next_page_token = storage::EncodePageToken(last);
          break;
        }
        auto o = ObjectiveFromDoc(s.Text(0));
        if (!o) return std::move(o).error();
        last = {s.Int(1), std::string(s.Text(2))};
        page.objectives.push_back(std::move(o).value());
      }
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db.Fail("opt: list objectives", rc);
      return {};
    });
    if (!read) return std::move(read).error();
    return page;
  });
}

}  // namespace a2ad::ext::opt
