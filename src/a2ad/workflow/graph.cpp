#include "a2ad/workflow/graph.hpp"

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "a2ad/protocol/json_util.hpp"
#include "a2ad/workflow/answer_schema.hpp"
#include "a2ad/workflow/run_steps.hpp"

namespace a2ad::workflow {
namespace json = boost::json;
using protocol::Str;

namespace {

// "output.approved" / "outputs.a.b" / "a.b" against a node's outputs.
const json::value* Lookup(const json::object& outputs, std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string_view::npos) dot = path.size();
    parts.emplace_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  size_t i = 0;
  if (!parts.empty() && (parts[0] == "output" || parts[0] == "outputs")) i = 1;
  const json::value* cur = nullptr;
  const json::object* obj = &outputs;
  for (; i < parts.size(); ++i) {
    if (!obj) return nullptr;
    cur = obj->if_contains(parts[i]);
    if (!cur) return nullptr;
    obj = cur->is_object() ? &cur->get_object() : nullptr;
  }
  return cur;
}

}  // namespace

json::object ResolveInputs(const Node& n, const protocol::RunSnapshot& run) {
  json::object out;
  const json::object& vars = run.variables;
  for (const auto& kv : n.inputs) {
    const json::object& pv = kv.value().get_object();
    std::string_view type = Str(pv, "type");
    if (type == "static") {
      out[kv.key()] = pv.at("value");
    } else if (type == "variable") {
      if (const json::value* v = vars.if_contains(Str(pv, "variableName"))) out[kv.key()] = *v;
    } else if (type == "connection") {
      const protocol::NodeState* source = run.Node(Str(pv, "nodeId"));
      if (!source) continue;
      if (const json::value* v = source->OutputsObject().if_contains(Str(pv, "outputKey")))
        out[kv.key()] = *v;
    }
  }
  return out;
}

bool ConditionHolds(const json::object& cond, const json::object& source_outputs) {
  if (cond.empty()) return true;
  std::string_view type = Str(cond, "type");
  const json::value* left = Lookup(source_outputs, Str(cond, "left"));
  const json::value right = cond.contains("right") ? cond.at("right") : json::value();
  if (type == "equals") return left && *left == right;
  if (type == "notEquals") return !left || *left != right;
  if (!left) return false;
  if (type == "contains") {
    if (left->is_array())
      return std::find(left->get_array().begin(), left->get_array().end(), right) !=
             left->get_array().end();
    return AsText(*left).find(AsText(right)) != std::string::npos;
  }
  if (type == "regex") {
    try {
      // The subject may be a caller's answer of any length: linear time, no deep recursion.
      return std::regex_search(AsText(*left), CompileLinearTimeRegex(AsText(right)));
    } catch (const std::regex_error&) {
      return false;
    }
  }
  return false;
}

Readiness ReadinessOf(const Workflow& w, const Node& n, const protocol::RunSnapshot& run) {
  size_t incoming = 0, finished = 0, satisfied = 0, failed = 0;
  for (const auto& e : w.edges) {
    if (e.target != n.id) continue;
    ++incoming;
    const protocol::NodeState& st =
        run.Node(e.source) ? *run.Node(e.source) : protocol::NoNodeState();
    const std::string_view status = st.status;
    if (status == "completed" || status == "failed" || status == "skipped") ++finished;
    if (status == "failed") ++failed;
    if (status == "completed" && ConditionHolds(e.condition, st.OutputsObject())) ++satisfied;
  }
  if (incoming == 0) return Readiness::kReady;
  if (finished < incoming) return Readiness::kWait;
  std::string rule = "all_success";
  for (const auto& e : w.edges)
    if (e.target == n.id && e.trigger_rule != "all_success") rule = e.trigger_rule;
  bool go = false;
  if (rule == "all_success")
    go = satisfied == incoming;
  else if (rule == "any_success")
    go = satisfied > 0;
  else if (rule == "all_complete")
    go = true;
  else if (rule == "none_failed")
    go = failed == 0;
  else if (rule == "any_failed")
    go = failed > 0;
  return go ? Readiness::kReady : Readiness::kSkip;
}

}  // namespace a2ad::workflow
