#pragma once
// The TaskStore backends every contract suite runs against (STYLE.md #6): in memory, a SQLite
// file in a temporary directory, and a fresh database of the suite's throwaway PostgreSQL
// cluster per test. TYPED_TEST_SUITE(Suite, storage_test::Backends, storage_test::BackendNames).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

#include "a2ad/storage/memory/memory_task_store.hpp"
#include "a2ad/storage/postgres/postgres_store.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "pg_cluster.hpp"
#include "task_store_fixtures.hpp"

namespace a2ad::storage::storage_test {

struct MemoryBackend {
  std::unique_ptr<storage::TaskStore> Make() {
    return std::make_unique<storage::MemoryTaskStore>();
  }
};

struct SqliteBackend {
  TempDir dir;
  std::unique_ptr<storage::TaskStore> Make() {
    storage::SqliteOptions opts;
    opts.reader_connections = 2;  // fewer than a concurrent test's readers: exercises waiting
    auto opened = storage::SqliteTaskStore::Open(dir.File("tasks.db"), opts);
    if (!opened) {
      ADD_FAILURE() << opened.error().message;
      return nullptr;
    }
    return std::move(opened).value();
  }
};

struct PostgresBackend {
  std::unique_ptr<storage::TaskStore> Make() {
    storage::PostgresOptions opts;
    opts.reader_connections = 2;  // fewer than a concurrent test's readers: exercises waiting
    auto opened = storage::PostgresStore::Open(test::FreshPgDatabase(), opts);
    if (!opened) {
      ADD_FAILURE() << opened.error().message;
      return nullptr;
    }
    return std::move(opened).value();
  }
};

class BackendNames {
 public:
  template <class T>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<T, MemoryBackend>) return "Memory";
    if constexpr (std::is_same_v<T, PostgresBackend>) return "Postgres";
    return "Sqlite";
  }
};

using Backends = ::testing::Types<MemoryBackend, SqliteBackend, PostgresBackend>;

/// A suite's fixture: a store of `Backend` per test, closed after it.
template <class Backend>
class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = backend_.Make();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override {
    if (store_) store_->Close();
  }
  TaskStore& store() { return *store_; }

  Backend backend_;  // outlives store_ (the SQLite temp dir is removed after Close)
  std::unique_ptr<TaskStore> store_;
};

}  // namespace a2ad::storage::storage_test
