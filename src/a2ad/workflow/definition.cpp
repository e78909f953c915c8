#include "a2ad/workflow/definition.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/workflow/nodes/registry.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using core::Error;
using core::ErrorCode;

namespace {

Error Bad(const std::string& field, const std::string& why) {
  return Error(ErrorCode::kInvalidParams, field + ": " + why, {{"field", field}});
}

core::Result<std::string> ReqString(const json::object& o, std::string_view key,
                                    const std::string& path, bool allow_empty = false) {
  const json::value* v = o.if_contains(key);
  if (!v) return Bad(path + std::string(key), "required");
  if (!v->is_string()) return Bad(path + std::string(key), "expected a string");
  if (!allow_empty && v->get_string().empty())
    return Bad(path + std::string(key), "must not be empty");
  return std::string(v->get_string());
}

std::string OptString(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

core::Result<const json::object*> ReqObject(const json::object& o, std::string_view key,
                                            const std::string& path) {
  const json::value* v = o.if_contains(key);
  if (!v) return Bad(path + std::string(key), "required");
  if (!v->is_object()) return Bad(path + std::string(key), "expected an object");
  return &v->get_object();
}

core::Result<const json::array*> ReqArray(const json::object& o, std::string_view key,
                                          const std::string& path) {
  const json::value* v = o.if_contains(key);
  if (!v) return Bad(path + std::string(key), "required");
  if (!v->is_array()) return Bad(path + std::string(key), "expected an array");
  return &v->get_array();
}

std::vector<std::string> Strings(const json::value* v) {
  std::vector<std::string> out;
  if (v && v->is_array())
    for (const auto& s : v->get_array())
      if (s.is_string()) out.emplace_back(s.get_string());
  return out;
}

core::Result<void> CheckPortValue(const json::value& v, const std::string& path) {
  if (!v.is_object()) return Bad(path, "expected a PortValue object");
  const auto& o = v.get_object();
  std::string type = OptString(o, "type");
  if (type == "static") {
    if (!o.contains("value")) return Bad(path + ".value", "required for a static port");
  } else if (type == "variable") {
    A2AD_TRY_ASSIGN(auto name, ReqString(o, "variableName", path + "."));
    (void)name;
  } else if (type == "connection") {
    A2AD_TRY_ASSIGN(auto node, ReqString(o, "nodeId", path + "."));
    A2AD_TRY_ASSIGN(auto key, ReqString(o, "outputKey", path + "."));
    (void)node;
    (void)key;
  } else if (type == "expression") {
    return Bad(path + ".type",
               "expression ports are not supported by this host (use static, variable or "
               "connection)");
  } else {
    return Bad(path + ".type", "expected one of static, variable, connection, expression");
  }
  return core::Ok{};
}

// A duration in milliseconds: a number from 0 to 2^53 - 1 (exact as a double, and far from
// overflowing when added to a time), truncated to whole milliseconds.
core::Result<int64_t> Milliseconds(const json::value& v, const std::string& path) {
  constexpr double kMax = 9007199254740991.0;  // 2^53 - 1
  const double ms = v.is_number() ? v.to_number<double>() : -1;
  if (!(ms >= 0 && ms <= kMax))
    return Bad(path, "expected a number of milliseconds from 0 to 9007199254740991");
  return static_cast<int64_t>(ms);
}

Error CapabilityRequired(const std::string& path, const std::string& type_id,
                         const std::string& node_id) {
  return Error(ErrorCode::kInvalidParams,
               path + ": node kind '" + type_id + "' (node '" + node_id +
                   "') is not implemented by this host",
               {{"field", path},
                {"reason", "capability_required"},
                {"requiredCapability", type_id},
                {"offendingTypeId", type_id},
                {"nodeId", node_id}});
}

}  // namespace

const Node* Workflow::FindNode(std::string_view node_id) const {
  for (const auto& n : nodes)
    if (n.id == node_id) return &n;
  return nullptr;
}

core::Result<Workflow> ParseWorkflow(const json::value& doc) {
  if (!doc.is_object()) return Bad("(root)", "a WorkflowDefinition must be a JSON object");
  const json::object& o = doc.as_object();
  Workflow w;
  w.definition = std::make_shared<const json::object>(o);
  A2AD_TRY_ASSIGN(w.id, ReqString(o, "id", ""));
  const bool id_ok =
      !w.id.empty() && w.id.size() <= 128 && w.id[0] >= 'a' && w.id[0] <= 'z' &&
      std::all_of(w.id.begin(), w.id.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
      });
  if (!id_ok)
    return Bad("id", "'" + w.id + "' must match ^[a-z][a-z0-9_-]*$ (at most 128 characters)");
  A2AD_TRY_ASSIGN(w.name, ReqString(o, "name", ""));
  if (const json::value* v = o.if_contains("version"); v && v->is_int64())
    w.version = std::to_string(v->as_int64());
  else {
    A2AD_TRY_ASSIGN(w.version, ReqString(o, "version", ""));
  }
  w.description = OptString(o, "description");
  A2AD_TRY_ASSIGN(const json::object* metadata, ReqObject(o, "metadata", ""));
  w.tags = Strings(metadata->if_contains("tags"));
  w.examples = Strings(metadata->if_contains("examples"));
  if (const json::value* cp = metadata->if_contains("customProperties"); cp && cp->is_object())
    if (const json::value* a2a = cp->as_object().if_contains("a2a"); a2a && a2a->is_object())
      if (const json::value* pub = a2a->as_object().if_contains("public")) {
        if (!pub->is_bool())
          return Bad("metadata.customProperties.a2a.public", "expected true or false");
        w.is_public = pub->as_bool();
      }
  A2AD_TRY_ASSIGN(const json::object* settings, ReqObject(o, "settings", ""));
  if (const json::value* t = settings->if_contains("timeout")) {
    A2AD_TRY_ASSIGN(w.timeout_ms, Milliseconds(*t, "settings.timeout"));
  }
  A2AD_TRY_ASSIGN(const json::array* triggers, ReqArray(o, "triggers", ""));
  (void)triggers;

  A2AD_TRY_ASSIGN(const json::array* variables, ReqArray(o, "variables", ""));
  std::set<std::string> var_names;
  for (size_t i = 0; i < variables->size(); ++i) {
    const std::string path = "variables[" + std::to_string(i) + "]";
    if (!(*variables)[i].is_object()) return Bad(path, "expected an object");
    const auto& vo = (*variables)[i].get_object();
    Variable v;
    A2AD_TRY_ASSIGN(v.name, ReqString(vo, "name", path + "."));
    v.type = OptString(vo, "type");
    if (const json::value* r = vo.if_contains("required"); r && r->is_bool())
      v.required = r->get_bool();
    if (const json::value* d = vo.if_contains("defaultValue")) v.default_value = *d;
    if (!var_names.insert(v.name).second)
      return Bad(path + ".name", "duplicate variable '" + v.name + "'");
    w.variables.push_back(std::move(v));
  }

  A2AD_TRY_ASSIGN(const json::array* nodes, ReqArray(o, "nodes", ""));
  if (nodes->empty()) return Bad("nodes", "a workflow needs at least one node");
  std::set<std::string> node_ids;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const std::string path = "nodes[" + std::to_string(i) + "]";
    if (!(*nodes)[i].is_object()) return Bad(path, "expected an object");
    const auto& no = (*nodes)[i].get_object();
    Node n;
    A2AD_TRY_ASSIGN(n.id, ReqString(no, "id", path + "."));
    A2AD_TRY_ASSIGN(n.type_id, ReqString(no, "typeId", path + "."));
    n.name = OptString(no, "name");
    if (const json::value* c = no.if_contains("config")) {
      if (!c->is_object()) return Bad(path + ".config", "expected an object");
      n.config = c->get_object();
      if (const json::value* t = n.config.if_contains("timeoutMs")) {  // interrupt deadline
        auto ms = Milliseconds(*t, path + ".config.timeoutMs");
        if (!ms) return std::move(ms).error();
      }
    }
    if (const json::value* in = no.if_contains("inputs")) {
      if (!in->is_object()) return Bad(path + ".inputs", "expected an object");
      n.inputs = in->get_object();
      for (const auto& kv : n.inputs) {
        auto checked = CheckPortValue(kv.value(), path + ".inputs." + std::string(kv.key()));
        if (!checked) return std::move(checked).error();
      }
    }
    n.artifact_type = OptString(no, "artifactType");
    if (const json::value* d = no.if_contains("disabled"); d && d->is_bool())
      n.disabled = d->get_bool();
    if (!node_ids.insert(n.id).second) return Bad(path + ".id", "duplicate node id '" + n.id + "'");
    const NodeKind* kind = NodeKindRegistry::Get().Find(n.type_id);
    if (!kind) return CapabilityRequired(path + ".typeId", n.type_id, n.id);
    // Kind-specific configuration, checked now rather than mid-run.
    auto config_ok = kind->Validate(n, path);
    if (!config_ok) return std::move(config_ok).error();
    w.nodes.push_back(std::move(n));
  }

  // Inputs wired from another node name a node of this workflow.
  for (size_t i = 0; i < w.nodes.size(); ++i)
    for (const auto& kv : w.nodes[i].inputs) {
      const json::object& port = kv.value().get_object();
      if (OptString(port, "type") != "connection") continue;
      const std::string node = OptString(port, "nodeId");
      if (!node_ids.count(node))
        return Bad("nodes[" + std::to_string(i) + "].inputs." + std::string(kv.key()) + ".nodeId",
                   "no node '" + node + "' in this workflow");
    }

  A2AD_TRY_ASSIGN(const json::array* edges, ReqArray(o, "edges", ""));
  for (size_t i = 0; i < edges->size(); ++i) {
    const std::string path = "edges[" + std::to_string(i) + "]";
    if (!(*edges)[i].is_object()) return Bad(path, "expected an object");
    const auto& eo = (*edges)[i].get_object();
    Edge e;
    A2AD_TRY_ASSIGN(e.id, ReqString(eo, "id", path + "."));
    A2AD_TRY_ASSIGN(e.source, ReqString(eo, "sourceNodeId", path + "."));
    A2AD_TRY_ASSIGN(e.target, ReqString(eo, "targetNodeId", path + "."));
    if (!node_ids.count(e.source)) return Bad(path + ".sourceNodeId", "no node '" + e.source + "'");
    if (!node_ids.count(e.target)) return Bad(path + ".targetNodeId", "no node '" + e.target + "'");
    if (const json::value* c = eo.if_contains("condition")) {
      if (!c->is_object()) return Bad(path + ".condition", "expected an object");
      e.condition = c->get_object();
      std::string type = OptString(e.condition, "type");
      if (type != "equals" && type != "notEquals" && type != "contains" && type != "regex")
        return Bad(path + ".condition.type",
                   "this host evaluates equals, notEquals, contains and regex conditions");
      A2AD_TRY_ASSIGN(auto left, ReqString(e.condition, "left", path + ".condition."));
    }
    std::string rule = OptString(eo, "triggerRule");
    if (!rule.empty()) {
      if (rule != "all_success" && rule != "any_success" && rule != "all_complete" &&
          rule != "none_failed" && rule != "any_failed")
        return Bad(path + ".triggerRule",
                   "expected all_success, any_success, all_complete, none_failed or any_failed");
      e.trigger_rule = rule;
    }
    w.edges.push_back(std::move(e));
  }
  // Loopback cycles are not supported: refuse them rather than loop forever.
  std::map<std::string, int> indegree;
  for (const auto& n : w.nodes) indegree[n.id] = 0;
  for (const auto& e : w.edges) ++indegree[e.target];
  std::vector<std::string> ready;
  for (const auto& [id, d] : indegree)
    if (d == 0) ready.push_back(id);
  size_t seen = 0;
  while (!ready.empty()) {
    std::string id = ready.back();
    ready.pop_back();
    ++seen;
    for (const auto& e : w.edges)
      if (e.source == id && --indegree[e.target] == 0) ready.push_back(e.target);
  }
  if (seen != w.nodes.size())
    return Bad("edges", "the edges form a cycle; loopback edges are not supported by this host");
  return w;
}

core::Result<Workflow> ParseWorkflowText(std::string_view text) {
  auto parsed = protocol::ParseJson(text, {.max_depth = 64});
  if (!parsed) {
    Error e = std::move(parsed).error();
    e.message = "not JSON: " + e.message;
    return e;
  }
  return ParseWorkflow(parsed.value());
}

LoadedWorkflows LoadWorkflowDirs(const std::vector<std::filesystem::path>& dirs) {
  std::vector<std::filesystem::path> files;
  std::vector<std::string> refusals;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      refusals.push_back(dir.string() + ": not a directory");
      continue;
    }
    std::vector<std::filesystem::path> here;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".json")
        here.push_back(entry.path());
    std::sort(here.begin(), here.end());
    files.insert(files.end(), here.begin(), here.end());
  }
  LoadedWorkflows out = LoadWorkflowFiles(files);
  out.refusals.insert(out.refusals.begin(), refusals.begin(), refusals.end());
  return out;
}

LoadedWorkflows LoadWorkflowFiles(const std::vector<std::filesystem::path>& files) {
  LoadedWorkflows out;
  std::map<std::string, std::string> file_of;
  for (const auto& f : files) {
    std::ifstream in(f);
    if (!in) {
      out.refusals.push_back(f.string() + ": cannot be read");
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto w = ParseWorkflowText(text.str());
    if (!w) {
      out.refusals.push_back(f.string() + ": " + w.error().message);
      continue;
    }
    if (auto [it, fresh] = file_of.emplace(w->id, f.string()); !fresh) {
      out.refusals.push_back(f.string() + ": id: '" + w->id + "' is already defined by " +
                             it->second);
      continue;
    }
    out.workflows.push_back(std::move(w).value());
  }
  // Children must exist (repeat: refusing a parent may orphan a grandparent).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = out.workflows.begin(); it != out.workflows.end(); ++it) {
      std::string missing;
      for (const auto& n : it->nodes) {
        const NodeKind* kind = NodeKindRegistry::Get().Find(n.type_id);
        std::optional<std::string> called = kind ? kind->CalledWorkflow(n) : std::nullopt;
        if (!called) continue;
        const std::string& child = *called;
        bool found = std::any_of(out.workflows.begin(), out.workflows.end(),
                                 [&](const Workflow& x) { return x.id == child; });
        if (!found) missing = "node '" + n.id + "' calls unknown workflow '" + child + "'";
      }
      if (!missing.empty()) {
        out.refusals.push_back(file_of[it->id] + ": nodes: " + missing +
                               " (unknown_child_workflow)");
        out.workflows.erase(it);
        changed = true;
        break;
      }
    }
  }
  return out;
}

}  // namespace a2ad::workflow
