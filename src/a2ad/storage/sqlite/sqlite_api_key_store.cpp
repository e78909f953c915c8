#include "a2ad/storage/sqlite/sqlite_api_key_store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "a2ad/core/log.hpp"
#include "a2ad/storage/sqlite/sqlite_connection.hpp"
#include "a2ad/storage/sqlite/sqlite_reader_pool.hpp"
#include "a2ad/storage/sqlite/sqlite_schema.hpp"

namespace a2ad::storage::sqlite {
namespace {

constexpr const char* kColumns =
    "key_id, secret_sha256, tenant, scopes, name, created_at_ms, expires_at_ms, revoked_at_ms";

std::string JoinScopes(const std::vector<std::string>& scopes) {
  std::string out;
  for (const auto& s : scopes) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::vector<std::string> SplitScopes(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view one = text.substr(0, comma);
    if (!one.empty()) out.emplace_back(one);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

ApiKeyRecord ReadRow(const Stmt& s) {
  ApiKeyRecord r;
  r.key_id = std::string(s.Text(0));
  r.secret_sha256 = std::string(s.Text(1));
  r.tenant = std::string(s.Text(2));
  r.scopes = SplitScopes(s.Text(3));
  r.name = std::string(s.Text(4));
  r.created_at_ms = s.Int(5);
  r.expires_at_ms = s.Int(6);
  r.revoked_at_ms = s.Int(7);
  return r;
}

// Find's pool: one connection per I/O thread of a small machine; more callers wait their turn.
constexpr size_t kLookupConnections = 4;
constexpr int kBusyTimeoutMs = 5000;

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SqliteApiKeyStore::SqliteApiKeyStore(std::unique_ptr<Connection> db, const std::string& path,
                                     std::chrono::milliseconds foreign_check)
    : db_(std::move(db)),
      marker_(path + "-keys"),
      lookups_(std::make_unique<ReaderPool>(path, kLookupConnections, kBusyTimeoutMs)),
      foreign_check_(foreign_check),
      next_read_ms_(SteadyMs() + foreign_check.count()) {}  // Open has just read
SqliteApiKeyStore::~SqliteApiKeyStore() {
  if (flag_) ::munmap(flag_, 1);
}

int SqliteApiKeyStore::OpenMarker(int flags) const {
  const int fd = ::open(marker_.c_str(), flags | O_CLOEXEC);
  if (fd >= 0 || errno != ENOENT) return fd;
  // Made with the database's permission bits, exactly (the umask does not narrow them), as
  // SQLite makes its -wal and -shm: whoever may write a key into the database may write the
  // byte too.
  const std::string db = marker_.substr(0, marker_.size() - std::strlen("-keys"));
  struct stat st {};
  const mode_t mode = ::stat(db.c_str(), &st) == 0 ? (st.st_mode & 0666) : 0600;
  const int made = ::open(marker_.c_str(), flags | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (made >= 0) {
    (void)::fchmod(made, mode);
    return made;
  }
  return errno == EEXIST ? ::open(marker_.c_str(), flags | O_CLOEXEC) : -1;  // made meanwhile
}

void SqliteApiKeyStore::MapFlag() {
  // ftruncate, not a write: a concurrent Mark's byte, written first, stays as it is.
  int fd = OpenMarker(O_RDWR);
  if (fd < 0) fd = ::open(marker_.c_str(), O_RDONLY | O_CLOEXEC);  // a read-only directory
  if (fd < 0) return;
  struct stat st {};
  void* map = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && (st.st_size > 0 || ::ftruncate(fd, 1) == 0))
    map = ::mmap(nullptr, 1, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map != MAP_FAILED) flag_ = map;
}

core::Result<std::unique_ptr<SqliteApiKeyStore>> SqliteApiKeyStore::Open(
    const std::string& path, std::chrono::milliseconds foreign_check) {
  auto db = Connection::Open(path, SQLITE_OPEN_READWRITE, kBusyTimeoutMs);
  if (!db) return std::move(db).error();
  auto version = CurrentVersion(**db);
  if (!version) return std::move(version).error();
  if (*version < 7)
    return core::Error(core::ErrorCode::kInternal,
                       "sqlite '" + path + "': schema version " + std::to_string(*version) +
                           " has no api_keys table; run `a2ad migrate`");
  std::unique_ptr<SqliteApiKeyStore> store(
      new SqliteApiKeyStore(std::move(db).value(), path, foreign_check));
  std::lock_guard lock(store->mu_);
  auto any = store->AnyRow();
  if (!any) return std::move(any).error();
  if (*any) {  // a file that cannot be made (read-only directory): keys_seen_ answers instead
    if (auto marked = store->Mark(); !marked) core::LogWarn("api keys: " + marked.error().message);
  } else {
    store->MapFlag();  // else Any() reads the file's byte at every call
  }
  return store;
}

core::Result<void> SqliteApiKeyStore::Mark() {
  if (FileByte() > 0) return core::Ok{};  // nothing to write, and no need to be allowed to
  const int fd = OpenMarker(O_WRONLY);
  const ssize_t n = fd >= 0 ? ::pwrite(fd, "1", 1, 0) : -1;
  const int error = n == 0 ? EIO : errno;
  if (fd >= 0) ::close(fd);
  if (n != 1)
    return core::Error(core::ErrorCode::kInternal, "cannot write '" + marker_ +
                                                       "' (it tells a running server that keys " +
                                                       "exist): " + std::strerror(error));
  return core::Ok{};
}

int SqliteApiKeyStore::FileByte() const {
  const int fd = ::open(marker_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? kNoFile : kUnread;
  unsigned char c = 0;
  const bool read = ::pread(fd, &c, 1, 0) == 1;
  ::close(fd);
  return read ? c : kUnread;
}

bool SqliteApiKeyStore::Marked() const {
  if (flag_) return __atomic_load_n(static_cast<const char*>(flag_), __ATOMIC_ACQUIRE) != '\0';
  // Not mapped (rare: a directory where the file could be neither made nor grown). Only "no
  // such file", or its byte 0, says no key was made: any other answer reads.
  const int byte = FileByte();
  return byte != kNoFile && byte != 0;
}

core::Result<void> SqliteApiKeyStore::Insert(const ApiKeyRecord& r) {
  std::lock_guard lock(mu_);
  if (auto marked = Mark(); !marked) return std::move(marked).error();  // before the row
  auto prepared = db_->Prepare(std::string("INSERT INTO api_keys(") + kColumns +
                               ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, std::string_view(r.key_id));
  s.Bind(2, std::string_view(r.secret_sha256));
  s.Bind(3, std::string_view(r.tenant));
  const std::string scopes = JoinScopes(r.scopes);
  s.Bind(4, std::string_view(scopes));
  s.Bind(5, std::string_view(r.name));
  s.Bind(6, r.created_at_ms);
  s.Bind(7, r.expires_at_ms);
  s.Bind(8, r.revoked_at_ms);
  const int rc = s.Step();
  if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT)
    return core::Error(core::ErrorCode::kConflict, "api key id already taken");
  if (rc != SQLITE_DONE) return db_->Fail("insert api key", rc);
  return core::Ok{};
}

core::Result<std::optional<ApiKeyRecord>> SqliteApiKeyStore::Find(std::string_view key_id) {
  auto lease = lookups_->Acquire();
  if (!lease) return std::move(lease).error();
  Connection& db = lease->connection();
  static const std::string select =
      std::string("SELECT ") + kColumns + " FROM api_keys WHERE key_id = ?1";
  auto prepared = db.Prepare(select);
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, key_id);
  const int rc = s.Step();
  if (rc == SQLITE_DONE) return std::optional<ApiKeyRecord>();
  if (rc != SQLITE_ROW) return db.Fail("read api key", rc);
  return std::optional<ApiKeyRecord>(ReadRow(s));
}

core::Result<std::vector<ApiKeyRecord>> SqliteApiKeyStore::List() {
  std::lock_guard lock(mu_);
  auto prepared = db_->Prepare(std::string("SELECT ") + kColumns +
                               " FROM api_keys ORDER BY created_at_ms, key_id");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  std::vector<ApiKeyRecord> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(ReadRow(s));
  if (rc != SQLITE_DONE) return db_->Fail("list api keys", rc);
  return out;
}

core::Result<bool> SqliteApiKeyStore::Revoke(std::string_view key_id, int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto exists = db_->Prepare("SELECT revoked_at_ms FROM api_keys WHERE key_id = ?1");
  if (!exists) return std::move(exists).error();
  {
    Stmt s(*exists);
    s.Bind(1, key_id);
    const int rc = s.Step();
    if (rc == SQLITE_DONE) return false;
    if (rc != SQLITE_ROW) return db_->Fail("read api key", rc);
  }
  auto prepared = db_->Prepare(
      "UPDATE api_keys SET revoked_at_ms = ?2 WHERE key_id = ?1 AND revoked_at_ms = 0");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  s.Bind(1, key_id);
  s.Bind(2, now_ms);
  if (const int rc = s.Step(); rc != SQLITE_DONE) return db_->Fail("revoke api key", rc);
  return true;
}

core::Result<bool> SqliteApiKeyStore::Any() {
  if (keys_seen_.load(std::memory_order_acquire)) return true;
  if (!Marked()) {  // no Insert since Open (header)
    const int64_t now = SteadyMs();
    int64_t due = next_read_ms_.load(std::memory_order_relaxed);
    if (now < due || !next_read_ms_.compare_exchange_strong(due, now + foreign_check_.count()))
      return false;  // else this caller reads, for a key written by other means
  }
  std::lock_guard lock(mu_);
  return AnyRow();
}

core::Result<bool> SqliteApiKeyStore::AnyRow() {
  auto prepared = db_->Prepare("SELECT EXISTS (SELECT 1 FROM api_keys)");
  if (!prepared) return std::move(prepared).error();
  Stmt s(*prepared);
  const int rc = s.Step();
  if (rc != SQLITE_ROW) return db_->Fail("count api keys", rc);
  const bool any = s.Int(0) != 0;
  if (any) keys_seen_.store(true, std::memory_order_release);
  return any;
}

}  // namespace a2ad::storage::sqlite
