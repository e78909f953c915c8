// PostgresStore's queued gets (TaskStore::QueueGet; pg_store_impl.hpp, GetQueue): one thread,
// the queued gets of a moment in one pipeline on a borrowed reader connection.
#include <string>
#include <utility>
#include <vector>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/postgres/pg_store_impl.hpp"

namespace a2ad::storage {

using Impl = PostgresStore::Impl;

void Impl::GetQueue::Push(std::string task_id, GetCallback done) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
      queue_.push_back({std::move(task_id), std::move(done)});
      if (queue_.size() == 1) cv_.notify_one();  // else the thread is awake or will look
      return;
    }
  }
  done(core::Error(core::ErrorCode::kUnavailable, "task store is closed"));
}

void Impl::GetQueue::Stop() {
  std::thread ending;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_one();
    ending = std::move(thread_);
  }
  if (ending.joinable()) ending.join();
}

void Impl::GetQueue::Loop() {
  core::SetThreadName("pg-gets");
  std::vector<Item> batch;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left to answer
      while (!queue_.empty() && batch.size() < kMaxBatch) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    Answer(batch);
    batch.clear();
  }
}

void Impl::GetQueue::Answer(std::vector<Item>& batch) {
  const std::string& sql = GetTaskSql();
  if (impl_.opts_.get_batch_observer) impl_.opts_.get_batch_observer(batch.size());
  size_t answered = 0;
  {
    auto lease = impl_.Borrow();
    if (!lease) {
      for (auto& item : batch) item.done(lease.error());
      return;
    }
    pg::Connection& c = **lease;
    if (batch.size() > 1 && c.Prepare(sql, 1, "read a task") && c.EnterPipeline()) {
      // Sent in full before any answer is read: 32 short statements fit any socket buffer,
      // and the server writes the answers while this thread reads them.
      size_t sent = 0;  // a get that cannot be sent (a NUL in its id) is asked alone below
      for (; sent < batch.size(); ++sent)
        if (!c.Send(sql, pg::Params().Add(batch[sent].task_id), true, "read a task")) break;
      if (c.Sync()) {
        for (; answered < sent; ++answered) {
          auto rows = c.Next("read a task");
          // A statement that failed skips those after it (one implicit transaction up to the
          // sync): it and they are asked again alone below, as is everything after a lost
          // connection.
          if (!rows) break;
          batch[answered].done(OneTask(std::move(rows)));
        }
      }
      if (!c.ExitPipeline()) lease->Drop();  // in no state to serve another read
    }
  }  // the lease goes back (a broken connection is dropped) before the retries borrow
  for (size_t i = answered; i < batch.size(); ++i) {
    auto answer = impl_.WithReader([&](pg::Connection& c) {
      return OneTask(c.Exec(sql, pg::Params().Add(batch[i].task_id), "read a task"));
    });
    batch[i].done(std::move(answer));
  }
}

}  // namespace a2ad::storage
