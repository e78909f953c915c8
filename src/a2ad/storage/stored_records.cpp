#include "a2ad/storage/stored_records.hpp"

#include <algorithm>
#include <boost/json/monotonic_resource.hpp>
#include <string>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::storage {
namespace {

const boost::json::object* ObjectAt(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  return v && v->is_object() ? &v->get_object() : nullptr;
}

std::string_view StringAt(const boost::json::object& o, std::string_view key) {
  const boost::json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// A positive integer at `key` (a time in epoch ms), else 0.
int64_t TimeAt(const boost::json::object* o, std::string_view key) {
  return o ? std::max<int64_t>(protocol::IntOr(*o, key, 0), 0) : 0;
}

core::Error Unreadable(std::string_view task_id, const std::string& what) {
  return core::Error(core::ErrorCode::kDataCorrupt,
                     "stored record of task " + std::string(task_id) + " does not read: " + what,
                     {{"taskId", std::string(task_id)}});
}

}  // namespace

core::Result<TaskRecord> DecodeStoredTask(const StoredTask& row, bool with_run) {
  TaskRecord record;
  record.skill_id = std::string(row.skill_id);
  record.created_at_ms = row.created_at_ms;
  record.updated_at_ms = row.updated_at_ms;
  record.last_sequence = row.last_sequence;
  // The snapshot's DOM lives only until TaskFromJson has copied it into the Task (its members
  // are assigned, which copies them out of the arena): its nodes come from a buffer on the
  // stack, and are not freed one by one. A task of a few messages fits in it.
  unsigned char buffer[4096];
  boost::json::monotonic_resource arena(buffer, sizeof buffer);
  auto snapshot = protocol::ParseJson(row.snapshot, &arena);
  if (!snapshot) return Unreadable(row.id, "snapshot: " + snapshot.error().message);
  auto task = protocol::v10::TaskFromJson(snapshot.value(), "snapshot");
  if (!task) return Unreadable(row.id, "snapshot: " + task.error().message);
  record.task = std::move(task).value();
  if (record.task.id != row.id)
    return Unreadable(row.id, "snapshot: it holds task '" + record.task.id + "'");
  if (with_run) {
    auto run = protocol::ParseJsonObject(row.run, "run");
    if (!run) return Unreadable(row.id, "run: " + run.error().message);
    record.run = protocol::RunSnapshotFromJson(std::move(run).value());
  }
  record.dedup_key = std::string(row.dedup_key);
  record.tenant = std::string(row.tenant);
  record.owner = std::string(row.owner);
  return record;
}

core::Result<boost::json::object> DecodeEventPayload(std::string_view task_id, int64_t sequence,
                                                     std::string_view payload) {
  auto v = protocol::ParseJsonObject(payload, "payload");
  if (!v) {
    auto e = Unreadable(task_id, "event " + std::to_string(sequence) + ": " + v.error().message);
    e.details.emplace_back("sequence", std::to_string(sequence));
    return e;
  }
  return std::move(v).value();
}

std::string_view EventAwaited(const protocol::RunSnapshot& run) {
  if (run.status != "paused" || !run.pause) return {};
  const boost::json::object* conditions = ObjectAt(*run.pause, "conditions");
  return conditions ? StringAt(*conditions, "onEvent") : std::string_view();
}

std::optional<int64_t> ParkedUntil(const protocol::RunSnapshot& run) {
  if (run.status == "paused") {
    const boost::json::object* pause = run.pause ? &*run.pause : nullptr;
    const int64_t trigger = TimeAt(pause, "triggerAtMs");
    const int64_t timeout = TimeAt(pause, "timeoutAtMs");
    if (trigger > 0 && timeout > 0) return std::min(trigger, timeout);
    return trigger > 0 ? trigger : timeout;
  }
  if (run.status.starts_with("waiting-") && !run.waiting_on)
    return TimeAt(run.interrupt ? &*run.interrupt : nullptr, "expiresAt");
  return std::nullopt;
}

}  // namespace a2ad::storage
