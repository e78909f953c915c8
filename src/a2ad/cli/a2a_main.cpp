// `a2a`: a command-line A2A client on a2ad's client library (src/a2ad/client/), for any A2A
// agent whose card declares JSON-RPC (1.0 preferred, else 0.3). AGENT is the agent's base URL
// or its card's URL.
//
//   a2a card AGENT                          the card: name, chosen version, endpoint, skills
//   a2a send AGENT TEXT [--skill S] [--data JSON] [--task ID] [--wait | --stream]
//   a2a get AGENT TASK | a2a cancel AGENT TASK
//   a2a approve AGENT TASK [--feedback F] | a2a reject AGENT TASK [--feedback F]
//   a2a answer AGENT TASK [TEXT] [--set ID=VALUE]...
//                                            one question: TEXT; several: one --set each
//   a2a list AGENT [--state S] [--skill K] [--since 2h|TIME] [--context C] [--all]
//                                            ListTasks (A2A 1.0 agents); the steps other runs
//                                            started are hidden unless --all
//   a2a inbox AGENT                          the tasks waiting on a person that this key may
//                                            answer, newest first (a2ad's GET /v1/inbox; other
//                                            agents: ListTasks of input-required tasks)
//   a2a history AGENT TASK                   the timeline of a run (a2ad's event log)
//   a2a wait AGENT [--timeout-ms N]          until the agent is ready (its /readyz, else its
//                                            card, answers 200): after `a2ad serve &`
//   a2a watch AGENT TASK                     follows a task to its end (see below)
//   a2a push set AGENT TASK URL [--token T] [--id ID] | push list AGENT TASK |
//   a2a push delete AGENT TASK ID            the task's push notification configs
//   a2a push listen --jwks-url URL [...]     receive pushes and verify them (as a2ad push listen)
//   a2a pause AGENT TASK [--mode M] | a2a resume AGENT TASK
//                                            the pause extension (agents that declare it)
// watch shows the task as it is, then follows it: on the agent's stream (SubscribeToTask)
// when its card declares streaming, re-attaching after a drop with the agent's last event id
// and a fresh look at the task, so nothing is missed; else (or --poll) by asking every
// --every-ms (default 500; two changes between two asks then show as one). It prints each
// change of state and each new artifact: a status line on a terminal, one JSON line per
// change when piped, and ends when the task ends or waits for input.
// Every command: --json (the normalized task or card as JSON), --header "Name: value"
// (repeatable; credentials), --timeout-ms. approve, reject and answer print the question the
// task is waiting on first (its status message), then follow the task until it ends or waits
// for input again, and print where it got to. With --wait, send follows the task likewise.
// A task a2ad paused shows as paused (paused-by-client, ...), not as working.
//
// Exit codes: 0 done; 1 the agent refused the request (a JSON-RPC error) or the task ended
// failed, rejected or canceled; 2 bad usage; 3 the agent could not be reached or answered
// something that is not A2A.
//
// The CLI is the user's own tool: it may call any address, loopback and plain http included
// (no SSRF guard applies to a URL the user typed).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <random>
#include <set>
#include <variant>

#include "a2ad/cli/a2a_views.hpp"
#include "a2ad/cli/push_listen_options.hpp"
#include "a2ad/client/a2a_client.hpp"
#include "a2ad/client/grpc/grpc_peer.hpp"
#include "a2ad/core/clock.hpp"
#include "a2ad/net/http_client.hpp"
#include "a2ad/net/url_guard.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using a2ad::protocol::ObjOr;
using a2ad::protocol::Str;

struct Options {
  std::string command, agent, task, text, skill, data, feedback, context, mode = "finish_step";
  std::string state, since;         // list
  bool all = false;                 // list
  std::vector<std::string> sets;    // answer --set ID=VALUE
  int64_t every_ms = 500;
  std::string push_url, token, config_id;  // push set | delete
  std::vector<std::string> headers;
  std::string binding;  // "" : the card's first; jsonrpc | rest | grpc
  bool json = false, wait = false, stream = false, poll = false, id_only = false;
  int64_t timeout_ms = 10000;
};

int Fail(int code, const std::string& what) {
  std::fprintf(stderr, "a2a: %s\n", what.c_str());
  return code;
}

// The error in words; a JSON-RPC refusal with the agent's own message (the user's tool: the
// agent's text is shown as it is).
std::string Why(const a2ad::core::Error& e) {
  const std::string_view peer = e.Detail("peerMessage");
  return peer.empty() ? e.message : e.message + ": " + std::string(peer);
}

int ExitFor(const a2ad::core::Error& e) { return e.Detail("peerCode").empty() ? 3 : 1; }

std::string NewId() {
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}

void PrintTask(const json::object& task, bool as_json) {
  if (as_json) {
    std::printf("%s\n", a2ad::protocol::SerializeJson(task).c_str());
    return;
  }
  std::printf("task %s: %s\n", std::string(Str(task, "id")).c_str(),
              a2ad::cli::StateLabel(task).c_str());
  const json::object& message = ObjOr(ObjOr(task, "status"), "message");
  if (const json::value* parts = message.if_contains("parts"); parts && parts->is_array())
    for (const auto& p : parts->get_array())
      if (p.is_object() && p.get_object().contains("text"))
        std::printf("  %s\n", std::string(Str(p.get_object(), "text")).c_str());
  if (const json::value* arts = task.if_contains("artifacts"); arts && arts->is_array())
    for (const auto& a : arts->get_array()) {
      if (!a.is_object()) continue;
      std::printf("  artifact %s:", std::string(Str(a.get_object(), "artifactId")).c_str());
      if (const json::value* parts = a.get_object().if_contains("parts");
          parts && parts->is_array())
        for (const auto& p : parts->get_array())
          if (p.is_object())
            std::printf(" %s", p.get_object().contains("text")
                                   ? std::string(Str(p.get_object(), "text")).c_str()
                                   : a2ad::protocol::SerializeJson(p).c_str());
      std::printf("\n");
    }
}

std::string CardStatus(const a2ad::client::PeerCard& card) {
  if (!card.is_signed) return "not signed";
  if (card.verified) return "signed, signature verified";
  return "signed, not verified (" + card.unverified_reason + ")";
}

json::object Message(const Options& o, json::value reply_data) {
  json::array parts;
  if (!o.text.empty()) parts.push_back(json::object{{"text", o.text}});
  if (!reply_data.is_null()) parts.push_back(json::object{{"data", std::move(reply_data)}});
  json::object m{{"messageId", NewId()}, {"role", "user"}, {"parts", std::move(parts)}};
  if (!o.task.empty()) m["taskId"] = o.task;
  if (!o.skill.empty()) m["metadata"] = json::object{{"skillId", o.skill}};
  return m;
}

// approve / reject: the approval answer (built outside the coroutine: GCC 12 mis-compiles
// braced JSON initializers inside them); null for the other commands.
json::value DecisionData(const Options& o) {
  if (o.command != "approve" && o.command != "reject") return nullptr;
  json::object answer{{"action", o.command == "approve" ? "accept" : "reject"}};
  if (!o.feedback.empty()) answer["feedback"] = o.feedback;
  return answer;
}

json::object ListParams(const Options& o, const std::string& page_token) {
  json::object p;
  if (!o.context.empty()) p["contextId"] = o.context;
  p["pageSize"] = 100;
  if (!page_token.empty()) p["pageToken"] = page_token;
  return p;
}

int64_t NowMs() { return a2ad::core::SystemClock().NowMs(); }

// The agent's origin (scheme://host:port) from its base or card URL: where a2ad's own routes
// (/v1/inbox, /v1/runs/...) are.
std::string Origin(const std::string& agent) {
  const size_t scheme = agent.find("://");
  const size_t path = agent.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return path == std::string::npos ? agent : agent.substr(0, path);
}

// answer --set ID=VALUE...: {"answers": {ID: VALUE}} (VALUE read as JSON when it is JSON,
// else as text); null when there is none, a string saying why when one does not read.
std::variant<json::value, std::string> SetAnswers(const std::vector<std::string>& sets) {
  if (sets.empty()) return json::value(nullptr);
  json::object answers;
  for (const auto& s : sets) {
    const size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0) return "--set '" + s + "': expected ID=VALUE";
    const std::string value = s.substr(eq + 1);
    auto parsed = a2ad::protocol::ParseJson(value);
    answers[s.substr(0, eq)] = parsed ? std::move(parsed).value() : json::value(value);
  }
  return json::value(json::object{{"answers", std::move(answers)}});
}

// The push config call's params, in the peer's version (WIRE.md: 1.0 flattens the config).
json::object PushParams(const Options& o, bool v10) {
  json::object p;
  if (o.command == "push set") {
    json::object cfg;
    cfg["url"] = o.push_url;
    if (!o.token.empty()) cfg["token"] = o.token;
    if (!o.config_id.empty()) cfg["id"] = o.config_id;
    if (v10) {
      p = std::move(cfg);
      p["taskId"] = o.task;
    } else {
      p["taskId"] = o.task;
      p["pushNotificationConfig"] = std::move(cfg);
    }
  } else if (o.command == "push list") {
    p[v10 ? "taskId" : "id"] = o.task;
  } else {  // push delete
    p[v10 ? "taskId" : "id"] = o.task;
    p[v10 ? "id" : "pushNotificationConfigId"] = o.config_id;
  }
  return p;
}

json::object PauseParams(const Options& o, const std::string& handle) {
  json::object p;
  p["taskId"] = o.task;
  if (o.command == "pause") {
    p["mode"] = o.mode;
    p["reason"] = "a2a pause";
  } else {
    p["handle"] = handle;
  }
  return p;
}

// One change a watch reports: {state, artifacts (new ids)} as JSON, or as a line of text.
std::string ChangeLine(std::string_view task_id, std::string_view state,
                       const json::array& new_artifacts, bool as_json) {
  if (as_json) {
    json::object line{{"taskId", task_id}, {"state", state}, {"newArtifacts", new_artifacts}};
    return a2ad::protocol::SerializeJson(line);
  }
  std::string out = std::string(task_id) + ": " + std::string(state);
  for (const auto& a : new_artifacts)
    if (a.is_object()) out += "  +artifact " + std::string(Str(a.get_object(), "artifactId"));
  return out;
}

// What a watch (or a streamed send) has shown: it prints a change once, whether it learns it
// from a snapshot (GetTask, a stream's first event) or an event.
struct Shown {
  std::string task_id, state;
  std::set<std::string> artifacts;
  bool tty = false, json = false;
  bool Done() const {
    return a2ad::client::IsTerminalState(state) || a2ad::client::AsksForInput(state);
  }
  void Print(std::string_view state_now, const json::array& fresh) {
    if (state_now == state && fresh.empty()) return;
    state = std::string(state_now);
    const std::string line = ChangeLine(task_id, state, fresh, json);
    std::printf(tty ? "\r\033[K%s" : "%s\n", line.c_str());
    std::fflush(stdout);
  }
  json::array Fresh(const json::value* arts) {
    json::array fresh;
    if (arts && arts->is_array())
      for (const auto& a : arts->get_array())
        if (a.is_object() &&
            artifacts.insert(std::string(Str(a.get_object(), "artifactId"))).second)
          fresh.push_back(a);
    return fresh;
  }
  void Task(const json::object& task) {
    if (task_id.empty()) task_id = Str(task, "id");
    Print(Str(task, "state"), Fresh(task.if_contains("artifacts")));
  }
  // A normalized stream event (client::NormalizeStreamEvent).
  void Event(const json::object& ev) {
    const std::string_view kind = Str(ev, "kind");
    if (kind == "task") {
      Task(ObjOr(ev, "task"));
    } else if (kind == "status") {
      if (task_id.empty()) task_id = Str(ev, "taskId");
      Print(Str(ev, "state"), {});
    } else if (kind == "artifact") {
      json::value one(json::array{ObjOr(ev, "artifact")});
      Print(state, Fresh(&one));
    }
  }
  int ExitCode() const {
    if (tty) std::printf("\n");
    return (state == "failed" || state == "rejected" || state == "canceled") ? 1 : 0;
  }
};

asio::awaitable<void> Pause(std::chrono::milliseconds d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::use_awaitable);
}

bool CanStream(const a2ad::client::PeerCard& peer) {
  const json::value* s = ObjOr(peer.card, "capabilities").if_contains("streaming");
  return s && s->is_bool() && s->get_bool();
}

// Follows a task: asks for it (what it is now), then, when the agent streams, listens on
// SubscribeToTask until the stream ends or drops, and asks again: so a drop loses nothing
// (the snapshot after it shows every state and artifact the stream missed). The agent's
// event ids go back as Last-Event-ID (an agent that keeps its stream resumes after them).
// Without streaming (or --poll, or an agent that refuses to stream this task): asks every
// --every-ms.
asio::awaitable<int> Watch(const Options& o, const a2ad::client::A2aClient& a2a,
                           const a2ad::client::PeerCard& peer,
                           const a2ad::client::CallOptions& call) {
  Shown shown;
  shown.tty = isatty(STDOUT_FILENO) && !o.json;
  shown.json = o.json;
  shown.task_id = o.task;
  bool stream = CanStream(peer) && !o.poll;
  std::string last_event_id;
  for (;;) {
    auto t = co_await a2a.GetTask(peer, o.task, call);
    if (!t) {
      if (ExitFor(t.error()) == 1) co_return Fail(1, Why(t.error()));
      std::fprintf(stderr, "a2a: %s; asking again\n", t.error().message.c_str());
      co_await Pause(std::chrono::milliseconds(o.every_ms));
      continue;
    }
    shown.Task(t.value());
    if (shown.Done()) co_return shown.ExitCode();
    if (!stream) {
      co_await Pause(std::chrono::milliseconds(o.every_ms));
      continue;
    }
    auto r = co_await a2a.Subscribe(
        peer, o.task, call, std::chrono::hours(24),
        [&](const json::object& ev) {
          if (const json::value* id = ev.if_contains("eventId"); id && id->is_string())
            last_event_id = id->get_string();
          shown.Event(ev);
          return !shown.Done();
        },
        last_event_id);
    if (shown.Done()) co_return shown.ExitCode();
    if (!r && ExitFor(r.error()) == 1) {
      std::fprintf(stderr, "a2a: the agent does not stream this task (%s); polling\n",
                   Why(r.error()).c_str());
      stream = false;
    } else if (!r) {
      std::fprintf(stderr, "a2a: stream lost (%s); re-attaching\n", r.error().message.c_str());
      co_await Pause(std::chrono::milliseconds(o.every_ms));
    } else {
      std::fprintf(stderr, "a2a: the agent's stream ended before the task did; re-attaching\n");
    }
  }
}

asio::awaitable<int> Run(Options o, const a2ad::net::HttpClient& http,
                         const a2ad::client::PeerTransport& grpc) {
  a2ad::client::A2aClient a2a(http, &grpc);
  a2ad::client::CallOptions call;
  call.timeout = std::chrono::milliseconds(o.timeout_ms);
  for (const auto& h : o.headers) {
    const size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0)
      co_return Fail(2, "--header '" + h + "': expected 'Name: value'");
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    call.headers.emplace_back(h.substr(0, colon), value);
  }
  if (o.command == "wait") {  // before the card: the agent may not answer yet
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.timeout_ms);
    a2ad::core::Error last(a2ad::core::ErrorCode::kUnavailable, "not asked yet");
    while (std::chrono::steady_clock::now() < until) {
      for (const std::string path : {"/readyz", "/.well-known/agent-card.json"}) {
        a2ad::net::HttpRequest get;
        get.url = Origin(o.agent) + path;
        get.headers = call.headers;
        get.total_timeout = std::chrono::milliseconds(1000);
        auto r = co_await http.Fetch(get);
        if (r && r->status == 200) co_return 0;
        if (r && r->status != 404) {
          last = a2ad::core::Error(a2ad::core::ErrorCode::kUnavailable,
                                   path + ": HTTP " + std::to_string(r->status));
          break;
        }
        if (!r) {
          last = r.error();
          break;
        }
      }
      co_await Pause(std::chrono::milliseconds(100));
    }
    co_return Fail(3, o.agent + " is not ready after " + std::to_string(o.timeout_ms) +
                          " ms: " + last.message);
  }
  auto card = co_await a2a.FetchCard(a2ad::client::PeerCardUrl(o.agent), call);
  if (!card) co_return Fail(ExitFor(card.error()), Why(card.error()));
  if (o.binding == "rest") {
    if (card.value().rest_url.empty()) co_return Fail(2, "the card declares no REST interface of A2A 1.x");
    card.value() = a2ad::client::PreferRest(card.value());
  } else if (o.binding == "grpc") {
    if (card.value().grpc_url.empty()) co_return Fail(2, "the card declares no gRPC interface of A2A 1.x");
    card.value() = a2ad::client::PreferGrpc(card.value());
  } else if (o.binding == "jsonrpc" && card.value().binding != "JSONRPC") {
    co_return Fail(2, "the card declares no JSON-RPC interface");
  }
  const a2ad::client::PeerCard& peer = card.value();
  if (o.command == "card") {
    if (o.json) {
      std::printf("%s\n", a2ad::protocol::SerializeJson(peer.card).c_str());
    } else {
      const char* over = peer.binding == "GRPC"        ? "gRPC"
                         : peer.binding == "HTTP+JSON" ? "REST"
                                                       : "JSON-RPC";
      std::printf("%s\n  A2A %s over %s at %s\n  card: %s\n", peer.name.c_str(),
                  peer.version.c_str(), over, peer.url.c_str(), CardStatus(peer).c_str());
      if (const json::value* skills = peer.card.if_contains("skills"); skills && skills->is_array())
        for (const auto& s : skills->get_array())
          if (s.is_object())
            std::printf("  skill %s: %s\n", std::string(Str(s.get_object(), "id")).c_str(),
                        std::string(Str(s.get_object(), "description")).c_str());
    }
    co_return 0;
  }
  if (o.command == "get" || o.command == "cancel") {
    a2ad::core::Result<json::object> t = a2ad::core::Error(a2ad::core::ErrorCode::kInternal, "");
    if (o.command == "get")
      t = co_await a2a.GetTask(peer, o.task, call);
    else
      t = co_await a2a.CancelTask(peer, o.task, call);
    if (!t) co_return Fail(ExitFor(t.error()), Why(t.error()));
    PrintTask(t.value(), o.json);
    co_return 0;
  }
  if (o.command == "watch") co_return co_await Watch(o, a2a, peer, call);
  if (o.command == "list") {
    a2ad::cli::ListFilter filter{o.state, o.skill, std::nullopt, o.all};
    if (!o.since.empty()) {
      filter.since_ms = a2ad::cli::SinceMs(o.since, NowMs());
      if (!filter.since_ms)
        co_return Fail(2, "--since '" + o.since + "': expected 90s, 15m, 2h, 7d or a time");
    }
    json::array shown;
    std::string token;
    for (int page = 0; page < 100; ++page) {  // at most 10,000 tasks looked at
      auto r = co_await a2a.Call(peer, "ListTasks", ListParams(o, token), call);
      if (!r) co_return Fail(ExitFor(r.error()), Why(r.error()));
      const json::object& res = r.value().is_object() ? r.value().get_object() : json::object();
      if (const json::value* tasks = res.if_contains("tasks"); tasks && tasks->is_array())
        for (const auto& t : tasks->get_array())
          if (t.is_object()) {
            json::object n = a2ad::client::NormalizeTask(t.get_object());
            if (!a2ad::cli::Matches(n, filter)) continue;
            if (o.json)
              shown.push_back(std::move(n));
            else
              std::printf("%s\n", a2ad::cli::ListLine(n, NowMs()).c_str());
          }
      token = Str(res, "nextPageToken");
      if (token.empty()) break;
    }
    if (o.json) std::printf("%s\n", a2ad::protocol::SerializeJson(shown).c_str());
    co_return 0;
  }
  if (o.command == "inbox" || o.command == "history") {
    a2ad::net::HttpRequest get;
    get.url = Origin(o.agent) + (o.command == "inbox"
                                     ? std::string("/v1/inbox")
                                     : "/v1/runs/" + o.task + "/events/poll?lastSequence=-1&timeout=0");
    get.headers = call.headers;
    auto answer = co_await http.Fetch(get);
    if (!answer) co_return Fail(3, answer.error().message);
    if (answer->status == 404 && o.command == "inbox") {
      // Not a2ad: the tasks that wait for input, as any A2A 1.0 agent lists them.
      json::object p = ListParams(o, "");
      p["status"] = "TASK_STATE_INPUT_REQUIRED";
      auto r = co_await a2a.Call(peer, "ListTasks", p, call);
      if (!r) co_return Fail(ExitFor(r.error()), Why(r.error()));
      const json::object& res = r.value().is_object() ? r.value().get_object() : json::object();
      if (const json::value* tasks = res.if_contains("tasks"); tasks && tasks->is_array())
        for (const auto& t : tasks->get_array())
          if (t.is_object())
            std::printf("%s\n", a2ad::cli::ListLine(a2ad::client::NormalizeTask(t.get_object()),
                                                    NowMs()).c_str());
      co_return 0;
    }
    auto body = a2ad::protocol::ParseJson(answer->body);
    if (answer->status != 200 || !body || !body->is_object())
      co_return Fail(answer->status == 404 ? 1 : 3,
                     o.command + ": HTTP " + std::to_string(answer->status) + " " +
                         answer->body.substr(0, 300));
    if (o.json) {
      std::printf("%s\n", a2ad::protocol::SerializeJson(*body).c_str());
      co_return 0;
    }
    const json::value* list = body->get_object().if_contains(o.command == "inbox" ? "items" : "events");
    if (list && list->is_array())
      for (const auto& x : list->get_array())
        if (x.is_object())
          std::printf("%s\n", (o.command == "inbox" ? a2ad::cli::InboxEntry(x.get_object(), NowMs())
                                                    : a2ad::cli::HistoryLine(x.get_object()))
                                  .c_str());
    if (o.command == "inbox" && (!list || !list->is_array() || list->get_array().empty()))
      std::printf("nothing waits on you\n");
    co_return 0;
  }
  if (o.command.starts_with("push ")) {
    const char* method = o.command == "push set"    ? "CreateTaskPushNotificationConfig"
                         : o.command == "push list" ? "ListTaskPushNotificationConfigs"
                                                    : "DeleteTaskPushNotificationConfig";
    auto r = co_await a2a.Call(peer, method, PushParams(o, peer.version == "1.0"), call);
    if (!r) co_return Fail(ExitFor(r.error()), Why(r.error()));
    std::printf("%s\n", a2ad::protocol::SerializeJson(r.value()).c_str());
    co_return 0;
  }
  if (o.command == "pause" || o.command == "resume") {
    a2ad::client::CallOptions ext = call;
    ext.headers.emplace_back("A2A-Extensions", "https://a2ad.dev/ext/pause/v1");
    std::string handle;
    if (o.command == "resume") {  // the open pause's handle, from the task
      auto t = co_await a2a.GetTask(peer, o.task, call);
      if (!t) co_return Fail(ExitFor(t.error()), Why(t.error()));
      handle = Str(ObjOr(ObjOr(t.value(), "metadata"), "pause"), "resumeToken");
      if (handle.empty()) handle = Str(ObjOr(ObjOr(t.value(), "status"), "pause"), "resumeToken");
      if (handle.empty()) co_return Fail(1, "task " + o.task + " is not paused");
    }
    auto r = co_await a2a.Call(peer, o.command == "pause" ? "PauseTask" : "ResumeTask",
                               PauseParams(o, handle), ext);
    if (!r) co_return Fail(ExitFor(r.error()), Why(r.error()));
    const json::object& answer = r.value().is_object() ? r.value().get_object() : json::object();
    const json::value* task = answer.if_contains("task");
    PrintTask(a2ad::client::NormalizeTask(task && task->is_object() ? task->get_object() : answer),
              o.json);
    co_return 0;
  }
  json::value data = DecisionData(o);
  if (o.command == "answer") {
    auto set = SetAnswers(o.sets);
    if (auto* why = std::get_if<std::string>(&set)) co_return Fail(2, *why);
    data = std::get<json::value>(std::move(set));
    if (data.is_null() && o.text.empty()) co_return Fail(2, "answer: give TEXT or --set ID=VALUE");
  }
  if (data.is_null() && !o.data.empty()) {
    auto parsed = a2ad::protocol::ParseJson(o.data);
    if (!parsed) co_return Fail(2, "--data: " + parsed.error().message);
    data = std::move(parsed).value();
  }
  if (o.command != "send") {  // approve, reject, answer: show what is asked first
    auto t = co_await a2a.GetTask(peer, o.task, call);
    if (!t) co_return Fail(ExitFor(t.error()), Why(t.error()));
    const std::string state(Str(t.value(), "state"));
    if (!a2ad::client::AsksForInput(state))
      co_return Fail(1, "task " + o.task + " is " + state + ", not waiting for input");
    const auto questions = a2ad::cli::QuestionIds(t.value());
    if (o.command == "answer" && o.sets.empty() && questions.size() > 1) {
      std::string ids;
      for (const auto& q : questions) ids += " --set " + q + "=...";
      co_return Fail(2, "task " + o.task + " asks " + std::to_string(questions.size()) +
                            " questions: answer each with" + ids);
    }
    if (!o.json) PrintTask(t.value(), false);
    o.wait = true;  // then follow the task to where the answer takes it
  }
  if (o.stream) {  // the agent's events as they come, until its stream ends
    Shown shown;
    shown.tty = isatty(STDOUT_FILENO) && !o.json;
    shown.json = o.json;
    auto r = co_await a2a.SendStreaming(
        peer, Message(o, std::move(data)), call, std::chrono::hours(24),
        [&](const json::object& ev) {
          if (Str(ev, "kind") == "message")
            std::printf("%s\n", a2ad::protocol::SerializeJson(ObjOr(ev, "message")).c_str());
          else
            shown.Event(ev);
          return true;
        });
    if (!r) co_return Fail(ExitFor(r.error()), Why(r.error()));
    co_return shown.ExitCode();
  }
  auto sent = co_await a2a.Send(peer, Message(o, std::move(data)), call);
  if (!sent) co_return Fail(ExitFor(sent.error()), Why(sent.error()));
  if (!sent.value().is_task) {
    std::printf("%s\n", a2ad::protocol::SerializeJson(sent.value().message).c_str());
    co_return 0;
  }
  json::object task = sent.value().task;
  const std::string id(Str(task, "id"));
  while (o.wait && !a2ad::client::IsTerminalState(Str(task, "state")) &&
         !a2ad::client::AsksForInput(Str(task, "state"))) {
    asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(200));
    co_await timer.async_wait(asio::use_awaitable);
    auto t = co_await a2a.GetTask(peer, id, call);
    if (!t) co_return Fail(ExitFor(t.error()), Why(t.error()));
    task = std::move(t).value();
  }
  if (o.id_only)
    std::printf("%s\n", id.c_str());
  else
    PrintTask(task, o.json);
  const std::string_view state = Str(task, "state");
  if (o.command == "reject") co_return 0;  // a run that ends there ended as asked
  co_return (state == "failed" || state == "rejected" || state == "canceled") ? 1 : 0;
}

// All of main but its last resort (below).
int Main(int argc, char** argv) {
  Options o;
  CLI::App app{"a2a: a command-line client for A2A agents (A2A 1.0 over JSON-RPC, REST or gRPC; 0.3 over JSON-RPC)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("a2a ") + A2AD_VERSION);
  auto common = [&](CLI::App* sub, bool task) {
    sub->add_option("agent", o.agent, "the agent's base URL or card URL")->required();
    if (task) sub->add_option("task", o.task, "the task id")->required();
    sub->add_flag("--json", o.json, "print JSON");
    sub->add_option("--header", o.headers, "'Name: value' sent with every request (repeatable)");
    sub->add_option("--timeout-ms", o.timeout_ms, "per request")->capture_default_str();
    sub->add_option("--binding", o.binding,
                    "speak this interface of the card: jsonrpc, rest or grpc (A2A 1.0; default: "
                    "the card's first, JSON-RPC before REST before gRPC)")
        ->check(CLI::IsMember({"jsonrpc", "rest", "grpc"}));
  };
  common(app.add_subcommand("card", "show the agent's card"), false);
  CLI::App* send =
      app.add_subcommand("send", "send a message (a new task, or --task to continue one)");
  common(send, false);
  send->add_option("text", o.text, "the message text");
  send->add_option("--skill", o.skill, "metadata.skillId");
  send->add_option("--data", o.data, "a JSON data part");
  send->add_option("--task", o.task, "continue this task");
  send->add_flag("--wait", o.wait, "follow the task until it ends or waits for input");
  send->add_flag("--id-only", o.id_only, "print the task's id alone (TASK=$(a2a send ...))");
  send->add_flag("--stream", o.stream,
                 "SendStreamingMessage: print the agent's events as they come");
  common(app.add_subcommand("get", "show a task"), true);
  common(app.add_subcommand("cancel", "cancel a task"), true);
  for (const char* verb : {"approve", "reject"}) {
    CLI::App* sub = app.add_subcommand(verb, std::string(verb) + " the approval a task waits for");
    common(sub, true);
    sub->add_option("--feedback", o.feedback, "a comment sent with the decision");
  }
  CLI::App* list = app.add_subcommand("list", "list tasks (A2A 1.0 ListTasks)");
  common(list, false);
  list->add_option("--context", o.context, "only this contextId");
  list->add_option("--state", o.state,
                   "only tasks in this state (input-required, working, completed, paused, ...)");
  list->add_option("--skill", o.skill, "only tasks of this skill");
  list->add_option("--since", o.since, "only tasks changed since: 90s, 15m, 2h, 7d, or a time");
  list->add_flag("--all", o.all, "also the tasks other runs started (their steps)");
  common(app.add_subcommand("inbox", "the tasks waiting on a person that you may answer"),
         false);
  common(app.add_subcommand("history", "the timeline of a run (a2ad)"), true);
  CLI::App* wait = app.add_subcommand("wait", "wait until the agent is ready (--timeout-ms, 10 s)");
  common(wait, false);
  CLI::App* watch = app.add_subcommand("watch", "follow a task until it ends or waits for input");
  common(watch, true);
  watch->add_option("--every-ms", o.every_ms, "how often to ask when polling")
      ->capture_default_str();
  watch->add_flag("--poll", o.poll, "ask every --every-ms even when the agent streams");
  CLI::App* pause = app.add_subcommand("pause", "pause a task (the pause extension)");
  common(pause, true);
  pause->add_option("--mode", o.mode, "finish_step | interrupt_immediate | wait_for_completion")
      ->capture_default_str();
  common(app.add_subcommand("resume", "resume a paused task (the pause extension)"), true);
  CLI::App* push = app.add_subcommand("push", "a task's push notification configs");
  push->require_subcommand(1);
  CLI::App* push_set = push->add_subcommand("set", "send the task's updates to URL");
  common(push_set, true);
  push_set->add_option("url", o.push_url, "the webhook URL")->required();
  push_set->add_option("--token", o.token, "a token the agent sends with each push");
  push_set->add_option("--id", o.config_id, "the config's id (several per task)");
  common(push->add_subcommand("list", "the task's push configs"), true);
  CLI::App* push_delete = push->add_subcommand("delete", "remove a push config");
  common(push_delete, true);
  push_delete->add_option("id", o.config_id, "the config's id")->required();
  a2ad::push_listen::Config listen_cfg;
  CLI::App* push_listen = a2ad::cli::AddPushListen(*push, listen_cfg);
  CLI::App* answer = app.add_subcommand("answer", "answer the question a task waits on");
  common(answer, true);
  answer->add_option("text", o.text, "the answer (a question asked alone)");
  answer->add_option("--set", o.sets, "ID=VALUE: the answer to question ID (repeatable)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (push_listen->parsed()) return a2ad::push_listen::Run(listen_cfg);
  o.command = app.get_subcommands().front()->get_name();
  if (o.command == "push")
    o.command += " " + app.get_subcommands().front()->get_subcommands().front()->get_name();
  if (o.command == "send" && o.text.empty() && o.data.empty())
    return Fail(2, "send: give TEXT or --data");

  // The user's own URL: any address may be reached.
  a2ad::net::EgressPolicy policy;
  policy.allow_http = true;
  policy.allow_list = {"0.0.0.0/0", "::/0", "localhost"};
  a2ad::net::SystemResolver resolver;
  auto guard = a2ad::net::UrlGuard::Create(policy, resolver);
  if (!guard) return Fail(2, guard.error().message);
  a2ad::net::HttpClientOptions http_options;
  http_options.total_timeout = std::chrono::milliseconds(o.timeout_ms);
  http_options.user_agent = "a2a-cli";
  auto http = a2ad::net::HttpClient::Create(guard.value(), http_options);
  if (!http) return Fail(2, http.error().message);
  auto grpc = a2ad::client::GrpcPeerTransport::Create(guard.value());
  if (!grpc) return Fail(2, grpc.error().message);
  asio::io_context io;
  int code = 3;
  asio::co_spawn(io, Run(o, *http.value(), *grpc.value()),
                 [&](const std::exception_ptr& ep, int c) { code = ep ? 3 : c; });
  io.run();
  return code;
}

}  // namespace

// An exception that escapes ends the command with status 3, as one thrown by the request
// does, and says what it was (rather than std::terminate).
int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a2a: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "a2a: an unknown exception\n");
  }
  return 3;
}
