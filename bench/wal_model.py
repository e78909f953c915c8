#!/usr/bin/env python3
"""WAL pages per commit of a model of a2ad's SQLite send: task_events as WITHOUT ROWID (today's
schema) against a rowid table with a unique (task_id, sequence) index (bench/RESULTS.md, "The
task_events candidate"), and against a table keyed by one integer, a per-task number shifted
left 24 bits or'd with the sequence, with no second index (bench/RESULTS.md, stop 50). Not a2ad's schema verbatim: the tasks table with four of its indexes,
UUIDv7 task ids as a2ad makes them, a 900-byte snapshot and three 500-byte events per send.

    python3 bench/wal_model.py [SENDS]
"""
import os
import sqlite3
import sys
import tempfile
import time
import uuid

PAGE = 4096 + 24  # a WAL frame: the page and its header


def uuid7(offset_ms):
    ms = int(time.time() * 1000) + offset_ms
    return str(uuid.UUID(bytes=ms.to_bytes(6, "big") + os.urandom(10)))


def wal_pages_per_commit(layout, sends, per_commit, workdir):
    path = os.path.join(workdir, f"model-{layout}-{per_commit}.db")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE tasks(id TEXT PRIMARY KEY NOT NULL, context_id TEXT NOT NULL, "
               "state INT, updated INT, snapshot TEXT, tenant TEXT, run TEXT)")
    for columns in ("tenant, updated DESC, id DESC", "tenant, context_id, updated DESC, id DESC",
                    "state, updated DESC, id DESC", "tenant, state, updated DESC, id DESC"):
        db.execute(f"CREATE INDEX tasks_{len(columns)} ON tasks({columns})")
    events = ("task_id TEXT NOT NULL, sequence INT NOT NULL, event_id TEXT, type TEXT, "
              "node_id TEXT, timestamp_ms INT, payload TEXT")
    if layout == "int-key":
        db.execute(f"CREATE TABLE task_events(k INTEGER PRIMARY KEY, {events})")
    elif layout == "rowid":
        db.execute(f"CREATE TABLE task_events({events})")
        db.execute("CREATE UNIQUE INDEX task_events_key ON task_events(task_id, sequence)")
    else:
        db.execute(f"CREATE TABLE task_events({events}, PRIMARY KEY (task_id, sequence)) "
                   "WITHOUT ROWID")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    start = os.path.getsize(path + "-wal")
    commits = sends // per_commit
    for c in range(commits):
        db.execute("BEGIN")
        for k in range(per_commit):
            task = uuid7(c * per_commit + k)
            db.execute("INSERT INTO tasks VALUES(?,?,?,?,?,?,?)",
                       (task, uuid7(c), 3, c, "x" * 900, "default", "{}"))
            for seq in range(3):
                row = (task, seq, str(uuid.uuid4()), "status", "n", c, "y" * 500)
                if layout == "int-key":
                    row = (((c * per_commit + k) << 24) | seq,) + row
                db.execute(f"INSERT INTO task_events VALUES({','.join('?' * len(row))})", row)
        db.execute("COMMIT")
    pages = (os.path.getsize(path + "-wal") - start) / commits / PAGE
    db.close()
    return pages


def main():
    sends = int(sys.argv[1]) if len(sys.argv) > 1 else 3200
    with tempfile.TemporaryDirectory() as workdir:
        for per_commit in (1, 32):
            today = wal_pages_per_commit("without-rowid", sends, per_commit, workdir)
            rowid = wal_pages_per_commit("rowid", sends, per_commit, workdir)
            key = wal_pages_per_commit("int-key", sends, per_commit, workdir)
            print(f"sends per commit {per_commit:3}: WITHOUT ROWID {today:6.2f} pages, "
                  f"rowid + index {rowid:6.2f} pages ({(rowid - today) / today * 100:+.0f}%), "
                  f"integer key {key:6.2f} pages ({(key - today) / today * 100:+.0f}%)")


if __name__ == "__main__":
    main()
