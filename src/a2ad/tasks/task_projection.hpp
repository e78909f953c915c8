#pragma once
// The task snapshot is the fold of its run event log; A2A stream events are projections of
// single log entries. Both are pure functions (STYLE.md #4). Thread safety: pure functions.
//
// Event -> effect on the A2A task (payload fields in camelCase, messages and artifacts in
// v1.0 JSON):
//   a2a.task.submitted   {contextId, skillId, message,  task created, state submitted,
//                         dedupKey?, tenant?, owner?}   message appended to history; the
//                                                        record's dedup key, tenant
//                                                        ("default") and owner ("anonymous")
//   a2a.message.received {message, caller?}             message appended to history; an
//                                                        interrupted task becomes working;
//                                                        from the creator (payload.caller):
//                                                        the record's dedup key is cleared
//                                                        (accepted_messages.hpp); so by
//                                                        run.cancelled {caller}
//   run.started, node.resumed  {message?}               state working
//   node.suspended       {kind, message?, interrupt?}   state input-required (auth-required
//                                                        when kind == "auth");
//                                                        metadata.openwop.interrupt
//   a2ad.approval.vote   {message, ...}                 (a quorum vote that leaves it open)
//                                                        state stays input-required, status
//                                                        message = the tally;
//                                                        metadata.openwop.interrupt.quorum
//                                                        = the run's interrupt.quorum
//   node.started         {wakeAt} (a durable timer)     state stays working, status message
//                                                        "waiting until <time> (node <id>)"
//                                                        (metadata.openwop.waitingUntil);
//                                                        it stays until the next status
//   artifact.created     {artifact, append?, lastChunk?} artifact added, replaced or appended
//   run.completed        {message?}                     state completed
//   run.failed           {error{code,message}}          state failed, status.message from
//                                                        error.message, metadata.openwop.error
//   run.cancelled        {reason?}                      state canceled
//   a2a.task.rejected    {reason?}                      state rejected
//   anything else                                       no change (still sequenced)
// A status `message` (agent role) is also appended to history.
//
// Generation (A2A 1.1 §3.2.7): every entry that projects to an A2A stream event (the task
// itself at creation, a status or an artifact update: ProjectsToA2a) adds 1 to the task's
// generation, so the task is created at 1 and each event carries the generation after it,
// one event per value. A2A 1.0 has no `generation` member (and its strict schema refuses
// unknown ones), so it travels as metadata.generation: in the Task (stored with the
// snapshot) and in each status and artifact update event.
#include <cstdint>
#include <optional>
#include <string_view>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/storage/task_store.hpp"

namespace a2ad::tasks {

/// Whether an entry projects to an A2A stream event (and so bumps the generation).
bool ProjectsToA2a(const protocol::RunEvent& event);

/// The task's generation (metadata.generation); 0 for a task stored before generations.
int64_t GenerationOf(const protocol::Task& t);

/// Folds one event into `record` (the task, updated_at, last_sequence, skill id).
/// Errors: kInvalidParams for a malformed payload; kUnsupportedOperation for a state change
/// the state machine forbids (e.g. anything after a terminal state). On error `record` is
/// unchanged.
core::Result<void> ApplyEvent(storage::TaskRecord& record, const protocol::RunEvent& event);

/// ApplyEvent without the copy that makes it all-or-nothing: for replaying a log that was
/// already validated when it was committed (linear instead of quadratic in the log's size).
/// On error `record` may be partly updated.
core::Result<void> FoldCommittedEvent(storage::TaskRecord& record, const protocol::RunEvent& event);

/// The A2A stream event that `event` projects to, given the task snapshot right after it
/// was applied; nullopt when the entry has no A2A projection. `final` (v0.3) is set on
/// status updates into terminal or interrupted states.
std::optional<protocol::StreamEvent> ProjectEvent(const protocol::Task& after,
                                                  const protocol::RunEvent& event);
/// ProjectEvent into `out`, a StreamEvent as constructed (a new StreamItem's): false when the
/// entry has no A2A projection (then `out` holds nothing of use). It spares the stream's path
/// the moves of a StreamEvent, which holds a whole Task.
bool ProjectEventInto(const protocol::Task& after, const protocol::RunEvent& event,
                      protocol::StreamEvent& out);

}  // namespace a2ad::tasks
