#pragma once
// The activity log (issue 18): one structured line when a run starts, stops at a gate (an
// approval, a question, an authorization), is answered there, and ends (completed, failed,
// canceled, rejected: with its duration and error code), read off each task commit
// (TaskServiceOptions::on_commit). What an operator follows a run by, with `task` to join it
// to the access log's lines.
//
// Thread safety: called under the task's lock; only logs.
#include "a2ad/storage/task_store.hpp"

namespace a2ad::app {

/// Logs what `commit` changes of the task `previous` was (nullptr: a new task).
void LogActivity(const storage::TaskRecord* previous, const storage::TaskCommit& commit);

}  // namespace a2ad::app
