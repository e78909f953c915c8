#!/usr/bin/env python3
"""Which pages a2ad's commits write: reads a stopped server's WAL and names each frame's b-tree.

usage: python3 bench/wal_pages.py DATA_DIR [LAST_N_COMMITS]

DATA_DIR holds a2ad.db and a2ad.db-wal as a killed server left them (SIGKILL, so the WAL is
not checkpointed away). Every frame of the WAL's current generation (the salts of its header)
is one page a transaction wrote; a frame whose header names the database size ends a
transaction. The pages are named from a copy of the database (SQLite's dbstat table), so the
data directory itself is left as it was. Prints the frames per commit over the last N commits
(default 200) and their split by table or index.
"""
import collections
import os
import shutil
import sqlite3
import struct
import sys
import tempfile


def commits_of(wal):
    _, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">8I", wal[:32])
    commits, current, offset = [], [], 32
    while offset + 24 + page_size <= len(wal):
        page, db_size, s1, s2, _, _ = struct.unpack(">6I", wal[offset:offset + 24])
        if (s1, s2) != (salt1, salt2):
            break  # a frame of an earlier generation: the WAL restarted before it
        current.append(page)
        if db_size:
            commits.append(current)
            current = []
        offset += 24 + page_size
    return page_size, commits


def main():
    data_dir = sys.argv[1]
    last = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    with open(os.path.join(data_dir, "a2ad.db-wal"), "rb") as f:
        page_size, commits = commits_of(f.read())
    if not commits:
        sys.exit("no committed transaction in the WAL")
    with tempfile.TemporaryDirectory() as copy:
        for name in ("a2ad.db", "a2ad.db-wal"):
            shutil.copy(os.path.join(data_dir, name), copy)
        db = sqlite3.connect(os.path.join(copy, "a2ad.db"))
        owner = dict((page, name) for name, page in db.execute("SELECT name, pageno FROM dbstat"))
        db.close()
    sample = commits[-last:]
    by_tree = collections.Counter(owner.get(p, "(new page)") for c in sample for p in c)
    print("page size %d; %d commits in the WAL, the last %d: %.2f frames per commit"
          % (page_size, len(commits), len(sample), sum(map(len, sample)) / len(sample)))
    for name, n in by_tree.most_common():
        print("  %5.2f %s" % (n / len(sample), name))


if __name__ == "__main__":
    main()
