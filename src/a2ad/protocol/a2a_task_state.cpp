#include "a2ad/protocol/a2a_task_state.hpp"

#include <string>
#include <string_view>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::protocol {
namespace {

// The schema knows two kinds of input-required; an external event or a custom interrupt
// waits for input too (clarification). The open interrupt's kind, else the one the task's
// `openwop` metadata names.
std::string_view InterruptKind(const Task& task, const RunSnapshot& run) {
  std::string_view kind;
  if (run.interrupt) kind = Str(*run.interrupt, "kind");
  if (kind.empty())
    if (auto* ow = task.metadata.if_contains("openwop"); ow && ow->is_object())
      if (auto* i = ow->get_object().if_contains("interrupt"); i && i->is_object())
        kind = Str(i->get_object(), "kind");
  return kind == "approval" ? "approval" : "clarification";
}

}  // namespace

void WriteA2ATaskState(JsonTextWriter& w, const Task& task, const RunSnapshot& run) {
  w.Raw(R"({"taskId":)");
  w.String(task.id);
  w.Raw(R"(,"runId":)");
  w.String(task.id);
  if (!task.context_id.empty()) {
    w.Raw(R"(,"contextId":)");
    w.String(task.context_id);
  }
  w.Raw(R"(,"state":)");
  w.String(TaskStateLabel(task.status.state));
  if (task.status.state == TaskState::kInputRequired) {
    w.Raw(R"(,"interruptKind":)");
    w.String(InterruptKind(task, run));
  }
  w.Raw(R"(,"updatedAt":)");
  w.String(core::FormatTimestamp(task.status.timestamp_ms));
  w.Raw('}');
}

boost::json::object A2ATaskStateOf(const Task& task, const RunSnapshot& run) {
  std::string text;
  JsonTextWriter w(text);
  WriteA2ATaskState(w, task, run);
  auto parsed = ParseJsonObject(text, "a2aState");
  return parsed ? std::move(parsed).value() : boost::json::object();
}

}  // namespace a2ad::protocol
