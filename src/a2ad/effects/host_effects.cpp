#include "a2ad/effects/host_effects.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstring>

#include "a2ad/core/encoding.hpp"
#include "a2ad/core/log.hpp"
#include "a2ad/core/trace.hpp"
#include "a2ad/net/egress_error.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"

namespace a2ad::effects {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using protocol::IntOr;
using protocol::ObjOr;
using protocol::Str;

namespace {

// `url` with its scheme, host and port replaced by `origin` ("http://127.0.0.1:8080").
std::string OnOrigin(const std::string& url, const std::string& origin) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t path = url.find('/', scheme + 3);
  return origin + (path == std::string::npos ? "" : url.substr(path));
}

std::string EnvName(std::string_view name) {
  std::string out;
  for (char c : name)
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A wait between attempts (or polls): false ends the call, when the run was cancelled or
// superseded meanwhile, or taken over by another replica (the next attempt is its).
asio::awaitable<bool> SleepFor(tasks::ExecutionContext& ctx, std::chrono::milliseconds d) {
  const bool slept = co_await ctx.SleepUntil(NowMs() + d.count());
  if (!slept) co_return false;
  const bool held = co_await ctx.HoldsRun();
  co_return held;
}

client::RetryPolicy RetryOf(const json::object& spec) {
  const json::object& r = ObjOr(spec, "retry");
  client::RetryPolicy p;
  p.max_attempts = static_cast<int>(IntOr(r, "maxAttempts", 3));
  p.backoff = std::chrono::milliseconds(IntOr(r, "backoffMs", 500));
  return p;
}

json::object ErrorResult(std::string_view code, const std::string& message, int attempts = 0) {
  json::object error;
  error["code"] = code;
  error["message"] = message;
  json::object out;
  out["error"] = std::move(error);
  if (attempts > 0) out["attempts"] = attempts;
  return out;
}

json::object Interrupted() {
  json::object o;
  o["interrupted"] = true;
  return o;
}

// The leading decimal integer of an error's detail (the detail's numbers are written by
// std::to_string); 0 when it does not start with one, as std::atoi read it.
int DetailInt(std::string_view text) {
  int value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc()) return 0;
  return value;
}

int AttemptsOf(const Error& e) {
  const std::string_view a = e.Detail("attempts");
  return a.empty() ? 1 : DetailInt(a);
}

// A failed call as the node logs it: the egress guard's refusal, the peer's JSON-RPC error,
// or a transport failure (after the retries: external_call_failed, DIGEST §5.4 item 4).
std::string CardState(const client::PeerCard& card) {
  if (!card.is_signed) return "not signed";
  return "signed, but " + card.unverified_reason;
}

bool RequiresVerifiedCard(const json::object& spec) {
  const json::value* v = spec.if_contains("requireSignedCard");
  return v && v->is_bool() && v->get_bool();
}

json::object CallFailure(const Error& e, std::string_view what) {
  const int attempts = AttemptsOf(e);
  if (e.Detail("card") == "signature_invalid")
    return ErrorResult("card_signature_invalid", std::string(what) + ": " + e.message, attempts);
  if (auto kind = net::EgressFailureOf(e); kind && *kind == net::EgressFailure::kRefused)
    return ErrorResult("egress_refused", std::string(what) + ": " + e.message, attempts);
  if (!e.Detail("peerCode").empty()) {
    json::object r = ErrorResult("remote_error", std::string(what) + ": " + e.message, attempts);
    r["error"].get_object()["peerCode"] = std::string(e.Detail("peerCode"));
    return r;
  }
  json::object r =
      ErrorResult("external_call_failed", std::string(what) + ": " + e.message, attempts);
  if (!e.Detail("status").empty())
    r["error"].get_object()["status"] = DetailInt(e.Detail("status"));
  return r;
}

bool Expected(const json::object& spec, int status) {
  const json::value* expect = spec.if_contains("expect");
  if (!expect || !expect->is_array()) return status >= 200 && status <= 299;
  for (const auto& e : expect->get_array()) {
    if (e.is_int64() && e.as_int64() == status) return true;
    if (e.is_string() && e.get_string().size() == 3 && e.get_string()[0] - '0' == status / 100)
      return true;
  }
  return false;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The HTTP request of a core.http spec; `error` set when a secret is missing.
// Sets the traceparent header of an outbound call (replacing one a workflow set).
void SetTraceparent(net::HeaderList& headers, std::string value) {
  std::erase_if(headers, [](const auto& h) {
    std::string lower = h.first;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower == "traceparent";
  });
  headers.emplace_back("traceparent", std::move(value));
}

net::HttpRequest HttpRequestOf(const json::object& spec,
                               const std::map<std::string, std::string>& secrets,
                               const std::string& key, std::string& error) {
  net::HttpRequest r;
  r.method = Str(spec, "method");
  r.url = Str(spec, "url");
  r.total_timeout = std::chrono::milliseconds(IntOr(spec, "timeoutMs", 10000));
  r.redirects = net::RedirectPolicy::Never();
  for (const auto& kv : ObjOr(spec, "headers"))
    if (kv.value().is_string()) r.headers.emplace_back(kv.key(), kv.value().get_string());
  for (const auto& kv : ObjOr(spec, "secretHeaders")) {
    if (!kv.value().is_object()) continue;
    const std::string name(Str(kv.value().get_object(), "secret"));
    auto it = secrets.find(name);
    if (it == secrets.end()) {
      error = "the host holds no secret '" + name + "' (set A2AD_SECRET_" + name + ")";
      return r;
    }
    r.headers.emplace_back(kv.key(),
                           std::string(Str(kv.value().get_object(), "prefix")) + it->second);
  }
  r.headers.emplace_back("Idempotency-Key", key);
  if (const json::value* body = spec.if_contains("body")) {
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = protocol::SerializeJson(*body);
  }
  r.headers.emplace_back("Accept", "application/json, */*;q=0.5");
  return r;
}

json::object HttpResponseResult(const json::object& spec, const net::HttpResponse& resp,
                                int attempts) {
  json::object headers;
  if (const json::value* keep = spec.if_contains("responseHeaders"); keep && keep->is_array())
    for (const auto& h : keep->get_array())
      if (h.is_string())
        if (std::string_view v = resp.Header(h.get_string()); !v.empty())
          headers[Lower(h.get_string())] = v;
  json::value body;
  if (Lower(resp.Header("Content-Type")).find("json") != std::string::npos) {
    if (auto parsed = protocol::ParseJson(resp.body)) body = std::move(parsed).value();
  }
  if (body.is_null() && !resp.body.empty()) body = resp.body;
  json::object response;
  response["status"] = resp.status;
  response["headers"] = std::move(headers);
  response["body"] = std::move(body);
  json::object out;
  out["response"] = std::move(response);
  out["attempts"] = attempts;
  return out;
}

json::object StatusFailure(const std::string& url, int status, int attempts) {
  json::object r =
      ErrorResult(client::RetryableStatus(status) ? "external_call_failed" : "http_status",
                  "the call to " + url + " answered HTTP " + std::to_string(status), attempts);
  r["error"].get_object()["status"] = status;
  return r;
}

// The card speaking the interface the node asks for (config.binding), when it has one.
core::Result<client::PeerCard> Bound(const client::PeerCard& card, const json::object& spec) {
  const std::string_view want = Str(spec, "binding");
  if (want == "rest") {
    if (card.rest_url.empty())
      return Error(core::ErrorCode::kUnsupportedOperation,
                   "the node asks for REST, and the card declares no HTTP+JSON interface of "
                   "A2A 1.x");
    return client::PreferRest(card);
  }
  if (want == "grpc") {
    if (card.grpc_url.empty())
      return Error(core::ErrorCode::kUnsupportedOperation,
                   "the node asks for gRPC, and the card declares no GRPC interface of A2A 1.x");
    return client::PreferGrpc(card);
  }
  if (want == "jsonrpc" && card.binding != "JSONRPC")
    return Error(core::ErrorCode::kUnsupportedOperation,
                 "the node asks for JSON-RPC, and the card declares none");
  return card;
}

json::object PeerOf(const client::PeerCard& card) {
  json::object p;
  p["name"] = card.name;
  p["url"] = card.url;
  p["version"] = card.version;
  p["binding"] = card.binding;
  p["signedCard"] = card.is_signed;
  p["verifiedCard"] = card.verified;
  return p;
}

// Which status of the peer's task this is: its timestamp and its message's id (a peer that
// asks again after a reply stays input-required, with a new status).
std::string StatusStamp(const json::object& task) {
  const json::object& status = ObjOr(task, "status");
  return std::string(Str(status, "timestamp")) + "|" +
         std::string(Str(ObjOr(status, "message"), "messageId"));
}

// What a peer's task (normalized) leaves in the node's effect state. `awaitingPeer`: the
// answer to a reply may still show the question it answers (a non-blocking send returns
// before the peer has read it); the node then follows the task until its status changes
// instead of asking the person again.
json::object TaskResult(const json::object& task, bool awaiting_peer = false) {
  json::object r;
  r["taskId"] = Str(task, "id");
  r["contextId"] = Str(task, "contextId");
  r["state"] = Str(task, "state");
  r["statusStamp"] = StatusStamp(task);
  r["awaitingPeer"] = awaiting_peer;
  r["task"] = task;
  r["observedAt"] = NowMs();
  return r;
}

json::object PushConfigOf(const PushTarget& t) {
  json::object p;
  p["url"] = t.url;
  p["token"] = t.token;
  return p;
}

}  // namespace

std::string PeerPushNudgeKey(std::string_view node_id) {
  return "a2a.invoke:" + std::string(node_id);
}

void AddEnvironment(EffectsConfig& config, char** env) {
  for (; env && *env; ++env) {
    std::string_view entry(*env);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq), value = entry.substr(eq + 1);
    if (name.starts_with("A2AD_SECRET_") && name.size() > 12)
      config.secrets[std::string(name.substr(12))] = value;
  }
  for (auto& [peer, pc] : config.peers) {
    const std::string base = "A2AD_PEER_" + EnvName(peer);
    for (char** e = env; e && *e; ++e) {
      std::string_view entry(*e);
      if (entry.starts_with(base + "_BEARER="))
        pc.headers.emplace_back("Authorization",
                                "Bearer " + std::string(entry.substr(base.size() + 8)));
      else if (entry.starts_with(base + "_API_KEY="))
        pc.headers.emplace_back("X-API-Key", std::string(entry.substr(base.size() + 9)));
    }
  }
}

HostEffects::HostEffects(const net::HttpClient& http, EffectsConfig config)
    : http_(http), a2a_(http, config.grpc), config_(std::move(config)) {
  if (config_.self_http) self_a2a_.emplace(*config_.self_http);
}

asio::awaitable<json::object> HostEffects::Run(tasks::ExecutionContext& ctx,
                                               const std::string& node_id,
                                               const json::object& spec) {
  std::string_view kind = Str(spec, "kind");
  // A call that sends something is claimed (effect_claims.hpp): an execution of the run that
  // reaches it while another is out on it takes that one's result.
  if (kind == "http") {
    const std::string key = IdempotencyKey(ctx.call_context().principal.tenant, ctx.task_id(),
                                           node_id, IntOr(spec, "ordinal", 0), "core.http");
    // The call is a named object: a lambda temporary inside a co_await expression is one
    // GCC 12 destroys twice.
    EffectClaims::Call call = [&]() { return Http(ctx, node_id, spec, key); };
    auto out = co_await claims_.Run(key, std::move(call));
    if (out.shared)
      core::LogInfo("run " + ctx.task_id() + " node " + node_id +
                    ": took the result of the same call made by an earlier execution");
    co_return std::move(out.result);
  }
  if (kind == "a2a.send" || kind == "a2a.reply") {
    const std::string_view message_id = Str(ObjOr(spec, "message"), "messageId");
    if (!message_id.empty()) {
      std::string key("a2a");
      for (std::string_view part : {std::string_view(ctx.call_context().principal.tenant),
                                    std::string_view(ctx.task_id()), message_id}) {
        key.push_back('\n');
        key += part;
      }
      EffectClaims::Call call = [&]() { return A2a(ctx, node_id, spec); };
      auto out = co_await claims_.Run(key, std::move(call));
      if (out.shared)
        core::LogInfo("run " + ctx.task_id() + " node " + node_id +
                      ": took the peer's answer to the same message sent by an earlier execution");
      co_return std::move(out.result);
    }
  }
  if (kind.starts_with("a2a.")) co_return co_await A2a(ctx, node_id, spec);
  co_return ErrorResult("capability_required",
                        "this host cannot carry out effect '" + std::string(kind) + "'");
}

asio::awaitable<json::object> HostEffects::Http(tasks::ExecutionContext& ctx,
                                                const std::string& node_id,
                                                const json::object& spec,
                                                const std::string& key) {
  std::string missing;
  net::HttpRequest req = HttpRequestOf(spec, config_.secrets, key, missing);
  if (!missing.empty()) co_return ErrorResult("secret_missing", missing);
  const std::string url = req.url;
  // A span of the call (its retries included), whose context the request carries.
  core::Span span("HTTP " + req.method, core::SpanKind::kClient, Str(spec, "traceparent"));
  span.Set("http.request.method", req.method);
  span.Set("url.full", url.substr(0, url.find_first_of("?#")));  // a query may hold secrets
  span.Set("openwop.node.id", node_id);
  SetTraceparent(req.headers, span.Context());
  client::Attempted got = co_await client::FetchWithRetry(
      http_, std::move(req), RetryOf(spec),
      [&ctx](std::chrono::milliseconds d) { return SleepFor(ctx, d); });
  span.Set("a2ad.attempts", static_cast<int64_t>(got.attempts));
  if (got.gave_up) co_return Interrupted();
  if (!got.result) {
    span.Fail(got.result.error().message);
    co_return CallFailure(got.result.error(), "the call to " + url);
  }
  const net::HttpResponse& resp = got.result.value();
  span.Set("http.response.status_code", static_cast<int64_t>(resp.status));
  if (!Expected(spec, resp.status)) {
    span.Fail("unexpected status " + std::to_string(resp.status));
    co_return StatusFailure(url, resp.status, got.attempts);
  }
  co_return HttpResponseResult(spec, resp, got.attempts);
}

core::Result<HostEffects::Peer> HostEffects::ResolvePeer(const json::object& spec,
                                                         std::string_view tenant) const {
  if (std::string_view url = Str(spec, "agentCardUrl"); !url.empty())
    return Peer{std::string(url), PeerConfig{std::string(url), {}}, &a2a_};
  const std::string name(Str(spec, "peer"));
  auto it = config_.peers.find(name);
  if (it == config_.peers.end()) {
    std::string known;
    for (const auto& [n, p] : config_.peers) known += (known.empty() ? "" : ", ") + n;
    return Error(core::ErrorCode::kInvalidParams,
                 "no A2A peer named '" + name + "' (start the host with --a2a-peer " + name +
                     "=URL; known: " + (known.empty() ? "none" : known) + ")");
  }
  if (it->second.self && !self_a2a_)
    return Error(core::ErrorCode::kInvalidParams,
                 "A2A peer '" + name + "' is this host, and it cannot call itself here");
  Peer peer{name, it->second, it->second.self ? &*self_a2a_ : &a2a_};
  if (peer.config.self && peer.config.headers.empty() && config_.self_credential)
    peer.config.headers.emplace_back("Authorization",
                                     "Bearer " + config_.self_credential->For(tenant));
  return peer;
}

asio::awaitable<core::Result<client::PeerCard>> HostEffects::CardOf(const Peer& peer,
                                                                    const client::CallOptions& o) {
  {
    std::lock_guard lock(mu_);
    if (auto it = cards_.find(peer.config.card_url); it != cards_.end()) co_return it->second;
  }
  auto card = co_await peer.a2a->FetchCard(peer.config.card_url, o);
  if (!card) co_return card;
  if (peer.config.self) {
    card.value().url = OnOrigin(card.value().url, config_.self_origin);
    if (!card.value().rest_url.empty())
      card.value().rest_url = OnOrigin(card.value().rest_url, config_.self_origin);
  }
  if (!card.value().is_signed)
    core::LogWarn("A2A peer '" + peer.name + "' (" + peer.config.card_url +
                  "): its agent card is not signed");
  else if (!card.value().verified)
    core::LogWarn(
        "A2A peer '" + peer.name + "' (" + peer.config.card_url +
        "): its agent card's signature cannot be checked: " + card.value().unverified_reason);
  std::lock_guard lock(mu_);
  cards_.emplace(peer.config.card_url, card.value());
  co_return card;
}

asio::awaitable<json::object> HostEffects::A2a(tasks::ExecutionContext& ctx,
                                               const std::string& node_id,
                                               const json::object& spec) {
  const std::string_view kind = Str(spec, "kind");
  auto peer = ResolvePeer(spec, ctx.call_context().principal.tenant);
  if (!peer) co_return ErrorResult("unknown_peer", peer.error().message);
  client::CallOptions o;
  o.headers = peer.value().config.headers;
  // A span of the exchange with the peer; the peer's server span becomes its child.
  core::Span span("A2A " + std::string(kind), core::SpanKind::kClient, Str(spec, "traceparent"));
  span.Set("a2a.peer", peer.value().name);
  span.Set("openwop.node.id", node_id);
  if (std::string_view t = Str(spec, "taskId"); !t.empty()) span.Set("a2a.task.id", std::string(t));
  SetTraceparent(o.headers, span.Context());
  o.retry = RetryOf(spec);
  o.sleep = [&ctx](std::chrono::milliseconds d) { return SleepFor(ctx, d); };
  const int64_t deadline = IntOr(spec, "deadlineMs", 0);
  auto card = co_await CardOf(peer.value(), o);
  if (ctx.cancel_requested()) co_return Interrupted();
  if (!card)
    co_return CallFailure(card.error(), "the agent card of peer '" + peer.value().name + "'");
  if (RequiresVerifiedCard(spec) && !card.value().verified)
    co_return ErrorResult("card_unverified",
                          "peer '" + peer.value().name +
                              "': the node requires a verified card signature, and the card is " +
                              CardState(card.value()));
  auto bound = Bound(card.value(), spec);
  if (!bound)
    co_return ErrorResult("capability_required",
                          "peer '" + peer.value().name + "': " + bound.error().message);
  const client::PeerCard& pc = bound.value();
  const std::string task_id(Str(spec, "taskId"));

  if (kind == "a2a.send" || kind == "a2a.reply") {
    json::object push;
    if (kind == "a2a.send" && Str(spec, "mode") == "push") {
      std::optional<PushTarget> target;
      if (config_.push_target) target = config_.push_target(ctx.task_id(), node_id, deadline);
      if (!target)
        co_return ErrorResult("capability_required",
                              "mode push: this host has no receiver for a peer's pushes");
      push = PushConfigOf(*target);
    }
    auto sent = co_await peer.value().a2a->Send(pc, ObjOr(spec, "message"), o, std::move(push));
    if (ctx.cancel_requested()) co_return Interrupted();
    if (!sent)
      co_return CallFailure(sent.error(), "the message to peer '" + peer.value().name + "'");
    json::object r;
    if (sent.value().is_task) {
      r = TaskResult(sent.value().task,
                     kind == "a2a.reply" && client::AsksForInput(Str(sent.value().task, "state")));
    } else {
      r["directMessage"] = sent.value().message;
    }
    r["peer"] = PeerOf(pc);
    if (kind == "a2a.reply") r["replies"] = IntOr(spec, "replies", 0);
    co_return r;
  }
  if (kind == "a2a.wait") co_return co_await Wait(ctx, node_id, spec, peer.value(), pc, o);
  co_return ErrorResult("capability_required", "unknown A2A effect '" + std::string(kind) + "'");
}

asio::awaitable<HostEffects::Heard> HostEffects::Listen(
    const Peer& peer, const client::PeerCard& pc, const std::string& task_id,
    const json::object& spec, const client::CallOptions& o, std::string& why) {
  const std::string known(Str(spec, "state"));
  const std::string known_stamp(Str(spec, "statusStamp"));
  auto window = config_.stream_window;
  if (const int64_t deadline = IntOr(spec, "deadlineMs", 0); deadline > 0)
    window = std::clamp(std::chrono::milliseconds(deadline - NowMs()), std::chrono::milliseconds(1),
                        window);
  bool changed = false;
  auto on_event = [&](const json::object& ev) {
    const std::string_view kind = Str(ev, "kind");
    json::object task;
    if (kind == "task") {
      task = ObjOr(ev, "task");
    } else if (kind == "status") {
      task["state"] = Str(ev, "state");
      task["status"] = ObjOr(ev, "status");
    } else {
      return true;  // artifacts and messages arrive with the task the node reads next
    }
    changed =
        Str(task, "state") != known || (!known_stamp.empty() && StatusStamp(task) != known_stamp);
    return !changed;
  };
  auto r = co_await peer.a2a->Subscribe(pc, task_id, o, window, on_event);
  if (changed) co_return Heard::kChange;
  if (r) co_return Heard::kQuiet;
  why = r.error().message;
  co_return client::RetryableError(r.error()) ? Heard::kDown : Heard::kRefused;
}

asio::awaitable<json::object> HostEffects::Wait(tasks::ExecutionContext& ctx,
                                                const std::string& node_id,
                                                const json::object& spec, const Peer& peer,
                                                const client::PeerCard& pc,
                                                const client::CallOptions& o) {
  const std::string task_id(Str(spec, "taskId"));
  const std::string known(Str(spec, "state"));
  const std::string known_stamp(Str(spec, "statusStamp"));  // "" : any status of `known`
  const int64_t deadline = IntOr(spec, "deadlineMs", 0);
  std::string mode(Str(spec, "mode"));
  const auto poll = std::chrono::milliseconds(IntOr(spec, "pollMs", 500));
  bool first = true, outage_logged = false, unknown_logged = false;
  std::chrono::milliseconds backoff = poll;
  // What made the node look the time it saw the change (logged: how a node learns, for
  // operators): "first-look", "poll", "stream", "stream-window", "push".
  std::string via = "first-look";
  for (;;) {
    if (deadline > 0 && NowMs() >= deadline) {
      (void)co_await peer.a2a->CancelTask(pc, task_id, o);
      co_return ErrorResult(
          "external_call_failed",
          "the peer's task " + task_id + " did not finish before the node's timeoutMs");
    }
    // Look at once (the state the node knows may be old already), then when there is a
    // reason to: pollMs passed, the peer's stream showed a change, or its push arrived.
    if (!first) {
      if (mode == "stream") {
        std::string why;
        const Heard heard = co_await Listen(peer, pc, task_id, spec, o, why);
        if (ctx.cancel_requested()) co_return Interrupted();
        via = heard == Heard::kChange  ? "stream"
              : heard == Heard::kQuiet ? "stream-window"
                                       : "poll";
        if (heard == Heard::kRefused) {
          core::LogWarn("A2A peer '" + peer.name + "' cannot stream task " + task_id + " (" + why +
                        "); following it by polling");
          mode = "poll";
        } else if (heard == Heard::kDown && !co_await SleepFor(ctx, poll)) {
          co_return Interrupted();
        }
      } else if (mode == "push") {
        int64_t until = NowMs() + poll.count();
        if (deadline > 0) until = std::min(until, deadline);
        if (!co_await ctx.SleepUntilNudged(until, PeerPushNudgeKey(node_id)))
          co_return Interrupted();
        via = NowMs() < until ? "push" : "poll";
      } else {
        if (!co_await SleepFor(ctx, poll)) co_return Interrupted();
        via = "poll";
      }
    }
    first = false;
    auto task = co_await peer.a2a->GetTask(pc, task_id, o);
    if (ctx.cancel_requested()) co_return Interrupted();
    if (!task && client::RetryableError(task.error())) {
      // The peer's task exists; the peer is down or busy (a restart, backpressure): not a
      // failure of the run. Keep asking, a little less often each time, until the deadline.
      if (!outage_logged)
        core::LogWarn("A2A peer '" + peer.name + "' unreachable while following task " + task_id +
                      " (" + task.error().message + "); retrying until the node's deadline");
      outage_logged = true;
      if (!co_await SleepFor(ctx, std::min(backoff *= 2, std::chrono::milliseconds(30000))))
        co_return Interrupted();
      continue;
    }
    if (!task) co_return CallFailure(task.error(), "following the peer's task " + task_id);
    backoff = poll;
    const std::string_view state = Str(task.value(), "state");
    if (state == "unknown" && known != "unknown") {
      if (!unknown_logged)
        core::LogWarn("A2A peer '" + peer.name + "': task " + task_id +
                      " reports no defined state; treated as pending");
      unknown_logged = true;
      continue;
    }
    if (state != known || (!known_stamp.empty() && StatusStamp(task.value()) != known_stamp)) {
      json::object r = TaskResult(task.value());
      r["heardVia"] = via;
      co_return r;
    }
  }
}

asio::awaitable<void> HostEffects::Cancel(const protocol::CallContext& ctx,
                                          const json::object& spec) {
  auto peer = ResolvePeer(spec, ctx.principal.tenant);
  if (!peer) co_return;
  client::CallOptions o;
  o.headers = peer.value().config.headers;
  // The cancel is a span of the run's trace (the cancel's context has the run's).
  core::Span span("A2A a2a.cancel", core::SpanKind::kClient, ctx.traceparent);
  span.Set("a2a.peer", peer.value().name);
  if (std::string_view t = Str(spec, "taskId"); !t.empty()) span.Set("a2a.task.id", std::string(t));
  SetTraceparent(o.headers, span.Context());
  o.retry = RetryOf(spec);
  auto card = co_await CardOf(peer.value(), o);
  if (!card) co_return;
  auto bound = Bound(card.value(), spec);
  if (!bound) co_return;
  const std::string task_id(Str(spec, "taskId"));
  auto r = co_await peer.value().a2a->CancelTask(bound.value(), task_id, o);
  if (r) co_return;
  // A task that has ended cannot be cancelled (A2A TaskNotCancelable; REST
  // FAILED_PRECONDITION): nothing is left to stop, as when a cancel is sent again after a
  // restart (TaskService::RecoverUnfinished).
  const std::string code(r.error().Detail("peerCode"));
  if (code == "-32002" || code == "FAILED_PRECONDITION") {
    core::LogInfo("peer '" + peer.value().name + "' task " + task_id +
                  " had ended before its cancel (cross_protocol_cancel)");
    co_return;
  }
  core::LogWarn("cancel of peer '" + peer.value().name + "' task " + task_id +
                " (cross_protocol_cancel) failed: " + r.error().message +
                "; it is asked again when this host restarts");
}

}  // namespace a2ad::effects
