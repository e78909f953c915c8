#pragma once
// The params of the OPT methods (opt_extension.hpp, docs/OPT.md "Methods"), read and checked
// before anything is done, and the changes they make to an objective (OptStore::Change).
// Internal to ext/opt. Plain functions, not coroutines: the changes are built here and handed
// to the handlers as values (GCC 12 miscompiles lambdas with init-captures made inside a
// coroutine's co_await expression).
//
// Every error is kInvalidParams naming the field ("params.tasks[1].skill: ...").
//
// Thread safety: pure functions (the id generator and the skill check are the caller's).
#include <boost/json/object.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/core/ids.hpp"
#include "a2ad/core/result.hpp"
#include "a2ad/ext/opt/opt_model.hpp"
#include "a2ad/ext/opt/opt_store.hpp"
#include "a2ad/protocol/call_context.hpp"

namespace a2ad::ext::opt::params {

/// nullopt when `inputs` suit workflow `skill` of this host, else why not.
using SkillCheck =
    std::function<std::optional<core::Error>(const std::string& skill, const boost::json::object& inputs)>;

/// objectives/create: a new objective of ctx's tenant, owned by its principal.
core::Result<Objective> NewObjective(const boost::json::object& p, const protocol::CallContext& ctx,
                                     core::IdGenerator& ids, const Limits& limits, int64_t now_ms);

struct GetObjective {
  std::string id;
  bool plans = true;
  bool tasks = true;
};
core::Result<GetObjective> ReadGetObjective(const boost::json::object& p);

struct List {
  std::optional<ObjectiveStatus> status;
  int page_size = 50;
  std::string page_token;
};
/// `p` null: the defaults.
core::Result<List> ReadList(const boost::json::value& p);

/// An update (objectives/update, plans/update): the id it names and the change.
struct Update {
  std::string id;
  OptStore::Change change;
};
core::Result<Update> ReadObjectiveUpdate(const boost::json::object& p, const Limits& limits,
                                         int64_t now_ms);
core::Result<Update> ReadPlanUpdate(const boost::json::object& p, const Limits& limits,
                                    int64_t now_ms);

/// plans/create: the objective it names, the new plan's id and the change that adds it.
struct NewPlan {
  std::string objective_id;
  std::string plan_id;
  OptStore::Change change;
};
core::Result<NewPlan> ReadNewPlan(const boost::json::object& p, core::IdGenerator& ids,
                                  const Limits& limits, const SkillCheck& check, int64_t now_ms);

/// plans/get: the id and includeTasks.
core::Result<std::pair<std::string, bool>> ReadGetPlan(const boost::json::object& p);

/// tasks/link: plan task id and A2A task id.
core::Result<std::pair<std::string, std::string>> ReadLink(const boost::json::object& p);

/// tasks/updateStatus: the plan task's id and the change.
core::Result<Update> ReadTaskStatus(const boost::json::object& p, int64_t now_ms);

/// objectives/subscribe: the objective's id and the cursor (params.afterSequence, else the
/// Last-Event-ID header `last_event_id`); nullopt: from a snapshot.
core::Result<std::pair<std::string, std::optional<int64_t>>> ReadSubscribe(
    const boost::json::object& p, std::string_view last_event_id);

/// A message's opt/v1/objective (docs/OPT.md "Joining by message"), with the plan it names
/// (message metadata opt/v1/planId).
struct Join {
  std::string id;  // an existing objective of the caller's tenant; "" to create one
  std::string name;
  std::string description;
  std::string plan_id;
};
/// nullopt when the message carries no opt/v1/objective.
core::Result<std::optional<Join>> ReadJoin(const boost::json::object& message_metadata,
                                           const boost::json::object& request_metadata,
                                           const Limits& limits);

}  // namespace a2ad::ext::opt::params
