#include "a2ad/transport/openwop/openwop_api.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <map>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/a2a_task_state.hpp"
#include "a2ad/protocol/event_cursor.hpp"
#include "a2ad/protocol/json_parse.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/tasks/run_projection.hpp"
#include "a2ad/transport/a2a/a2a_operations.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/error_body.hpp"
#include "a2ad/transport/http/sse_pump.hpp"
#include "a2ad/transport/openwop/openwop_discovery.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;


namespace {

// Key-sorted serialization: the request digest must not depend on key order.
void Canonical(const json::value& v, std::string& out) {
  if (v.is_object()) {
    std::vector<std::pair<std::string, const json::value*>> kv;
    for (const auto& e : v.get_object()) kv.emplace_back(std::string(e.key()), &e.value());
    std::sort(kv.begin(), kv.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out += '{';
    for (size_t i = 0; i < kv.size(); ++i) {
      if (i) out += ',';
      out += protocol::SerializeJson(json::value(kv[i].first));
      out += ':';
      Canonical(*kv[i].second, out);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    bool first = true;
    for (const auto& e : v.get_array()) {
      if (!first) out += ',';
      first = false;
      Canonical(e, out);
    }
    out += ']';
  } else {
    out += protocol::SerializeJson(v);
  }
}

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

// A query value that is a whole decimal integer ("-" allowed), else nullopt. Never throws.
std::optional<int64_t> QueryInt(std::string_view text) {
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return n;
}

std::optional<json::value> ParseBody(const HttpRequest& r, HttpResponse& err) {
  if (r.body.empty()) return json::value(json::object());
  auto parsed = protocol::ParseJson(r.body);
  if (!parsed) {
    err = ErrorResponse(parsed.error());  // validation_error, with the field when it has one
    return std::nullopt;
  }
  json::value v = std::move(parsed).value();
  if (!v.is_object()) {
    err = ErrorResponse(400, "validation_error", "the body must be a JSON object");
    return std::nullopt;
  }
  return v;
}

std::string_view Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

// Which events the `updates` mode admits (DIGEST §2.4).
bool InUpdates(std::string_view type) {
  if (type.starts_with("run.") || type.starts_with("approval.") ||
      type.starts_with("clarification.") || type.starts_with("interrupt.") ||
      type.starts_with("artifact."))
    return true;
  return type == "node.completed" || type == "node.failed" || type == "node.skipped" ||
         type == "node.suspended" || type == "node.resumed" || type == "cap.breached" ||
         type == protocol::kEvApprovalVote;
}

HttpResponse Json(int status, const json::value& v) {
  return JsonResponse(status, protocol::SerializeJson(v));
}

}  // namespace

HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message) {
  return RestErrorResponse(status, code, std::string(message));
}

HttpResponse ErrorResponse(const Error& e) { return RestErrorResponse(e); }

// The scope each /v1 route needs (issue 14), in one place: reads of runs and workflows
// runs:read; creating and cancelling runs:write; answering an interrupt (at its node, or
// with its token) interrupts:resolve; the A2A task-state seam tasks:read. nullopt: a path
// no route here serves (it falls through) or discovery (/v1/openapi.json).
std::optional<std::string_view> RouteScope(std::string_view method,
                                           const std::vector<std::string>& seg) {
  if (seg.size() < 2) return std::nullopt;
  const std::string& family = seg[1];
  if (family == "workflows") return kScopeRunsRead;
  if (family == "runs") {
    if (seg.size() == 5 && (seg[3] == "interrupts" || seg[3] == "approvals"))
      return kScopeInterruptsResolve;
    return method == "POST" ? kScopeRunsWrite : kScopeRunsRead;
  }
  if (family == "interrupts") return method == "GET" ? kScopeRunsRead : kScopeInterruptsResolve;
  if (family == "host" && method == "POST") return kScopeTasksWrite;  // the start seam
  if (family == "a2a" || family == "host") return kScopeTasksRead;
  if (family == "events") return kScopeRunsWrite;
  if (family == "inbox") return kScopeInterruptsResolve;
  return std::nullopt;
}

// {runId, status}: what cancel and a vote answer.
json::object RunStatusAnswer(const std::string& run_id, const protocol::RunSnapshot& run) {
  return json::object{{"runId", run_id}, {"status", run.status}};
}

json::object PublicRunSnapshot(const storage::TaskRecord& record) {
  json::object run = protocol::RunSnapshotToJson(record.run);
  for (const char* internal :
       {"requestDigest", "resumeValues", "interruptCounts", "inputs", "acceptedMessages"})
    run.erase(internal);
  if (auto* st = run.if_contains("nodeStates"); st && st->is_object())
    for (auto& kv : st->get_object())
      if (kv.value().is_object()) kv.value().get_object().erase("startedAtMs");
  if (auto* i = run.if_contains("interrupt"); i && i->is_object()) {
    auto& o = i->get_object();
    if (auto* e = o.if_contains("expiresAt"); e && e->is_int64())
      o["expiresAt"] = core::FormatTimestamp(e->as_int64());
  }
  return run;
}

OpenwopApi::OpenwopApi(tasks::TaskService& service, const core::Clock& clock,
                       TokenVerifier verifier, OpenwopApiOptions options)
    : service_(service),
      clock_(clock),
      verifier_(std::move(verifier)),
      options_(std::move(options)) {
  discovery_ = Discovery(options_, service_.skills());
  discovery_body_ = protocol::SerializeJson(discovery_);
  discovery_etag_ = WeakEtag(discovery_body_);
}

OpenwopApi::CallContext OpenwopApi::Caller(const HttpRequest& request) {
  return CallerContext(request, protocol::Binding::kOpenwop, protocol::WireVersion::kV10);
}

asio::awaitable<std::optional<HttpResponse>> OpenwopApi::Handle(const HttpRequest& r) {
  const std::string_view path = r.Path();
  const CallContext ctx = Caller(r);
  const auto seg = Split(path);
  const std::string& m = r.method;
  if (path == "/.well-known/openwop") {
    if (m != "GET" && m != "HEAD") co_return MethodNotAllowed("GET");
    if (r.principal && r.principal->authenticated) {  // the caller's scoped view
      HttpResponse scoped =
          JsonResponse(200, protocol::SerializeJson(ScopedDiscovery(discovery_, ctx)));
      scoped.headers = {{"Cache-Control", "private, no-store"},
                        {"Vary", "Authorization, X-API-Key"}};
      co_return scoped;
    }
    HttpResponse resp;
    resp.headers = {{"Cache-Control", "public, max-age=300"},
                    {"Vary", "Authorization, X-API-Key"},
                    {"ETag", discovery_etag_},
                    {"Capabilities-Etag", discovery_etag_}};
    if (r.Header("If-None-Match") == discovery_etag_) {
      resp.status = 304;
      resp.content_type.clear();
      co_return resp;
    }
    resp.body = discovery_body_;
    co_return resp;
  }
  if (seg.empty() || seg[0] != "v1") co_return std::nullopt;
  if (const auto scope = RouteScope(m, seg))
    if (auto denied = RequireScope(ctx, *scope))
      co_return WithScopeChallenge(ErrorResponse(*denied), *denied);
  if (seg.size() == 2 && seg[1] == "inbox") {
    if (m != "GET") co_return MethodNotAllowed("GET");
    co_return co_await Inbox(ctx, r);
  }
  if (seg.size() == 2 && seg[1] == "me") {  // any caller, no scope
    if (m != "GET") co_return MethodNotAllowed("GET");
    co_return Me(ctx);
  }
  if (seg.size() == 2 && seg[1] == "openapi.json") {
    if (m != "GET") co_return MethodNotAllowed("GET");
    std::call_once(openapi_once_, [this] { openapi_body_ = OpenApi(options_); });
    co_return JsonResponse(200, openapi_body_);
  }
  if (seg.size() >= 2 && seg[1] == "workflows" && seg.size() <= 3) {
    if (m != "GET") co_return MethodNotAllowed("GET");
    co_return Workflows(seg.size() == 3 ? seg[2] : "");
  }
  if (seg.size() >= 2 && seg[1] == "runs") {
    if (seg.size() == 2) {
      if (m == "POST") co_return co_await CreateRun(ctx, r);
      if (m == "GET") co_return co_await ListRuns(ctx, r);
      co_return MethodNotAllowed("GET, POST");
    }
    const std::string& id = seg[2];
    if (seg.size() == 3) {
      if (m != "GET") co_return MethodNotAllowed("GET");
      co_return co_await GetRun(ctx, id);
    }
    if (seg.size() == 4 && seg[3] == "cancel") {
      if (m != "POST") co_return MethodNotAllowed("POST");
      co_return co_await CancelRun(ctx, id, r);
    }
    if (seg.size() == 4 && seg[3] == "events") {
      if (m != "GET") co_return MethodNotAllowed("GET");
      co_return co_await Events(ctx, id, r);
    }
    if (seg.size() == 5 && seg[3] == "events" && seg[4] == "poll") {
      if (m != "GET") co_return MethodNotAllowed("GET");
      co_return co_await Poll(ctx, id, r);
    }
    if (seg.size() == 5 && (seg[3] == "interrupts" || seg[3] == "approvals")) {
      if (m != "POST") co_return MethodNotAllowed("POST");
      co_return co_await ResolveAtNode(ctx, id, seg[4], r);
    }
  }
  if (seg.size() == 2 && seg[1] == "events") {
    if (m != "POST") co_return MethodNotAllowed("POST");
    co_return co_await PostEvent(ctx, r);
  }
  if (seg.size() >= 3 && seg[1] == "interrupts" && seg.size() <= 4) {
    if (seg.size() == 4 && seg[3] != "resolve") co_return std::nullopt;
    co_return co_await Token(ctx, seg[2], r);
  }
  const bool sample_task = options_.sample_seams && seg.size() == 6 && seg[1] == "host" &&
                           seg[2] == "sample" && seg[3] == "a2a" && seg[4] == "tasks";
  if (sample_task && seg[5] == "start" && m == "POST") co_return co_await StartScenario(ctx, r);
  if ((seg.size() == 4 && seg[1] == "a2a" && seg[2] == "tasks") || sample_task) {
    if (m != "GET") co_return MethodNotAllowed("GET");
    co_return co_await TaskState(ctx, seg.back());
  }
  co_return std::nullopt;
}

// The durable-task conformance seam (DIGEST §2.5, RFC 0100): POST
// /v1/host/sample/a2a/tasks/start {scenario: "paused-at-approval"} starts a run of the
// conformance-approval fixture whose creating commit already parks it at its gate, and
// answers 201 {taskId} (= its runId). Only with --conformance-fixtures (404 otherwise).
asio::awaitable<HttpResponse> OpenwopApi::StartScenario(const CallContext& ctx,
                                                        const HttpRequest& r) {
  HttpResponse err;
  auto body = ParseBody(r, err);
  if (!body) co_return err;
  const json::value* scenario = body->get_object().if_contains("scenario");
  if (!scenario || !scenario->is_string() || scenario->get_string() != "paused-at-approval")
    co_return ErrorResponse(400, "validation_error",
                            "scenario: the one scenario of this seam is \"paused-at-approval\"");
  static constexpr const char* kFixture = "conformance-approval";
  const auto& skills = service_.skills();
  if (std::none_of(skills.begin(), skills.end(), [](const auto& s) { return s.id == kFixture; }))
    co_return ErrorResponse(404, "not_found",
                            "the conformance seams are served with --conformance-fixtures");
  tasks::StartRunRequest req;
  req.skill_id = kFixture;
  req.transport = "a2a";
  req.first_steps_inline = true;  // at its gate when this answers
  auto started = co_await service_.StartRun(ctx, std::move(req));
  if (!started) co_return ErrorResponse(started.error());
  co_return Json(201, json::object{{"taskId", started.value().record->task.id}});
}

HttpResponse OpenwopApi::Workflows(const std::string& id) {
  if (id.empty()) {
    json::array list;
    for (const auto& s : service_.skills()) {
      if (!s.definition) continue;
      list.push_back(json::object{
          {"id", s.id}, {"name", s.name}, {"version", s.version}, {"description", s.description}});
    }
    return Json(200, json::object{{"workflows", std::move(list)}});
  }
  for (const auto& s : service_.skills())
    if (s.id == id && s.definition) return Json(200, *s.definition);
  return ErrorResponse(404, "not_found", "no workflow '" + id + "'");
}

asio::awaitable<HttpResponse> OpenwopApi::CreateRun(const CallContext& ctx, const HttpRequest& r) {
  HttpResponse err;
  auto body = ParseBody(r, err);
  if (!body) co_return err;
  const json::object& b = body->get_object();
  static const char* kAllowed[] = {"workflowId",  "inputs",       "tenantId", "scopeId",
                                   "callbackUrl", "configurable", "tags",     "metadata"};
  for (const auto& kv : b)
    if (std::none_of(std::begin(kAllowed), std::end(kAllowed),
                     [&](const char* k) { return kv.key() == k; }))
      co_return ErrorResponse(400, "validation_error",
                              "unknown field '" + std::string(kv.key()) + "' in the run request");
  tasks::StartRunRequest req;
  const json::value* wf = b.if_contains("workflowId");
  if (!wf || !wf->is_string() || wf->get_string().empty())
    co_return ErrorResponse(400, "validation_error", "workflowId: required (a workflow id)");
  req.skill_id = std::string(wf->get_string());
  // RFC 0152 §E: a run is the caller's tenant's; naming another is refused in every mode.
  if (const json::value* t = b.if_contains("tenantId")) {
    if (!t->is_string())
      co_return ErrorResponse(400, "validation_error", "tenantId: expected a string");
    if (!t->get_string().empty() && t->get_string() != ctx.tenant())
      co_return ErrorResponse(403, "forbidden", "tenantId: the tenant comes from the credential");
  }
  bool known = false;
  for (const auto& s : service_.skills())
    known = known || (s.id == req.skill_id && s.definition);
  if (!known)
    co_return ErrorResponse(400, "validation_error",
                            "workflowId: no workflow '" + req.skill_id + "'");
  if (const json::value* in = b.if_contains("inputs")) {
    if (!in->is_object())
      co_return ErrorResponse(400, "validation_error", "inputs: expected an object");
    req.inputs = in->get_object();
  }
  if (const json::value* t = b.if_contains("tags")) {
    if (!t->is_array() || t->get_array().size() > 100)
      co_return ErrorResponse(400, "validation_error", "tags: expected at most 100 strings");
    for (const auto& x : t->get_array())
      if (!x.is_string() || x.get_string().size() > 256)
        co_return ErrorResponse(400, "validation_error",
                                "tags: each tag is a string of at most 256 characters");
    req.tags = t->get_array();
  }
  if (const json::value* md = b.if_contains("metadata")) {
    if (!md->is_object())
      co_return ErrorResponse(400, "validation_error", "metadata: expected an object");
    req.metadata = md->get_object();
  }
  if (b.contains("callbackUrl"))
    co_return ErrorResponse(
        400, "validation_error",
        "callbackUrl: HITL callbacks are not supported by this host; use the "
        "run's interrupt token (GET /v1/runs/{runId} -> interrupt.interruptToken)");
  std::string canonical;
  Canonical(*body, canonical);
  req.request_digest = Sha256Hex(canonical);
  const std::string_view key = r.Header("Idempotency-Key");
  if (key.size() > 255)
    co_return ErrorResponse(400, "validation_error", "Idempotency-Key: at most 255 characters");
  // Per caller: the key names the principal, the service keeps keys per tenant.
  if (!key.empty())
    req.dedup_key = "rest\n" + ctx.caller() + "\nPOST /v1/runs\n" + std::string(key);
  const std::string digest = req.request_digest;
  auto started = co_await service_.StartRun(ctx, std::move(req));
  if (!started) co_return ErrorResponse(started.error());
  const auto& rec = *started->record;
  if (started->replayed) {
    if (rec.run.request_digest != digest)
      co_return ErrorResponse(409, "idempotency_key_mismatch",
                              "this Idempotency-Key was used with a different request body");
  }
  const std::string& id = rec.task.id;
  json::object out{{"runId", id},
                   {"status", "pending"},
                   {"eventsUrl", options_.base_url + "/v1/runs/" + id + "/events"},
                   {"statusUrl", options_.base_url + "/v1/runs/" + id}};
  auto resp = Json(201, out);
  if (!key.empty())
    resp.headers.emplace_back("openwop-Idempotent-Replay", started->replayed ? "true" : "false");
  resp.headers.emplace_back("Location", "/v1/runs/" + id);
  co_return resp;
}

asio::awaitable<HttpResponse> OpenwopApi::GetRun(const CallContext& ctx, const std::string& id) {
  auto rec = co_await service_.GetRecord(ctx, id);
  if (!rec) co_return ErrorResponse(rec.error());
  if (!rec.value() || rec.value()->run.empty())
    co_return ErrorResponse(404, "not_found", "no run '" + id + "'");
  co_return Json(200, PublicRunSnapshot(*rec.value()));
}

namespace {
// Built outside the coroutine (GCC 12 mis-compiles braced json initializers inside them).
HttpResponse EventAnswer(const std::string& name, const std::vector<std::string>& resumed) {
  json::array ids;
  for (const auto& id : resumed) ids.emplace_back(id);
  return Json(200, json::object{{"name", name}, {"resumed", std::move(ids)}});
}
}  // namespace

asio::awaitable<HttpResponse> OpenwopApi::PostEvent(const CallContext& ctx, const HttpRequest& r) {
  HttpResponse err;
  auto body = ParseBody(r, err);
  if (!body) co_return err;
  const json::object& b = body->get_object();
  const json::value* name = b.if_contains("name");
  if (!name || !name->is_string())
    co_return ErrorResponse(400, "validation_error", "name: required, the event's name (a string)");
  for (const auto& kv : b)
    if (kv.key() != "name" && kv.key() != "payload")
      co_return ErrorResponse(400, "validation_error",
                              std::string(kv.key()) + ": unknown member (name, payload)");
  json::value payload;
  if (const json::value* p = b.if_contains("payload")) payload = *p;
  std::string event(name->get_string());
  auto resumed = co_await service_.PostEvent(ctx, event, std::move(payload));
  if (!resumed) co_return ErrorResponse(resumed.error());
  co_return EventAnswer(event, resumed.value());
}

asio::awaitable<HttpResponse> OpenwopApi::CancelRun(const CallContext& ctx, const std::string& id,
                                                    const HttpRequest& r) {
  HttpResponse err;
  auto body = ParseBody(r, err);
  if (!body) co_return err;
  std::string reason = "cancelled through POST /v1/runs/{runId}/cancel";
  if (auto* rs = body->get_object().if_contains("reason"); rs && rs->is_string())
    reason = std::string(rs->get_string());
  auto done = co_await service_.CancelRun(ctx, id, reason);
  if (!done) {
    // Cancel is idempotent (the conformance suite's cancel-terminal): a run that is over
    // already answers 200 with the status it ended in, and nothing changes. (A2A's
    // tasks/cancel keeps its TaskNotCancelable for a task that ended otherwise.)
    if (done.error().code == ErrorCode::kTaskNotCancelable) {
      auto rec = co_await service_.GetRecord(ctx, id);
      if (rec && rec.value() && !rec.value()->run.status.empty())
        co_return Json(200, RunStatusAnswer(id, rec.value()->run));
    }
    co_return ErrorResponse(done.error());
  }
  co_return Json(200, json::object{{"runId", id}, {"status", "cancelled"}});
}

asio::awaitable<HttpResponse> OpenwopApi::Events(const CallContext& ctx, const std::string& id,
                                                 const HttpRequest& r) {
  auto q = QueryParams(r.target);
  // streamMode (DIGEST §2.4): a comma list of updates (default), debug, messages, values;
  // values stands alone.
  std::vector<std::string> modes;
  {
    const std::string list = q.count("streamMode") ? q["streamMode"] : "updates";
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = list.find(',', start);
      std::string mode =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (mode != "updates" && mode != "debug" && mode != "messages" && mode != "values")
        co_return Json(
            400, json::object{{"error", "unsupported_stream_mode"},
                              {"message", "streamMode '" + mode + "' is not supported"},
                              {"details", json::object{{"supported", json::array{"updates", "values",
                                                                                 "messages",
                                                                                 "debug"}}}}});
      if (std::find(modes.begin(), modes.end(), mode) == modes.end()) modes.push_back(mode);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  const bool values = std::find(modes.begin(), modes.end(), "values") != modes.end();
  if (values && modes.size() > 1)
    co_return Json(
        400, json::object{{"error", "unsupported_stream_mode"},
                          {"message", "streamMode values cannot be combined with other modes"},
                          {"details", json::object{{"supported", json::array{"updates", "values",
                                                                             "messages", "debug"}}}}});
  // bufferMs: 0..5000 (DIGEST §2.4); batches of each window.
  int64_t buffer_ms = 0;
  if (q.count("bufferMs") && !q["bufferMs"].empty()) {
    const std::optional<int64_t> b = QueryInt(q["bufferMs"]);
    if (!b || *b < 0 || *b > 5000)
      co_return ErrorResponse(400, "validation_error", "bufferMs: expected 0..5000");
    buffer_ms = *b;
  }
  int64_t after = -1;
  std::string last = std::string(r.Header("Last-Event-ID"));
  if (last.empty() && q.count("lastEventId")) last = q["lastEventId"];
  if (!last.empty() && last != "-1") {  // -1: from the start, as before
    auto cursor = protocol::ParseEventCursor(last, "Last-Event-ID");
    if (!cursor)
      co_return ErrorResponse(400, "validation_error", "Last-Event-ID: expected a sequence number");
    after = cursor.value();
  }
  auto start_stream = co_await service_.SubscribeRunEvents(ctx, id, after, options_.queue_limit);
  if (!start_stream) {
    if (start_stream.error().code == ErrorCode::kTaskNotFound)
      co_return ErrorResponse(404, "not_found", "no run '" + id + "'");
    co_return ErrorResponse(start_stream.error());
  }
  tasks::StreamStart stream = std::move(start_stream).value();
  SsePumpSpec spec;
  spec.heartbeat = options_.heartbeat;
  spec.keep_alive = ":keepalive\n\n";
  spec.closes = [](const tasks::StreamItem& item) { return item.run_terminal; };
  // The run waits for someone, or is over: what is buffered goes at once.
  spec.flushes = [](const tasks::StreamItem& item) {
    return item.run_terminal ||
           (item.run_event && (item.run_event->type == protocol::kEvInputRequired ||
                               item.run_event->type == "run.paused"));
  };
  spec.buffer = std::chrono::milliseconds(buffer_ms);
  // What an item is in this stream: the SSE event name, its RunEventDoc and the SSE id (the
  // sequence it stands for), or nothing.
  struct Doc {
    std::string event, data;
    int64_t id = 0;
  };
  std::function<std::optional<Doc>(const tasks::StreamItem&)> doc;
  if (values) {
    // values: a state.snapshot (payload: the RunSnapshot) first, then after each
    // updates-tier change; one per commit.
    auto sent_through = std::make_shared<int64_t>(-2);
    if (stream.record) {
      auto first = std::make_shared<tasks::StreamItem>();
      first->sequence = stream.record->last_sequence;
      first->a2a = false;
      first->record_after = stream.record;
      first->run_terminal = stream.task_terminal;
      stream.backlog.assign(1, std::move(first));
    }
    doc = [sent_through](const tasks::StreamItem& item) -> std::optional<Doc> {
      if (!item.record_after) return std::nullopt;
      if (item.run_event && !InUpdates(item.run_event->type) && !item.run_terminal)
        return std::nullopt;
      const storage::TaskRecord& rec = *item.record_after;
      if (rec.last_sequence <= *sent_through) return std::nullopt;
      *sent_through = rec.last_sequence;
      json::object d{
          {"eventId", rec.task.id + "/state.snapshot/" + std::to_string(rec.last_sequence)},
          {"runId", rec.task.id},
          {"type", "state.snapshot"},
          {"timestamp", core::FormatTimestamp(rec.updated_at_ms)},
          {"sequence", rec.last_sequence},
          {"payload", protocol::RunSnapshotToJson(rec.run)}};
      return Doc{"state.snapshot", protocol::SerializeJson(d), rec.last_sequence};
    };
  } else {
    // updates: run-level transitions (InUpdates); debug: every event; messages: the AI
    // message chunks (ai.message.*). One mode: `event:` is the event's type; several: the
    // mode that admitted it, the first listed.
    doc = [modes](const tasks::StreamItem& item) -> std::optional<Doc> {
      if (!item.run_event) return std::nullopt;  // a snapshot standing for pruned events
      const protocol::RunEvent& e = *item.run_event;
      for (const auto& mode : modes) {
        const bool admits = mode == "debug" || (mode == "updates" && InUpdates(e.type)) ||
                            (mode == "messages" && e.type.starts_with("ai.message."));
        if (admits)
          return Doc{modes.size() == 1 ? e.type : mode,
                     protocol::SerializeJson(protocol::RunEventToJson(e)), e.sequence};
      }
      return std::nullopt;
    };
  }
  spec.frame = [doc](const tasks::StreamItem& item) {
    std::string out;
    auto d = doc(item);
    if (!d) return out;
    out.append("id: ").append(std::to_string(d->id)).append("\nevent: ").append(d->event);
    out.append("\ndata: ").append(d->data).append("\n\n");
    return out;
  };
  spec.batch_item = [doc](const tasks::StreamItem& item) {
    auto d = doc(item);
    return d ? std::move(d->data) : std::string();
  };
  co_return SseResponse(std::move(stream), std::move(spec));
}

asio::awaitable<HttpResponse> OpenwopApi::Poll(const CallContext& ctx, const std::string& id,
                                               const HttpRequest& r) {
  auto q = QueryParams(r.target);
  int64_t after = -1;
  int64_t timeout_s = 30;
  // -1 (like 0) asks for the log from its start: "nothing seen yet" (accepted since 1c072fb).
  if (q.count("lastSequence") && !q["lastSequence"].empty() && q["lastSequence"] != "-1") {
    auto cursor = protocol::ParseEventCursor(q["lastSequence"], "lastSequence");
    if (!cursor)
      co_return ErrorResponse(400, "validation_error", "lastSequence and timeout are integers");
    after = cursor.value();
  }
  if (q.count("timeout") && !q["timeout"].empty()) {
    const std::optional<int64_t> timeout = QueryInt(q["timeout"]);
    if (!timeout)
      co_return ErrorResponse(400, "validation_error", "lastSequence and timeout are integers");
    timeout_s = *timeout;
  }
  if (timeout_s < 0 || timeout_s > 60)
    co_return ErrorResponse(400, "validation_error", "timeout: expected 0..60 seconds");
  if (after == 0) after = -1;  // lastSequence=0 means "from the start" (DIGEST §2.4)
  auto terminal = [](const storage::TaskRecord& rec) { return tasks::IsTerminalRun(rec.run); };
  auto rec = co_await service_.GetRecord(ctx, id);
  if (!rec) co_return ErrorResponse(rec.error());
  if (!rec.value() || rec.value()->run.empty())
    co_return ErrorResponse(404, "not_found", "no run '" + id + "'");
  if (rec.value()->last_sequence <= after && !terminal(*rec.value()) && timeout_s > 0)
    (void)co_await service_.WaitForRecord(
        ctx, id,
        [after, terminal](const storage::TaskRecord& x) {
          return x.last_sequence > after || terminal(x);
        },
        std::chrono::seconds(timeout_s));
  auto events = co_await service_.ReadEvents(ctx, id, after, 1000);
  if (!events) co_return ErrorResponse(events.error());
  auto now = co_await service_.GetRecord(ctx, id);
  json::array list;
  for (const auto& e : *events) list.push_back(protocol::RunEventToJson(e));
  const bool complete = now && now.value() && terminal(*now.value()) &&
                        (events->empty() || events->back().sequence == now.value()->last_sequence);
  co_return Json(200, json::object{{"events", std::move(list)}, {"isComplete", complete}});
}

asio::awaitable<HttpResponse> OpenwopApi::ResolveAtNode(const CallContext& ctx,
                                                        const std::string& run_id,
                                                        const std::string& node_id,
                                                        const HttpRequest& r) {
  HttpResponse err;
  auto body = ParseBody(r, err);
  if (!body) co_return err;
  const json::object& b = body->get_object();
  for (const auto& kv : b)
    if (kv.key() != "resumeValue")
      co_return ErrorResponse(
          400, "validation_error",
          "unknown field '" + std::string(kv.key()) + "'; send {\"resumeValue\": ...}");
  if (!b.contains("resumeValue"))
    co_return ErrorResponse(400, "validation_error", "resumeValue: required");
  tasks::ResolveRequest req;
  req.node_id = node_id;
  req.resume_value = b.at("resumeValue");
  req.via = "rest";  // the caller (resolvedBy) is the context's principal
  auto done = co_await service_.ResolveInterrupt(ctx, run_id, std::move(req));
  if (!done) {
    if (done.error().code == ErrorCode::kTaskNotFound && done.error().details.empty())
      co_return ErrorResponse(404, "not_found", "no run '" + run_id + "'");
    co_return ErrorResponse(done.error());
  }
  json::object answer = RunStatusAnswer(run_id, done.value()->run);
  answer["nodeId"] = node_id;
  // A quorum still open (this vote counted, or counted before): the tally so far.
  if (const auto& open = done.value()->run.interrupt)
    if (auto* quorum = open->if_contains("quorum")) answer["quorum"] = *quorum;
  co_return Json(200, answer);
}

asio::awaitable<HttpResponse> OpenwopApi::Token(const CallContext& ctx, const std::string& token,
                                                const HttpRequest& r) {
  if (r.method != "GET" && r.method != "POST") {
    co_return MethodNotAllowed("GET, POST", "use GET or POST");
  }
  auto claims =
      verifier_ ? verifier_(token)
                : core::Result<InterruptTokenInfo>(Error(ErrorCode::kInvalidParams, "no tokens"));
  if (!claims) co_return ErrorResponse(401, "unauthenticated", "not a valid interrupt token");
  if (claims->expires_at_ms <= clock_.NowMs())
    co_return ErrorResponse(410, "interrupt_expired", "this interrupt token has expired");
  auto rec = co_await service_.GetRecord(ctx, claims->run_id);
  if (!rec) co_return ErrorResponse(rec.error());
  if (!rec.value()) co_return ErrorResponse(404, "interrupt_not_found", "the run no longer exists");
  const protocol::RunSnapshot& run = rec.value()->run;
  const bool matches = run.interrupt && Str(*run.interrupt, "interruptId") == claims->interrupt_id;
  if (!matches) {
    if (run.status == "cancelled")
      co_return ErrorResponse(410, "interrupt_gone", "the run was cancelled");
    co_return ErrorResponse(409, "interrupt_already_resolved",
                            "this interrupt was already resolved");
  }
  if (r.method == "GET") {
    const json::object& i = *run.interrupt;
    json::object payload{{"kind", i.at("kind")},      {"key", i.at("key")},
                         {"data", i.at("data")},      {"runId", claims->run_id},
                         {"nodeId", claims->node_id}, {"interruptId", claims->interrupt_id}};
    co_return Json(200, payload);
  }
  if (claims->intent != "resolve")
    co_return ErrorResponse(403, "forbidden", "this token only allows inspecting the interrupt");
  HttpResponse err;
  auto body = ParseBody(r, err);
  if (!body) co_return err;
  const json::object& b = body->get_object();
  tasks::ResolveRequest req;
  req.node_id = claims->node_id;
  // {resumeValue} per the spec; a flat body is taken as the value (the suite sends one).
  req.resume_value =
      b.contains("resumeValue") && b.size() == 1 ? b.at("resumeValue") : json::value(b);
  req.via = "token";
  // The token is the credential: its holder answers as "token:<interruptId>".
  CallContext holder = ctx;
  holder.principal.id = "token:" + claims->interrupt_id;
  auto done = co_await service_.ResolveInterrupt(holder, claims->run_id, std::move(req));
  if (!done) co_return ErrorResponse(done.error());
  co_return Json(200, json::object());
}

asio::awaitable<HttpResponse> OpenwopApi::TaskState(const CallContext& ctx, const std::string& id) {
  auto rec = co_await service_.GetRecord(ctx, id);
  if (!rec) co_return ErrorResponse(rec.error());
  if (!rec.value()) co_return ErrorResponse(404, "not_found", "no task '" + id + "'");
  json::object state = protocol::A2ATaskStateOf(rec.value()->task, rec.value()->run);
  // The push config lives with the push store (with its raw token, which never leaves it);
  // the state carries the URL and the token's fingerprint only.
  if (options_.push_config_of)
    if (auto pc = options_.push_config_of(id)) state["pushConfig"] = std::move(*pc);
  co_return Json(200, state);
}

}  // namespace a2ad::transport
