#pragma once
// The one encoder of the A2A objects a2ad sends and stores: Part, Message, Artifact,
// TaskStatus, Task and the stream events, in each of the three JSON shapes of A2A (`Wire`).
// Every shape is described once (encode.cpp) and written either as text (Append*, straight
// into a string: the send path, streams, stored snapshots) or as a DOM (*ToJson, for callers
// that embed the object in a larger value: run event payloads, extension views). Both forms of
// one object serialize to the same bytes (task_json_writer_test pins it).
//
// The wires differ only where A2A does (WIRE.md §4-§13):
// - kV10: ProtoJSON of A2A v1.0 (a2a.proto, package lf.a2a.v1): every v1.0 binding, and the
//   storage form of a task. Parts are {text|raw|url|data, filename?, mediaType?}; enums are
//   proto names (TASK_STATE_CANCELED, ROLE_USER); stream events are a StreamResponse wrapper
//   ({task}|{message}|{statusUpdate}|{artifactUpdate}) with no `final`.
// - kV03: the v0.3 JSON-RPC shapes (types.ts): every object carries its `kind`; enums are
//   lowercase-hyphen; file parts are {"kind":"file","file":{bytes|uri,name?,mimeType?}}; a data
//   part's value must be an object, so any other value is wrapped as {"value": ...}; stream
//   events are bare, a status update always has `final`, an artifact update `append` and
//   `lastChunk`.
// - kV03Proto: ProtoJSON of the v0.3 proto (package a2a.v1), carried by the v0.3 REST and gRPC
//   bindings: no `kind`; a message's parts are `content`; TASK_STATE_CANCELLED (two Ls); file
//   parts {"file":{fileWithBytes|fileWithUri,name?,mimeType?}}, data parts {"data":{"data":
//   {...}}}; defaults (false, "") left out; no Message.referenceTaskIds (v0.3 has no field).
//
// Thread safety: pure functions.
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>

#include "a2ad/protocol/model.hpp"

namespace a2ad::protocol {

/// The three JSON shapes of an A2A object (see the file comment). kV10 is the default: it is
/// also how the server stores a task and the A2A objects in its run events.
enum class Wire : uint8_t { kV10, kV03, kV03Proto };

/// A stream event's `final` on the v0.3 wires: as the event has it, or false for a status
/// update the stream goes on after (an interrupt seen by a subscribe). v1.0 has no `final`.
enum class Final : uint8_t { kAsProjected, kNotFinal };

/// The state's proto name on kV10 and kV03Proto, its lowercase-hyphen name on kV03.
std::string_view TaskStateName(TaskState s, Wire w);
/// ROLE_USER / ROLE_AGENT (ROLE_UNSPECIFIED) on kV10 and kV03Proto; "user" / "agent" on kV03
/// (which has no unspecified role: anything but the agent is the user).
std::string_view RoleName(Role r, Wire w);

// ---- text: appended to `out` (not cleared) ----------------------------------------------
void AppendTask(std::string& out, const Task& t, Wire w = Wire::kV10);
void AppendMessage(std::string& out, const Message& m, Wire w);
void AppendStreamEvent(std::string& out, const StreamEvent& e, Wire w,
                       Final f = Final::kAsProjected);

// ---- DOM --------------------------------------------------------------------------------
boost::json::object PartToJson(const Part& p, Wire w = Wire::kV10);
boost::json::object MessageToJson(const Message& m, Wire w = Wire::kV10);
boost::json::object ArtifactToJson(const Artifact& a, Wire w = Wire::kV10);
boost::json::object TaskStatusToJson(const TaskStatus& s, Wire w = Wire::kV10);
boost::json::object TaskToJson(const Task& t, Wire w = Wire::kV10);
boost::json::object StreamEventToJson(const StreamEvent& e, Wire w = Wire::kV10,
                                      Final f = Final::kAsProjected);

}  // namespace a2ad::protocol
