// The listing reads of the REST surface. GET /v1/runs: the caller's runs, newest change
// first, filtered in the store (workflow, A2A state, context, changed since) and counted;
// GET /v1/inbox: the tasks of the caller's tenant that wait on a person and that the caller
// may answer (an approver's queue; issue 35), newest first; GET /v1/me: who the caller is
// (principal, tenant, scopes), for a console or a CLI to show only what the caller can do.
#include <algorithm>
#include <boost/json.hpp>
#include <charconv>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/transport/auth/auth.hpp"
#include "a2ad/transport/openwop/openwop_api.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using protocol::ObjOr;

namespace {

// The status message's text: the question the task asks.
std::string QuestionOf(const protocol::Task& t) {
  std::string text;
  if (t.status.message)
    for (const auto& p : t.status.message->parts)
      if (p.kind == protocol::Part::Kind::kText) text += (text.empty() ? "" : "\n") + p.text;
  return text;
}

json::object Item(const storage::TaskRecord& rec, bool with_token) {
  const protocol::Task& t = rec.task;
  const json::object& openwop = ObjOr(t.metadata, "openwop");
  json::object interrupt = ObjOr(openwop, "interrupt");
  json::object item{{"taskId", t.id},
                    {"contextId", t.context_id},
                    {"skill", rec.skill_id},
                    {"state", t.status.state == protocol::TaskState::kAuthRequired
                                  ? "auth-required"
                                  : "input-required"},
                    {"waitingSince", core::FormatTimestamp(t.status.timestamp_ms)},
                    {"createdAt", core::FormatTimestamp(rec.created_at_ms)},
                    {"question", QuestionOf(t)},
                    {"interrupt", std::move(interrupt)}};
  if (with_token)
    if (const json::value* token = openwop.if_contains("interruptToken"))
      item["interruptToken"] = *token;
  return item;
}

// A run status of OpenWOP's RunSnapshot (and a2ad's paused).
bool KnownRunStatus(std::string_view s) {
  for (const char* k : {"pending", "running", "paused", "waiting-approval", "waiting-input",
                        "waiting-external", "completed", "failed", "cancelled"})
    if (s == k) return true;
  return false;
}

// An A2A task state by its v0.3 name ("input-required"), the `state` filter.
std::optional<protocol::TaskState> TaskStateNamed(std::string_view s) {
  using S = protocol::TaskState;
  for (const auto& [name, state] :
       {std::pair{"submitted", S::kSubmitted}, {"working", S::kWorking},
        {"input-required", S::kInputRequired}, {"auth-required", S::kAuthRequired},
        {"completed", S::kCompleted}, {"failed", S::kFailed}, {"canceled", S::kCanceled},
        {"rejected", S::kRejected}})
    if (s == name) return state;
  return std::nullopt;
}

// The store query of GET /v1/runs's parameters, or the refusal of the first bad one.
core::Result<storage::TaskQuery> RunsQuery(std::map<std::string, std::string>& q) {
  auto bad = [](std::string message) {
    return core::Error(core::ErrorCode::kInvalidParams, std::move(message));
  };
  storage::TaskQuery tq;
  if (q.count("pageSize")) {
    int64_t size = 0;
    const std::string& text = q["pageSize"];
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), size);
    if (ec != std::errc() || end != text.data() + text.size() || size < 1 || size > 100)
      return bad("pageSize: expected 1..100");
    tq.page_size = static_cast<int>(size);
  }
  tq.page_token = q["pageToken"];
  tq.skill_id = q["workflowId"];
  tq.context_id = q["contextId"];
  if (const std::string& st = q["status"]; !st.empty() && !KnownRunStatus(st))
    return bad("status: '" + st +
               "' is not a run status (pending, running, paused, waiting-approval, "
               "waiting-input, waiting-external, completed, failed, cancelled)");
  if (const std::string& st = q["state"]; !st.empty()) {
    tq.state = TaskStateNamed(st);
    if (!tq.state)
      return bad("state: '" + st +
                 "' is not a task state (submitted, working, input-required, auth-required, "
                 "completed, failed, canceled, rejected)");
  }
  if (const std::string& since = q["updatedSince"]; !since.empty()) {
    int64_t ms = 0;
    if (!core::ParseTimestamp(since, ms))
      return bad("updatedSince: expected an RFC 3339 timestamp (2026-11-28T10:00:00Z)");
    tq.updated_at_or_after_ms = ms;
  }
  return tq;
}

// GET /v1/runs's answer (outside the coroutine: GCC 12 and braced json initializers).
HttpResponse RunsAnswer(const storage::TaskPage& page, const std::string& status) {
  json::array runs;
  for (const auto& rec : page.records) {
    if (rec.run.empty()) continue;
    if (!status.empty() && rec.run.status != status) continue;
    json::object run = PublicRunSnapshot(rec);
    run["updatedAt"] = core::FormatTimestamp(rec.updated_at_ms);
    runs.push_back(std::move(run));
  }
  json::object out{{"runs", std::move(runs)}, {"totalSize", page.total_size}};
  if (!page.next_page_token.empty()) out["nextPageToken"] = page.next_page_token;
  if (!page.unreadable.empty())  // left out, and said so (the store logged them; a2ad doctor)
    out["skippedUnreadable"] = page.unreadable.size();
  HttpResponse resp = JsonResponse(200, protocol::SerializeJson(out));
  if (!page.unreadable.empty())
    resp.headers.emplace_back(kSkippedUnreadableHeader, std::to_string(page.unreadable.size()));
  return resp;
}

}  // namespace

asio::awaitable<HttpResponse> OpenwopApi::ListRuns(const CallContext& ctx, const HttpRequest& r) {
  auto q = QueryParams(r.target);
  auto tq = RunsQuery(q);
  if (!tq) co_return ErrorResponse(400, "validation_error", tq.error().message);
  auto page = co_await service_.ListRecords(ctx, tq.value());
  if (!page) co_return ErrorResponse(page.error());
  co_return RunsAnswer(page.value(), q["status"]);
}

asio::awaitable<HttpResponse> OpenwopApi::Inbox(const CallContext& ctx, const HttpRequest& r) {
  int64_t limit = 50;
  if (std::string text = r.Query("limit"); !text.empty()) {
    if (text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(text) < 1 || std::stoll(text) > 100)
      co_return ErrorResponse(400, "validation_error", "limit: expected an integer 1..100");
    limit = std::stoll(text);
  }
  std::vector<storage::TaskRecord> waiting;
  for (const auto state : {protocol::TaskState::kInputRequired, protocol::TaskState::kAuthRequired}) {
    storage::TaskQuery q;
    q.state = state;
    q.page_size = 100;
    // Pages until `limit` answerable tasks of this state are found (or none is left).
    size_t found = 0;
    for (int pages = 0; pages < 100; ++pages) {
      auto page = co_await service_.ListRecords(ctx, q);
      if (!page) co_return ErrorResponse(page.error());
      for (auto& rec : page->records) {
        // A run that waits on its child run is answered there: the child is listed.
        if (rec.run.waiting_on || !service_.MayAnswer(ctx, rec)) continue;
        waiting.push_back(std::move(rec));
        ++found;
      }
      if (page->next_page_token.empty() || found >= static_cast<size_t>(limit)) break;
      q.page_token = page->next_page_token;
    }
  }
  std::sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) {
    return a.updated_at_ms != b.updated_at_ms ? a.updated_at_ms > b.updated_at_ms
                                              : a.task.id > b.task.id;
  });
  if (waiting.size() > static_cast<size_t>(limit)) waiting.resize(static_cast<size_t>(limit));
  const bool tokens = ctx.principal.all_scopes ||
                      std::find(ctx.principal.scopes.begin(), ctx.principal.scopes.end(),
                                kScopeInterruptsResolve) != ctx.principal.scopes.end();
  json::array items;
  for (const auto& rec : waiting) items.push_back(Item(rec, tokens));
  co_return JsonResponse(200, protocol::SerializeJson(json::object{{"items", std::move(items)}}));
}

HttpResponse OpenwopApi::Me(const CallContext& ctx) {
  json::array scopes;
  for (const auto& s : ctx.principal.scopes) scopes.emplace_back(s);
  if (ctx.principal.all_scopes && std::find(ctx.principal.scopes.begin(), ctx.principal.scopes.end(),
                                            kScopeAdmin) == ctx.principal.scopes.end())
    scopes.emplace_back(kScopeAdmin);
  json::object me{{"principal", ctx.caller()},
                  {"tenant", ctx.tenant()},
                  {"authenticated", ctx.principal.authenticated},
                  {"scopes", std::move(scopes)},
                  {"allScopes", ctx.principal.all_scopes}};
  return JsonResponse(200, protocol::SerializeJson(me));
}

}  // namespace a2ad::transport
