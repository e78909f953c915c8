#!/usr/bin/env bash
# Blocking sends as the database grows (bench/RESULTS.md "Stop 58"):
#
#   bash bench/grow.sh [A2AD_BINARY] [FILL_SECONDS] [STEPS]
#
# One `a2ad serve` (127.0.0.1, port 0, a temp data dir) measured with bench/loadgen.cpp: 5 s of
# v1.0 SendMessage of the echo skill at 1 and at 64 connections, then FILL_SECONDS (default 60)
# of sends at 64 connections to grow the database, STEPS times (default 3), measuring after
# each. Message ids are random (MESSAGE_IDS=counter for ascending ones), as a client making
# UUIDv4 ids sends them. One line per measurement: req/s, p50, p99, server CPU per 1,000
# sends, RSS, tasks stored and the database's size. About 60 s of sends at 64 connections
# stores some 600,000 tasks (2.3 GB) on a 2-core machine.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/bench/lib.sh"
BIN=${1:-$ROOT/build/release/src/a2ad/cli/a2ad}
FILL=${2:-60}
STEPS=${3:-3}
LOADGEN=$ROOT/build/release/bench/a2ad_bench_loadgen
[[ -x $LOADGEN ]] || cmake --build "$ROOT/build/release" -j2 --target a2ad_bench_loadgen >/dev/null
WORK=$(mktemp -d /tmp/a2ad-grow.XXXXXX)
PID=""
trap '[[ -n $PID ]] && kill -9 "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
echo '{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendMessage","params":{"message":{"messageId":"m-@SEQ@","role":"ROLE_USER","parts":[{"text":"hello from the load generator"}]}}}' \
  >"$WORK/body.json"
MESSAGE_IDS=${MESSAGE_IDS:-random} bench_message_ids "$WORK/body.json"
bench_serve "$BIN" "$WORK"

load() {  # conns warmup seconds -> the RESULT line
  "$LOADGEN" --port "$PORT" --connections "$1" --warmup-s "$2" --duration-s "$3" \
    --server-pid "$PID" --header "A2A-Version: 1.0" --body-file "$WORK/body.json" \
    --expect TASK_STATE_COMPLETED | grep '^RESULT'
}
field() { tr ' ' '\n' | awk -F= -v k="$1" '$1==k{print $2}'; }
measure() {
  local line tasks
  for conns in 1 64; do
    line=$(load "$conns" 1 5)
    tasks=$(python3 -c 'import sqlite3, sys
print(sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True).execute(
    "SELECT count(*) FROM tasks").fetchone()[0])' "$WORK/data/a2ad.db" 2>/dev/null || echo '?')
    printf 'c=%-3s req/s %-8s p50 ms %-6s p99 ms %-7s CPU ms/1k %-6s RSS MB %-5s tasks %-9s db MB %s\n' \
      "$conns" "$(field rps <<<"$line")" "$(field p50_ms <<<"$line")" \
      "$(field p99_ms <<<"$line")" "$(field cpu_ms_per_1k <<<"$line")" \
      "$(field rss_mb <<<"$line")" "$tasks" "$(du -m "$WORK/data/a2ad.db" | cut -f1)"
  done
}
measure
for step in $(seq "$STEPS"); do
  echo "fill $step: $(load 64 0 "$FILL" | field rps) req/s for ${FILL} s"
  measure
done
