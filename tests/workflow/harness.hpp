#pragma once
// The workflow engine driven without a server (shared by the workflow tests and
// tests/tasks/run_projection_test.cpp): a run's record is folded from the events the pure
// Plan() decides (tasks::ApplyEvent, exactly what the service commits), answers go through
// WorkflowExecutor::Resolve, sleeps are simulated by moving the clock.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <deque>

#include "a2ad/core/clock.hpp"
#include "a2ad/core/ids.hpp"
#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/tasks/task_projection.hpp"
#include "a2ad/tasks/task_service.hpp"
#include "a2ad/workflow/definition.hpp"
#include "a2ad/workflow/interrupt_token.hpp"
#include "a2ad/workflow/nodes/registry.hpp"
#include "a2ad/workflow/plan.hpp"
#include "a2ad/workflow/workflow_executor.hpp"

namespace a2ad::workflow::test_harness {
namespace asio = boost::asio;
namespace json = boost::json;
using core::ErrorCode;
using S = protocol::TaskState;
using K = Decision::Kind;

inline constexpr int64_t kStart = 1767225600000;  // 2026-01-01T00:00:00Z
inline const char* const kRunId = "run-1";

// ---- helpers ---------------------------------------------------------------------------------

inline std::string Detail(const core::Error& e, const std::string& key) {
  for (const auto& [k, v] : e.details)
    if (k == key) return v;
  return "<no " + key + ">";
}

inline std::string StrOf(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

inline const json::object& ObjAt(const json::object& o, std::string_view key) {
  static const json::object kEmpty;
  const json::value* v = o.if_contains(key);
  return v && v->is_object() ? v->get_object() : kEmpty;
}

// A WorkflowDefinition with every required member; callers pass nodes/edges/variables.
inline json::object Doc(json::array nodes, json::array edges = {}, json::array variables = {},
                        json::object settings = {}) {
  return json::object{{"id", "wf"},
                      {"name", "Test workflow"},
                      {"version", "1.0"},
                      {"metadata", json::object{{"tags", json::array{"test"}}}},
                      {"settings", std::move(settings)},
                      {"triggers", json::array()},
                      {"variables", std::move(variables)},
                      {"nodes", std::move(nodes)},
                      {"edges", std::move(edges)}};
}

inline json::object NodeDoc(std::string id, std::string type, json::object config = {},
                            json::object inputs = {}) {
  return json::object{{"id", std::move(id)},
                      {"typeId", std::move(type)},
                      {"name", "node"},
                      {"config", std::move(config)},
                      {"inputs", std::move(inputs)}};
}

inline json::object EdgeDoc(std::string id, std::string from, std::string to) {
  return json::object{
      {"id", std::move(id)}, {"sourceNodeId", std::move(from)}, {"targetNodeId", std::move(to)}};
}

inline std::shared_ptr<const Workflow> Parse(const json::object& doc) {
  auto w = ParseWorkflow(doc);
  if (!w) {
    ADD_FAILURE() << "definition refused: " << w.error().message;
    return nullptr;
  }
  return std::make_shared<const Workflow>(std::move(w).value());
}

inline json::object UserMessage(const std::string& text) {
  protocol::Message m;
  m.message_id = "m-user";
  m.role = protocol::Role::kUser;
  m.parts.push_back(protocol::Part::Text(text));
  return protocol::MessageToJson(m);
}

// One run of one workflow: the record folded from everything committed so far.
class Harness {
 public:
  explicit Harness(std::shared_ptr<const Workflow> wf, json::object inputs = {})
      : wf_(std::move(wf)),
        service_(store_, clock_, *ids_, io_.get_executor(), tasks::TaskServiceOptions{}),
        exec_(wf_, service_, tokens_, clock_, EngineOptions{}) {
    Commit({{protocol::kEvTaskSubmitted, "",
             json::object{{"contextId", "ctx-1"},
                          {"skillId", wf_ ? wf_->id : "wf"},
                          {"message", UserMessage("go")},
                          {"inputs", std::move(inputs)},
                          {"tags", json::array{"t"}}}}});
  }

  // Folds `drafts` into the record the way the service stamps them.
  void Commit(const std::vector<tasks::EventDraft>& drafts) {
    for (const auto& d : drafts) {
      protocol::RunEvent e;
      e.event_id = "e" + std::to_string(log.size());
      e.run_id = kRunId;
      e.type = d.type;
      e.node_id = d.node_id;
      e.payload = d.payload;
      e.timestamp_ms = now;
      e.sequence = rec.last_sequence + 1;
      auto r = tasks::ApplyEvent(rec, e);
      ASSERT_TRUE(r.ok()) << d.type << ": " << r.error().message;
      log.push_back(std::move(e));
    }
  }

  PlanEnv Env() const {
    PlanEnv env;
    env.tokens = &tokens_;
    env.now_ms = now;
    env.max_node_executions = max_node_executions;
    return env;
  }

  Decision Plan() const { return workflow::Plan(*wf_, kRunId, rec.run, Env()); }

  // One step: decide, simulate any sleep, commit. Returns the decision.
  Decision Step() {
    Decision d = Plan();
    if (d.kind == K::kSleep) {
      sleeps.push_back(d.wake_at);
      if (d.wake_at > now) now = d.wake_at;
      if (d.events.empty()) return d;  // woke for the deadline: decide again
    }
    if (d.kind == K::kCommit || d.kind == K::kSleep) Commit(d.events);
    now += 1;
    return d;
  }

  // Steps until the run parks, waits for a child, calls out, or is done.
  Decision Drive() {
    for (int i = 0; i < 10000; ++i) {
      Decision d = Step();
      if (d.kind == K::kParked || d.kind == K::kWaitChild || d.kind == K::kDone ||
          d.kind == K::kEffect)
        return d;
    }
    ADD_FAILURE() << "the run never stopped";
    return Decision{};
  }

  // What the executor commits when the EffectRunner returns `result` for node `node_id`.
  void Effect(const std::string& node_id, json::object result) {
    Commit({{protocol::kEvNodeEffect, node_id,
             json::object{{"effect", "test"}, {"result", std::move(result)}}}});
  }

  core::Result<tasks::Resolution> Resolve(json::value resume, std::string node_id = "") {
    tasks::ResolveRequest req;
    req.node_id = std::move(node_id);
    req.resume_value = std::move(resume);
    req.caller = "alice";
    req.via = "rest";
    return exec_.Resolve(rec, req);
  }

  // Resolve as principal `who` (its id is the caller), answering by `via`.
  core::Result<tasks::Resolution> ResolveAs(const protocol::Principal& who, json::value resume,
                                            std::string via = "rest") {
    tasks::ResolveRequest req;
    req.resume_value = std::move(resume);
    req.caller = who.id;
    req.principal = who;
    req.via = std::move(via);
    return exec_.Resolve(rec, req);
  }

  // ResolveAs; on success commit its events and drive on when it resumes the run.
  core::Result<tasks::Resolution> AnswerAs(const protocol::Principal& who, json::value resume,
                                           std::string via = "rest") {
    auto r = ResolveAs(who, std::move(resume), std::move(via));
    if (r) {
      Commit(r.value().events);
      if (r.value().resumes) Drive();
    }
    return r;
  }

  // Resolve; on success commit its events and drive on.
  core::Result<tasks::Resolution> Answer(json::value resume, std::string node_id = "") {
    auto r = Resolve(std::move(resume), std::move(node_id));
    if (r) {
      Commit(r.value().events);
      if (r.value().resumes) Drive();
    }
    return r;
  }

  std::string Status() const { return rec.run.status; }
  // The run as the store writes it (RunSnapshotToJson), for assertions on its JSON form. Each
  // call makes a new one; the ones before stay valid as long as the harness.
  const json::object& Run() const {
    return run_views_.emplace_back(protocol::RunSnapshotToJson(rec.run));
  }
  const json::object& NodeState(std::string_view id) const {
    return ObjAt(ObjAt(Run(), "nodeStates"), id);
  }
  std::vector<std::string> Types() const {
    std::vector<std::string> t;
    for (const auto& e : log) t.push_back(e.type);
    return t;
  }
  const protocol::RunEvent* Last(std::string_view type) const {
    for (auto it = log.rbegin(); it != log.rend(); ++it)
      if (it->type == type) return &*it;
    return nullptr;
  }
  size_t Count(std::string_view type) const {
    return std::count_if(log.begin(), log.end(), [&](const auto& e) { return e.type == type; });
  }

  storage::TaskRecord rec;
  mutable std::deque<json::object> run_views_;
  std::vector<protocol::RunEvent> log;
  int64_t now = kStart;
  int64_t max_node_executions = 100;
  std::vector<int64_t> sleeps;
  WorkflowExecutor& executor() { return exec_; }

 private:
  std::shared_ptr<const Workflow> wf_;
  core::ManualClock clock_{kStart};
  std::unique_ptr<core::IdGenerator> ids_ = core::MakeUuidV7Generator(clock_);
  storage::MemoryTaskStore store_;
  asio::io_context io_;
  InterruptTokens tokens_{"test-secret"};
  tasks::TaskService service_;
  WorkflowExecutor exec_;
};

inline std::shared_ptr<const Workflow> OneNode(json::object node, json::object settings = {}) {
  return Parse(Doc(json::array{std::move(node)}, {}, {}, std::move(settings)));
}

inline std::shared_ptr<const Workflow> ApprovalWorkflow(json::array actions) {
  return OneNode(NodeDoc("gate", "core.approvalGate",
                         json::object{{"title", "Ship it?"}, {"actions", std::move(actions)}}));
}

inline json::array AllActions() {
  return json::array{"accept", "reject", "refine", "edit-accept", "ask"};
}

}  // namespace a2ad::workflow::test_harness
