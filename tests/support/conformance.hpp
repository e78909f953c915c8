#pragma once
// What the declarative conformance tests (STYLE.md #7: tests/transport/*_conformance_test.cpp
// over fixtures/*.json) share: reading a fixture, writing it back when goldens are updated
// (A2AD_UPDATE_GOLDEN=1), the servers a fixture's case may name (ServerOptions), a skill that
// parks a task at input-required, and a sink that collects what a streaming answer writes.
// Header-only: the tests that use it link transport.
//
// Thread safety: one test thread.
#include <boost/asio/awaitable.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "a2ad/protocol/encode.hpp"
#include "a2ad/protocol/v10/codec.hpp"
#include "a2ad/tasks/executor.hpp"
#include "a2ad/transport/http/http_types.hpp"

namespace a2ad::testing {

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline constexpr const char* kGeoExtension = "https://example.com/ext/geo/v1";
inline constexpr const char* kRequiredExtension = "https://example.com/ext/required/v1";

/// What sets a fixture's servers apart. Every one registers the echo, gate and tck skills and
/// the optional extension kGeoExtension.
struct ServerOptions {
  bool serve_v03 = true;           // false: `--a2a-versions 1.0`, 0.3 refused everywhere
  bool serve_push = true;          // false: AddPushOperations not called
  bool require_extension = false;  // kRequiredExtension registered as required
  bool stopping = false;           // the task service no longer accepts work
  bool authenticated = false;      // API keys required (kGoldenReaderKey, tasks:read only)
};

/// The API key of the "authenticated" golden server: tenant "default", scope tasks:read
/// (a send is 403, a read of an unknown task 404). A made-up key; only the fixtures know it.
inline constexpr const char* kGoldenReaderKeyId = "00000000000000aa";
inline constexpr const char* kGoldenReaderSecret = "golden-reader-secret-AAAAAAAAAAAAAAAAAAAAAAAAA";
inline constexpr const char* kGoldenReaderKey =
    "a2ad_k_00000000000000aa_golden-reader-secret-AAAAAAAAAAAAAAAAAAAAAAAAA";

/// The options of the server a case's "server" member names: "default" (also "http", which
/// the REST driver serves over a real HTTP server), "withoutPush", "oneZeroOnly",
/// "requiresExtension", "stopping", "authenticated"; nullopt for another name.
inline std::optional<ServerOptions> ServerOptionsNamed(std::string_view name) {
  ServerOptions o;
  if (name == "default" || name == "http") return o;
  if (name == "withoutPush")
    o.serve_push = false;
  else if (name == "oneZeroOnly")
    o.serve_v03 = false;
  else if (name == "requiresExtension")
    o.require_extension = true;
  else if (name == "stopping")
    o.stopping = true;
  else if (name == "authenticated")
    o.authenticated = true;
  else
    return std::nullopt;
  return o;
}

// Pretty printer for golden files: stable key order as written, 2-space indent.
inline void Pretty(std::ostream& os, const boost::json::value& v, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  if (v.is_object()) {
    const auto& o = v.get_object();
    if (o.empty()) {
      os << "{}";
      return;
    }
    os << "{\n";
    size_t i = 0;
    for (const auto& kv : o) {
      os << pad << "  " << boost::json::serialize(boost::json::value(kv.key())) << ": ";
      Pretty(os, kv.value(), indent + 2);
      os << (++i < o.size() ? ",\n" : "\n");
    }
    os << pad << "}";
  } else if (v.is_array()) {
    const auto& a = v.get_array();
    if (a.empty()) {
      os << "[]";
      return;
    }
    os << "[\n";
    for (size_t i = 0; i < a.size(); ++i) {
      os << pad << "  ";
      Pretty(os, a[i], indent + 2);
      os << (i + 1 < a.size() ? ",\n" : "\n");
    }
    os << pad << "]";
  } else {
    os << boost::json::serialize(v);
  }
}

// A skill that asks one question: the first run parks the task at input-required; the reply
// resumes it and it completes with the reply as its artifact.
class GateExecutor final : public tasks::Executor {
 public:
  boost::asio::awaitable<void> Execute(std::shared_ptr<tasks::ExecutionContext> ctx) override {
    std::vector<tasks::EventDraft> step;
    protocol::Message ask;
    ask.message_id = ctx->task_id() + "-ask";
    ask.role = protocol::Role::kAgent;
    ask.parts.push_back(protocol::Part::Text("Which colour?"));
    if (ctx->task().status.state == protocol::TaskState::kSubmitted) {
      step.push_back({"run.started", "", {}});
      step.push_back({"node.suspended", "ask",
                      boost::json::object{{"kind", "clarification"},
                                          {"message", protocol::MessageToJson(ask)}}});
    } else if (ctx->task().status.state == protocol::TaskState::kWorking) {  // the reply came
      protocol::Artifact a;
      a.artifact_id = "answer";
      a.parts = ctx->message().parts;
      step.push_back({"node.resumed", "ask", {}});
      step.push_back({"artifact.created", "ask",
                      boost::json::object{{"artifact", protocol::ArtifactToJson(a)}}});
      step.push_back({"run.completed", "", {}});
    }
    (void)co_await ctx->Commit(std::move(step));
  }
};

// Collects what a streaming response writes.
class CollectingSink final : public transport::SseSink {
 public:
  boost::asio::awaitable<bool> Write(std::string bytes) override {
    text += bytes;
    ++writes;
    co_return true;
  }
  int writes = 0;
  void OnClientGone(std::function<void()>) override {}
  void OnServerStopping(std::function<void()>) override {}
  std::string text;
};

}  // namespace a2ad::testing
