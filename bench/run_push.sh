#!/usr/bin/env bash
# Push notification benchmark (bench/RESULTS.md "Push notifications"). Run by hand:
#
#   bash bench/run_push.sh                 # release build; 3 runs of 2000 tasks, 8 senders
#   RUNS=1 TASKS=500 CONC=4 bash bench/run_push.sh
#   CONFIGS=20 TASKS=200 bash bench/run_push.sh   # 20 push configs per task (fan-out): the
#                                               # server delays completion (ECHO_DELAY_MS) so
#                                               # every config is set first; measures the
#                                               # delivery engine apart from task creation
#
# Each run: a fresh `a2ad serve` (127.0.0.1, port 0, temp data dir, loopback allow-list
# so it may push to the local receiver, signing on as always), then a2ad_bench_push, which
# creates TASKS echo tasks with an inline push config and measures pushes/s and the latency
# from each task's completed state (its status timestamp) to the push arriving.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-3}
TASKS=${TASKS:-2000}
CONC=${CONC:-8}
CONFIGS=${CONFIGS:-1}
ECHO_DELAY_MS=${ECHO_DELAY_MS:-$([[ $CONFIGS -gt 1 ]] && echo 5000 || echo 0)}
A2AD=${A2AD_BIN:-build/release/src/a2ad/cli/a2ad}
BENCH=${BENCH_BIN:-build/release/bench/a2ad_bench_push}
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  [[ -f build/release/build.ninja ]] || cmake --preset release >/dev/null
  cmake --build --preset release -j2 --target a2ad a2ad_bench_push >/dev/null
fi
for run in $(seq 1 "$RUNS"); do
  DATA=$(mktemp -d /tmp/a2ad-pushbench.XXXXXX)
  OUT=$(mktemp)
  "$A2AD" serve --listen 127.0.0.1:0 --data-dir "$DATA" --log-level warn --default-skill echo \
    --push-allow-http --push-allowlist 127.0.0.1/32 --echo-delay-ms "$ECHO_DELAY_MS" \
    >"$OUT" 2>/dev/null &
  PID=$!
  for _ in $(seq 1 200); do grep -q serving "$OUT" && break; sleep 0.05; done
  PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$OUT" | head -1)
  echo "run $run: $("$BENCH" --port "$PORT" --tasks "$TASKS" --concurrency "$CONC" --configs "$CONFIGS")"
  kill "$PID"; wait "$PID" 2>/dev/null || true
  rm -rf "$DATA" "$OUT"
done
