#include "a2ad/tasks/state_machine.hpp"

namespace a2ad::tasks {
using protocol::TaskState;

bool CanTransition(TaskState from, TaskState to) {
  if (protocol::IsTerminal(from)) return false;
  if (from == TaskState::kUnspecified) return false;
  if (to == TaskState::kSubmitted || to == TaskState::kUnspecified) return false;
  return true;
}

}  // namespace a2ad::tasks
