#include "a2ad/storage/sqlite/sqlite_wal_vfs.hpp"

#include <sqlite3.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "a2ad/core/log.hpp"

namespace a2ad::storage::sqlite {
namespace {

constexpr const char* kName = "a2ad-wal";
// The WAL file format: a frame is a 24-byte header and a page; bytes 4-7 of the header (a
// big-endian integer) are the database's size in pages after a commit, 0 in other frames.
// The file's own header is 32 bytes and pages at least 512, so a write of 24 bytes is a
// frame's header.
constexpr int kFrameHeaderBytes = 24;
// The most the VFS writes in one call: a transaction larger than this (a batch of many sends,
// a migration) is written in pieces of it. SQLite's own writes are never larger (its largest
// page is 64 KiB), and the default VFS on Unix writes at most 128 KiB - 1 bytes per call (a
// larger write fails as a full disk).
constexpr size_t kMaxBuffered = size_t{64} * 1024;
// The WAL index's locks (SQLite's WAL file format): the first is the write lock.
constexpr int kWalWriteLock = 0;

std::atomic<uint64_t> g_from_sqlite{0};
std::atomic<uint64_t> g_to_file{0};

// The WAL file's unwritten bytes: contiguous, from `start`.
struct WalBuffer {
  std::vector<char> bytes;
  sqlite3_int64 start = 0;
  bool commit_frame_next = false;  // a commit frame's header is buffered, its page is next
};

// One open file. SQLite allocates szOsFile bytes for it: this struct, then the default
// VFS's own file object.
struct File {
  sqlite3_file base;
  sqlite3_file* real;
  WalBuffer* wal;  // a WAL file: its buffer; null otherwise
  File* wal_file;  // a database file: its WAL file while that is open (same connection)
  File* database;  // a WAL file: its database file
};

sqlite3_vfs* g_real = nullptr;

File* Of(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
const sqlite3_io_methods& RealMethods(sqlite3_file* f) { return *Of(f)->real->pMethods; }

// Writes the buffer to the file. The buffer is empty afterwards, whatever happened: after a
// failed write SQLite abandons the transaction and writes its frames again.
int Flush(File* f) {
  WalBuffer& b = *f->wal;
  if (b.bytes.empty()) return SQLITE_OK;
  const int rc =
      f->real->pMethods->xWrite(f->real, b.bytes.data(), static_cast<int>(b.bytes.size()), b.start);
  g_to_file.fetch_add(1, std::memory_order_relaxed);
  b.bytes.clear();
  b.commit_frame_next = false;
  return rc;
}

// ---- every file: forwarded ----------------------------------------------------------------

int Read(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  return RealMethods(f).xRead(Of(f)->real, out, amount, offset);
}
int Write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  return RealMethods(f).xWrite(Of(f)->real, data, amount, offset);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  return RealMethods(f).xTruncate(Of(f)->real, size);
}
int Sync(sqlite3_file* f, int flags) { return RealMethods(f).xSync(Of(f)->real, flags); }
int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return RealMethods(f).xFileSize(Of(f)->real, size);
}
int Lock(sqlite3_file* f, int level) { return RealMethods(f).xLock(Of(f)->real, level); }
int Unlock(sqlite3_file* f, int level) { return RealMethods(f).xUnlock(Of(f)->real, level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return RealMethods(f).xCheckReservedLock(Of(f)->real, out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return RealMethods(f).xFileControl(Of(f)->real, op, arg);
}
int SectorSize(sqlite3_file* f) { return RealMethods(f).xSectorSize(Of(f)->real); }
int DeviceCharacteristics(sqlite3_file* f) {
  return RealMethods(f).xDeviceCharacteristics(Of(f)->real);
}
int ShmMap(sqlite3_file* f, int page, int page_size, int extend, void volatile** out) {
  return RealMethods(f).xShmMap(Of(f)->real, page, page_size, extend, out);
}
int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return RealMethods(f).xShmUnmap(Of(f)->real, delete_flag);
}
int Fetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  return RealMethods(f).xFetch(Of(f)->real, offset, amount, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* p) {
  return RealMethods(f).xUnfetch(Of(f)->real, offset, p);
}

// ---- a database file ----------------------------------------------------------------------

int CloseDatabase(sqlite3_file* f) {
  File* self = Of(f);
  if (self->wal_file != nullptr) self->wal_file->database = nullptr;
  const int rc = RealMethods(f).xClose(self->real);
  self->~File();
  return rc;
}

// SQLite updates the WAL index between two barriers: frames it is about to publish must be
// in the file by then. They are (the commit frame's write flushed them); this is the check
// that nothing of a connection's WAL is ever published unwritten.
void ShmBarrier(sqlite3_file* f) {
  File* self = Of(f);
  if (self->wal_file != nullptr && !self->wal_file->wal->bytes.empty()) {
    if (Flush(self->wal_file) != SQLITE_OK) {
      core::LogError("sqlite: WAL frames could not be written before they were published");
      std::abort();
    }
  }
  RealMethods(f).xShmBarrier(self->real);
}

// Releasing the WAL's write lock ends the connection's write transaction. Whatever of its WAL
// is still buffered then was never committed (a commit's frames were written with its commit
// frame): frames of a transaction that spilled pages and rolled back. They must not reach the
// file later, when another connection may have committed frames at the same place.
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  File* self = Of(f);
  if (offset == kWalWriteLock && (flags & SQLITE_SHM_UNLOCK) != 0 && self->wal_file != nullptr) {
    WalBuffer& b = *self->wal_file->wal;
    b.bytes.clear();
    b.commit_frame_next = false;
  }
  return RealMethods(f).xShmLock(self->real, offset, n, flags);
}

constexpr sqlite3_io_methods kDatabaseV3 = {.iVersion = 3,
                                            .xClose = &CloseDatabase,
                                            .xRead = &Read,
                                            .xWrite = &Write,
                                            .xTruncate = &Truncate,
                                            .xSync = &Sync,
                                            .xFileSize = &FileSize,
                                            .xLock = &Lock,
                                            .xUnlock = &Unlock,
                                            .xCheckReservedLock = &CheckReservedLock,
                                            .xFileControl = &FileControl,
                                            .xSectorSize = &SectorSize,
                                            .xDeviceCharacteristics = &DeviceCharacteristics,
                                            .xShmMap = &ShmMap,
                                            .xShmLock = &ShmLock,
                                            .xShmBarrier = &ShmBarrier,
                                            .xShmUnmap = &ShmUnmap,
                                            .xFetch = &Fetch,
                                            .xUnfetch = &Unfetch};

// A file of a VFS without shared memory or mapping (not the default on Unix).
constexpr sqlite3_io_methods VersionOne(sqlite3_io_methods m) {
  m.iVersion = 1;
  m.xShmMap = nullptr;
  m.xShmLock = nullptr;
  m.xShmBarrier = nullptr;
  m.xShmUnmap = nullptr;
  m.xFetch = nullptr;
  m.xUnfetch = nullptr;
  return m;
}
constexpr sqlite3_io_methods kDatabaseV1 = VersionOne(kDatabaseV3);

// ---- a WAL file ---------------------------------------------------------------------------

int WalWrite(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  File* self = Of(f);
  WalBuffer& b = *self->wal;
  g_from_sqlite.fetch_add(1, std::memory_order_relaxed);
  if (self->database == nullptr) {  // no end of its transactions to be seen: not buffered
    g_to_file.fetch_add(1, std::memory_order_relaxed);
    return RealMethods(f).xWrite(self->real, data, amount, offset);
  }
  const auto size = static_cast<size_t>(amount);
  if (!b.bytes.empty() && (offset != b.start + static_cast<sqlite3_int64>(b.bytes.size()) ||
                           b.bytes.size() + size > kMaxBuffered)) {
    if (const int rc = Flush(self); rc != SQLITE_OK) return rc;
  }
  if (size > kMaxBuffered) {
    g_to_file.fetch_add(1, std::memory_order_relaxed);
    return RealMethods(f).xWrite(self->real, data, amount, offset);
  }
  if (b.bytes.empty()) b.start = offset;
  const char* bytes = static_cast<const char*>(data);
  b.bytes.insert(b.bytes.end(), bytes, bytes + size);
  if (amount == kFrameHeaderBytes) {
    const auto* h = static_cast<const unsigned char*>(data);
    b.commit_frame_next = (h[4] | h[5] | h[6] | h[7]) != 0;
    return SQLITE_OK;
  }
  // The commit frame's page: the transaction is whole; it goes to the file before SQLite
  // publishes it, and a failure here fails the commit.
  if (b.commit_frame_next) return Flush(self);
  return SQLITE_OK;
}

int WalRead(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  if (const int rc = Flush(Of(f)); rc != SQLITE_OK) return rc;
  return Read(f, out, amount, offset);
}
int WalTruncate(sqlite3_file* f, sqlite3_int64 size) {
  if (const int rc = Flush(Of(f)); rc != SQLITE_OK) return rc;
  return Truncate(f, size);
}
int WalSync(sqlite3_file* f, int flags) {
  if (const int rc = Flush(Of(f)); rc != SQLITE_OK) return rc;
  return Sync(f, flags);
}
int WalFileSize(sqlite3_file* f, sqlite3_int64* size) {
  if (const int rc = Flush(Of(f)); rc != SQLITE_OK) return rc;
  return FileSize(f, size);
}
int WalFileControl(sqlite3_file* f, int op, void* arg) {
  if (const int rc = Flush(Of(f)); rc != SQLITE_OK) return rc;
  return FileControl(f, op, arg);
}
int CloseWal(sqlite3_file* f) {
  File* self = Of(f);
  const int flushed = Flush(self);
  if (self->database != nullptr) self->database->wal_file = nullptr;
  const int rc = RealMethods(f).xClose(self->real);
  delete self->wal;
  self->~File();
  return flushed != SQLITE_OK ? flushed : rc;
}

// SQLite uses none of the shared-memory or mapping methods on a WAL file.
constexpr sqlite3_io_methods kWal = VersionOne({.xClose = &CloseWal,
                                                .xRead = &WalRead,
                                                .xWrite = &WalWrite,
                                                .xTruncate = &WalTruncate,
                                                .xSync = &WalSync,
                                                .xFileSize = &WalFileSize,
                                                .xLock = &Lock,
                                                .xUnlock = &Unlock,
                                                .xCheckReservedLock = &CheckReservedLock,
                                                .xFileControl = &WalFileControl,
                                                .xSectorSize = &SectorSize,
                                                .xDeviceCharacteristics = &DeviceCharacteristics});

// ---- the VFS ------------------------------------------------------------------------------

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  File* self = new (f) File{};  // pMethods null: SQLite closes nothing if the open fails
  self->real = reinterpret_cast<sqlite3_file*>(self + 1);
  std::memset(self->real, 0, static_cast<size_t>(g_real->szOsFile));
  const int rc = g_real->xOpen(g_real, name, self->real, flags, out_flags);
  if (rc != SQLITE_OK || self->real->pMethods == nullptr) {
    if (self->real->pMethods != nullptr) self->real->pMethods->xClose(self->real);
    self->~File();
    return rc != SQLITE_OK ? rc : SQLITE_CANTOPEN;
  }
  if ((flags & SQLITE_OPEN_WAL) != 0 && name != nullptr) {
    self->wal = new WalBuffer();
    sqlite3_file* db = sqlite3_database_file_object(name);
    if (db != nullptr && (db->pMethods == &kDatabaseV3 || db->pMethods == &kDatabaseV1)) {
      self->database = Of(db);
      Of(db)->wal_file = self;
    }
    self->base.pMethods = &kWal;
  } else {
    self->base.pMethods = self->real->pMethods->iVersion >= 3 ? &kDatabaseV3 : &kDatabaseV1;
  }
  return SQLITE_OK;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_real->xDelete(g_real, name, sync_dir);
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_real->xAccess(g_real, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return g_real->xFullPathname(g_real, name, size, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return g_real->xDlOpen(g_real, name); }
void DlError(sqlite3_vfs*, int size, char* out) { g_real->xDlError(g_real, size, out); }
void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return g_real->xDlSym(g_real, handle, symbol);
}
void DlClose(sqlite3_vfs*, void* handle) { g_real->xDlClose(g_real, handle); }
int Randomness(sqlite3_vfs*, int size, char* out) { return g_real->xRandomness(g_real, size, out); }
int Sleep(sqlite3_vfs*, int micros) { return g_real->xSleep(g_real, micros); }
int CurrentTime(sqlite3_vfs*, double* out) { return g_real->xCurrentTime(g_real, out); }
int GetLastError(sqlite3_vfs*, int size, char* out) {
  return g_real->xGetLastError(g_real, size, out);
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_real->xCurrentTimeInt64(g_real, out);
}

sqlite3_vfs g_vfs;

}  // namespace

const char* CoalescingWalVfs() {
  static std::once_flag once;
  static bool registered = false;
  std::call_once(once, [] {
    g_real = sqlite3_vfs_find(nullptr);
    // The forwarding below needs a version 2 VFS (xCurrentTimeInt64), as every platform's
    // default has been since SQLite 3.7.
    if (g_real == nullptr || g_real->iVersion < 2) {
      core::LogWarn("sqlite: the default VFS is too old to wrap; WAL writes are not coalesced");
      return;
    }
    g_vfs = sqlite3_vfs{.iVersion = 2,
                        .szOsFile = static_cast<int>(sizeof(File)) + g_real->szOsFile,
                        .mxPathname = g_real->mxPathname,
                        .zName = kName,
                        .xOpen = &Open,
                        .xDelete = &Delete,
                        .xAccess = &Access,
                        .xFullPathname = &FullPathname,
                        .xDlOpen = &DlOpen,
                        .xDlError = &DlError,
                        .xDlSym = &DlSym,
                        .xDlClose = &DlClose,
                        .xRandomness = &Randomness,
                        .xSleep = &Sleep,
                        .xCurrentTime = &CurrentTime,
                        .xGetLastError = &GetLastError,
                        .xCurrentTimeInt64 = &CurrentTimeInt64};
    registered = sqlite3_vfs_register(&g_vfs, 0) == SQLITE_OK;
    if (!registered) core::LogWarn("sqlite: the WAL-coalescing VFS could not be registered");
  });
  return registered ? kName : nullptr;
}

WalWriteCounts WalWrites() {
  return {g_from_sqlite.load(std::memory_order_relaxed), g_to_file.load(std::memory_order_relaxed)};
}

}  // namespace a2ad::storage::sqlite
