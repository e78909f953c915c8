// `a2ad backup --data-dir DIR --to NEWDIR`: a complete copy of a data directory, safe while the
// server serves it. The database through SQLite's online backup (storage/sqlite/
// sqlite_backup.hpp), then every other file of the directory (the card signing key, the
// interrupt token and peer-push secrets, the push signing keys under keys/), owner-only.
// Restoring is serving the copy: `a2ad serve --data-dir NEWDIR` (docs/REFERENCE.md "Backup and restore").
//
// On PostgreSQL (--database-url) the database is PostgreSQL's to copy: pg_dump writes it in its
// custom format to NEWDIR/a2ad.pgdump (given the database through libpq's environment
// variables, so no password is on a command line), the server's keys with it (they live in the
// database there: app/server_secrets.hpp), and whatever files the data directory holds are
// copied beside it (none of a2ad's own). Restoring is pg_restore into an empty database, then
// serving with the copied directory and that database's URL.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "a2ad/app/config.hpp"
#include "a2ad/storage/postgres/pg_backend.hpp"
#include "a2ad/storage/sqlite/sqlite_backup.hpp"

namespace a2ad::app {
namespace fs = std::filesystem;

namespace {

bool IsDatabaseFile(const fs::path& name) {
  const std::string n = name.filename().string();
  return n == "a2ad.db" || n == "a2ad.db-wal" || n == "a2ad.db-shm" || n == "a2ad.db-journal";
}

// pg_dump of `url` into `file`; its exit status (127: not found).
int PgDump(const std::string& url, const std::string& file) {
  const pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    for (const auto& [name, value] : storage::PostgresEnvironment(url))
      setenv(name.c_str(), value.c_str(), 1);
    execlp("pg_dump", "pg_dump", "--format=custom", "--no-owner", "--file", file.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every file of the data directory but SQLite's, owner-only; -1 on failure (said on stderr).
int CopyKeyFiles(const fs::path& from, const fs::path& dest, const std::string& data_dir) {
  std::error_code ec;
  int files = 0;
  if (!fs::exists(from, ec)) return 0;
  for (auto it = fs::recursive_directory_iterator(from, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), from);
    if (IsDatabaseFile(rel)) continue;
    if (rel.filename().string().rfind("a2ad.db", 0) == 0) continue;  // -journal, .partial
    if (it->is_directory()) {
      fs::create_directories(dest / rel);
      ::chmod((dest / rel).c_str(), 0700);
      continue;
    }
    if (!it->is_regular_file()) continue;
    fs::copy_file(it->path(), dest / rel, fs::copy_options::overwrite_existing, ec);
    if (ec || ::chmod((dest / rel).c_str(), 0600) != 0) {
      std::fprintf(stderr, "a2ad backup: cannot copy %s: %s\n", rel.c_str(),
                   ec ? ec.message().c_str() : "chmod failed");
      return -1;
    }
    ++files;
  }
  if (ec) {
    std::fprintf(stderr, "a2ad backup: cannot read %s: %s\n", data_dir.c_str(),
                 ec.message().c_str());
    return -1;
  }
  return files;
}

}  // namespace

int RunBackup(const Config& config, const std::string& to) {
  const fs::path from(config.data_dir);
  const fs::path dest(to);
  std::error_code ec;
  if (to.empty()) {
    std::fprintf(stderr, "a2ad backup: --to NEWDIR is required\n");
    return 2;
  }
  if (fs::exists(dest, ec) && !(fs::is_directory(dest, ec) && fs::is_empty(dest, ec))) {
    std::fprintf(stderr,
                 "a2ad backup: %s exists and is not an empty directory; a backup goes to a new "
                 "one\n",
                 to.c_str());
    return 2;
  }
  const bool postgres = !config.database_url.empty();
  if (!postgres && !fs::exists(from / "a2ad.db", ec)) {
    std::fprintf(stderr, "a2ad backup: no a2ad.db in %s (--data-dir)\n", config.data_dir.c_str());
    return 2;
  }
  fs::create_directories(dest, ec);
  if (ec || ::chmod(dest.c_str(), 0700) != 0) {
    std::fprintf(stderr, "a2ad backup: cannot create %s: %s\n", to.c_str(),
                 ec ? ec.message().c_str() : "chmod failed");
    return 1;
  }
  if (postgres) {
    const fs::path dump = dest / "a2ad.pgdump";
    const int dumped = PgDump(config.database_url, dump.string());
    if (dumped != 0) {
      std::fprintf(stderr, "a2ad backup: pg_dump %s\n",
                   dumped == 127 ? "was not found: install PostgreSQL's client programs "
                                   "(Debian: postgresql-client)"
                                 : "failed (it said why above)");
      return 1;
    }
    ::chmod(dump.c_str(), 0600);
    const int files = CopyKeyFiles(from, dest, config.data_dir);
    if (files < 0) return 1;
    std::printf(
        "a2ad backup: %s: the database with the server's keys (pg_dump, custom format: "
        "a2ad.pgdump) and %d other file(s); restore with: pg_restore --no-owner --dbname <URL of an empty database> "
        "%s/a2ad.pgdump, then a2ad serve --data-dir %s --database-url <that URL>\n",
        to.c_str(), files, to.c_str(), to.c_str());
    return 0;
  }
  auto copied = storage::sqlite::BackupDatabase((from / "a2ad.db").string(),
                                                (dest / "a2ad.db").string());
  if (!copied) {
    std::fprintf(stderr, "a2ad backup: %s\n", copied.error().message.c_str());
    return 1;
  }
  ::chmod((dest / "a2ad.db").c_str(), 0600);  // push tokens and key hashes: owner-only
  const int files = CopyKeyFiles(from, dest, config.data_dir);
  if (files < 0) return 1;
  std::printf(
      "a2ad backup: %s: %lld task(s), schema version %d, %lld pages, and %d key file(s); serve it "
      "with: a2ad serve --data-dir %s\n",
      to.c_str(), static_cast<long long>(copied->tasks), copied->schema_version,
      static_cast<long long>(copied->pages), files, to.c_str());
  return 0;
}

}  // namespace a2ad::app
