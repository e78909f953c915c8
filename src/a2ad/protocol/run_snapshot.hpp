#pragma once
// The OpenWOP RunSnapshot (run-snapshot.schema.json, DIGEST §3.1) as a C++ value: what
// TaskRecord::run holds, what the fold of a run's log builds (tasks/run_projection.hpp) and
// what the engine decides from (workflow/plan.hpp). Its JSON form exists only at the edges:
// the store writes and reads it (WriteRunSnapshot, RunSnapshotFromJson) and the OpenWOP REST
// surface serves it (RunSnapshotToJson).
//
// What is typed and what stays JSON:
// - Typed: what the host itself decides from. The run's identity and lifecycle (ids, status,
//   timestamps, parent links), its nodes' states (NodeState), how often each node raised an
//   interrupt, how many nodes started, and its child runs.
// - JSON: documents whose shape belongs to someone else and that the host passes through or
//   reads a member of. Variables, inputs, outputs and metadata are the workflow's; an open
//   interrupt is the raising kind's record (a quorum, a schema); a pause is the pause
//   extension's; resume values are the answers given; acceptedMessages has the shapes of
//   earlier releases (tasks/accepted_messages.hpp).
// - Members a snapshot holds that this struct does not know (a newer release's, or a known
//   member of an unexpected type) are kept in `extra` and written back as they were.
//
// Beyond the schema's fields the snapshot keeps (the schema is open): nodeStates,
// resumeValues{key: value} (answers of resolved interrupts by their deterministic key),
// interruptCounts{nodeId: n} (interrupts each node raised: the key's ordinal),
// nodeExecutions (node starts so far, limits.maxNodeExecutions), interrupt{nodeId,
// interruptId, kind, key, data, interruptToken?, expiresAt?, quorum?} while waiting,
// acceptedMessages, pause, lastResume, waitingOn{childRunId, nodeId, interrupt?} and
// childRuns[{runId, status}].
//
// Thread safety: plain values and pure functions.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace a2ad::protocol {

class JsonTextWriter;

/// run.nodeStates[id]: one node's state in its run.
struct NodeState {
  std::string id;      // the node's id (the key in nodeStates)
  std::string status;  // running | completed | failed | skipped; "" (only an effect logged)
  std::string type_id;
  std::optional<int64_t> attempt;        // set when started
  std::string started_at;                // RFC 3339
  std::string completed_at;              // RFC 3339; "" until completed
  std::optional<int64_t> started_at_ms;  // set by kinds that time themselves (delay)
  std::optional<int64_t> wake_at;        // an armed timer (delay)
  std::string child_run_id;              // a child run the node started (sub-workflow)
  std::string child_workflow_id;
  std::optional<boost::json::value> outputs;  // once completed
  std::optional<boost::json::value> error;    // once failed
  std::optional<boost::json::value> reason;   // once skipped
  /// The results of its calls out (workflow/effects.hpp), merged member by member.
  std::optional<boost::json::object> effect;
  boost::json::object extra;  // members not known here, kept as they were

  /// `outputs` when it is an object, else an empty one.
  const boost::json::object& OutputsObject() const;
  /// `effect`, else an empty one.
  const boost::json::object& EffectObject() const;
  friend bool operator==(const NodeState&, const NodeState&) = default;
};

/// run.childRuns[i]: a child run a node started, and its last known status.
struct ChildRun {
  std::string run_id;
  boost::json::value status;  // "pending" until the node finishes, then the child's
  friend bool operator==(const ChildRun&, const ChildRun&) = default;
};

struct RunSnapshot {
  std::string run_id;  // == task id; "" for a task no run event touched yet (see empty())
  std::string workflow_id;
  /// pending | running | waiting-approval | waiting-input | waiting-external | paused |
  /// completed | failed | cancelled (tasks/run_projection.hpp).
  std::string status;
  std::string created_at;  // RFC 3339
  std::string started_at;
  std::string completed_at;
  std::string parent_run_id;  // a child run's parent, and the parent's node
  std::string parent_node_id;
  std::string request_digest;  // the creating request's digest (OpenWOP idempotency)
  std::string engine_version;
  int64_t event_log_schema_version = 0;
  std::string current_node_id;  // the node an open interrupt or a waiting child is at
  std::string failed_node_id;
  int64_t node_executions = 0;  // nodes started so far

  boost::json::object variables;
  std::optional<boost::json::object> inputs;
  std::optional<boost::json::value> outputs;
  std::optional<boost::json::object> metadata;
  std::optional<boost::json::array> tags;

  /// In the order they first started (json object order in the stored text).
  std::vector<NodeState> node_states;
  /// nodeId -> interrupts raised, in the order of the first one.
  std::vector<std::pair<std::string, int64_t>> interrupt_counts;
  std::vector<ChildRun> child_runs;

  boost::json::object resume_values;                     // key -> resume value
  std::optional<boost::json::object> accepted_messages;  // accepted_messages.hpp
  std::optional<boost::json::object> interrupt;          // the open interrupt
  std::optional<boost::json::object> waiting_on;         // a child's gate the run waits on
  std::optional<boost::json::object> pause;              // the open pause (tasks/pause.hpp)
  std::optional<boost::json::object> last_resume;
  std::optional<boost::json::object> error;  // once failed: {code, message, ...}

  boost::json::object extra;  // members not known here, kept as they were

  /// No run event touched the task yet (the snapshot of a store row written before runs).
  bool empty() const { return run_id.empty() && status.empty() && extra.empty(); }

  /// The state of node `id`, or nullptr.
  const NodeState* Node(std::string_view id) const;
  NodeState* Node(std::string_view id);
  /// The state of node `id`, made (empty, at the end) if it has none.
  NodeState& NodeOrNew(std::string_view id);
  /// Interrupts node `id` raised so far.
  int64_t InterruptCount(std::string_view id) const;

  friend bool operator==(const RunSnapshot&, const RunSnapshot&) = default;
};

/// Reads a stored or served snapshot (its members are moved out of `o`). Never fails: members
/// of an unexpected type are kept in `extra` (so they are written back unchanged), and `{}`
/// reads as an empty snapshot.
RunSnapshot RunSnapshotFromJson(boost::json::object o);
/// The JSON text of `run` (`{}` when empty()): the known members in a fixed order, then
/// `extra`. RunSnapshotFromJson of the text gives `run` back.
void WriteRunSnapshot(JsonTextWriter& out, const RunSnapshot& run);
/// The same as a DOM, for callers that add to it or serve it in a larger document.
boost::json::object RunSnapshotToJson(const RunSnapshot& run);

/// `o`'s object, else an empty one (for the snapshot's optional objects).
const boost::json::object& OrEmpty(const std::optional<boost::json::object>& o);

/// The node state a kind sees before its node started (every member empty).
const NodeState& NoNodeState();

}  // namespace a2ad::protocol
