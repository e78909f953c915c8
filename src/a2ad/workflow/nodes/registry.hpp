#pragma once
// The node kinds this host executes, by node type id (DIGEST §5.2): the one table the loader
// (definition.cpp: Validate, CalledWorkflow), the planner (plan.cpp: Start, Continue) and the
// executor (workflow_executor.cpp: FinishChild, Resolve) look a node's behaviour up in. A type id
// with no kind is refused when a workflow loads (capability_required), so a run never meets
// one.
//
// Adding a node kind (say "core.thing"):
//   1. One new file, nodes/thing.cpp (or a family's file): a NodeKind (node_kind.hpp) in an
//      anonymous namespace overriding Start and the hooks the kind needs (Validate for its
//      config; Continue if it stays in flight; FinishChild or Resolve if it waits for a
//      child run or raises an interrupt), and its factory
//      `std::unique_ptr<const NodeKind> nodes::MakeThingKind()`. Build it from run_steps.hpp
//      (events) and graph.hpp; do no I/O. The build picks up every nodes/*.cpp.
//   2. One registration, in nodes/registry.cpp: declare the factory and
//      Add("core.thing", nodes::MakeThingKind()).
//   3. Tests, in tests/workflow/ through the Harness (harness.hpp), which drives the pure
//      Plan and folds the events as the service would: TEST(NodeKinds, ...) in
//      node_kinds_test.cpp for its events, outputs and failures, including a run re-driven
//      from a log cut short (ResumeKeys in plan_test.cpp shows how); TEST(Definition, ...)
//      in definition_test.cpp for each config refusal and the field it names; for a gate,
//      its answers in gates_test.cpp.
// Nothing else names a kind.
//
// A kind from outside this module (an extension's, ext/): the same NodeKind in the
// extension's own folder, given by its module's NodeKinds() (ext/extension_module.hpp) under
// a type id of its own namespace ("<vendor>.<kind>": "core." is this host's); the server
// registers it with Register in its store step, before the workflows step reads the first
// workflow. Tests as above; the Harness sees registered kinds too
// (tests/workflow/node_kind_registry_test.cpp registers one).
//
// Thread safety: Get() is built once, on first use (a function-local static). Register may
// add kinds until the first Get(); from then on the registry is sealed and immutable, and
// every method is safe from any thread without a lock.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "a2ad/core/result.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/nodes/node_kind.hpp"

namespace a2ad::workflow {

class NodeKindRegistry {
 public:
  /// The host's kinds: the built-in ones (registry.cpp) and those registered before. Seals
  /// the registry.
  static const NodeKindRegistry& Get();

  /// Adds `kind` under `type_id` before the registry is sealed (the first Get()). Refused
  /// (kConflict) once sealed; kInvalidParams for a type id of the "core." namespace, one
  /// without a namespace, one already registered, or a null kind.
  static core::Result<void> Register(std::string type_id, std::unique_ptr<const NodeKind> kind);

  /// The kind registered under `type_id`; nullptr when there is none.
  const NodeKind* Find(std::string_view type_id) const;

  /// The kind of `node`, never null. A node whose type id has no kind (possible only in a
  /// Workflow that ParseWorkflow did not check) gets one that fails the node with
  /// capability_required at its first step.
  const NodeKind& KindOf(const Node& node) const;

 private:
  NodeKindRegistry();
  static NodeKindRegistry& Instance();
  void Add(std::string type_id, std::unique_ptr<const NodeKind> kind);

  std::map<std::string, std::unique_ptr<const NodeKind>, std::less<>> kinds_;
};

}  // namespace a2ad::workflow
