#include "a2ad/workflow/run_steps.hpp"

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/run_event.hpp"
#include "a2ad/protocol/v10/codec.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using tasks::EventDraft;

EventDraft Ev(std::string type, std::string node, json::object payload) {
  EventDraft d;
  d.type = std::move(type);
  d.node_id = std::move(node);
  d.payload = std::move(payload);
  if (!d.node_id.empty()) d.payload["nodeId"] = d.node_id;
  return d;
}

json::object ErrorObj(std::string_view code, std::string_view message) {
  return json::object{{"code", code}, {"message", message}};
}

json::object StartedPayload(const Node& n) {
  return json::object{{"typeId", n.type_id}, {"attempt", 0}};
}

void FailNode(std::vector<EventDraft>& out, const Node& n, json::object error) {
  out.push_back(Ev(protocol::kEvNodeFailed, n.id, json::object{{"error", error}, {"attempts", 1}}));
  out.push_back(Ev(protocol::kEvRunFailed, "",
                   json::object{{"error", std::move(error)}, {"failedNodeId", n.id}}));
}

void FailRun(std::vector<EventDraft>& out, json::object error) {
  out.push_back(Ev(protocol::kEvRunFailed, "", json::object{{"error", std::move(error)}}));
}

void NodeArtifact(std::vector<EventDraft>& out, const std::string& run_id, const Node& n,
                  protocol::Part part, std::string_view artifact_type) {
  protocol::Artifact a;
  a.artifact_id = run_id + ":" + n.id;
  a.name = n.name.empty() ? n.id : n.name;
  a.parts.push_back(std::move(part));
  out.push_back(Ev(protocol::kEvArtifactCreated, n.id,
                   json::object{{"artifactId", a.artifact_id},
                                {"artifactType", artifact_type},
                                {"artifact", protocol::ArtifactToJson(a)},
                                {"lastChunk", true}}));
}

void CompleteNode(std::vector<EventDraft>& out, const std::string& run_id, const Node& n,
                  json::object outputs, int64_t duration_ms) {
  if (!n.artifact_type.empty())
    NodeArtifact(out, run_id, n, protocol::Part::Data(outputs), n.artifact_type);
  out.push_back(Ev(protocol::kEvNodeCompleted, n.id,
                   json::object{{"outputs", std::move(outputs)}, {"durationMs", duration_ms}}));
}

std::vector<EventDraft> ChildStatusStep(const Node& n, const std::string& child_run_id,
                                        const std::string& status,
                                        const protocol::RunSnapshot& child) {
  std::vector<EventDraft> out;
  json::object payload{{"childRunId", child_run_id}, {"status", status}};
  if (child.interrupt) {
    json::object brief;
    for (const char* k : {"nodeId", "interruptId", "kind"})
      if (const json::value* v = child.interrupt->if_contains(k)) brief[k] = *v;
    payload["interrupt"] = std::move(brief);
  }
  out.push_back(Ev(protocol::kEvChildStatus, n.id, std::move(payload)));
  return out;
}

std::string AsText(const json::value& v) {
  return v.is_string() ? std::string(v.get_string()) : protocol::SerializeJson(v);
}

}  // namespace a2ad::workflow
