#include "a2ad/storage/sqlite/sqlite_reader_pool.hpp"

#include "a2ad/storage/sqlite/sqlite_task_store_impl.hpp"

namespace a2ad::storage::sqlite {

core::Result<ReaderPool::Lease> ReaderPool::Acquire() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return closed_ || !idle_.empty() || open_ < max_; });
  if (closed_) return Closed();
  if (!idle_.empty()) {
    std::unique_ptr<Connection> connection = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(connection));
  }
  ++open_;
  lock.unlock();
  auto opened = Connection::Open(path_, SQLITE_OPEN_READONLY, busy_timeout_ms_);
  if (!opened) {
    lock.lock();
    --open_;
    cv_.notify_all();
    return std::move(opened).error();
  }
  return Lease(this, std::move(opened).value());
}

std::optional<ReaderPool::Lease> ReaderPool::TryAcquire() {
  std::lock_guard lock(mu_);
  if (closed_ || idle_.empty()) return std::nullopt;
  std::unique_ptr<Connection> connection = std::move(idle_.back());
  idle_.pop_back();
  return Lease(this, std::move(connection));
}

void ReaderPool::Close() {
  std::unique_lock lock(mu_);
  closed_ = true;
  cv_.notify_all();
  cv_.wait(lock, [&] { return idle_.size() == open_; });
  idle_.clear();
  open_ = 0;
}

void ReaderPool::Release(std::unique_ptr<Connection> connection) {
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(connection));
  cv_.notify_all();  // an acquirer or Close
}

}  // namespace a2ad::storage::sqlite
