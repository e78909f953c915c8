// GET /v1/inbox: the tasks of the caller's tenant that wait on a person and that the caller
// may answer (an approver's queue; issue 35), newest first; GET /v1/me: who the caller is
// (principal, tenant, scopes), for a console or a CLI to show only what the caller can do.
#include <algorithm>
#include <boost/json.hpp>

#include "a2ad/core/clock.hpp"
#include "a2ad/protocol/json_text.hpp"
#include "a2ad/protocol/json_util.hpp"
#include "a2ad/transport/auth.hpp"
#include "a2ad/transport/openwop_api.hpp"

namespace a2ad::transport {
namespace asio = boost::asio;
namespace json = boost::json;
using protocol::ObjOr;
using protocol::Str;

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

}  // namespace

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
        if (rec.run.contains("waitingOn") || !service_.MayAnswer(ctx, rec)) continue;
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
