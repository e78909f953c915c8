#pragma once
// Internal to storage_sqlite: ReaderPool, the read-only connections of SqliteTaskStore's reads
// (Get/FindByDedupKey/List/ReadEvents, sqlite_task_queries.cpp) and of SqliteApiKeyStore's
// lookups. Why a pool and not a connection per calling thread: sqlite_task_store.hpp ("Reads").
//
// Contract: a connection is lent to one caller at a time (a Lease, which gives it back when
// destroyed), so it is used by one thread at a time as sqlite_connection.hpp requires. After
// Close(), Acquire fails with kUnavailable ("task store is closed") and TryAcquire gives
// nullopt.
//
// Thread safety: Acquire and Close may be called from any thread; a Lease and its connection
// belong to the thread that acquired them. Close must not be called while the calling thread
// holds a Lease (it would wait for itself).
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "a2ad/core/result.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"

namespace a2ad::storage::sqlite {

// A read-only connection pool. Connections open lazily up to `max`; Acquire waits while
// all are lent out. Close waits for every lease to come back, then closes them all.
class ReaderPool {
 public:
  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<Connection> connection)
        : pool_(pool), connection_(std::move(connection)) {}
    Lease(Lease&& other) noexcept : pool_(other.pool_), connection_(std::move(other.connection_)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (connection_) pool_->Release(std::move(connection_));
    }
    Connection& connection() { return *connection_; }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Connection> connection_;
  };

  ReaderPool(std::string path, size_t max, int busy_timeout_ms)
      : path_(std::move(path)), max_(max), busy_timeout_ms_(busy_timeout_ms) {}

  core::Result<Lease> Acquire();
  /// An idle connection, or nullopt (none idle, or closed): never waits, never opens one.
  std::optional<Lease> TryAcquire();

  int busy_timeout_ms() const { return busy_timeout_ms_; }

  void Close();

 private:
  void Release(std::unique_ptr<Connection> connection);

  const std::string path_;
  const size_t max_;
  const int busy_timeout_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;
  size_t open_ = 0;  // lent out + idle
  bool closed_ = false;
};

}  // namespace a2ad::storage::sqlite
