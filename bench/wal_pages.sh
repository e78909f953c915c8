#!/usr/bin/env bash
# The pages a blocking send writes to the WAL, by table and index (bench/RESULTS.md "Stop 52"):
#
#   bash bench/wal_pages.sh [A2AD_BINARY] [CONNS]
#
# Serves on 127.0.0.1 (port 0, a temp data dir), sends v1.0 SendMessage of the echo skill for
# 1 + 3 s with bench/loadgen.cpp, kills the server (SIGKILL: the WAL stays as written), then
# bench/wal_pages.py names the frames of the last commits. MESSAGE_IDS=random: message ids in
# no order (bench/run_bench.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$ROOT/bench/lib.sh"
BIN=${1:-$ROOT/build/release/src/a2ad/cli/a2ad}
CONNS=${2:-1}
LOADGEN=$ROOT/build/release/bench/a2ad_bench_loadgen
[[ -x $LOADGEN ]] || cmake --build "$ROOT/build/release" -j2 --target a2ad_bench_loadgen >/dev/null
WORK=$(mktemp -d /tmp/a2ad-walpages.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
echo '{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendMessage","params":{"message":{"messageId":"m-@SEQ@","role":"ROLE_USER","parts":[{"text":"hello from the load generator"}]}}}' \
  >"$WORK/body.json"
bench_message_ids "$WORK/body.json"
bench_serve "$BIN" "$WORK"
"$LOADGEN" --port "$PORT" --connections "$CONNS" --warmup-s 1 --duration-s 3 \
  --header "A2A-Version: 1.0" --body-file "$WORK/body.json" --expect TASK_STATE_COMPLETED |
  grep '^RESULT' | tr ' ' '\n' | grep -E '^(connections|rps|p50_ms)=' | tr '\n' ' '
echo
kill -9 $PID
wait $PID 2>/dev/null || true
python3 "$ROOT/bench/wal_pages.py" "$WORK/data"
