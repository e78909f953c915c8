#pragma once
// `tck-client-parse` of the built-in tck skill (tck_executor.hpp): the A2A interop kit's way
// of asking an agent to read a canonical wire response as its own client would (ACTS §10's
// client tests, run through the agent). The message carries a data part
// `{"operation": "SendMessage", "wire_payload": <a response body>}`; the answer is what a2ad's
// A2A 1.0 decoder reads from it, written back in the same shape (`{"task": ...}` or
// `{"message": ...}` for SendMessage, the task for GetTask and CancelTask, `{"tasks": [...],
// ...}` for ListTasks, `{"error": ...}` for a JSON-RPC error), so that a runner compares it
// with the response it sent. The payload may be the JSON-RPC envelope, its result, or a
// golden response `{"status", "headers", "body"}`.
#include <boost/json/value.hpp>

#include "a2ad/core/result.hpp"
#include "a2ad/protocol/model.hpp"

namespace a2ad::tasks {

/// What `message` asks to parse, parsed; an error naming what is missing or unreadable.
core::Result<boost::json::object> TckClientParse(const protocol::Message& message);

}  // namespace a2ad::tasks
