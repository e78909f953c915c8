#include "a2ad/storage/memory/memory_task_store.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "a2ad/storage/commit_check.hpp"
#include "a2ad/storage/page_cursor.hpp"
#include "a2ad/storage/stored_records.hpp"

namespace a2ad::storage {
namespace {

core::Error Closed() { return core::Error(core::ErrorCode::kUnavailable, "task store is closed"); }

}  // namespace

void MemoryTaskStore::Commit(TaskCommit commit, CommitCallback done) {
  core::Result<void> result = Apply(commit);
  if (done) done(std::move(result));
}

core::Result<void> MemoryTaskStore::Apply(TaskCommit& commit) {
  if (auto checked = CheckCommitPreconditions(commit); !checked) return checked;
  const std::string& id = commit.Record().task.id;
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto it = tasks_.find(id);
  if (it == tasks_.end()) {
    if (commit.expected_last_sequence != -1) {
      return core::Error(core::ErrorCode::kConflict,
                         "task " + id + " does not exist (expected last sequence " +
                             std::to_string(commit.expected_last_sequence) + ")");
    }
    if (!commit.Record().dedup_key.empty()) {
      auto [d, fresh] =
          dedup_.emplace(std::make_pair(commit.Record().tenant, commit.Record().dedup_key), id);
      if (!fresh) {
        auto holder = tasks_.find(d->second);
        const bool expired = commit.dedup_takeover_before_ms > 0 && holder != tasks_.end() &&
                             holder->second.record.created_at_ms < commit.dedup_takeover_before_ms;
        if (!expired)
          return core::Error(core::ErrorCode::kConflict,
                             "dedup key already used by task " + d->second);
        holder->second.record.dedup_key.clear();  // the retention window ended: taken over
        d->second = id;
      }
    }
    it = tasks_.emplace(id, Entry{}).first;
  } else if (commit.expected_last_sequence == -1) {
    return core::Error(core::ErrorCode::kConflict, "task " + id + " already exists");
  } else if (it->second.record.last_sequence != commit.expected_last_sequence) {
    return core::Error(core::ErrorCode::kConflict,
                       "task " + id + ": stored last sequence is " +
                           std::to_string(it->second.record.last_sequence) + ", expected " +
                           std::to_string(commit.expected_last_sequence));
  }
  for (const OutboxRow& row : commit.outbox)
    for (const OutboxRow& have : outbox_)
      if (have.id == row.id) return core::Error(core::ErrorCode::kConflict, "outbox row " + row.id);
  for (PushConfigRecord& c : commit.push_configs) configs_[{id, c.config.id}] = std::move(c);
  for (OutboxRow& row : commit.outbox) outbox_.push_back(std::move(row));
  Entry& entry = it->second;
  if (commit.releases_dedup_key && !entry.record.dedup_key.empty())
    dedup_.erase(std::make_pair(entry.record.tenant, entry.record.dedup_key));
  const bool created = entry.record.task.id.empty();
  std::string tenant = std::move(entry.record.tenant), owner = std::move(entry.record.owner);
  if (commit.shared_record)
    entry.record = *commit.shared_record;
  else
    entry.record = std::move(commit.record);
  if (!created) {  // a task keeps the tenant and owner it was created with
    entry.record.tenant = std::move(tenant);
    entry.record.owner = std::move(owner);
  }
  std::move(commit.events.begin(), commit.events.end(), std::back_inserter(entry.events));
  return core::Ok{};
}

core::Result<std::optional<TaskRecord>> MemoryTaskStore::Get(std::string_view task_id) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return std::optional<TaskRecord>();
  return std::optional<TaskRecord>(it->second.record);
}

core::Result<std::optional<TaskRecord>> MemoryTaskStore::FindByDedupKey(std::string_view tenant,
                                                                        std::string_view key) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto d = dedup_.find(std::make_pair(std::string(tenant), std::string(key)));
  if (d == dedup_.end()) return std::optional<TaskRecord>();
  auto it = tasks_.find(d->second);
  if (it == tasks_.end()) return std::optional<TaskRecord>();
  return std::optional<TaskRecord>(it->second.record);
}

core::Result<TaskPage> MemoryTaskStore::List(const TaskQuery& query) {
  auto started = StartPage(query);
  if (!started) return std::move(started).error();
  std::optional<PageCursor> cursor = std::move(started).value();

  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<const TaskRecord*> matches;
  for (const auto& [id, entry] : tasks_) {
    const TaskRecord& r = entry.record;
    if (!query.all_tenants && r.tenant != query.tenant) continue;
    if (!query.owner.empty() && r.owner != query.owner) continue;
    if (!query.context_id.empty() && r.task.context_id != query.context_id) continue;
    if (!query.skill_id.empty() && r.skill_id != query.skill_id) continue;
    if (query.state && r.task.status.state != *query.state) continue;
    if (query.updated_at_or_after_ms && r.updated_at_ms < *query.updated_at_or_after_ms) continue;
    matches.push_back(&r);
  }
  std::sort(matches.begin(), matches.end(), [](const TaskRecord* a, const TaskRecord* b) {
    if (a->updated_at_ms != b->updated_at_ms) return a->updated_at_ms > b->updated_at_ms;
    return a->task.id > b->task.id;
  });

  TaskPage page;
  page.total_size = static_cast<int32_t>(matches.size());
  auto first = matches.begin();
  if (cursor) {
    first = std::find_if(matches.begin(), matches.end(), [&](const TaskRecord* r) {
      return IsAfterCursor(*cursor, r->updated_at_ms, r->task.id);
    });
  }
  const auto remaining = static_cast<size_t>(std::distance(first, matches.end()));
  const size_t take = std::min(remaining, static_cast<size_t>(query.page_size));
  for (size_t i = 0; i < take; ++i) page.records.push_back(*first[static_cast<ptrdiff_t>(i)]);
  if (remaining > take) {
    const TaskRecord& last = page.records.back();
    page.next_page_token = EncodePageToken({last.updated_at_ms, last.task.id});
  }
  return page;
}

core::Result<std::vector<protocol::RunEvent>> MemoryTaskStore::ReadEvents(std::string_view task_id,
                                                                          int64_t after_sequence,
                                                                          size_t limit) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<protocol::RunEvent> out;
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return out;
  const Entry& entry = it->second;
  const int64_t end = entry.first_sequence + static_cast<int64_t>(entry.events.size());
  if (after_sequence >= end - 1) return out;  // also keeps after_sequence + 1 from overflowing
  const int64_t first = std::max(after_sequence + 1, entry.first_sequence);
  const size_t begin = static_cast<size_t>(first - entry.first_sequence);
  for (size_t i = begin; i < entry.events.size() && out.size() < limit; ++i) {
    out.push_back(entry.events[i]);
  }
  return out;
}

core::Result<std::optional<std::vector<std::string>>> MemoryTaskStore::UnfinishedRunsWaitingFor(
    std::string_view tenant, std::string_view name) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<std::string> ids;
  for (const auto& [id, entry] : tasks_) {
    const TaskRecord& r = entry.record;
    if (r.tenant == tenant && !protocol::IsTerminal(r.task.status.state) &&
        EventAwaited(r.run) == name)
      ids.push_back(id);
  }
  return std::optional<std::vector<std::string>>(std::move(ids));
}

core::Result<TaskPage> MemoryTaskStore::ListRunnable(std::string_view after_id, size_t limit) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  TaskPage page;
  for (auto it = tasks_.upper_bound(after_id); it != tasks_.end(); ++it) {
    const TaskRecord& r = it->second.record;
    if (protocol::IsTerminal(r.task.status.state) || ParkedUntil(r.run)) continue;
    if (page.records.size() == limit) {
      page.next_page_token = page.records.back().task.id;
      break;
    }
    page.records.push_back(r);
  }
  return page;
}

core::Result<std::vector<Wake>> MemoryTaskStore::ListWakes(int64_t after_ms,
                                                           std::string_view after_id,
                                                           size_t limit, std::string_view) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<Wake> wakes;
  for (const auto& [id, entry] : tasks_) {
    const TaskRecord& r = entry.record;
    if (protocol::IsTerminal(r.task.status.state)) continue;
    const int64_t at = ParkedUntil(r.run).value_or(0);
    const bool after = at > after_ms || (at == after_ms && std::string_view(id) > after_id);
    if (at > 0 && after) wakes.push_back({id, at});
  }
  std::sort(wakes.begin(), wakes.end(), [](const Wake& a, const Wake& b) {
    return std::tie(a.at_ms, a.task_id) < std::tie(b.at_ms, b.task_id);
  });
  if (wakes.size() > limit) wakes.resize(limit);
  return wakes;
}

core::Result<size_t> MemoryTaskStore::PruneEvents(int64_t terminal_before_ms) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  size_t deleted = 0;
  for (auto& [id, entry] : tasks_) {
    const TaskRecord& r = entry.record;
    if (!protocol::IsTerminal(r.task.status.state) || r.updated_at_ms >= terminal_before_ms) {
      continue;
    }
    deleted += entry.events.size();
    entry.events.clear();
    entry.first_sequence = r.last_sequence + 1;
  }
  return deleted;
}

void MemoryTaskStore::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
}

// ---- PushStore ----------------------------------------------------------------------

core::Result<void> MemoryTaskStore::PutConfig(const PushConfigRecord& record) {
  if (record.config.id.empty() || record.task_id.empty())
    return core::Error(core::ErrorCode::kInvalidParams, "push config: task id and id required");
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  if (!tasks_.count(record.task_id))
    return core::Error(core::ErrorCode::kTaskNotFound, "task " + record.task_id + " not found",
                       {{"taskId", record.task_id}});
  auto& slot = configs_[{record.task_id, record.config.id}];
  const int64_t created = slot.config.id.empty() ? record.created_at_ms : slot.created_at_ms;
  slot = record;
  slot.created_at_ms = created;  // an upsert keeps the first creation time
  return core::Ok{};
}

core::Result<std::optional<PushConfigRecord>> MemoryTaskStore::GetConfig(
    std::string_view task_id, std::string_view config_id) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto it = configs_.find({std::string(task_id), std::string(config_id)});
  if (it == configs_.end()) return std::optional<PushConfigRecord>();
  return std::optional<PushConfigRecord>(it->second);
}

core::Result<std::vector<PushConfigRecord>> MemoryTaskStore::ListConfigs(std::string_view task_id) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<PushConfigRecord> out;
  for (const auto& [key, rec] : configs_)
    if (key.first == task_id) out.push_back(rec);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.created_at_ms != b.created_at_ms ? a.created_at_ms < b.created_at_ms
                                              : a.config.id < b.config.id;
  });
  return out;
}

core::Result<bool> MemoryTaskStore::DeleteConfig(std::string_view task_id,
                                                 std::string_view config_id) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  return configs_.erase({std::string(task_id), std::string(config_id)}) > 0;
}

core::Result<std::vector<PushConfigRecord>> MemoryTaskStore::AllConfigs() {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<PushConfigRecord> out;
  for (const auto& [key, rec] : configs_) {
    auto task = tasks_.find(key.first);
    if (task != tasks_.end() && !protocol::IsTerminal(task->second.record.task.status.state))
      out.push_back(rec);
  }
  return out;
}

core::Result<void> MemoryTaskStore::Enqueue(const std::vector<OutboxRow>& rows) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  for (const auto& row : rows)
    for (const auto& have : outbox_)
      if (have.id == row.id) return core::Error(core::ErrorCode::kConflict, "outbox row " + row.id);
  outbox_.insert(outbox_.end(), rows.begin(), rows.end());
  return core::Ok{};
}

core::Result<std::vector<OutboxRow>> MemoryTaskStore::DueOutbox(int64_t now_ms, size_t limit) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<OutboxRow> out;
  for (const auto& row : outbox_)
    if (row.state == OutboxState::kPending && row.next_attempt_at_ms <= now_ms) out.push_back(row);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.next_attempt_at_ms != b.next_attempt_at_ms
               ? a.next_attempt_at_ms < b.next_attempt_at_ms
               : a.id < b.id;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

core::Result<std::optional<int64_t>> MemoryTaskStore::NextDueAt() {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::optional<int64_t> next;
  for (const auto& row : outbox_)
    if (row.state == OutboxState::kPending && (!next || row.next_attempt_at_ms < *next))
      next = row.next_attempt_at_ms;
  return next;
}

core::Result<void> MemoryTaskStore::UpdateOutbox(const OutboxRow& row) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  for (auto& have : outbox_) {
    if (have.id != row.id) continue;
    have.attempts = row.attempts;
    have.state = row.state;
    have.next_attempt_at_ms = row.next_attempt_at_ms;
    have.last_error = row.last_error;
    have.finished_at_ms = row.finished_at_ms;
    return core::Ok{};
  }
  return core::Error(core::ErrorCode::kInvalidParams, "outbox row " + row.id + " not found");
}

core::Result<void> MemoryTaskStore::UpdateOutboxBatch(const std::vector<OutboxRow>& rows) {
  for (const auto& row : rows) {
    auto r = UpdateOutbox(row);
    if (!r && r.error().code != core::ErrorCode::kInvalidParams) return r;
  }
  return core::Ok{};
}

core::Result<std::vector<OutboxRow>> MemoryTaskStore::ListOutbox(std::string_view task_id) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<OutboxRow> out;
  for (const auto& row : outbox_)
    if (row.task_id == task_id) out.push_back(row);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.created_at_ms != b.created_at_ms ? a.created_at_ms < b.created_at_ms : a.id < b.id;
  });
  return out;
}

core::Result<std::vector<OutboxRow>> MemoryTaskStore::ListDead(size_t limit) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<OutboxRow> out;
  for (const auto& row : outbox_)
    if (row.state == OutboxState::kDead) out.push_back(row);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.finished_at_ms != b.finished_at_ms ? a.finished_at_ms > b.finished_at_ms : a.id < b.id;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

core::Result<void> MemoryTaskStore::PutWebhook(const WebhookRecord& record) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  if (!webhooks_.emplace(record.id, record).second)
    return core::Error(core::ErrorCode::kConflict, "webhook " + record.id + " exists");
  return core::Ok{};
}

core::Result<std::optional<WebhookRecord>> MemoryTaskStore::GetWebhook(std::string_view id) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto it = webhooks_.find(id);
  if (it == webhooks_.end()) return std::optional<WebhookRecord>();
  return std::optional<WebhookRecord>(it->second);
}

core::Result<bool> MemoryTaskStore::DeleteWebhook(std::string_view id) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto it = webhooks_.find(id);
  if (it == webhooks_.end()) return false;
  webhooks_.erase(it);
  return true;
}

core::Result<std::vector<WebhookRecord>> MemoryTaskStore::AllWebhooks() {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  std::vector<WebhookRecord> out;
  for (const auto& [id, w] : webhooks_) out.push_back(w);
  return out;
}

}  // namespace a2ad::storage
