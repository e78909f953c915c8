#!/usr/bin/env python3
"""Several replicas on one PostgreSQL (issue 31): takeover time, cross-replica latency, feed lag.

Usage: bench/replicas_bench.py [--a2ad BIN] [--lease-ttl-ms N] [--rounds N] [--runs N]

Starts a throwaway PostgreSQL (scripts/pg-scratch.sh) and three `a2ad serve` replicas on
loopback, then measures:
  - feed lag: a ticker run executed on r1, followed by an SSE stream on r2; for each event,
    the time it reached r2's stream minus its commit timestamp (the same machine's clock);
  - cancel: tasks/cancel sent to r2 for a run executed on r1, until r1's own stream shows the
    run canceled (the cancel has reached the replica executing it);
  - answer: a gate answered on r2 for a run parked by r1, until r1's stream shows it completed;
  - takeover: `kill -9` of the replica executing --runs ticker runs, until each run's next
    event is committed by another replica (against the declared bound, the lease TTL);
    r1 is started again for the next round.
Prints a markdown table (p50/p99/max in ms). Loopback only; every process is stopped at the end.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rpc(port, method, params, timeout=10):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/a2a", body,
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def message(mid, parts, skill=None, task_id=None):
    m = {"kind": "message", "role": "user", "messageId": mid, "parts": parts}
    if skill:
        m["metadata"] = {"skillId": skill}
    if task_id:
        m["taskId"] = task_id
    return m


def ticker(port, mid, ticks, interval_ms):
    r = rpc(port, "message/send", {"configuration": {"blocking": False}, "message": message(
        mid, [{"kind": "data", "data": {"ticks": ticks, "intervalMs": interval_ms}}], "ticker")})
    return r["result"]["id"]


def follow(port, run_id, on_event, stop):
    """OpenWOP run events of `run_id` from replica `port`; on_event(event, received_at)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    f = s.makefile("rb")
    while not stop.is_set():
        line = f.readline()
        if not line:
            break
        if line.startswith(b"data:"):
            try:
                ev = json.loads(line[5:])
            except ValueError:
                continue
            if on_event(ev, time.time()):
                break
    s.close()


def event_ms(ev):
    return datetime.fromisoformat(ev["timestamp"].replace("Z", "+00:00")).timestamp() * 1000


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Cluster:
    def __init__(self, binary, ttl_ms, tmp, extra=()):
        self.binary, self.ttl_ms, self.tmp, self.extra = binary, ttl_ms, tmp, list(extra)
        self.url = subprocess.check_output(
            ["bash", os.path.join(ROOT, "scripts/pg-scratch.sh"), "start", os.path.join(tmp, "pg")],
            text=True, stderr=subprocess.DEVNULL).strip()
        self.procs, self.ports = {}, {}

    def start(self, name):
        port = self.ports.get(name) or free_port()
        self.ports[name] = port
        log = open(os.path.join(self.tmp, name + ".log"), "a")
        self.procs[name] = subprocess.Popen(
            [self.binary, "serve", "--database-url", self.url, "--listen", f"127.0.0.1:{port}",
             "--data-dir", os.path.join(self.tmp, name), "--replica-id", name,
             "--lease-ttl-ms", str(self.ttl_ms), "--workflows-dir",
             os.path.join(ROOT, "workflows"), "--conformance-fixtures"] + self.extra,
            stdout=log, stderr=log)
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        return port
            except Exception:
                time.sleep(0.05)
        raise RuntimeError(f"{name} did not become ready")

    def kill(self, name, sig=signal.SIGKILL):
        self.procs[name].send_signal(sig)
        self.procs[name].wait()

    def close(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait()
        subprocess.call(["bash", os.path.join(ROOT, "scripts/pg-scratch.sh"), "stop",
                         os.path.join(self.tmp, "pg")], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)


def measure_feed_lag(c, rounds):
    lags = []
    for i in range(rounds):
        run = ticker(c.ports["r1"], f"lag-{i}-{time.time()}", 20, 50)
        stop = threading.Event()

        def on(ev, at):
            lags.append(at * 1000 - event_ms(ev))
            return ev.get("type") == "run.completed"
        follow(c.ports["r2"], run, on, stop)
    return lags


def time_until(port, run, is_it, act, settle):
    """ms from act() until an event of `run` that is_it() accepts reaches a stream on `port`;
    None if none came within 5 s."""
    seen, stop = threading.Event(), threading.Event()
    got = {}

    def on(ev, at):
        if is_it(ev):
            got["at"] = at
            seen.set()
            return True
        return False
    t = threading.Thread(target=follow, args=(port, run, on, stop), daemon=True)
    t.start()
    time.sleep(settle)
    t0 = time.time()
    act()
    ms = (got["at"] - t0) * 1000 if seen.wait(5) else None
    stop.set()
    return ms


def measure_cancel(c, rounds):
    out = []
    for i in range(rounds):
        run = ticker(c.ports["r1"], f"cancel-{i}-{time.time()}", 1000, 20)
        ms = time_until(c.ports["r1"], run, lambda ev: "cancel" in ev.get("type", ""),
                        lambda: rpc(c.ports["r2"], "tasks/cancel", {"id": run}), 0.2)
        if ms is not None:
            out.append(ms)
    return out


def measure_answer(c, rounds):
    out = []
    for i in range(rounds):
        gate = rpc(c.ports["r1"], "message/send",
                   {"message": message(f"gate-{i}-{time.time()}", [{"kind": "text", "text": "go"}],
                                       "conformance-approval")})
        run = gate["result"]["id"]
        answer = {"message": message(f"answer-{i}-{time.time()}",
                                     [{"kind": "data", "data": {"action": "accept"}}], task_id=run)}
        ms = time_until(c.ports["r1"], run, lambda ev: ev.get("type") == "run.completed",
                        lambda: rpc(c.ports["r2"], "message/send", answer), 0.1)
        if ms is not None:
            out.append(ms)
    return out


def measure_takeover(c, rounds, runs):
    out = []
    for r in range(rounds):
        ids = [ticker(c.ports["r1"], f"take-{r}-{i}-{time.time()}", 400, 50) for i in range(runs)]
        time.sleep(0.5)
        last = {}
        for run in ids:  # the sequence committed so far
            poll = urllib.request.urlopen(
                f"http://127.0.0.1:{c.ports['r2']}/v1/runs/{run}/events/poll?lastSequence=-1&timeout=0")
            last[run] = json.loads(poll.read())["events"][-1]["sequence"]
        t0 = time.time()
        c.kill("r1")
        pending = dict(last)
        while pending and time.time() - t0 < 60:
            for run in list(pending):
                poll = urllib.request.urlopen(
                    f"http://127.0.0.1:{c.ports['r2']}/v1/runs/{run}/events/poll"
                    f"?lastSequence={pending[run] + 1}&timeout=0")
                if json.loads(poll.read())["events"]:
                    out.append((time.time() - t0) * 1000)
                    del pending[run]
            time.sleep(0.02)
        for run in ids:
            rpc(c.ports["r2"], "tasks/cancel", {"id": run})
        c.start("r1")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a2ad", default=os.path.join(ROOT, "build/release/src/a2ad/cli/a2ad"))
    ap.add_argument("--lease-ttl-ms", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--takeover-rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="a2ad-rb-", dir="/tmp")
    os.chmod(tmp, 0o755)  # (as root, the database runs as the postgres user)
    c = Cluster(a.a2ad, a.lease_ttl_ms, tmp)
    try:
        for name in ("r1", "r2", "r3"):
            c.start(name)
        rows = [("feed lag: event committed on r1 -> on r2's stream", measure_feed_lag(c, 3)),
                ("cancel sent to r2 -> r1 (executing) sees it", measure_cancel(c, a.rounds)),
                ("gate answered on r2 -> run completed (seen on r1)", measure_answer(c, a.rounds)),
                (f"takeover after kill -9 (lease {a.lease_ttl_ms} ms): next step committed",
                 measure_takeover(c, a.takeover_rounds, a.runs))]
    finally:
        c.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("| measure | n | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|")
    for name, xs in rows:
        if not xs:
            print(f"| {name} | 0 | - | - | - |")
            continue
        print(f"| {name} | {len(xs)} | {statistics.median(xs):.1f} | {pct(xs, 99):.1f} | "
              f"{max(xs):.1f} |")


if __name__ == "__main__":
    sys.exit(main())
