#include "a2ad/storage/memory/memory_task_store.hpp"

#include <algorithm>
#include <iterator>

#include "a2ad/storage/commit_check.hpp"
#include "a2ad/storage/page_cursor.hpp"

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
  const std::string& id = commit.record.task.id;
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto it = tasks_.find(id);
  if (it == tasks_.end()) {
    if (commit.expected_last_sequence != -1) {
      return core::Error(core::ErrorCode::kConflict,
                         "task " + id + " does not exist (expected last sequence " +
                             std::to_string(commit.expected_last_sequence) + ")");
    }
    if (!commit.record.dedup_key.empty()) {
      auto [d, fresh] = dedup_.emplace(commit.record.dedup_key, id);
      if (!fresh)
        return core::Error(core::ErrorCode::kConflict,
                           "dedup key already used by task " + d->second);
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
  Entry& entry = it->second;
  entry.record = std::move(commit.record);
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

core::Result<std::optional<TaskRecord>> MemoryTaskStore::FindByDedupKey(std::string_view key) {
  std::lock_guard lock(mu_);
  if (closed_) return Closed();
  auto d = dedup_.find(key);
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
    if (!query.context_id.empty() && r.task.context_id != query.context_id) continue;
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

}  // namespace a2ad::storage
