// ApiKeyStore contract, for every backend (STYLE.md #6): MemoryApiKeyStore and the api_keys
// table of SQLite (schema version 7).
#include "a2ad/storage/api_key_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include "a2ad/storage/sqlite/sqlite_api_key_store.hpp"
#include "a2ad/storage/sqlite/sqlite_task_store.hpp"
#include "test_paths.hpp"

namespace a2ad::storage {
namespace {
namespace fs = std::filesystem;

class ApiKeyStoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      store_ = std::make_unique<MemoryApiKeyStore>();
      return;
    }
    dir_ = testing::FreshTestDir("a2ad-keys");
    const std::string path = (dir_ / "a2ad.db").string();
    ASSERT_TRUE(SqliteTaskStore::Migrate(path));
    auto opened = sqlite::SqliteApiKeyStore::Open(path);
    ASSERT_TRUE(opened) << opened.error().message;
    store_ = std::move(opened).value();
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  static ApiKeyRecord Key(const std::string& id, int64_t created) {
    ApiKeyRecord r;
    r.key_id = id;
    r.secret_sha256 = std::string(64, 'a');
    r.tenant = "acme";
    r.scopes = {"tasks:read", "runs:write"};
    r.name = "ci";
    r.created_at_ms = created;
    r.expires_at_ms = created + 1000;
    return r;
  }
  fs::path dir_;
  std::unique_ptr<ApiKeyStore> store_;
};

TEST_P(ApiKeyStoreContract, InsertFindListRevoke) {
  EXPECT_FALSE(*store_->Any());
  EXPECT_FALSE(store_->Find("0000000000000001")->has_value());
  ASSERT_TRUE(store_->Insert(Key("0000000000000002", 20)));
  ASSERT_TRUE(store_->Insert(Key("0000000000000001", 10)));
  auto dup = store_->Insert(Key("0000000000000001", 30));
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, core::ErrorCode::kConflict);
  EXPECT_TRUE(*store_->Any());
  auto got = store_->Find("0000000000000001");
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->tenant, "acme");
  EXPECT_EQ((*got)->scopes, (std::vector<std::string>{"tasks:read", "runs:write"}));
  EXPECT_EQ((*got)->name, "ci");
  EXPECT_EQ((*got)->expires_at_ms, 1010);
  EXPECT_EQ((*got)->revoked_at_ms, 0);
  auto all = store_->List();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 2u);
  if (GetParam() != "memory") {
    EXPECT_EQ((*all)[0].key_id, "0000000000000001");  // oldest first
  }
  EXPECT_TRUE(*store_->Revoke("0000000000000001", 500));
  EXPECT_TRUE(*store_->Revoke("0000000000000001", 900));  // keeps the first time
  EXPECT_EQ((*store_->Find("0000000000000001"))->revoked_at_ms, 500);
  EXPECT_FALSE(*store_->Revoke("00000000000000ff", 500));
}

INSTANTIATE_TEST_SUITE_P(Backends, ApiKeyStoreContract, ::testing::Values("memory", "sqlite"));

// SQLite's Any() without a read (sqlite_api_key_store.hpp): while the first byte of
// `<path>-keys` is 0 it answers false without touching the database (but once per
// `foreign_check`, an hour here unless a test says otherwise); a key inserted by another store
// (another process) writes "1" there, and the next Any() reads and sees the key.
class SqliteApiKeys : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("a2ad-keys-marker");
    path_ = (dir_ / "a2ad.db").string();
    ASSERT_TRUE(SqliteTaskStore::Migrate(path_));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::unique_ptr<sqlite::SqliteApiKeyStore> Open(
      std::chrono::milliseconds foreign_check = std::chrono::hours(1)) {
    auto opened = sqlite::SqliteApiKeyStore::Open(path_, foreign_check);
    EXPECT_TRUE(opened) << opened.error().message;
    return opened ? std::move(opened).value() : nullptr;
  }
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  // The first byte of `<path>-keys`: -1 when the file is absent or empty.
  int Marker() const {
    std::ifstream in(path_ + "-keys", std::ios::binary);
    const int c = in.get();
    return in ? c : -1;
  }
  static ApiKeyRecord Key() {
    ApiKeyRecord r;
    r.key_id = "0000000000000001";
    r.secret_sha256 = std::string(64, 'a');
    r.tenant = "acme";
    r.scopes = {"tasks:read"};
    return r;
  }
  fs::path dir_;
  std::string path_;
};

TEST_F(SqliteApiKeys, AnyReadsNothingUntilAKeyIsMadeByAnyProcess) {
  auto server = Open();
  ASSERT_TRUE(server);
  EXPECT_EQ(Marker(), 0);  // made by Open, to be mapped
  // A read of api_keys would fail now; Any() does not read.
  Sql("ALTER TABLE api_keys RENAME TO api_keys_away");
  auto any = server->Any();
  ASSERT_TRUE(any) << any.error().message;
  EXPECT_FALSE(*any);
  Sql("ALTER TABLE api_keys_away RENAME TO api_keys");
  auto cli = Open();  // `a2ad keys create`, as another process would
  ASSERT_TRUE(cli && cli->Insert(Key()));
  EXPECT_EQ(Marker(), '1');
  any = server->Any();
  ASSERT_TRUE(any) << any.error().message;
  EXPECT_TRUE(*any);
}

// The file takes the database's permission bits, as SQLite's -wal and -shm do: whoever may
// write a key into the database (a group's `a2ad keys create`) may write the byte too.
TEST_F(SqliteApiKeys, TheFileIsMadeWithTheDatabasesPermissions) {
  fs::permissions(path_, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                             fs::perms::group_write);
  const mode_t mask = ::umask(022);  // which would take the group's write away
  auto server = Open();
  ::umask(mask);
  ASSERT_TRUE(server);
  struct stat st {};
  ASSERT_EQ(::stat((path_ + "-keys").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

// Insert writes the byte only when it is not set already: a key made by someone who may write
// the database but not the file (its maker's umask, say) still goes in once a key was made.
// (Checked by the file's modification time, which a write would move: a test run as root may
// write any file.)
TEST_F(SqliteApiKeys, AKeyIsMadeWithoutWritingAByteAlreadySet) {
  {
    auto first = Open();
    ASSERT_TRUE(first && first->Insert(Key()));
  }
  ASSERT_EQ(Marker(), '1');
  const auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(24);
  fs::last_write_time(path_ + "-keys", long_ago);
  auto cli = Open();
  ASSERT_TRUE(cli);
  ApiKeyRecord second = Key();
  second.key_id = "0000000000000002";
  auto made = cli->Insert(second);
  EXPECT_TRUE(made) << made.error().message;
  EXPECT_EQ(fs::last_write_time(path_ + "-keys"), long_ago);
}

// A key written without Insert (an older a2ad, the sqlite3 shell) makes no file: Any() still
// reads once per `foreign_check` and sees it.
TEST_F(SqliteApiKeys, AKeyWrittenByOtherMeansIsSeenWithinTheForeignCheck) {
  auto server = Open(std::chrono::milliseconds(50));
  ASSERT_TRUE(server);
  EXPECT_FALSE(*server->Any());
  Sql("INSERT INTO api_keys(key_id, secret_sha256, tenant, scopes, name, created_at_ms,"
      " expires_at_ms, revoked_at_ms) VALUES ('00000000000000aa', 'x', 'acme', 'admin', '', 1,"
      " 0, 0)");
  EXPECT_EQ(Marker(), 0);
  bool seen = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    auto any = server->Any();
    ASSERT_TRUE(any) << any.error().message;
    seen = *any;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(seen);
}

TEST_F(SqliteApiKeys, OpenRemakesTheFileWhenKeysExistWithoutIt) {
  {
    auto cli = Open();
    ASSERT_TRUE(cli && cli->Insert(Key()));
  }
  ASSERT_TRUE(fs::remove(path_ + "-keys"));  // a database restored without it
  auto server = Open();
  ASSERT_TRUE(server);
  EXPECT_EQ(Marker(), '1');
  auto any = server->Any();
  ASSERT_TRUE(any) << any.error().message;
  EXPECT_TRUE(*any);
}

// Find runs on a pool of connections (sqlite_api_key_store.hpp): lookups from many threads at
// once all answer, and a key revoked by another process is seen revoked by the next lookup.
TEST_F(SqliteApiKeys, LookupsFromManyThreadsAtOnceSeeARevocationAtTheNextCall) {
  auto server = Open();
  auto cli = Open();
  ASSERT_TRUE(server && cli && cli->Insert(Key()));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        auto found = server->Find("0000000000000001");
        auto missing = server->Find("00000000000000ff");
        if (!found || !found->has_value() || (*found)->tenant != "acme" || !missing ||
            missing->has_value())
          ++wrong;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  ASSERT_TRUE(cli->Revoke("0000000000000001", 500));
  auto after = server->Find("0000000000000001");
  ASSERT_TRUE(after && after->has_value());
  EXPECT_EQ((*after)->revoked_at_ms, 500);
}

}  // namespace
}  // namespace a2ad::storage
