#!/usr/bin/env bash
# What parked runs cost (issue 32): N workflow runs parked at a gate, then a restart.
#
#   bash bench/parked.sh [RUNS]      (default 20000)
#   env: A2AD=<binary> (default build/release/src/a2ad/cli/a2ad), TIMEOUT_MS=<the gate's
#        timeout> (default one day: every parked run has a wake time; 0: none),
#        LOADGEN=<a2ad_bench_loadgen>
#
# Seeds RUNS runs of a one-gate workflow through the server (blocking SendMessage, 16
# connections, each answered input-required), reads the server's RSS, stops it (SIGTERM) and
# starts it again on the same SQLite file, timing the ready line from the spawn and reading
# the RSS at ready and 2 s later (executions started by recovery settle), then checks that a
# parked run still answers GetTask. Prints one "PARKED ..." line. Binds 127.0.0.1 only.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-20000}
A2AD=${A2AD:-$ROOT/build/release/src/a2ad/cli/a2ad}
LOADGEN=${LOADGEN:-$ROOT/build/release/bench/a2ad_bench_loadgen}
TIMEOUT_MS=${TIMEOUT_MS:-86400000}
D=$(mktemp -d /tmp/a2ad-bench-parked.XXXXXX)
PID=""
cleanup() { [[ -n $PID ]] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT

mkdir -p "$D/wf"
cat > "$D/wf/parked-bench.json" <<EOF
{"id": "parked-bench", "name": "One gate", "version": "1.0.0",
 "metadata": {"tags": ["bench"]},
 "triggers": [{"id": "manual", "type": "manual", "enabled": true}],
 "variables": [], "settings": {"timeout": 0},
 "nodes": [
  {"id": "ask", "typeId": "core.clarificationGate", "name": "Ask", "position": {"x": 0, "y": 0},
   "config": {"timeoutMs": $TIMEOUT_MS, "questions": [{"id": "why", "question": "Why?"}]},
   "inputs": {}},
  {"id": "done", "typeId": "core.identity", "name": "Done", "position": {"x": 1, "y": 0},
   "config": {}, "inputs": {}}],
 "edges": [{"id": "e1", "sourceNodeId": "ask", "targetNodeId": "done"}]}
EOF
[[ $TIMEOUT_MS == 0 ]] && sed -i 's/"timeoutMs": 0, //' "$D/wf/parked-bench.json"
echo '{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendMessage","params":{"message":{"messageId":"m-@SEQ@","role":"ROLE_USER","parts":[{"text":"park"}]},"metadata":{"skillId":"parked-bench"}}}' > "$D/send.json"
echo '{"jsonrpc":"2.0","id":"g@SEQ@","method":"GetTask","params":{"id":"@ID@"}}' > "$D/get.json"

now_ms() { date +%s%3N; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
start() {  # sets PID, PORT, READY_MS
  : > "$D/out"
  local t0; t0=$(now_ms)
  "$A2AD" serve --listen 127.0.0.1:0 --data-dir "$D/data" --workflows-dir "$D/wf" \
    --log-level warn > "$D/out" 2> "$D/err" &
  PID=$!
  PORT=""
  for _ in $(seq 20000); do
    PORT=$(sed -nE 's#.*serving http://127\.0\.0\.1:([0-9]+).*#\1#p' "$D/out")
    [[ -n $PORT ]] && break
    sleep 0.005
  done
  READY_MS=$(( $(now_ms) - t0 ))
  [[ -n $PORT ]] || { cat "$D/err"; echo "the server did not start" >&2; exit 1; }
}
stop() { kill -TERM "$PID"; wait "$PID" || true; PID=""; }

start
t0=$(now_ms)
"$LOADGEN" --port "$PORT" --connections 16 --warmup-s 0 --duration-s 1 \
  --header "A2A-Version: 1.0" --seed-body-file "$D/send.json" --seed "$RUNS" \
  --body-file "$D/get.json" --expect TASK_STATE_INPUT_REQUIRED > "$D/seed.txt"
SEED_S=$(awk "BEGIN {printf \"%.1f\", ($(now_ms) - $t0) / 1000}")
RSS_BEFORE=$(rss_mb "$PID")
ONE=$(curl -s "http://127.0.0.1:$PORT/v1/runs?pageSize=1" | sed -nE 's/.*"runId":"([^"]+)".*/\1/p' | head -1)
stop

start
RSS_READY=$(rss_mb "$PID")
sleep 2
RSS_SETTLED=$(rss_mb "$PID")
STATE=$(curl -s "http://127.0.0.1:$PORT/v1/a2a" -H 'content-type: application/json' \
  -H 'A2A-Version: 1.0' \
  -d "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"$ONE\"}}" |
  sed -nE 's/.*"state":"([A-Z_]+)".*/\1/p' | head -1)
stop
DB_MB=$(du -sm "$D/data" | cut -f1)
echo "PARKED runs=$RUNS gate_timeout_ms=$TIMEOUT_MS seed_s=$SEED_S db_mb=$DB_MB" \
  "rss_before_restart_mb=$RSS_BEFORE ready_ms=$READY_MS rss_at_ready_mb=$RSS_READY" \
  "rss_after_2s_mb=$RSS_SETTLED parked_run_state=$STATE"
[[ $STATE == TASK_STATE_INPUT_REQUIRED ]]
