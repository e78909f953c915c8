#pragma once
// What the engine does next for a run (a Decision), and what it may know when deciding (a
// PlanEnv). Decisions are taken without I/O, from the run snapshot alone, by Plan
// (plan.hpp) and the node kinds (nodes/); the executor (workflow_executor.hpp) carries them out:
// commits, sleeps, parks, starts and waits for child runs.
//
// Thread safety: plain values.
#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "a2ad/tasks/executor.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/interrupt_token.hpp"

namespace a2ad::workflow {

struct Decision {
  enum class Kind {
    kCommit,     // commit `events`, then decide again
    kSleep,      // sleep until `wake_at`, then commit `events` (a durable timer); no events:
                 // woke for the run's deadline, decide again
    kParked,     // waiting for an answer; `wake_at` > 0: the interrupt times out then
    kWaitChild,  // start (idempotently) and wait for child run `child_run_id` of `node`
    kEffect,     // carry out `effect` for `node` (effects.hpp: the engine's only calls out),
                 // commit its result (a2ad.node.effect), then decide again
    kDone,       // terminal: nothing more to do
  };
  Kind kind = Kind::kDone;
  std::vector<tasks::EventDraft> events;
  int64_t wake_at = 0;
  const Node* node = nullptr;  // the node the decision is about (none for run-level steps)
  // kWaitChild: the child run, and what to start it with when it does not exist yet.
  std::string child_run_id;
  std::string child_workflow_id;
  boost::json::object child_inputs;
  // kEffect: what to do, {"kind": "http" | "a2a.send" | ..., ...} (effects.hpp).
  boost::json::object effect;
};

struct PlanEnv {
  const InterruptTokens* tokens = nullptr;  // mints interrupt tokens; null: none minted
  int64_t now_ms = 0;
  int64_t token_ttl_ms = 24LL * 3600 * 1000;
  int64_t max_node_executions = 100;
  std::string public_url;  // for interrupt callbackUrl; empty: none
};

}  // namespace a2ad::workflow
