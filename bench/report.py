#!/usr/bin/env python3
"""Turns a bench/run_bench.sh raw file into the markdown tables of bench/RESULTS.md.

Cells are medians over runs; "spread" is (max - min) / median of the runs' throughput.
"""
import statistics
import sys
from collections import defaultdict

TARGET_ORDER = ["a2ad", "a2ad-v1", "a2ad-full", "sdk1-memory", "sdk1-sqlite",
                "sdk1-sqlite-defaults", "sdk03", "ceiling", "a2ad-rest", "sdk1-rest", "a2ad-grpc",
                "sdk1-grpc", "a2ad-https", "a2ad-key", "a2ad-jwt", "a2ad-pg", "sdk1-pg"]
LABEL = {
    "a2ad": "a2ad (v0.3 wire, SQLite)",
    "a2ad-v1": "a2ad (v1.0 wire, SQLite)",
    "sdk1-memory": "@a2a-js/sdk 1.x, in memory",
    "a2ad-full": "a2ad (v1.0 wire, SQLite synchronous=FULL)",
    "sdk1-sqlite": "@a2a-js/sdk 1.x, SQLite store",
    "sdk1-sqlite-defaults": "@a2a-js/sdk 1.x, SQLite store on its defaults (rollback journal, synchronous=FULL)",
    "sdk03": "@a2a-js/sdk 0.3.x, in memory",
    "ceiling": "ceiling (bare Beast + JSON)",
    "a2ad-rest": "a2ad, HTTP+JSON (v1.0, SQLite)",
    "a2ad-grpc": "a2ad, gRPC (v1.0, SQLite)",
    "sdk1-rest": "@a2a-js/sdk 1.x, HTTP+JSON, in memory",
    "sdk1-grpc": "@a2a-js/sdk 1.x, gRPC, in memory",
    "a2ad-https": "a2ad (v1.0 wire, SQLite) over TLS",
    "a2ad-key": "a2ad (v1.0 wire, SQLite) with an API key per request",
    "a2ad-jwt": "a2ad (v1.0 wire, SQLite) with an OIDC ES256 JWT per request",
    "a2ad-pg": "a2ad (v1.0 wire) on PostgreSQL",
    "sdk1-pg": "@a2a-js/sdk 1.x, its SQL store on PostgreSQL",
}
# The a2ad cell an SDK cell is compared with, per binding (bindings_table); JSON-RPC first.
BINDINGS = [("JSON-RPC", "a2ad-v1", "sdk1-memory"), ("HTTP+JSON", "a2ad-rest", "sdk1-rest"),
            ("gRPC", "a2ad-grpc", "sdk1-grpc")]
SCENARIO_TITLE = {
    "send": "Blocking `message/send` / `SendMessage` of the echo skill (task created, completed, stored)",
    "get": "`tasks/get` / `GetTask` of existing tasks (1,000 seeded, round-robin)",
    "stream": "`message/stream` / `SendStreamingMessage` to completion",
}


def parse(paths):
    rows, restarts, seeds, header = [], [], {}, []
    lines = [line for path in paths for line in open(path)]
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith(("machine:", "versions:", "command:", "started:", "finished:")):
            header.append(line)
        parts = line.split()
        if not parts:
            continue
        kind = parts[0]
        if kind not in ("RESULT", "RESTART", "SEED"):
            continue
        kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        if kind == "RESULT":
            rows.append(kv)
        elif kind == "RESTART":
            restarts.append(kv)
        else:
            seeds[kv["n"]] = kv
    return header, rows, restarts, seeds


def med(vals):
    return statistics.median(vals) if vals else float("nan")


def fmt(v, digits=1):
    if v != v:  # nan
        return "n/a"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


BEGIN_MARK = "<!-- bench-tables:begin (written by bench/run_bench.sh; edit the text around it) -->"
END_MARK = "<!-- bench-tables:end -->"


def write_into(path, raw_paths):
    """Replaces the text between the bench-tables markers of `path` with the tables."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        report(raw_paths)
    text = open(path).read()
    begin, end = text.find(BEGIN_MARK), text.find(END_MARK)
    if begin < 0 or end < begin:
        sys.exit(f"{path}: no bench-tables markers")
    text = text[:begin + len(BEGIN_MARK)] + "\n\n" + buf.getvalue().rstrip() + "\n\n" + text[end:]
    open(path, "w").write(text)


def bindings_table(cells):
    """a2ad / @a2a-js/sdk 1.x per A2A 1.0 binding, when a binding target ran."""
    if not any(k[1] in ("a2ad-rest", "a2ad-grpc") for k in cells):
        return
    print("#### A2A 1.0 bindings side by side: a2ad / `@a2a-js/sdk` 1.x (in memory)")
    print()
    print("Per cell: a2ad req/s / SDK req/s (median of runs), and in brackets the SDK's server "
          "CPU per request / a2ad's (how many times more CPU the SDK spends per request).")
    print()
    names = [b for b in BINDINGS if any(k[1] == b[1] for k in cells)]
    print("| scenario | conns | " + " | ".join(f"{n} a2ad req/s | {n} SDK req/s | {n} ratio (CPU)"
                                             for n, _, _ in names) + " |")
    print("|---|---|" + "---|---|---|" * len(names))
    for scenario in ("send", "get", "stream"):
        for c in sorted({k[2] for k in cells if k[0] == scenario}):
            cols = []
            for _, mine, theirs in names:
                a, b = cells.get((scenario, mine, c), []), cells.get((scenario, theirs, c), [])
                ra = med([float(r["rps"]) for r in a])
                rb = med([float(r["rps"]) for r in b])
                ca = med([float(r["cpu_ms_per_1k"]) for r in a])
                cb = med([float(r["cpu_ms_per_1k"]) for r in b])
                ratio = f"{ra / rb:.2f}x ({cb / ca:.1f}x)" if a and b and rb > 0 and ca > 0 else "n/a"
                cols += [fmt(ra, 0), fmt(rb, 0), ratio]
            print(f"| {scenario} | {c} | " + " | ".join(cols) + " |")
    print()


def security_table(cells):
    """What TLS and API-key authentication cost per request, against plain a2ad-v1."""
    modes = [(t, n) for t, n in (("a2ad-https", "https"), ("a2ad-key", "API key"),
                                      ("a2ad-jwt", "JWT"))
             if any(k[1] == t for k in cells)]
    if not modes:
        return
    print("#### TLS and API-key authentication: a2ad over https, and with a key per request")
    print()
    print("Per cell: req/s (median of runs), then the mode's req/s / plain req/s and, in brackets, "
          "its server CPU per request / plain's.")
    print()
    print("| scenario | conns | plain req/s | " + " | ".join(f"{n} req/s | {n} / plain (CPU)"
                                                      for _, n in modes) + " |")
    print("|---|---|---|" + "---|---|" * len(modes))
    for scenario in ("send", "get", "stream"):
        for c in sorted({k[2] for k in cells if k[0] == scenario and k[1] == "a2ad-v1"}):
            base = cells.get((scenario, "a2ad-v1", c), [])
            rb = med([float(r["rps"]) for r in base])
            cb = med([float(r["cpu_ms_per_1k"]) for r in base])
            cols = [fmt(rb, 0)]
            for target, _ in modes:
                m = cells.get((scenario, target, c), [])
                rm = med([float(r["rps"]) for r in m])
                cm = med([float(r["cpu_ms_per_1k"]) for r in m])
                ratio = f"{rm / rb:.2f}x ({cm / cb:.2f}x)" if m and base and rb > 0 and cb > 0 else "n/a"
                cols += [fmt(rm, 0), ratio]
            print(f"| {scenario} | {c} | " + " | ".join(cols) + " |")
    print()


def postgres_table(cells):
    """a2ad on PostgreSQL beside a2ad on SQLite and the SDK's SQL store on the same PostgreSQL."""
    if not any(k[1] == "a2ad-pg" for k in cells):
        return
    print("#### PostgreSQL: a2ad on it, a2ad on SQLite, the SDK's SQL store on it")
    print()
    print("Per cell: req/s (median of runs); a2ad-pg / a2ad-SQLite and a2ad-pg / SDK-pg; then "
          "CPU per 1,000 requests of each server and, apart, of PostgreSQL (ms).")
    print()
    print("| scenario | conns | a2ad SQLite req/s | a2ad PG req/s | SDK PG req/s | PG / SQLite | "
          "a2ad / SDK on PG | a2ad PG: server CPU, db CPU | SDK PG: server CPU, db CPU |")
    print("|---|---|---|---|---|---|---|---|---|")

    def m(rs, key):
        vals = [float(r[key]) for r in rs if key in r]
        return med(vals) if vals else float("nan")

    for scenario in ("send", "get", "stream"):
        for c in sorted({k[2] for k in cells if k[0] == scenario and k[1] == "a2ad-pg"}):
            lite = cells.get((scenario, "a2ad-v1", c), [])
            pg = cells.get((scenario, "a2ad-pg", c), [])
            sdk = cells.get((scenario, "sdk1-pg", c), [])
            rl, rp, rs = m(lite, "rps"), m(pg, "rps"), m(sdk, "rps")
            share = f"{rp / rl:.0%}" if lite and rl > 0 else "n/a"
            over = f"{rp / rs:.1f}x" if sdk and rs > 0 else "n/a"
            print(f"| {scenario} | {c} | {fmt(rl, 0)} | {fmt(rp, 0)} | {fmt(rs, 0)} | {share} | {over} | "
                  f"{fmt(m(pg, 'cpu_ms_per_1k'), 0)}, {fmt(m(pg, 'db_cpu_ms_per_1k'), 0)} | "
                  f"{fmt(m(sdk, 'cpu_ms_per_1k'), 0)}, {fmt(m(sdk, 'db_cpu_ms_per_1k'), 0)} |")
    print()


def main():
    args = sys.argv[1:]
    if args[:1] == ["--write"]:
        write_into(args[1], args[2:])
    else:
        report(args)


def report(raw_paths):
    header, rows, restarts, seeds = parse(raw_paths)
    for h in header:
        print(f"- {h}")
    print()
    cells = defaultdict(list)
    for r in rows:
        cells[(r["scenario"], r["target"], int(r["connections"]))].append(r)
    med_rps = {}
    for scenario in ("send", "get", "stream"):
        keys = sorted((k for k in cells if k[0] == scenario),
                      key=lambda k: (TARGET_ORDER.index(k[1]) if k[1] in TARGET_ORDER else 99, k[2]))
        if not keys:
            continue
        print(f"#### {SCENARIO_TITLE[scenario]}")
        print()
        print("| server | conns | runs | req/s (median) | spread | p50 ms | p99 ms | server CPU ms / 1k req "
              "| server CPU % | client CPU % | other CPU % | peak RSS MB | errors |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for k in keys:
            runs = cells[k]
            rps = [float(r["rps"]) for r in runs]
            m = med(rps)
            med_rps[k] = m
            spread = (max(rps) - min(rps)) / m * 100 if m > 0 and len(rps) > 1 else float("nan")
            errs = sum(int(r["errors"]) + int(r["unexpected"]) for r in runs)
            print(f"| {LABEL.get(k[1], k[1])} | {k[2]} | {len(runs)} | {fmt(m, 0)} | "
                  f"{'n/a' if spread != spread else f'{spread:.0f}%'} | "
                  f"{fmt(med([float(r['p50_ms']) for r in runs]), 3)} | "
                  f"{fmt(med([float(r['p99_ms']) for r in runs]), 3)} | "
                  f"{fmt(med([float(r['cpu_ms_per_1k']) for r in runs]))} | "
                  f"{fmt(med([float(r['server_cpu_pct']) for r in runs]), 0)} | "
                  f"{fmt(med([float(r['client_cpu_pct']) for r in runs]), 0)} | "
                  f"{fmt(med([float(r.get('other_cpu_pct', 'nan')) for r in runs]), 0)} | "
                  f"{fmt(med([float(r['rss_peak_mb']) for r in runs]), 0)} | {errs} |")
        print()
        # Ratios: a2ad over each alternative, per connection count, same wire where possible.
        conns = sorted({k[2] for k in keys})
        others = [t for t in TARGET_ORDER if not t.startswith("a2ad") and any(
            (scenario, t, c) in med_rps for c in conns)]
        if others:
            print(f"Throughput ratios, a2ad / other (median req/s; a2ad on the other's wire version "
                  f"where measured):")
            print()
            print("| conns | " + " | ".join(f"a2ad / {LABEL[t]}" for t in others) + " |")
            print("|---|" + "---|" * len(others))
            for c in conns:
                cols = []
                for t in others:
                    pair = {b[2]: b[1] for b in BINDINGS[1:]}.get(t)
                    mine = med_rps.get((scenario, pair, c)) if pair else med_rps.get(
                        (scenario, "a2ad-v1" if t.startswith("sdk1") and
                         (scenario, "a2ad-v1", c) in med_rps else "a2ad", c))
                    theirs = med_rps.get((scenario, t, c))
                    cols.append(f"{mine / theirs:.1f}x" if mine and theirs else "n/a")
                print(f"| {c} | " + " | ".join(cols) + " |")
            print()

    bindings_table(cells)
    security_table(cells)
    postgres_table(cells)

    if restarts:
        print("#### Restart with stored tasks: spawn -> first `tasks/get` answered")
        print()
        print("| stored tasks | page cache | DB size MB | seed time s | runs | ready line ms (median, min–max) "
              "| first tasks/get ms (median, min–max) | RSS at first answer MB |")
        print("|---|---|---|---|---|---|---|---|")
        by_n = defaultdict(list)
        for r in restarts:
            by_n[(int(r["n"]), r.get("cache", "warm"))].append(r)
        for key in sorted(by_n, key=lambda k: (k[0], k[1] != "warm")):
            n, cache = key
            rs = by_n[key]
            ready = [float(r["ready_ms"]) for r in rs]
            first = [float(r["first_get_ms"]) for r in rs]
            s = seeds.get(str(n), {})
            print(f"| {n:,} | {cache} | {s.get('db_mb', '?')} | {s.get('seconds', '?')} | {len(rs)} | "
                  f"{fmt(med(ready))} ({fmt(min(ready))}–{fmt(max(ready))}) | "
                  f"{fmt(med(first))} ({fmt(min(first))}–{fmt(max(first))}) | "
                  f"{fmt(med([float(r['rss_mb']) for r in rs]))} |")
        print()

    # Targets of issue 6.
    def peak(scenario, target):
        vals = [(v, k[2]) for k, v in med_rps.items() if k[0] == scenario and k[1] == target]
        return max(vals) if vals else (float("nan"), 0)

    rows_out = []
    a2ad_peak = max((p for p in (peak("send", "a2ad"), peak("send", "a2ad-v1")) if p[0] == p[0]),
                    default=(float("nan"), 0))
    for other, factor in (("sdk1-memory", 5), ("sdk1-sqlite", 50), ("sdk1-sqlite-defaults", 50),
                          ("ceiling", 0.4)):
        o = peak("send", other)
        if a2ad_peak[0] == a2ad_peak[0] and o[0] == o[0] and o[0] > 0:
            ratio = a2ad_peak[0] / o[0]
            what = f"{factor:g}x {LABEL[other]}" if factor >= 1 else f"{factor:.0%} of {LABEL[other]}"
            rows_out.append(f"| blocking send >= {what} (peak vs peak) | {fmt(a2ad_peak[0], 0)} req/s "
                  f"(c={a2ad_peak[1]}) vs {fmt(o[0], 0)} (c={o[1]}): {ratio:.2f}x | "
                  f"{'yes' if ratio >= factor else 'NO'} |")
    full, o = peak("send", "a2ad-full"), peak("send", "sdk1-sqlite-defaults")
    if full[0] == full[0] and o[0] == o[0] and o[0] > 0:
        rows_out.append(f"| (both durable against power loss) {LABEL['a2ad-full']} vs {LABEL['sdk1-sqlite-defaults']} "
              f"| {fmt(full[0], 0)} req/s (c={full[1]}) vs {fmt(o[0], 0)} (c={o[1]}): {full[0] / o[0]:.2f}x | - |")
    seq = [float(r["p50_ms"]) for r in rows
           if r["scenario"] == "send" and r["target"] == "a2ad" and r["connections"] == "1"]
    if seq:
        p50 = med(seq)
        rows_out.append(f"| p50 sequential round trip < 0.2 ms (a2ad, send, 1 connection) | {p50:.3f} ms | "
              f"{'yes' if p50 < 0.2 else 'NO'} |")
    big = [float(r["first_get_ms"]) for r in restarts if r["n"] == "1000000"]  # warm and cold
    if big:
        m = med(big)
        rows_out.append(f"| restart with 1M stored tasks serving within 1 s (median; slowest {max(big):.0f} ms) | {m:.0f} ms | "
              f"{'yes' if m < 1000 else 'NO'} |")
    if rows_out:
        print("#### Targets")
        print()
        print("| target | measured | met |")
        print("|---|---|---|")
        for line in rows_out:
            print(line)
        print()


if __name__ == "__main__":
    main()
