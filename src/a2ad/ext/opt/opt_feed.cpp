#include "a2ad/ext/opt/opt_feed.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "a2ad/core/log.hpp"
#include "a2ad/ext/opt/opt_json.hpp"
#include "a2ad/protocol/json_text.hpp"

namespace a2ad::ext::opt {
namespace asio = boost::asio;
namespace json = boost::json;
using core::Error;
using core::ErrorCode;
using core::Result;

namespace {

constexpr size_t kReadBatch = 500;  // events read at a time

tasks::StreamItemPtr ItemOf(OptEvent e) {
  auto item = std::make_shared<tasks::StreamItem>();
  item->sequence = e.sequence;
  item->raw_json = std::move(e.json);
  item->terminal = e.last;
  return item;
}

// The first item of a stream without a cursor: the whole objective, at its last sequence.
tasks::StreamItemPtr SnapshotItem(const Objective& o, int64_t last_sequence) {
  json::object e;
  e["objectiveId"] = o.id;
  e["sequence"] = last_sequence;
  e["kind"] = "snapshot";
  e["objective"] = ToJson(o, true, true);
  const bool settled = Settled(o);
  if (settled) e["final"] = true;
  auto item = std::make_shared<tasks::StreamItem>();
  item->sequence = last_sequence;
  protocol::JsonTextWriter(item->raw_json).Object(e);
  item->terminal = settled;
  return item;
}

}  // namespace

OptFeed::OptFeed(OptStore& store) : store_(store) {}

OptFeed::~OptFeed() { thread_.join(); }

void OptFeed::Poke(const std::string& objective_id) {
  {
    std::lock_guard lock(watchers_->mu);
    if (!watchers_->by_objective.contains(objective_id)) return;  // nobody follows it
  }
  asio::post(thread_, [this, objective_id] { Feed(objective_id); });
}

void OptFeed::Feed(const std::string& objective_id) {
  std::vector<std::shared_ptr<Watcher>> watchers;
  {
    std::lock_guard lock(watchers_->mu);
    auto it = watchers_->by_objective.find(objective_id);
    if (it == watchers_->by_objective.end()) return;
    watchers = it->second;
  }
  for (const auto& w : watchers) {
    auto sub = w->subscription.lock();
    if (!sub || sub->closed()) continue;  // its stream ends (and removes it)
    for (;;) {
      auto events = store_.ReadEvents(objective_id, w->delivered, kReadBatch);
      if (!events) {
        core::LogError("opt: objective stream: " + events.error().message);
        sub->Close();  // the client resumes from its cursor
        break;
      }
      for (auto& e : events.value()) {
        w->delivered = e.sequence;
        sub->Push(ItemOf(std::move(e)));
      }
      if (events->size() < kReadBatch) break;
    }
  }
}

Result<tasks::StreamStart> OptFeed::Open(const std::string& tenant, const std::string& id,
                                         std::optional<int64_t> after, size_t capacity,
                                         const std::string& cursor_field) {
  // Watch first: a commit from now on pokes a Feed, which runs on this thread after this.
  auto sub = std::make_shared<tasks::Subscription>(capacity);
  auto watcher = std::make_shared<Watcher>();
  watcher->subscription = sub;
  {
    std::lock_guard lock(watchers_->mu);
    watchers_->by_objective[id].push_back(watcher);
  }
  std::weak_ptr<Watchers> all = watchers_;
  std::shared_ptr<void> detach(nullptr, [all, id, watcher](void*) {
    auto w = all.lock();
    if (!w) return;
    std::lock_guard lock(w->mu);
    auto it = w->by_objective.find(id);
    if (it == w->by_objective.end()) return;
    std::erase(it->second, watcher);
    if (it->second.empty()) w->by_objective.erase(it);
  });
  auto snap = store_.Snapshot(tenant, id);
  if (!snap) return std::move(snap).error();
  const auto& [objective, last] = snap.value();
  tasks::StreamStart start;
  if (after) {
    if (*after < -1 || *after > last)
      return Error(ErrorCode::kInvalidParams,
                   cursor_field + ": " + std::to_string(*after) + " is not an event of objective '" +
                       id + "' (its events are 0.." + std::to_string(last) + ")",
                   {{"field", cursor_field}});
    for (int64_t from = *after; from < last;) {
      auto events = store_.ReadEvents(id, from, kReadBatch);
      if (!events) return std::move(events).error();
      if (events->empty()) break;
      for (auto& e : events.value()) {
        if (e.sequence > last) break;  // logged after the snapshot: fed live instead
        from = e.sequence;
        start.backlog.push_back(ItemOf(std::move(e)));
      }
      if (events->size() < kReadBatch) break;
    }
  } else {
    start.backlog.push_back(SnapshotItem(objective, last));
  }
  watcher->delivered = last;
  start.last_sequence = last;
  start.task_terminal = Settled(objective);
  if (start.task_terminal) return start;  // nothing follows (detach drops the watcher)
  start.subscription = std::move(sub);
  start.detach = std::move(detach);
  return start;
}

asio::awaitable<Result<tasks::StreamStart>> OptFeed::Subscribe(std::string tenant, std::string id,
                                                               std::optional<int64_t> after,
                                                               size_t capacity,
                                                               std::string cursor_field) {
  using Sig = void(Result<tasks::StreamStart>);
  return asio::async_initiate<const asio::use_awaitable_t<>&, Sig>(
      [this, tenant = std::move(tenant), id = std::move(id), after, capacity,
       field = std::move(cursor_field)](auto handler) {
        auto ex = asio::get_associated_executor(handler);
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        asio::post(thread_, [this, h, ex, tenant, id, after, capacity, field] {
          auto opened =
              std::make_shared<Result<tasks::StreamStart>>(Open(tenant, id, after, capacity, field));
          asio::post(ex, [h, opened]() mutable { std::move (*h)(std::move(*opened)); });
        });
      },
      asio::use_awaitable);
}

}  // namespace a2ad::ext::opt
