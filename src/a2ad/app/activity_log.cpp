#include "a2ad/app/activity_log.hpp"

#include "a2ad/core/log.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/v03/codec.hpp"

namespace a2ad::app {
namespace json = boost::json;
using core::LogLevel;
using protocol::TaskState;

namespace {

// metadata.openwop.<key> of `task`, an object; nullptr when absent.
const json::object* Openwop(const protocol::Task& task, std::string_view key) {
  const json::value* ow = task.metadata.if_contains("openwop");
  if (!ow || !ow->is_object()) return nullptr;
  const json::value* v = ow->get_object().if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

}  // namespace

void LogActivity(const storage::TaskRecord* previous, const storage::TaskCommit& commit) {
  if (!core::LogEnabled(LogLevel::kInfo)) return;
  const storage::TaskRecord& rec = commit.Record();
  const protocol::Task& task = rec.task;
  const TaskState now = task.status.state;
  const std::string_view tenant = rec.tenant;
  if (!previous) {
    core::Log(LogLevel::kInfo, "run started",
              {{"task", std::string_view(task.id)},
               {"skill", std::string_view(rec.skill_id)},
               {"context", std::string_view(task.context_id)},
               {"tenant", tenant},
               {"principal", std::string_view(rec.owner)}});
    if (!protocol::IsTerminal(now)) return;  // one that finished in its first commit goes on
  }
  const TaskState was = previous ? previous->task.status.state : TaskState::kSubmitted;
  if (was == now) return;
  if (protocol::IsInterrupted(now)) {
    const json::object* i = Openwop(task, "interrupt");
    core::Log(LogLevel::kInfo, "gate raised",
              {{"task", std::string_view(task.id)},
               {"skill", std::string_view(rec.skill_id)},
               {"kind", i ? protocol::Str(*i, "kind") : std::string_view()},
               {"node", i ? protocol::Str(*i, "nodeId") : std::string_view()},
               {"state", protocol::TaskStateLabel(now)},
               {"tenant", tenant}});
    return;
  }
  if (protocol::IsInterrupted(was) && !protocol::IsTerminal(now)) {
    core::Log(LogLevel::kInfo, "gate answered",
              {{"task", std::string_view(task.id)},
               {"skill", std::string_view(rec.skill_id)},
               {"tenant", tenant}});
    return;
  }
  if (protocol::IsTerminal(now)) {
    const json::object* error = Openwop(task, "error");
    const std::string state(protocol::TaskStateLabel(now));
    const LogLevel level = now == TaskState::kFailed ? LogLevel::kWarn : LogLevel::kInfo;
    core::Log(level, "run " + state,
              {{"task", std::string_view(task.id)},
               {"skill", std::string_view(rec.skill_id)},
               {"ms", rec.updated_at_ms - rec.created_at_ms},
               {"error", error ? protocol::Str(*error, "code") : std::string_view()},
               {"tenant", tenant}});
  }
}

}  // namespace a2ad::app
