#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol {

bool IsTerminal(TaskState s) {
  return s == TaskState::kCompleted || s == TaskState::kFailed || s == TaskState::kCanceled ||
         s == TaskState::kRejected;
}

bool IsInterrupted(TaskState s) {
  return s == TaskState::kInputRequired || s == TaskState::kAuthRequired;
}

std::string_view TaskStateLabel(TaskState s) {
  static constexpr std::string_view kLabels[] = {"unknown",        "submitted", "working",
                                                 "completed",      "failed",    "canceled",
                                                 "input-required", "rejected",  "auth-required"};
  return kLabels[static_cast<int>(s)];
}

void TrimHistory(Task& task, const std::optional<int32_t>& history_length) {
  if (!history_length) return;
  size_t keep = static_cast<size_t>(*history_length < 0 ? 0 : *history_length);
  if (task.history.size() > keep)
    task.history.erase(
        task.history.begin(),
        task.history.begin() + static_cast<std::ptrdiff_t>(task.history.size() - keep));
}

}  // namespace a2ad::protocol
