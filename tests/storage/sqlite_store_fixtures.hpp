#pragma once
// Fixtures shared by the SqliteTaskStore tests beyond the contract (sqlite_*_test.cpp): a
// test with its own database file (SqliteTaskStoreTest), direct SQL access to that file
// (RawDb), Open that fails the test (MustOpen) and a gate that holds the writer inside its
// first batch (WriterGate). The builders of commits are in task_store_fixtures.hpp.
//
// Thread safety: WriterGate's hook runs on the thread writing the batch (the writer thread, or
// the gate's own thread for the commit it holds), its other methods on the test's; RawDb and
// the fixture belong to the test's thread.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage::storage_test {

// Direct SQL access to the file, to look behind the store.
class RawDb {
 public:
  explicit RawDb(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  }
  ~RawDb() { sqlite3_close_v2(db_); }
  int64_t Int(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    int64_t v = -12345;
    if (sqlite3_step(stmt) == SQLITE_ROW) v = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
  }
  std::string Text(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    std::string v;
    if (sqlite3_step(stmt) == SQLITE_ROW) {
      v = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    return v;
  }
  /// Back to what schema version 8 had (version 9: the parked runs' columns and indexes).
  void DropVersion9() {
    for (const char* sql : {"DROP INDEX tasks_runnable", "DROP INDEX tasks_wake",
                            "DROP INDEX tasks_waiting_on_event",
                            "ALTER TABLE tasks DROP COLUMN wake_at_ms",
                            "ALTER TABLE tasks DROP COLUMN waits_for_event",
                            "DROP INDEX tasks_cancelled",
                            "CREATE INDEX tasks_by_state ON tasks(state, updated_at_ms DESC, "
                            "id DESC)",
                            "DROP INDEX tasks_prunable",
                            "CREATE INDEX tasks_prunable ON tasks(updated_at_ms) WHERE state IN "
                            "(3, 4, 5, 7) AND pruned_through < last_sequence"})
      Exec(sql);
  }
  std::vector<std::string> Column(const std::string& sql, int column) {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
    std::vector<std::string> out;
    while (sqlite3_step(stmt) == SQLITE_ROW)
      out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, column)));
    sqlite3_finalize(stmt);
    return out;
  }
  void Exec(const std::string& sql) {
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }

 private:
  sqlite3* db_ = nullptr;
};

inline std::unique_ptr<SqliteTaskStore> MustOpen(const std::string& path, SqliteOptions opts = {}) {
  auto opened = SqliteTaskStore::Open(path, std::move(opts));
  if (!opened) {
    ADD_FAILURE() << opened.error().message;
    return nullptr;
  }
  return std::move(opened).value();
}

// Holds the writer inside its first batch until Release(), so that the commits issued
// meanwhile queue up and form the next batch. Records every batch size.
class WriterGate {
 public:
  ~WriterGate() {
    if (holder_.joinable()) holder_.join();
  }
  // Commits `commit` from a thread of the gate's (an idle store writes it on the calling
  // thread, which the gate then holds) and returns once its batch is held.
  std::future<core::Result<void>> Hold(TaskStore& store, TaskCommit commit) {
    auto done = std::make_shared<std::promise<core::Result<void>>>();
    auto future = done->get_future();
    holder_ = std::thread([&store, done, c = std::move(commit)]() mutable {
      store.Commit(std::move(c), [done](core::Result<void> r) { done->set_value(std::move(r)); });
    });
    WaitEntered();
    return future;
  }
  void Install(SqliteOptions& opts) {
    opts.batch_hook = [this](size_t n) {
      bool first = false;
      {
        std::lock_guard lock(mu_);
        sizes_.push_back(n);
        first = sizes_.size() == 1;
      }
      if (first) {
        entered_.set_value();
        release_.get_future().wait();
      }
    };
  }
  void WaitEntered() { entered_.get_future().wait(); }
  void Release() { release_.set_value(); }
  std::vector<size_t> sizes() {
    std::lock_guard lock(mu_);
    return sizes_;
  }

 private:
  std::mutex mu_;
  std::vector<size_t> sizes_;
  std::promise<void> entered_;
  std::promise<void> release_;
  std::thread holder_;
};

class SqliteTaskStoreTest : public ::testing::Test {
 protected:
  storage_test::TempDir dir_;
  std::string path_ = dir_.File("tasks.db");
};

}  // namespace a2ad::storage::storage_test
