// workflow_fuzz: the workflow loader (workflow::ParseWorkflowText, what LoadWorkflowDir does
// with each file) on the input text. Invariants:
//  - a refusal is kParseError (not JSON) or kInvalidParams naming the field;
//  - an accepted definition keeps its promises: an id matching ^[a-z][a-z0-9_-]*$ (at most
//    128 characters), at least one node, unique node ids of supported kinds, edges between
//    existing nodes and no cycle, a timeout >= 0, unique variable names, and `definition`
//    is the document as read;
//  - loading the definition's own JSON text again gives the same workflow.
#include <boost/json.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/nodes/registry.hpp"
#include "fuzz_check.hpp"

namespace a2ad::fuzz {
namespace {

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id[0] < 'a' || id[0] > 'z') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

bool Acyclic(const workflow::Workflow& w) {
  // Kahn's algorithm, written again independently of the loader's.
  std::map<std::string, int> in;
  for (const auto& n : w.nodes) in[n.id] = 0;
  for (const auto& e : w.edges) ++in[e.target];
  std::vector<std::string> ready;
  for (const auto& [id, d] : in)
    if (d == 0) ready.push_back(id);
  size_t seen = 0;
  while (!ready.empty()) {
    const std::string id = ready.back();
    ready.pop_back();
    ++seen;
    for (const auto& e : w.edges)
      if (e.source == id && --in[e.target] == 0) ready.push_back(e.target);
  }
  return seen == w.nodes.size();
}

std::string Summary(const workflow::Workflow& w) {
  std::string s = w.id + "|" + w.name + "|" + w.version + "|" + std::to_string(w.timeout_ms);
  for (const auto& n : w.nodes) s += "|n:" + n.id + ":" + n.type_id + (n.disabled ? ":off" : "");
  for (const auto& e : w.edges)
    s += "|e:" + e.id + ":" + e.source + ">" + e.target + ":" + e.trigger_rule;
  for (const auto& v : w.variables) s += "|v:" + v.name + (v.required ? ":req" : "");
  return s;
}

}  // namespace
}  // namespace a2ad::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace a2ad;
  using namespace a2ad::fuzz;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto w = workflow::ParseWorkflowText(text);
  if (!w) {
    const core::Error& e = w.error();
    FUZZ_CHECK(!e.message.empty(), "a refusal without a message");
    FUZZ_CHECK(e.code == core::ErrorCode::kParseError || e.code == core::ErrorCode::kInvalidParams,
               e.message);
    if (e.code == core::ErrorCode::kInvalidParams && !e.message.starts_with("not JSON: ")) {
      bool named = false;
      for (const auto& [k, v] : e.details) named = named || k == "field";
      FUZZ_CHECK(named, "a refusal that names no field: " + e.message);
    }
    return 0;
  }
  const workflow::Workflow& wf = w.value();
  FUZZ_CHECK(ValidId(wf.id), "accepted id '" + wf.id + "'");
  FUZZ_CHECK(!wf.nodes.empty(), "a workflow without nodes");
  FUZZ_CHECK(wf.timeout_ms >= 0, std::to_string(wf.timeout_ms));
  std::set<std::string> ids;
  for (const auto& n : wf.nodes) {
    FUZZ_CHECK(ids.insert(n.id).second, "duplicate node id '" + n.id + "'");
    FUZZ_CHECK(workflow::NodeKindRegistry::Get().Find(n.type_id) != nullptr,
               "node kind '" + n.type_id + "'");
    FUZZ_CHECK(wf.FindNode(n.id) != nullptr, n.id);
  }
  for (const auto& e : wf.edges)
    FUZZ_CHECK(ids.count(e.source) && ids.count(e.target),
               "edge '" + e.id + "' between unknown nodes");
  FUZZ_CHECK(Acyclic(wf), "a cycle was accepted");
  std::set<std::string> vars;
  for (const auto& v : wf.variables)
    FUZZ_CHECK(vars.insert(v.name).second, "duplicate variable '" + v.name + "'");
  auto doc = protocol::ParseJson(text, {.max_depth = 64});
  FUZZ_CHECK(doc.ok() && doc->is_object() && doc->get_object() == *wf.definition,
             "definition is not the document read");
  const std::string again_text = protocol::SerializeJson(*wf.definition);
  auto again = workflow::ParseWorkflowText(again_text);
  FUZZ_CHECK(again.ok(), "its own JSON text is refused: " + again.error().message);
  FUZZ_CHECK(Summary(again.value()) == Summary(wf), Summary(wf) + " vs " + Summary(again.value()));
  return 0;
}
