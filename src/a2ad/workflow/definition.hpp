#pragma once
// OpenWOP WorkflowDefinition (workflow-definition.schema.json, DIGEST §5.1): parsed and
// checked once at load, so a run never meets a malformed definition. Every refusal names
// the field ("nodes[2].typeId: ...").
//
// Thread safety: ParseWorkflow is pure; LoadWorkflowDir only reads files. A loaded Workflow is
// immutable and shared by every run of it.
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/core/result.hpp"

namespace a2ad::workflow {

struct Node {
  std::string id;
  std::string type_id;
  std::string name;
  boost::json::object config;
  boost::json::object inputs;  // port -> PortValue
  std::string artifact_type;   // optional: the node's outputs become an A2A artifact
  bool disabled = false;
};

struct Edge {
  std::string id;
  std::string source;
  std::string target;
  boost::json::object condition;  // {} : unconditional
  std::string trigger_rule = "all_success";
};

struct Variable {
  std::string name;
  std::string type;
  bool required = false;
  std::optional<boost::json::value> default_value;
};

struct Workflow {
  std::string id;
  std::string name;
  std::string version;
  std::string description;
  std::vector<std::string> tags;
  std::vector<std::string> examples;
  // metadata.customProperties.a2a.public (default true): false keeps the skill off the public
  // agent card; the authenticated extended card lists it (agent_card.hpp).
  bool is_public = true;
  std::vector<Node> nodes;  // declaration order (the scheduler's tie-break)
  std::vector<Edge> edges;
  std::vector<Variable> variables;
  int64_t timeout_ms = 0;          // settings.timeout; 0 = none
  // The document as loaded (GET /v1/workflows/{id}), shared with the skill it serves as.
  std::shared_ptr<const boost::json::object> definition;

  const Node* FindNode(std::string_view node_id) const;
};

/// Parses and checks one definition. kInvalidParams with a `field` detail (and, for a node
/// kind with no NodeKind in nodes/registry.hpp, reason=capability_required + offendingTypeId
/// + nodeId). Each node's config is checked by its kind (NodeKind::Validate).
core::Result<Workflow> ParseWorkflow(const boost::json::value& doc);

/// One definition file's text: read strictly (protocol::ParseJson, nesting up to 64 levels),
/// then ParseWorkflow. Text that is not (representable) JSON is refused with the reader's
/// error, its message prefixed "not JSON: ". What LoadWorkflowDir does with each file.
core::Result<Workflow> ParseWorkflowText(std::string_view text);

struct LoadedWorkflows {
  std::vector<Workflow> workflows;
  std::vector<std::string> refusals;  // "<file>: <field>: <why>", one per refused file
};

/// Loads `files` (in that order). A refused file does not stop the others; a duplicate id is
/// refused naming both files. Sub-workflow references to unknown workflows are refused too
/// (the parent's file is named). What `a2ad validate` checks.
LoadedWorkflows LoadWorkflowFiles(const std::vector<std::filesystem::path>& files);

/// LoadWorkflowFiles of every *.json file of each of `dirs` (not their subdirectories), each
/// directory's sorted by name; a directory that is not one is a refusal.
LoadedWorkflows LoadWorkflowDirs(const std::vector<std::filesystem::path>& dirs);
inline LoadedWorkflows LoadWorkflowDir(const std::filesystem::path& dir) {
  return LoadWorkflowDirs({dir});
}

}  // namespace a2ad::workflow
