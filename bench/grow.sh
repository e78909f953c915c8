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
BIN=${1:-$ROOT/build/release/src/a2ad/cli/a2ad}
FILL=${2:-60}
STEPS=${3:-3}
LOADGEN=$ROOT/build/release/bench/a2ad_bench_loadgen
[[ -x $LOADGEN ]] || cmake --build "$ROOT/build/release" -j2 --target a2ad_bench_loadgen >/dev/null
command -v sqlite3 >/dev/null || { echo "bench/grow.sh needs the sqlite3 shell" >&2; exit 2; }
WORK=$(mktemp -d /tmp/a2ad-grow.XXXXXX)
PID=""
trap '[[ -n $PID ]] && kill -9 "$PID" 2>/dev/null; rm -rf "$WORK"' EXIT
ids='"@RAND@"'
case ${MESSAGE_IDS:-random} in
  random) ;;
  counter) ids='"m-@SEQ@"' ;;
  *) echo "MESSAGE_IDS takes counter or random, not '$MESSAGE_IDS'" >&2; exit 2 ;;
esac
echo '{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendMessage","params":{"message":{"messageId":'"$ids"',"role":"ROLE_USER","parts":[{"text":"hello from the load generator"}]}}}' \
  >"$WORK/body.json"
"$BIN" serve --listen 127.0.0.1:0 --data-dir "$WORK/data" --log-level warn --default-skill echo \
  >"$WORK/out" 2>&1 &
PID=$!
port=""
for _ in $(seq 200); do
  port=$(sed -nE 's#.*serving http://127\.0\.0\.1:([0-9]+).*#\1#p' "$WORK/out" 2>/dev/null || true)
  [[ -n $port ]] && break
  sleep 0.05
done
[[ -n $port ]] || { echo "server did not start: $(cat "$WORK/out")" >&2; exit 1; }

load() {  # conns warmup seconds -> the RESULT line
  "$LOADGEN" --port "$port" --connections "$1" --warmup-s "$2" --duration-s "$3" \
    --server-pid "$PID" --header "A2A-Version: 1.0" --body-file "$WORK/body.json" \
    --expect TASK_STATE_COMPLETED | grep '^RESULT'
}
field() { tr ' ' '\n' | awk -F= -v k="$1" '$1==k{print $2}'; }
measure() {
  local line tasks
  for conns in 1 64; do
    line=$(load "$conns" 1 5)
    tasks=$(sqlite3 "file:$WORK/data/a2ad.db?mode=ro" 'SELECT count(*) FROM tasks' 2>/dev/null ||
      echo '?')
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
