#pragma once
// The preconditions of TaskStore::Commit that do not depend on stored state. Every backend
// checks them the same way before touching storage.
//
// Thread safety: pure function.
#include "a2ad/core/result.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::storage {

/// Ok, or kInvalidParams naming the first violation: an empty task id; an
/// expected_last_sequence below -1; an event whose run_id is not record.task.id or whose
/// sequence is not expected_last_sequence + 1 + its index; a record.last_sequence that is
/// not the last event's sequence (or expected_last_sequence when there are no events).
core::Result<void> CheckCommitPreconditions(const TaskCommit& commit);

}  // namespace a2ad::storage
