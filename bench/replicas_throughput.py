#!/usr/bin/env python3
"""Blocking durable sends through HAProxy to 1, 2 and 3 replicas on one PostgreSQL (issue 31).

Usage: bench/replicas_throughput.py [--a2ad BIN] [--rounds N] [--seconds S] [--connections C]

One throwaway PostgreSQL (scripts/pg-scratch.sh) for the whole run. For each cell, fresh
`a2ad serve` replicas (bench/replicas_bench.py's Cluster) and, but for the "direct" cell, an
HAProxy balancing them round robin as scripts/cluster-demo.sh does; bench/loadgen sends v1.0
`SendMessage` (echo, blocking) with C connections, each message new. Cells alternate within a
round, so a slow spell of the machine does not fall on one of them. Prints a markdown table of
medians (req/s, p50, p99), the ratio to one replica behind the balancer, and the CPU each
request took in the replicas, in PostgreSQL and in HAProxy (from /proc, over the load and its
1 s warm-up, divided by the requests of both at the measured rate), and the transactions
PostgreSQL committed per request (pg_stat_database; the heartbeats and claims included). The machine's
cores are shared by the loader, HAProxy, PostgreSQL and every replica: on a small VM more
replicas cannot mean more throughput, only what the cluster costs. Loopback only.
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replicas_bench import ROOT, Cluster, free_port  # noqa: E402

LOADGEN = os.path.join(ROOT, "build/release/bench/a2ad_bench_loadgen")
BODY = ('{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendMessage","params":{"message":'
        '{"messageId":"%s-@SEQ@","role":"ROLE_USER","parts":[{"text":"hello"}]}}}')


def haproxy(tmp, ports):
    port = free_port()
    cfg = os.path.join(tmp, f"haproxy-{port}.cfg")
    with open(cfg, "w") as f:
        f.write(f"""global
  maxconn 4096
defaults
  mode http
  retries 2
  option redispatch
  timeout connect 5s
  timeout client 1m
  timeout server 1m
frontend a2a
  bind 127.0.0.1:{port}
  default_backend replicas
backend replicas
  balance roundrobin
""")
        for i, p in enumerate(ports):
            f.write(f"  server r{i} 127.0.0.1:{p}\n")
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    proc = subprocess.Popen([binary, "-db", "-f", cfg], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("haproxy did not start")


CLK = os.sysconf("SC_CLK_TCK")


def cpu_s(pids):
    """User plus system CPU seconds of `pids` (those gone count 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / CLK


def postgres_pids():
    """Every process of the throwaway PostgreSQL (the postmaster and its backends)."""
    out = subprocess.run(["pgrep", "-f", "^postgres"], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def commits(url):
    """Transactions committed in the database so far (pg_stat_database: flushed lazily, so
    read after a pause)."""
    out = subprocess.run(["psql", url, "-Atc", "SELECT pg_stat_force_next_flush();"
                          " SELECT xact_commit FROM pg_stat_database"
                          " WHERE datname = current_database()"],
                         capture_output=True, text=True).stdout.split()
    return int(out[-1]) if out else 0


def load(port, conns, seconds, tag, tmp):
    body = os.path.join(tmp, f"body-{tag}.json")
    with open(body, "w") as f:
        f.write(BODY % tag)
    out = subprocess.check_output(
        [LOADGEN, "--port", str(port), "--connections", str(conns), "--warmup-s", "1",
         "--duration-s", str(seconds), "--header", "A2A-Version: 1.0", "--body-file", body,
         "--expect", "TASK_STATE_COMPLETED"], text=True)
    line = [x for x in out.splitlines() if x.startswith("RESULT")][-1]
    kv = dict(item.split("=", 1) for item in line.split()[1:])
    if int(kv["errors"]) or int(kv["unexpected"]):
        print(f"  ({tag}: {kv['errors']} errors, {kv['unexpected']} unexpected answers)",
              file=sys.stderr)
    return float(kv["rps"]), float(kv["p50_ms"]), float(kv["p99_ms"])


def cell(c, n, balanced, conns, seconds, tag, tmp):
    names = [f"{tag}-r{i}" for i in range(n)]
    ports = [c.start(name) for name in names]
    lb = None
    try:
        port = ports[0]
        if balanced:
            lb, port = haproxy(tmp, ports)
        groups = {"a2ad": [c.procs[name].pid for name in names], "pg": postgres_pids(),
                  "lb": [lb.pid] if lb else []}
        before = {k: cpu_s(v) for k, v in groups.items()}
        xacts = commits(c.url)
        rps, p50, p99 = load(port, conns, seconds, tag, tmp)
        xacts = commits(c.url) - xacts
        groups["pg"] = sorted(set(groups["pg"]) | set(postgres_pids()))
        requests = rps * (seconds + 1) / 1000  # thousands, the warm-up included
        per_k = {k: (cpu_s(v) - before[k]) * 1000 / requests for k, v in groups.items()}
        return rps, p50, p99, per_k["a2ad"], per_k["pg"], per_k["lb"], xacts / (requests * 1000)
    finally:
        if lb:
            lb.kill()
            lb.wait()
        for name in names:
            c.kill(name, signal.SIGTERM)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a2ad", default=os.path.join(ROOT, "build/release/src/a2ad/cli/a2ad"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--connections", type=int, default=64)
    a = ap.parse_args()
    if not os.access(LOADGEN, os.X_OK):
        subprocess.check_call(["cmake", "--build", os.path.join(ROOT, "build/release"),
                               "--target", "a2ad_bench_loadgen"])
    tmp = tempfile.mkdtemp(prefix="a2ad-rt-", dir="/tmp")
    os.chmod(tmp, 0o755)  # (as root, the database runs as the postgres user)
    cells = [("1 replica, direct", 1, False), ("1 replica, HAProxy", 1, True),
             ("2 replicas, HAProxy", 2, True), ("3 replicas, HAProxy", 3, True)]
    seen = {name: [] for name, _, _ in cells}
    c = Cluster(a.a2ad, 8000, tmp, ["--default-skill", "echo", "--log-level", "warn"])
    try:
        for rnd in range(a.rounds):
            for i, (name, n, balanced) in enumerate(cells):
                got = cell(c, n, balanced, a.connections, a.seconds, f"x{rnd}c{i}", tmp)
                seen[name].append(got)
                print(f"round {rnd + 1}  {name:22} req/s {got[0]:8.0f}  p50 {got[1]:.2f} ms  "
                      f"p99 {got[2]:.2f} ms  CPU ms/1k a2ad {got[3]:.0f} pg {got[4]:.0f} "
                      f"haproxy {got[5]:.0f}  commits/request {got[6]:.2f}", file=sys.stderr)
    finally:
        c.close()
        shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(x[0] for x in seen["1 replica, HAProxy"])
    print(f"| c={a.connections}, medians of {a.rounds} | req/s | vs 1 behind HAProxy | "
          "p50 ms | p99 ms | CPU ms per 1k: replicas | PostgreSQL | HAProxy | "
          "PostgreSQL commits per request |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, _, _ in cells:
        xs = seen[name]
        med = [statistics.median(x[i] for x in xs) for i in range(7)]
        print(f"| {name} | {med[0]:.0f} | {med[0] / base:.2f} | {med[1]:.2f} | {med[2]:.2f} | "
              f"{med[3]:.0f} | {med[4]:.0f} | {med[5]:.0f} | {med[6]:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
