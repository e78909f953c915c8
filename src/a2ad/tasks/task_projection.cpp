#include "a2ad/tasks/task_projection.hpp"

#include <algorithm>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/accepted_messages.hpp"
#include "a2ad/tasks/pause.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/tasks/state_machine.hpp"

namespace a2ad::tasks {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using protocol::RunEvent;
using protocol::Task;
using protocol::TaskState;

namespace {

core::Result<std::optional<protocol::Message>> OptMessage(const json::object& payload) {
  const json::value* m = payload.if_contains("message");
  if (!m || m->is_null()) return std::optional<protocol::Message>();
  A2AD_TRY_ASSIGN(protocol::Message msg, protocol::v10::MessageFromJson(*m, "payload.message"));
  return std::optional<protocol::Message>(std::move(msg));
}

std::string StringField(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

// metadata.pause of a paused task: the run.paused entry as the pause RFC's A2A 1.0 revision
// shapes status.pause, plus the literal 0.3 state and the mode.
json::object PauseView(const json::object& entry) {
  json::object v{{"state", PausedStateName(entry)}};
  for (const char* k : {"initiatedBy", "reason", "pausedAt", "pausedUntil", "resumeToken",
                        "resumable", "conditions", "resumeMode", "mode", "summary"})
    if (auto* x = entry.if_contains(k)) v[k] = *x;
  return v;
}

json::object& OpenwopMetadata(Task& t) {
  json::value& v = t.metadata["openwop"];
  if (!v.is_object()) v = json::object();
  return v.get_object();
}

// The entries that project to a status update (ProjectEvent).
constexpr const char* kStatusTypes[] = {protocol::kEvRunStarted,    protocol::kEvNodeResumed,
                                        protocol::kEvInputRequired, protocol::kEvRunCompleted,
                                        protocol::kEvRunFailed,     protocol::kEvRunCancelled,
                                        protocol::kEvRunRejected,   protocol::kEvApprovalVote,
                                        protocol::kEvRunPaused,     protocol::kEvRunResumed};

bool IsStatusType(std::string_view type) {
  return std::any_of(std::begin(kStatusTypes), std::end(kStatusTypes),
                     [&](const char* t) { return type == t; });
}

// A durable timer starting (core.delay's node.started carries wakeAt): the task stays
// working, and its status message says until when.
bool IsWaitStart(const RunEvent& e) {
  if (e.type != protocol::kEvNodeStarted) return false;
  const json::value* at = e.payload.if_contains("wakeAt");
  return at && at->is_int64();
}

protocol::Message WaitingMessage(const RunEvent& e) {
  const std::string until = core::FormatTimestamp(e.payload.at("wakeAt").as_int64());
  protocol::Message m;
  m.message_id = e.event_id;
  m.role = protocol::Role::kAgent;
  m.parts.push_back(protocol::Part::Text("waiting until " + until + " (node " + e.node_id + ")"));
  m.metadata["openwop"] = json::object{{"waitingUntil", until}, {"nodeId", e.node_id}};
  return m;
}

}  // namespace

bool ProjectsToA2a(const RunEvent& e) {
  return e.type == protocol::kEvTaskSubmitted || e.type == protocol::kEvArtifactCreated ||
         IsStatusType(e.type) || IsWaitStart(e);
}

int64_t GenerationOf(const Task& t) {
  const json::value* g = t.metadata.if_contains("generation");
  return g && g->is_int64() ? g->get_int64() : 0;
}

namespace {

// The fold itself, on `next` in place; on error `next` may be partly updated.
core::Result<void> ApplyInPlace(storage::TaskRecord& next, const RunEvent& e) {
  if (e.sequence != next.last_sequence + 1)
    return Error(ErrorCode::kInvalidParams, "event sequence " + std::to_string(e.sequence) +
                                                " does not follow " +
                                                std::to_string(next.last_sequence));
  Task& t = next.task;
  if (next.last_sequence != -1 && protocol::IsTerminal(t.status.state))
    return Error(ErrorCode::kUnsupportedOperation,
                 "task " + t.id + " is " + std::string(protocol::TaskStateLabel(t.status.state)) +
                     " and takes no more events");
  std::optional<TaskState> new_state;
  std::optional<protocol::Message> status_message;

  if (e.type == protocol::kEvTaskSubmitted) {
    if (next.last_sequence != -1)
      return Error(ErrorCode::kInvalidParams, "a2a.task.submitted must be the first event");
    A2AD_TRY_ASSIGN(auto msg, OptMessage(e.payload));
    if (!msg) return Error(ErrorCode::kInvalidParams, "a2a.task.submitted needs a message");
    t.id = e.run_id;
    t.context_id = StringField(e.payload, "contextId");
    next.skill_id = StringField(e.payload, "skillId");
    next.dedup_key = StringField(e.payload, "dedupKey");
    // Logs written before tenants and owners: the default tenant's anonymous caller.
    next.tenant = StringField(e.payload, "tenant");
    if (next.tenant.empty()) next.tenant = storage::kDefaultTenant;
    next.owner = StringField(e.payload, "owner");
    if (next.owner.empty()) next.owner = storage::kAnonymousOwner;
    next.created_at_ms = e.timestamp_ms;
    t.history.push_back(std::move(*msg));
    t.status.state = TaskState::kSubmitted;
    t.status.timestamp_ms = e.timestamp_ms;
    OpenwopMetadata(t)["runId"] = t.id;
    if (!next.skill_id.empty()) OpenwopMetadata(t)["skillId"] = next.skill_id;
    // A task some run started (a sub-workflow's child, or a call of a workflow node to an
    // agent, this host included): named, so that listings can tell work a person asked for
    // from the steps of other runs (a2a list hides these unless asked).
    if (const std::string parent = StringField(e.payload, "parentRunId"); !parent.empty())
      OpenwopMetadata(t)["parentRunId"] = parent;
    if (const auto* md = t.history.back().metadata.if_contains("openwop"); md && md->is_object())
      if (const auto* caller = md->get_object().if_contains("runId");
          caller && caller->is_string() && !caller->get_string().empty())
        OpenwopMetadata(t)["callerRunId"] = *caller;
    // An extension's keys (TaskServiceOptions::prepare_new_task, StartRunRequest).
    if (const auto* md = e.payload.if_contains("taskMetadata"); md && md->is_object())
      for (const auto& [k, v] : md->get_object())
        if (k != "openwop" && k != "generation" && k != "pause") t.metadata[k] = v;
  } else if (next.last_sequence == -1) {
    return Error(ErrorCode::kInvalidParams, "the first event of a task must be a2a.task.submitted");
  } else if (e.type == protocol::kEvMessageReceived) {
    A2AD_TRY_ASSIGN(auto msg, OptMessage(e.payload));
    if (!msg) return Error(ErrorCode::kInvalidParams, "a2a.message.received needs a message");
    t.history.push_back(std::move(*msg));
    // A reply accepted by an interrupted task resumes it, unless the executor's own events
    // do (node.resumed) or the reply does not end the wait ({"resumes": false}).
    const json::value* resumes = e.payload.if_contains("resumes");
    const bool explicit_no = resumes && resumes->is_bool() && !resumes->get_bool();
    if (protocol::IsInterrupted(t.status.state) && !explicit_no) new_state = TaskState::kWorking;
  } else if (e.type == protocol::kEvRunStarted || e.type == protocol::kEvNodeResumed) {
    new_state = TaskState::kWorking;
    A2AD_TRY_ASSIGN(status_message, OptMessage(e.payload));
    if (e.type == protocol::kEvNodeResumed) {
      OpenwopMetadata(t).erase("interrupt");
      OpenwopMetadata(t).erase("interruptToken");
      if (OpenwopMetadata(t).empty()) t.metadata.erase("openwop");
    }
  } else if (e.type == protocol::kEvInputRequired) {
    std::string kind = StringField(e.payload, "kind");
    new_state = kind == "auth" ? TaskState::kAuthRequired : TaskState::kInputRequired;
    A2AD_TRY_ASSIGN(status_message, OptMessage(e.payload));
    json::object interrupt;
    if (auto* i = e.payload.if_contains("interrupt"); i && i->is_object())
      interrupt = i->get_object();
    if (!kind.empty()) interrupt["kind"] = kind;
    OpenwopMetadata(t)["interrupt"] = std::move(interrupt);
    if (auto* token = e.payload.if_contains("interruptToken"); token && token->is_string())
      OpenwopMetadata(t)["interruptToken"] = *token;
  } else if (e.type == protocol::kEvApprovalVote) {
    // A vote that leaves a quorum open: the task stays where it is (input-required), with the
    // tally as its new status message; metadata.openwop.interrupt.quorum is set below, from
    // the run's fold.
    if (protocol::IsInterrupted(t.status.state)) {
      new_state = t.status.state;
      A2AD_TRY_ASSIGN(status_message, OptMessage(e.payload));
    }
  } else if (e.type == protocol::kEvSkillChosen) {
    next.skill_id = StringField(e.payload, "skillId");
    if (next.skill_id.empty())
      return Error(ErrorCode::kInvalidParams, "a2ad.skill.chosen needs a skillId");
    OpenwopMetadata(t)["skillId"] = next.skill_id;
    OpenwopMetadata(t).erase("interrupt");
    OpenwopMetadata(t).erase("interruptToken");
    new_state = TaskState::kWorking;
    A2AD_TRY_ASSIGN(status_message, OptMessage(e.payload));
  } else if (e.type == protocol::kEvArtifactCreated) {
    const json::value* a = e.payload.if_contains("artifact");
    if (!a) return Error(ErrorCode::kInvalidParams, "artifact.created needs an artifact");
    A2AD_TRY_ASSIGN(protocol::Artifact art,
                    protocol::v10::ArtifactFromJson(*a, "payload.artifact"));
    bool append = false;
    if (auto* ap = e.payload.if_contains("append"); ap && ap->is_bool()) append = ap->get_bool();
    auto it = std::find_if(t.artifacts.begin(), t.artifacts.end(),
                           [&](const auto& x) { return x.artifact_id == art.artifact_id; });
    if (it == t.artifacts.end()) {
      t.artifacts.push_back(std::move(art));
    } else if (append) {
      for (auto& p : art.parts) it->parts.push_back(std::move(p));
    } else {
      *it = std::move(art);
    }
  } else if (e.type == protocol::kEvRunPaused) {
    // A2A has no paused state: the task stays working and metadata.pause describes the pause
    // (tasks/pause.hpp); the pause extension's view shows the literal state to its callers.
    t.metadata["pause"] = PauseView(e.payload);
    new_state = t.status.state;  // the same state, a new status time
  } else if (e.type == protocol::kEvRunResumed) {
    t.metadata.erase("pause");
    new_state = t.status.state;
  } else if (IsWaitStart(e) && t.status.state == TaskState::kWorking) {
    new_state = t.status.state;  // still working; the message says until when
    status_message = WaitingMessage(e);
  } else if (e.type == protocol::kEvRunCompleted) {
    new_state = TaskState::kCompleted;
    A2AD_TRY_ASSIGN(status_message, OptMessage(e.payload));
  } else if (e.type == protocol::kEvRunFailed) {
    new_state = TaskState::kFailed;
    json::object error;
    if (auto* er = e.payload.if_contains("error"); er && er->is_object()) error = er->get_object();
    std::string text = StringField(error, "message");
    OpenwopMetadata(t)["error"] =
        json::object{{"code", StringField(error, "code")}, {"message", text}};
    protocol::Message m;
    m.message_id = e.event_id;
    m.context_id = t.context_id;
    m.task_id = t.id;
    m.role = protocol::Role::kAgent;
    m.parts.push_back(protocol::Part::Text(text.empty() ? "the task failed" : text));
    status_message = std::move(m);
  } else if (e.type == protocol::kEvRunCancelled) {
    new_state = TaskState::kCanceled;
  } else if (e.type == protocol::kEvRunRejected) {
    new_state = TaskState::kRejected;
  }

  if (new_state && protocol::IsTerminal(*new_state)) {
    OpenwopMetadata(t).erase("interrupt");
    OpenwopMetadata(t).erase("interruptToken");
    if (OpenwopMetadata(t).empty()) t.metadata.erase("openwop");
  }
  if (new_state) {
    if (!CanTransition(t.status.state, *new_state))
      return Error(ErrorCode::kUnsupportedOperation,
                   std::string("task ") + t.id + " cannot move from " +
                       std::string(protocol::TaskStateLabel(t.status.state)) + " to " +
                       std::string(protocol::TaskStateLabel(*new_state)));
    t.status.state = *new_state;
    t.status.timestamp_ms = e.timestamp_ms;
    t.status.message.reset();
    if (status_message) {
      status_message->task_id = t.id;
      status_message->context_id = t.context_id;
      t.history.push_back(*status_message);
      t.status.message = std::move(status_message);
    }
  }
  // The conformance agent's key only: its creator addressing the task by id (a message into
  // it, a cancel) gives the key back, since the kit reuses the messageId for its next task
  // (accepted_messages.hpp; storage::TaskCommit::releases_dedup_key). Every other key is
  // kept for the retention window, whatever the task goes through.
  if (!next.dedup_key.empty() &&
      (e.type == protocol::kEvMessageReceived || e.type == protocol::kEvRunCancelled))
    if (const json::value* caller = e.payload.if_contains("caller"); caller && caller->is_string())
      if (const std::string_view owner = ReleasableDedupKeyCaller(next.dedup_key);
          !owner.empty() && owner == caller->get_string())
        next.dedup_key.clear();
  if (new_state && protocol::IsTerminal(*new_state)) t.metadata.erase("pause");
  if (ProjectsToA2a(e)) t.metadata["generation"] = GenerationOf(t) + 1;
  ApplyRunEvent(next.run, e);
  if (e.type == protocol::kEvApprovalVote)
    if (next.run.interrupt)
      if (auto* q = next.run.interrupt->if_contains("quorum"))
        if (auto* i = OpenwopMetadata(t).if_contains("interrupt"); i && i->is_object())
          i->get_object()["quorum"] = *q;
  next.last_sequence = e.sequence;
  next.updated_at_ms = e.timestamp_ms;
  return core::Ok{};
}

}  // namespace

core::Result<void> ApplyEvent(storage::TaskRecord& record, const RunEvent& e) {
  storage::TaskRecord next = record;
  auto applied = ApplyInPlace(next, e);
  if (!applied) return applied;
  record = std::move(next);
  return core::Ok{};
}

core::Result<void> FoldCommittedEvent(storage::TaskRecord& record, const RunEvent& e) {
  return ApplyInPlace(record, e);
}

std::optional<protocol::StreamEvent> ProjectEvent(const Task& after, const RunEvent& e) {
  protocol::StreamEvent out;
  if (!ProjectEventInto(after, e, out)) return std::nullopt;
  return out;
}

bool ProjectEventInto(const Task& after, const RunEvent& e, protocol::StreamEvent& out) {
  if (e.type == protocol::kEvTaskSubmitted) {
    out.kind = protocol::StreamEvent::Kind::kTask;
    out.task = after;
    return true;
  }
  if (e.type == protocol::kEvArtifactCreated) {
    out.kind = protocol::StreamEvent::Kind::kArtifactUpdate;
    auto& u = out.artifact_update;
    u.task_id = after.id;
    u.context_id = after.context_id;
    const json::value* a = e.payload.if_contains("artifact");
    if (!a) return false;
    auto art = protocol::v10::ArtifactFromJson(*a, "payload.artifact");
    if (!art) return false;
    u.artifact = std::move(art).value();
    if (auto* ap = e.payload.if_contains("append"); ap && ap->is_bool()) u.append = ap->get_bool();
    if (auto* lc = e.payload.if_contains("lastChunk"); lc && lc->is_bool())
      u.last_chunk = lc->get_bool();
    u.metadata["generation"] = GenerationOf(after);
    return true;
  }
  // a2a.message.received projects to nothing: it is in the history, and the executor's
  // node.resumed carries the move back to working to streams.
  if (IsStatusType(e.type) || IsWaitStart(e)) {
    out.kind = protocol::StreamEvent::Kind::kStatusUpdate;
    auto& u = out.status_update;
    u.task_id = after.id;
    u.context_id = after.context_id;
    u.status = after.status;
    if (auto* ow = after.metadata.if_contains("openwop"); ow && ow->is_object())
      u.metadata["openwop"] = *ow;
    if (auto* pause = after.metadata.if_contains("pause")) u.metadata["pause"] = *pause;
    if (e.type == protocol::kEvRunResumed)  // the resume, as the pause RFC's 1.0 revision has it
      for (const char* k :
           {"previousState", "cause", "hadResumeInput", "continueTranscript", "resumedAt"})
        if (auto* v = e.payload.if_contains(k)) u.metadata[k] = *v;
    u.metadata["generation"] = GenerationOf(after);
    u.final =
        protocol::IsTerminal(after.status.state) || protocol::IsInterrupted(after.status.state);
    return true;
  }
  return false;
}

}  // namespace a2ad::tasks
