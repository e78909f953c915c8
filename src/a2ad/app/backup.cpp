// `a2ad backup --data-dir DIR --to NEWDIR`: a complete copy of a data directory, safe while the
// server serves it. The database through SQLite's online backup (storage/sqlite/
// sqlite_backup.hpp), then every other file of the directory (the card signing key, the
// interrupt token and peer-push secrets, the push signing keys under keys/), owner-only.
// Restoring is serving the copy: `a2ad serve --data-dir NEWDIR` (docs/REFERENCE.md "Backup and restore").
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "a2ad/app/config.hpp"
#include "a2ad/storage/sqlite/sqlite_backup.hpp"

namespace a2ad::app {
namespace fs = std::filesystem;

namespace {

bool IsDatabaseFile(const fs::path& name) {
  const std::string n = name.filename().string();
  return n == "a2ad.db" || n == "a2ad.db-wal" || n == "a2ad.db-shm" || n == "a2ad.db-journal";
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
  if (!fs::exists(from / "a2ad.db", ec)) {
    std::fprintf(stderr, "a2ad backup: no a2ad.db in %s (--data-dir)\n", config.data_dir.c_str());
    return 2;
  }
  fs::create_directories(dest, ec);
  if (ec || ::chmod(dest.c_str(), 0700) != 0) {
    std::fprintf(stderr, "a2ad backup: cannot create %s: %s\n", to.c_str(),
                 ec ? ec.message().c_str() : "chmod failed");
    return 1;
  }
  auto copied = storage::sqlite::BackupDatabase((from / "a2ad.db").string(),
                                                (dest / "a2ad.db").string());
  if (!copied) {
    std::fprintf(stderr, "a2ad backup: %s\n", copied.error().message.c_str());
    return 1;
  }
  ::chmod((dest / "a2ad.db").c_str(), 0600);  // push tokens and key hashes: owner-only
  int files = 0;
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
      return 1;
    }
    ++files;
  }
  if (ec) {
    std::fprintf(stderr, "a2ad backup: cannot read %s: %s\n", config.data_dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  std::printf(
      "a2ad backup: %s: %lld task(s), schema version %d, %lld pages, and %d key file(s); serve it "
      "with: a2ad serve --data-dir %s\n",
      to.c_str(), static_cast<long long>(copied->tasks), copied->schema_version,
      static_cast<long long>(copied->pages), files, to.c_str());
  return 0;
}

}  // namespace a2ad::app
