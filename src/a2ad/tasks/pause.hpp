#pragma once
// Pausing runs (the pause extension, seed 004 and its A2A 1.0 revision; docs/PAUSE.md): the
// requests TaskService::PauseTask / ResumeTask take (PauseControl, pause_control.hpp, decides
// them), and the pure rules both the service and the
// workflow engine apply to the log.
//
// The log: a pause is one entry `run.paused` (the payload PauseEntry builds), a resume one
// `run.resumed` {previousState, cause, hadResumeInput, continueTranscript, resumedAt,
// resumedBy, input?}. The run's snapshot keeps the open pause as `run.pause` (the entry's
// payload) and its status `paused`; the A2A task stays `working` and describes the pause in
// `metadata.pause` (task_projection.hpp), which the extension's view turns into the literal
// states for callers that activated it (ext/pause/).
//
// Durability: every pause and resume is committed before it is acknowledged; timer conditions
// are absolute instants in the entry (triggerAtMs, timeoutAtMs), so a restart sleeps to the
// same instant.
//
// Thread safety: plain values and pure functions.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/tasks/executor.hpp"

namespace a2ad::tasks {

/// Pause modes (seed: the ACP taxonomy): what happens to the step in flight.
inline constexpr std::string_view kFinishStep = "finish_step";
inline constexpr std::string_view kInterruptImmediate = "interrupt_immediate";
inline constexpr std::string_view kWaitForCompletion = "wait_for_completion";
bool IsPauseMode(std::string_view mode);

/// Resume causes (seed: ACP SessionUpdate::Resumed.cause).
inline constexpr std::string_view kExplicitResume = "explicit_resume";
inline constexpr std::string_view kConditionFired = "condition_fired";
inline constexpr std::string_view kTimeoutCause = "timeout";
inline constexpr std::string_view kExternalEvent = "external_event";

/// tasks/pause, tasks/await_resumption (and a pause passed on to a child run).
struct PauseTaskRequest {
  std::string task_id;
  std::string initiated_by = "client";  // "client" | "agent"
  std::string reason;
  std::string mode = std::string(kFinishStep);
  boost::json::object conditions;  // agent pauses: as NormalizeConditions returned it
  int64_t trigger_at_ms = 0;       // from the conditions; 0: none
  int64_t timeout_at_ms = 0;
  std::string summary;
  boost::json::object metadata;
  std::string cascaded_from;  // the parent run whose pause this is
};

/// tasks/resume; also a fired condition, an event, a timer.
struct ResumeTaskRequest {
  std::string task_id;
  std::string handle;  // must equal the open pause's resumeToken (unless on_event / timer)
  std::optional<boost::json::value> input;
  bool continue_transcript = true;
  std::string cause = std::string(kExplicitResume);
  boost::json::object metadata;
  std::string on_event;  // resume the pause waiting for this event name (any handle)
  bool timer = false;    // a timer of the pause `handle` fired: the service decides which
};

/// Agent-pause conditions (seed: onEvent, trigger, timeout{durationMinutes, onTimeout}),
/// checked and made absolute at `now_ms`. `field` prefixes error paths ("params.conditions").
/// trigger: an RFC 3339 time, or {"afterMs": n} (a2ad's: relative); timeout.durationMinutes
/// > 0 (fractions allowed) up to 30 days; onTimeout "fail" (default) | "resume". Unknown
/// members are refused. kInvalidParams naming the field.
struct PauseConditions {
  boost::json::object
      normalized;  // onEvent?, trigger? (RFC 3339), timeout?{durationMinutes, onTimeout}
  int64_t trigger_at_ms = 0;
  int64_t timeout_at_ms = 0;
};
core::Result<PauseConditions> NormalizeConditions(const boost::json::value& conditions,
                                                  int64_t now_ms, std::string_view field);

/// The payload of run.paused. `handle` is the resumeToken; `run_status` and `a2a_state` what
/// a resume restores.
struct PauseEntryFields {
  const PauseTaskRequest& request;
  std::string handle;
  int64_t now_ms = 0;
  std::string run_status;           // "running", "pending"
  std::string a2a_state;            // "working", "submitted"
  const PausePlan* plan = nullptr;  // what the executor said of the step in flight; null: none
  std::string node_id;              // the awaiting node (core.awaitResumption), if any
  std::string caller;
};
boost::json::object PauseEntry(const PauseEntryFields& fields);

/// The open pause of a run snapshot (run.pause), or nullptr.
const boost::json::object* OpenPause(const protocol::RunSnapshot& run);
/// "paused-by-client" | "paused-by-agent" for an open pause.
std::string PausedStateName(const boost::json::object& pause);

/// Whether an executor step may commit while the run is paused: in finish_step the step that
/// ends the node in flight (node.completed with its artifact and variables); in
/// wait_for_completion also its intermediate steps (a child run's progress); nothing in
/// interrupt_immediate, nothing that ends the run or opens a gate.
bool PauseAdmits(const protocol::RunSnapshot& run, const std::vector<EventDraft>& step);

}  // namespace a2ad::tasks
