#include "a2ad/ext/opt/opt_store.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "a2ad/core/log.hpp"
#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/ext/opt/opt_rows.hpp"
#include "a2ad/ext/opt/opt_schema.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/storage/cluster.hpp"
#include "a2ad/storage/page_cursor.hpp"
#include "a2ad/tasks/task_service.hpp"

namespace a2ad::ext::opt {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;
using storage::sql::Tx;

namespace {

// The state of task `id` of this host if it is `tenant`'s, read from the task store's own
// table (its `tasks` rows: id, state, tenant on every engine) in the writer's transaction;
// nullopt otherwise.
Result<std::optional<protocol::TaskState>> LocalTaskState(Tx& tx, const std::string& tenant,
                                                          const std::string& id) {
  auto r = rows::Exec(tx, "read the state of task '" + id + "'",
                      "SELECT state, tenant FROM tasks WHERE id = $1", {id});
  if (!r) return std::move(r).error();
  if (r->size() == 0 || r->Text(0, 1) != tenant) return std::optional<protocol::TaskState>();
  return std::optional<protocol::TaskState>(static_cast<protocol::TaskState>(r->Int(0, 0)));
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

storage::ComponentMigrations OptStore::Migrations() {
  return {"opt", SqliteSchema(), PostgresSchema()};
}

OptStore::OptStore(storage::Backend& db, Limits limits, size_t read_threads)
    : db_(db),
      limits_(limits),
      cache_(std::make_unique<rows::WriterCache>()),
      reads_(std::make_unique<tasks::ReadExecutor>(read_threads)) {}

OptStore::~OptStore() = default;

void OptStore::SetListener(Listener listener) { listener_ = std::move(listener); }

asio::awaitable<Result<OptStore::Written>> OptStore::RunWrite(
    std::function<Result<void>(Tx&, Written&)> job) {
  using Sig = void(Result<Written>);
  return asio::async_initiate<const asio::use_awaitable_t<>&, Sig>(
      [this](auto handler, std::function<Result<void>(Tx&, Written&)> work) {
        auto ex = asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto out = std::make_shared<Written>();
        db_.Write([work = std::move(work), out](Tx& tx) { return work(tx, *out); },
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
  return RunWrite([o = std::move(o), if_absent](Tx& tx, Written& out) -> Result<void> {
    if (if_absent) {
      auto stored = rows::Load(tx, "", By::kObjective, o.id);
      if (!stored) return std::move(stored).error();
      if (stored->has_value()) {
        if ((*stored)->objective.tenant != o.tenant)
          return Error(ErrorCode::kConflict, "objective id '" + o.id + "' is taken");
        out.objective = std::move((*stored)->objective);
        out.last_sequence = (*stored)->last_sequence;
        return {};
      }
    }
    return rows::SaveNew(tx, o, out);
  });
}

asio::awaitable<Result<OptStore::Written>> OptStore::Update(std::string tenant, By by,
                                                            std::string id, Change change,
                                                            int64_t now_ms) {
  return RunWrite([this, tenant = std::move(tenant), by, id = std::move(id),
                   change = std::move(change), now_ms](Tx& tx, Written& out) -> Result<void> {
    return rows::LoadChangeSave(tx, *cache_, tenant, by, id, change, now_ms, out, true);
  });
}

asio::awaitable<Result<OptStore::Written>> OptStore::Link(std::string tenant,
                                                          std::string plan_task_id,
                                                          std::string a2a_task_id,
                                                          int64_t now_ms) {
  return RunWrite([this, tenant = std::move(tenant), id = std::move(plan_task_id),
                   a2a = std::move(a2a_task_id), now_ms](Tx& tx, Written& out) -> Result<void> {
    auto state = LocalTaskState(tx, tenant, a2a);
    if (!state) return std::move(state).error();
    const bool local = state->has_value();
    const TaskStatus status = local ? FromTaskState(**state) : TaskStatus::kPending;
    return rows::LoadChangeSave(
        tx, *cache_, tenant, By::kTask, id,
        [&](Objective& o) { return LinkTask(o, id, a2a, local, status, now_ms); }, now_ms, out,
        true);
  });
}

asio::awaitable<Result<Objective>> OptStore::Get(std::string tenant, By by, std::string id) {
  return reads_->Run([this, tenant = std::move(tenant), by, id = std::move(id)]() -> Result<Objective> {
    std::optional<Objective> found;
    auto read = db_.Read([&](Tx& tx) -> Result<void> {
      auto l = rows::Load(tx, tenant, by, id);
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
  auto read = db_.Read([&](Tx& tx) -> Result<void> {
    auto r = rows::Exec(tx, "read events",
                        "SELECT sequence, event, last FROM opt_events WHERE objective_id = $1 AND "
                        "sequence > $2 ORDER BY sequence LIMIT $3",
                        {objective_id, after, static_cast<int64_t>(limit)});
    if (!r) return std::move(r).error();
    out.reserve(r->size());
    for (int i = 0; i < r->size(); ++i) {
      OptEvent e;
      e.sequence = r->Int(i, 0);
      e.json = r->Text(i, 1);
      e.last = r->Int(i, 2) != 0;
      out.push_back(std::move(e));
    }
    return {};
  });
  if (!read) return std::move(read).error();
  return out;
}

Result<std::pair<Objective, int64_t>> OptStore::Snapshot(const std::string& tenant,
                                                         const std::string& id) {
  std::optional<rows::Loaded> found;
  auto read = db_.Read([&](Tx& tx) -> Result<void> {
    auto l = rows::Load(tx, tenant, By::kObjective, id);
    if (!l) return std::move(l).error();
    found = std::move(l).value();
    return {};
  });
  if (!read) return std::move(read).error();
  if (!found) return rows::NotFound(By::kObjective, id);
  return std::make_pair(std::move(found->objective), found->last_sequence);
}

std::string OptStore::Claimant() const {
  const storage::Cluster* cluster = db_.Replicas();
  return cluster ? cluster->replica_id() : "local";
}

asio::awaitable<Result<std::vector<RunAction>>> OptStore::ClaimActions(std::string claimant,
                                                                       int64_t now_ms,
                                                                       size_t limit) {
  using Sig = void(Result<std::vector<RunAction>>);
  return asio::async_initiate<const asio::use_awaitable_t<>&, Sig>(
      [this, claimant = std::move(claimant), now_ms, limit](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto out = std::make_shared<std::vector<RunAction>>();
        const int64_t until = now_ms + kClaimMs;
        db_.Write(
            [claimant, now_ms, until, limit, out](Tx& tx) -> Result<void> {
              // The claim condition is repeated outside the sub-select: on PostgreSQL a row
              // another replica claimed while this statement waited for it is re-checked
              // against it, and left alone. rowid: the order the rows were written in.
              auto claimed = rows::Exec(
                  tx, "claim outbox rows",
                  "UPDATE opt_actions SET claimed_by = $1, claim_expires_ms = $2"
                  " WHERE (claimed_by IS NULL OR claimed_by = $1 OR claim_expires_ms <= $3)"
                  " AND rowid IN (SELECT rowid FROM opt_actions WHERE claimed_by IS NULL"
                  " OR claimed_by = $1 OR claim_expires_ms <= $3 ORDER BY rowid LIMIT $4)",
                  {claimant, until, now_ms, static_cast<int64_t>(limit)});
              if (!claimed) return std::move(claimed).error();
              if (claimed->Affected() == 0) return {};
              auto r = rows::Exec(tx, "read the claimed outbox rows",
                                  "SELECT run_id, kind, objective_id, plan_task_id, request FROM"
                                  " opt_actions WHERE claimed_by = $1 AND claim_expires_ms = $2"
                                  " ORDER BY rowid",
                                  {claimant, until});
              if (!r) return std::move(r).error();
              for (int i = 0; i < r->size(); ++i) {
                auto a = ActionFrom(r->Text(i, 0), r->Text(i, 1), r->Text(i, 2), r->Text(i, 3),
                                    r->Text(i, 4));
                if (!a) return std::move(a).error();
                out->push_back(std::move(a).value());
              }
              return {};
            },
            [h, ex, out](Result<void> r) {
              asio::post(ex, [h, out, r = std::move(r)]() mutable {
                if (r)
                  std::move (*h)(Result<std::vector<RunAction>>(std::move(*out)));
                else
                  std::move (*h)(Result<std::vector<RunAction>>(std::move(r).error()));
              });
            });
      },
      asio::use_awaitable);
}

asio::awaitable<Result<OptStore::Written>> OptStore::ActionDone(RunAction a,
                                                                std::optional<std::string> failed,
                                                                int64_t now_ms) {
  return RunWrite([this, a = std::move(a), failed = std::move(failed), now_ms](
                      Tx& tx, Written& out) -> Result<void> {
    const char* kind = a.kind == RunAction::Kind::kStart ? "start" : "cancel";
    auto dropped = rows::DropAction(tx, a.run_id, kind);
    if (!dropped) return std::move(dropped).error();
    if (!failed) return {};
    auto changed = rows::LoadChangeSave(
        tx, *cache_, "", By::kTask, a.plan_task_id,
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
    auto read = db_.Read([&](Tx& tx) -> Result<void> {
      // The count and the page in one snapshot; $n numbered as the filters apply.
      storage::sql::Params params{tenant};
      std::string filter = " WHERE tenant = $1";
      if (status) {
        params.emplace_back(std::string(NameOf(*status)));
        filter += " AND status = $" + std::to_string(params.size());
      }
      {
        auto r = rows::Exec(tx, "count objectives", "SELECT count(*) FROM opt_objectives" + filter,
                            params);
        if (!r) return std::move(r).error();
        page.total_size = r->Int(0, 0);
      }
      std::string sql = "SELECT doc, updated_at_ms, id FROM opt_objectives" + filter;
      if (cursor) {
        params.emplace_back(cursor->updated_at_ms);
        const std::string at = "$" + std::to_string(params.size());
        params.emplace_back(cursor->task_id);
        const std::string id = "$" + std::to_string(params.size());
        sql += " AND (updated_at_ms < " + at + " OR (updated_at_ms = " + at + " AND id < " + id +
               "))";
      }
      params.emplace_back(static_cast<int64_t>(page_size) + 1);
      sql += " ORDER BY updated_at_ms DESC, id DESC LIMIT $" + std::to_string(params.size());
      auto r = rows::Exec(tx, "list objectives", sql, params);
      if (!r) return std::move(r).error();
      storage::PageCursor last;
      for (int i = 0; i < r->size(); ++i) {
        if (static_cast<int>(page.objectives.size()) == page_size) {
          page.next_page_token = storage::EncodePageToken(last);
          break;
        }
        auto o = ObjectiveFromDoc(r->Text(i, 0));
        if (!o) return std::move(o).error();
        last = {r->Int(i, 1), std::string(r->Text(i, 2))};
        page.objectives.push_back(std::move(o).value());
      }
      return {};
    });
    if (!read) return std::move(read).error();
    return page;
  });
}

}  // namespace a2ad::ext::opt
