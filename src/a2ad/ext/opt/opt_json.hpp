#pragma once
// The JSON of the OPT model (opt_model.hpp): the wire objects of seed 002 (Objective, Plan,
// PlanTask, with a2ad's additions named in docs/OPT.md: a plan's `blockedOn`, a task's
// `stoppedBy`, `createdAt`/`updatedAt` of tasks), and the stored documents, one per row
// (opt_store.hpp), which keep what the wire does not show (`decided`) and times in
// milliseconds.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <string_view>

#include "a2ad/core/result.hpp"
#include "a2ad/ext/opt/opt_model.hpp"

namespace a2ad::ext::opt {

boost::json::object ToJson(const PlanTask& t);
/// `tasks`: include the plan's tasks.
boost::json::object ToJson(const Plan& p, bool tasks);
/// `plans`: include the plans (each with its tasks when `tasks`).
boost::json::object ToJson(const Objective& o, bool plans, bool tasks);

/// The stored documents: everything of one row but its children.
boost::json::object StoredDoc(const Objective& o);
boost::json::object StoredDoc(const Plan& p);
boost::json::object StoredDoc(const PlanTask& t);
/// Inverse of StoredDoc (children left empty). kDataCorrupt for a document a2ad did not write.
core::Result<Objective> ObjectiveFromDoc(std::string_view text);
core::Result<Plan> PlanFromDoc(std::string_view text);
core::Result<PlanTask> TaskFromDoc(std::string_view text);

}  // namespace a2ad::ext::opt
