#pragma once
// Internal to storage_sqlite: a VFS over the platform's default one that writes a
// transaction's WAL frames to the file in one call instead of two per page.
//
// SQLite appends a commit to the WAL as frames, each a 24-byte header and a page, and writes
// every header and every page with its own xWrite: a send at one connection is some thirty
// pwrite(2) calls of a few bytes or one page each, and a batch of sixty-four sends over a
// hundred (bench/RESULTS.md, stop 51). This VFS buffers the contiguous writes of a WAL file
// and hands them to the file as one write when the frame that commits a transaction has been
// written (its header names the database's size, the WAL file format's mark of a commit).
// Nothing is published before that: readers learn of new frames from the WAL index, which
// SQLite updates after the commit frame's write has returned. Any other use of the WAL file
// (a read, a sync, a size, a truncate, a close, a write elsewhere) writes the buffer first,
// as does a barrier on the database's shared memory, so the file never lags what a
// connection may read or publish. A failed write fails the transaction's commit like a
// failed write of the default VFS, and nothing of it is published. Frames still buffered when
// the connection releases the WAL's write lock belong to a transaction that rolled back: they
// are dropped, never written over what another connection commits next.
//
// Every Connection opens its database through it; databases opened by other programs or by
// a2ad before this VFS are the same files (the on-disk format is SQLite's own).
#include <cstdint>

namespace a2ad::storage::sqlite {

/// The VFS's name, registered with SQLite (not as the default) on the first call.
/// Thread-safe.
const char* CoalescingWalVfs();

/// Process-wide counts, for tests: the xWrite calls SQLite made on WAL files opened through
/// the VFS, and the writes the VFS made to those files.
struct WalWriteCounts {
  uint64_t from_sqlite = 0;
  uint64_t to_file = 0;
};
WalWriteCounts WalWrites();

}  // namespace a2ad::storage::sqlite
