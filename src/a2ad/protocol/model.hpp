#pragma once
// The internal A2A model. A2A v1.0 (a2a.proto, package lf.a2a.v1) is the pivot; v0.3 is
// converted at the edge by protocol/v03. Pure values: no I/O, no clocks.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace a2ad::protocol {

/// WIRE.md §3.1. Numbering follows the proto enum.
enum class TaskState {
  kUnspecified = 0,
  kSubmitted = 1,
  kWorking = 2,
  kCompleted = 3,
  kFailed = 4,
  kCanceled = 5,
  kInputRequired = 6,
  kRejected = 7,
  kAuthRequired = 8,
};

/// completed, failed, canceled, rejected: the task can never change again.
bool IsTerminal(TaskState s);
/// input-required, auth-required: the task waits for the client (or out-of-band credentials).
bool IsInterrupted(TaskState s);
/// The state's lowercase-hyphen name ("input-required"; kUnspecified is "unknown"), as logs,
/// metrics labels and error messages show it (and v0.3 JSON-RPC spells it).
std::string_view TaskStateLabel(TaskState s);

/// The caller without authentication (development mode), and the tenant every call without
/// one belongs to. Stored as a task's owner and tenant: spelled here only.
inline constexpr const char* kAnonymousPrincipal = "anonymous";
inline constexpr const char* kDefaultTenant = "default";

enum class Role { kUnspecified = 0, kUser = 1, kAgent = 2 };

/// v1.0 Part: exactly one of text | raw | url | data, plus optional filename/mediaType/metadata.
struct Part {
  enum class Kind { kText, kRaw, kUrl, kData };
  Kind kind = Kind::kText;
  std::string text;         // kText: the text; kRaw: base64 bytes; kUrl: the URL
  boost::json::value data;  // kData: any JSON value (v0.3 requires an object)
  std::string filename;
  std::string media_type;
  boost::json::object metadata;

  static Part Text(std::string t) {
    Part p;
    p.text = std::move(t);
    return p;
  }
  static Part Data(boost::json::value v) {
    Part p;
    p.kind = Kind::kData;
    p.data = std::move(v);
    return p;
  }
  friend bool operator==(const Part&, const Part&) = default;
};

struct Message {
  std::string message_id;
  std::string context_id;
  std::string task_id;
  Role role = Role::kUnspecified;
  std::vector<Part> parts;
  boost::json::object metadata;
  std::vector<std::string> extensions;
  std::vector<std::string> reference_task_ids;
  friend bool operator==(const Message&, const Message&) = default;
};

struct Artifact {
  std::string artifact_id;
  std::string name;
  std::string description;
  std::vector<Part> parts;
  boost::json::object metadata;
  std::vector<std::string> extensions;
  friend bool operator==(const Artifact&, const Artifact&) = default;
};

struct TaskStatus {
  TaskState state = TaskState::kUnspecified;
  std::optional<Message> message;
  int64_t timestamp_ms = 0;  // 0 = unset
  friend bool operator==(const TaskStatus&, const TaskStatus&) = default;
};

struct Task {
  std::string id;
  std::string context_id;
  TaskStatus status;
  std::vector<Artifact> artifacts;
  std::vector<Message> history;
  boost::json::object metadata;
  friend bool operator==(const Task&, const Task&) = default;
};

struct TaskStatusUpdateEvent {
  std::string task_id;
  std::string context_id;
  TaskStatus status;
  boost::json::object metadata;
  bool final = false;  // v0.3 only: last event of this stream
};

struct TaskArtifactUpdateEvent {
  std::string task_id;
  std::string context_id;
  Artifact artifact;
  bool append = false;
  bool last_chunk = false;
  boost::json::object metadata;
};

/// One item of a stream (v1.0 StreamResponse; v0.3 a kind-tagged result).
struct StreamEvent {
  enum class Kind { kTask, kMessage, kStatusUpdate, kArtifactUpdate };
  Kind kind = Kind::kTask;
  Task task;
  Message message;
  TaskStatusUpdateEvent status_update;
  TaskArtifactUpdateEvent artifact_update;
};

// ---- requests -------------------------------------------------------------------------

struct AuthenticationInfo {
  std::string scheme;  // v0.3 schemes[0]
  std::string credentials;
};

struct PushNotificationConfig {
  std::string id;
  std::string task_id;
  std::string url;
  std::string token;
  std::optional<AuthenticationInfo> authentication;
  /// "0.3" or "1.0": the wire version of the request that registered it; pushes for this
  /// config use that version's body (WIRE.md §16.2). Set by the codecs.
  std::string wire_version = "1.0";
};

struct SendMessageConfiguration {
  std::vector<std::string> accepted_output_modes;
  std::optional<PushNotificationConfig> push_notification_config;
  /// nullopt: no limit. 0: no history. N: at most N most recent (v0.3 0 arrives as nullopt).
  std::optional<int32_t> history_length;
  bool return_immediately = false;  // v0.3: !blocking
  /// A2A 1.1 optimistic concurrency: a message into an existing task is refused
  /// (kGenerationMismatch) unless the task's generation is this.
  std::optional<int64_t> if_generation_match;
};

struct SendMessageRequest {
  std::string tenant;
  Message message;
  SendMessageConfiguration configuration;
  boost::json::object metadata;
};

struct GetTaskRequest {
  std::string tenant;
  std::string id;
  std::optional<int32_t> history_length;
  /// A2A 1.1 long poll: answer once the task's generation is past this (or at a timeout).
  std::optional<int64_t> current_generation;
};

struct ListTasksRequest {
  std::string tenant;
  std::string context_id;           // empty: any
  std::optional<TaskState> status;  // nullopt: any
  int32_t page_size = 50;           // 1..100
  std::string page_token;           // opaque cursor from a previous page
  std::optional<int32_t> history_length;
  std::optional<int64_t> status_timestamp_after_ms;  // inclusive
  bool include_artifacts = false;
};

struct ListTasksResponse {
  std::vector<Task> tasks;
  std::string next_page_token;  // "" on the last page
  int32_t page_size = 0;
  int32_t total_size = 0;
  /// Not on the wire: ids of tasks of this page left out because their stored record cannot
  /// be read (storage::TaskPage::unreadable); transports report the count.
  std::vector<std::string> unreadable;
};

struct CancelTaskRequest {
  std::string tenant;
  std::string id;
  boost::json::object metadata;
};

/// Applies a history limit to a task about to be returned (WIRE.md §3.5).
void TrimHistory(Task& task, const std::optional<int32_t>& history_length);

}  // namespace a2ad::protocol
