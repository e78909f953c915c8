// The VFS every SQLite connection of a2ad opens through (sqlite_wal_vfs.hpp): a transaction's
// WAL frames reach the file in one write, never later than a reader can see them, and a
// write that fails fails the commit and publishes nothing.
#include "a2ad/storage/sqlite/sqlite_wal_vfs.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "a2ad/storage/sqlite/sqlite_connection.hpp"

namespace a2ad::storage::sqlite {
namespace {

class WalVfsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/a2ad-wal-vfs-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/db.sqlite";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A connection as the store opens one, in WAL mode with a table of 1 KB rows.
  std::unique_ptr<Connection> OpenWriter() {
    auto db = Connection::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 5000);
    if (!db) return nullptr;
    if (!(*db)->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                     "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
                     "set up"))
      return nullptr;
    return std::move(db).value();
  }

  // Inserts `rows` rows of 1 KB into the transaction `db` has open.
  static int InsertRows(Connection& db, int from, int rows) {
    int rc = SQLITE_OK;
    for (int i = from; rc == SQLITE_OK && i < from + rows; ++i) {
      const std::string sql =
          "INSERT INTO t VALUES (" + std::to_string(i) + ", printf('%.*c', 1000, 'x'))";
      rc = sqlite3_exec(db.handle(), sql.c_str(), nullptr, nullptr, nullptr);
    }
    return rc;
  }

  // Inserts `rows` rows of 1 KB in one transaction.
  static int Insert(Connection& db, int from, int rows) {
    int rc = sqlite3_exec(db.handle(), "BEGIN", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) rc = InsertRows(db, from, rows);
    if (rc == SQLITE_OK) return sqlite3_exec(db.handle(), "COMMIT", nullptr, nullptr, nullptr);
    (void)sqlite3_exec(db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
    return rc;
  }

  // The first column of `sql`'s first row, as text, read by a connection of another program
  // (SQLite's default VFS); "" if there is none.
  std::string FromElsewhere(const char* sql) {
    sqlite3* other = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &other, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    std::string result;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(other, sql, -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr)
      result = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    sqlite3_close(other);
    return result;
  }
  int64_t CountFromElsewhere() {
    const std::string count = FromElsewhere("SELECT count(*) FROM t");
    return count.empty() ? -1 : std::stoll(count);
  }
  std::string IntegrityFromElsewhere() { return FromElsewhere("PRAGMA integrity_check"); }

  std::string dir_;
  std::string path_;
};

TEST_F(WalVfsTest, ACommitReachesTheWalInOneWrite) {
  auto db = OpenWriter();
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(Insert(*db, 0, 1), SQLITE_OK);
  const WalWriteCounts before = WalWrites();
  ASSERT_EQ(Insert(*db, 1, 12), SQLITE_OK);  // 12 KB of rows: several pages
  const WalWriteCounts after = WalWrites();
  // Two writes per page from SQLite (a frame's header, then its page), one to the file.
  EXPECT_GE(after.from_sqlite - before.from_sqlite, 6U);
  EXPECT_EQ(after.to_file - before.to_file, 1U);
  EXPECT_EQ(CountFromElsewhere(), 13);
}

TEST_F(WalVfsTest, EveryCommitIsVisibleToAnotherProgramWhenItReturns) {
  auto db = OpenWriter();
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(Insert(*db, i * 3, 3), SQLITE_OK);
    ASSERT_EQ(CountFromElsewhere(), (i + 1) * 3) << "after commit " << i;
  }
  EXPECT_EQ(IntegrityFromElsewhere(), "ok");
}

// The default VFS writes at most 128 KiB - 1 bytes per call: a transaction of a megabyte goes
// to the file in pieces, all of them.
TEST_F(WalVfsTest, ALargeTransactionIsWrittenWhole) {
  auto db = OpenWriter();
  ASSERT_NE(db, nullptr);
  const WalWriteCounts before = WalWrites();
  ASSERT_EQ(Insert(*db, 0, 1000), SQLITE_OK);
  const WalWriteCounts after = WalWrites();
  EXPECT_GE(after.to_file - before.to_file, 16U);  // over 1 MB in pieces of at most 64 KiB
  EXPECT_LT(after.to_file - before.to_file, (after.from_sqlite - before.from_sqlite) / 10);
  EXPECT_EQ(CountFromElsewhere(), 1000);
  db.reset();
  EXPECT_EQ(IntegrityFromElsewhere(), "ok");
  EXPECT_EQ(CountFromElsewhere(), 1000);
}

// A transaction that spills pages into the WAL and then rolls back leaves frames nobody will
// publish; another connection then commits frames at the same place and beyond. Nothing of
// the first transaction may land over them. (Here SQLite's rollback reads the WAL, which
// writes the buffer while the write lock is still held; a buffer left at the lock's release is
// dropped, a path none of the rollbacks tried here took.)
TEST_F(WalVfsTest, FramesOfARolledBackTransactionNeverOverwriteLaterCommits) {
  auto a = OpenWriter();
  auto b = OpenWriter();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(Insert(*a, 0, 1), SQLITE_OK);
  // A cache of a few pages: a's large transaction writes frames before it ends.
  ASSERT_TRUE(a->Exec("PRAGMA cache_size=2", "small cache"));
  const WalWriteCounts before = WalWrites();
  ASSERT_EQ(sqlite3_exec(a->handle(), "BEGIN", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(InsertRows(*a, 1000, 200), SQLITE_OK);
  const WalWriteCounts spilled = WalWrites();
  ASSERT_GT(spilled.from_sqlite - before.from_sqlite, 40U);  // the spill reached the VFS
  ASSERT_EQ(sqlite3_exec(a->handle(), "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(Insert(*b, 1, 300), SQLITE_OK);   // over where a's frames were, and past them
  ASSERT_EQ(Insert(*a, 5000, 1), SQLITE_OK);  // a writes again, further on
  EXPECT_EQ(CountFromElsewhere(), 302);
  EXPECT_EQ(IntegrityFromElsewhere(), "ok");
  a.reset();
  b.reset();  // the last connection checkpoints the WAL into the database
  EXPECT_EQ(CountFromElsewhere(), 302);
  EXPECT_EQ(IntegrityFromElsewhere(), "ok");
}

// The file cannot grow (RLIMIT_FSIZE, in a child process): the commit whose frames cannot be
// written fails, nothing of it is visible, and once the file can grow again the next commit
// succeeds. Exit codes of the child say which step failed.
TEST_F(WalVfsTest, AWriteThatFailsFailsTheCommitAndPublishesNothing) {
  {
    auto db = OpenWriter();
    ASSERT_NE(db, nullptr);
    ASSERT_EQ(Insert(*db, 0, 5), SQLITE_OK);
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // the failed write returns EFBIG instead
    auto db = OpenWriter();
    if (db == nullptr) ::_exit(2);
    if (Insert(*db, 5, 1) != SQLITE_OK) ::_exit(3);
    struct stat wal {};
    if (::stat((path_ + "-wal").c_str(), &wal) != 0) ::_exit(4);
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    const rlimit lowered{static_cast<rlim_t>(wal.st_size) + 1024, limit.rlim_max};
    if (::setrlimit(RLIMIT_FSIZE, &lowered) != 0) ::_exit(5);
    // 10 KB: buffered whole, written when its commit frame is (a later write, at the barrier
    // before SQLite publishes the commit, could not fail it any more: the child would abort).
    if (Insert(*db, 100, 10) == SQLITE_OK) ::_exit(6);
    if (CountFromElsewhere() != 6) ::_exit(7);
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(8);
    if (Insert(*db, 100, 200) != SQLITE_OK) ::_exit(9);  // and past the 64 KiB pieces
    if (CountFromElsewhere() != 206) ::_exit(10);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(CountFromElsewhere(), 206);
  EXPECT_EQ(IntegrityFromElsewhere(), "ok");
}

}  // namespace
}  // namespace a2ad::storage::sqlite
