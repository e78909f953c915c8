#pragma once
// The A2A task state machine (WIRE.md §3.1). Pure.
#include "a2ad/protocol/model.hpp"

namespace a2ad::tasks {

/// Whether a task in `from` may move to `to`. Rules: nothing leaves a terminal state;
/// nothing enters `submitted` (tasks are born there) or `unspecified`; every other move
/// between non-terminal states, and into any terminal state, is allowed. A move to the
/// same non-terminal state is allowed (a new status message while working).
bool CanTransition(protocol::TaskState from, protocol::TaskState to);

}  // namespace a2ad::tasks
