#pragma once
// The RFC 0100 A2ATaskState (a2a-task-state.schema.json) of a task: the durable,
// content-free projection of a task and its run that the `tasks.a2a_state` column holds and
// the OpenWOP surface serves. taskId == runId, the state as a lowercase-hyphen label, an
// interruptKind iff input-required, and the time of the last transition; never a message,
// an artifact or a variable.
//
// It is a function of the record, so nothing keeps it: the stores write it with every
// commit (WriteA2ATaskState, straight to text) and the OpenWOP route derives it on read.
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>

#include "a2ad/protocol/model.hpp"
#include "a2ad/protocol/run_snapshot.hpp"

namespace a2ad::protocol {

class JsonTextWriter;

/// Writes the A2ATaskState of `task`, whose run is `run`, as one JSON object.
void WriteA2ATaskState(JsonTextWriter& w, const Task& task, const RunSnapshot& run);

/// The same object as a DOM.
boost::json::object A2ATaskStateOf(const Task& task, const RunSnapshot& run);

}  // namespace a2ad::protocol
