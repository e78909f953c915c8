#!/usr/bin/env bash
# SSE fan-out benchmark (bench/RESULTS.md "SSE fan-out"). Run by hand, never by `make test`:
#
#   bash bench/run_fanout.sh            # builds release, runs every configuration 3 times
#   RUNS=1 CONFIGS="1000:50:100" bash bench/run_fanout.sh
#
# Each run gets a fresh server (a2ad serve on 127.0.0.1, port 0, a temp data dir) so RSS
# starts from the same baseline, and a fresh ticker task created by the client. Loopback only.
# Output: a markdown table on stdout, also saved with the raw client output under bench/out/.
#
# Environment:
#   RUNS       runs per configuration (default 3)
#   CONFIGS    space-separated N:intervalMs:ticks (default below)
#   SKIP_BUILD=1  use the binaries as they are
#   BUDGET_S   stop starting new runs after this many seconds (default 540)
#   A2AD_BIN   benchmark this server binary instead of building build/release's (e.g. one
#              built from a clean `git archive` of a commit); A2AD_LABEL names it in the output
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-3}
# 100 and 1,000 subscribers at 20 ticks/s; 10,000 at 2 ticks/s (one event's fan-out, no
# backlog) and at 20 ticks/s (offered load above what the server sustains).
CONFIGS=${CONFIGS:-"100:50:100 1000:50:100 10000:500:50 10000:50:100"}
BUDGET_S=${BUDGET_S:-540}
A2AD=${A2AD_BIN:-build/release/src/a2ad/cli/a2ad}
A2AD_LABEL=${A2AD_LABEL:-$( [[ -n ${A2AD_BIN:-} ]] && echo "$A2AD_BIN" || git describe --always --dirty 2>/dev/null || echo unknown)}
FANOUT=build/release/bench/a2ad_bench_fanout
START=$(date +%s)

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  [[ -f build/release/build.ninja ]] || cmake --preset release >/dev/null
  built=0
  for attempt in 1 2 3; do  # the release tree is shared; a concurrent build may hold it
    if cmake --build --preset release -j2 --target $([[ -z ${A2AD_BIN:-} ]] && echo a2ad) a2ad_bench_fanout >/tmp/a2ad_bench_build.$$ 2>&1; then
      built=1
      break
    fi
    echo "build attempt $attempt failed (tree busy?); retrying in 15 s" >&2
    tail -5 /tmp/a2ad_bench_build.$$ >&2
    sleep 15
  done
  rm -f /tmp/a2ad_bench_build.$$
  [[ $built == 1 ]] || { echo "build failed" >&2; exit 1; }
fi
[[ -x $A2AD && -x $FANOUT ]] || { echo "missing $A2AD or $FANOUT" >&2; exit 1; }

# One benchmark at a time on this machine: two would share the 2 cores and spoil both.
exec 9>/tmp/a2ad-bench-fanout.lock
if ! flock -n 9; then
  echo "another bench/run_fanout.sh is running; waiting for it (up to 10 min)" >&2
  flock -w 600 9 || { echo "gave up waiting for the other benchmark" >&2; exit 1; }
fi
START=$(date +%s)  # the run budget starts now

# Both the server and the client hold one descriptor per subscriber.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
max_n=0
for c in $CONFIGS; do n=${c%%:*}; ((n > max_n)) && max_n=$n; done
if (( $(ulimit -n) < max_n + 200 )); then
  echo "ulimit -n is $(ulimit -n); $max_n subscribers need more (raise the hard limit)" >&2
  exit 1
fi

OUT_DIR=bench/out
mkdir -p "$OUT_DIR"
STAMP=$(date +%Y%m%d-%H%M%S)
RAW="$OUT_DIR/fanout-$STAMP.raw.txt"
TABLE="$OUT_DIR/fanout-$STAMP.md"
: >"$RAW"

SERVER_PID=""
DATA_DIR=""
cleanup() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  [[ -n $DATA_DIR ]] && rm -rf "$DATA_DIR"
  return 0
}
trap cleanup EXIT

# Every subscriber comes from 127.0.0.1: the per-address cap (default 256) would answer all but
# the first 256 with 503, and the total cap (10,000) the last few of 10,000.
start_server() {
  DATA_DIR=$(mktemp -d /tmp/a2ad-bench.XXXXXX)
  "$A2AD" serve --listen 127.0.0.1:0 --data-dir "$DATA_DIR" --log-level warn \
    --stream-queue-limit 1024 --stream-heartbeat-ms 15000 \
    --max-connections 30000 --max-connections-per-address 30000 \
    >"$DATA_DIR/stdout" 2>"$DATA_DIR/stderr" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    grep -q 'serving http' "$DATA_DIR/stdout" 2>/dev/null && break
    sleep 0.1
  done
  PORT=$(sed -nE 's#.*serving http://127\.0\.0\.1:([0-9]+)/.*#\1#p' "$DATA_DIR/stdout")
  [[ -n $PORT ]] || { echo "server did not start:" >&2; cat "$DATA_DIR/stderr" >&2; exit 1; }
}

stop_server() {  # prints how the server ended, and its stderr if any
  local label=$1 rc=0
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID"
    wait "$SERVER_PID" || rc=$?
  else
    wait "$SERVER_PID" || rc=$?
    echo "SERVER_DIED $label rc=$rc" | tee -a "$RAW" >&2
  fi
  if [[ -s $DATA_DIR/stderr ]]; then
    echo "SERVER_STDERR $label (last 20 lines):" >>"$RAW"
    tail -20 "$DATA_DIR/stderr" | sed 's/^/  /' >>"$RAW"
  fi
  echo "SERVER_EXIT $label rc=$rc" >>"$RAW"
  SERVER_PID=""
  rm -rf "$DATA_DIR"
  DATA_DIR=""
}

CXX_BIN=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' build/release/CMakeCache.txt 2>/dev/null)
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)," \
  "kernel $(uname -r), $(${CXX_BIN:-c++} --version | head -1)" | tee -a "$RAW"
echo "server: a2ad $A2AD_LABEL" \
  "(binary built $(date -u -r "$A2AD" +%FT%TZ)), 127.0.0.1, default I/O threads (one per core)" | tee -a "$RAW"
echo "started $(date -u +%FT%TZ); loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RAW"

for cfg in $CONFIGS; do
  IFS=: read -r n interval ticks <<<"$cfg"
  for run in $(seq "$RUNS"); do
    if (( $(date +%s) - START > BUDGET_S )); then
      echo "SKIPPED $cfg run $run: over the ${BUDGET_S}s budget" | tee -a "$RAW" >&2
      continue
    fi
    label="n=$n interval=$interval run=$run"
    echo "== $label (loadavg $(cut -d' ' -f1 /proc/loadavg))" >&2
    start_server
    set +e
    timeout 240 "$FANOUT" --port "$PORT" --server-pid "$SERVER_PID" --subscribers "$n" \
      --ticks "$ticks" --interval-ms "$interval" --connect-timeout-s 45 --quiet \
      >"$OUT_DIR/last-run.txt" 2>&1
    rc=$?
    set -e
    { echo "== $label rc=$rc"; cat "$OUT_DIR/last-run.txt"; } >>"$RAW"
    grep -v '^RESULT' "$OUT_DIR/last-run.txt" | sed 's/^/   /' >&2
    stop_server "$label"
  done
done
rm -f "$OUT_DIR/last-run.txt"

python3 - "$RAW" >"$TABLE" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    if not line.startswith("RESULT "):
        continue
    kv = dict(p.split("=", 1) for p in line.split()[1:])
    rows.setdefault((int(kv["n"]), int(kv["interval_ms"])), []).append(kv)

def cell(runs, key, fmt="{:.1f}"):
    vals = [float(r[key]) for r in runs if r[key] not in ("nan", "-nan")]
    if not vals:
        return "n/a"
    med = fmt.format(statistics.median(vals))
    if len(vals) == 1:
        return med
    return f"{med} ({fmt.format(min(vals))}–{fmt.format(max(vals))})"

print("| subscribers | tick interval asked (actual) | runs ok | attached | subscribe phase s | deliveries/s "
      "| fan-out p50 ms | fan-out p99 ms | delivery p50 ms | delivery p99 ms | server RSS base / attached / peak MB "
      "| RSS per subscriber KB | server CPU % | client CPU % | other CPU % | errors |")
print("|" + "---|" * 16)
for (n, interval), runs in sorted(rows.items(), key=lambda kv: (kv[0][0], -kv[0][1])):
    ok = sum(int(r["ok"]) for r in runs)
    errs = []
    not_attached = sum(n - int(r["attached"]) for r in runs)
    if not_attached:
        errs.append(f"not attached in 45 s: {not_attached}")
    for key in ("connect_errors", "closed_early", "error_events", "not_closed", "missing",
                "gaps", "duplicates"):
        total = sum(int(r[key]) for r in runs)
        if total:
            errs.append(f"{key} {total}")
    rss = " / ".join(cell(runs, k, "{:.0f}") for k in ("rss_base_mb", "rss_attached_mb", "rss_peak_mb"))
    print(f"| {n} | {interval} ms ({cell(runs, 'tick_interval_ms', '{:.0f}')}) | {ok}/{len(runs)} | {cell(runs, 'attached', '{:.0f}')} "
          f"| {cell(runs, 'connect_s', '{:.2f}')} | {cell(runs, 'deliveries_per_s', '{:.0f}')} "
          f"| {cell(runs, 'fanout_p50_ms')} | {cell(runs, 'fanout_p99_ms')} "
          f"| {cell(runs, 'delivery_p50_ms')} | {cell(runs, 'delivery_p99_ms')} | {rss} "
          f"| {cell(runs, 'rss_per_sub_kb')} | {cell(runs, 'server_cpu_pct', '{:.0f}')} "
          f"| {cell(runs, 'client_cpu_pct', '{:.0f}')} | {cell(runs, 'other_cpu_pct', '{:.0f}')} "
          f"| {', '.join(errs) if errs else 'none'} |")
print()
print("Cells: median (min–max) over runs. Fan-out = time until the last subscriber had a tick, "
      "one value per tick; delivery = every (subscriber, tick) pair. CPU: % of one core during "
      "the measured ticks (other = the rest of the machine). The actual tick interval is "
      "measured from the ticks' emittedAtUs.")
EOF
echo "finished $(date -u +%FT%TZ) in $(( $(date +%s) - START )) s; loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RAW" >&2
grep -E '^(SERVER_DIED|SKIPPED)' "$RAW" >&2 || true
head -3 "$RAW"
cat "$TABLE"
echo
echo "table: $TABLE   raw: $RAW" >&2
