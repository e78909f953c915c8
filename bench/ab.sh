#!/usr/bin/env bash
# Interleaved A/B of two a2ad binaries on the blocking echo send and on GetTask (bench/RESULTS.md
# "Round 3" and "Stop 54"):
#
#   bash bench/ab.sh OLD_BINARY NEW_BINARY [ROUNDS]
#   SCENARIOS=send bash bench/ab.sh OLD_BINARY NEW_BINARY [ROUNDS]   # sends only
#
# Each round runs OLD then NEW, for each scenario at 1 and at 64 connections, on a fresh
# server each time (127.0.0.1, port 0, temp data dir), 1 s warm-up then a 3 s window, with
# bench/loadgen.cpp. Scenarios (SCENARIOS, default "send get"): `send`, v1.0 SendMessage of
# the echo skill; `get`, v1.0 GetTask round robin over 1,000 tasks the loadgen sends first;
# `stream` (not in the default), v1.0 SendStreamingMessage of the echo skill, read to its end;
# `grpc-send`, `grpc-get` and `grpc-stream` (not in the default), the same three over gRPC
# (`serve --grpc-listen 127.0.0.1:0`, bench/grpc_loadgen.cpp).
# MESSAGE_IDS=random sends message ids in no order (bench/run_bench.sh), counter (default) in
# ascending order. Alternating the two in every round keeps a slow spell of the VM from landing on one side
# only. Prints one line per cell and the medians.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
source bench/lib.sh
OLD=${1:?old a2ad binary}
NEW=${2:?new a2ad binary}
ROUNDS=${3:-3}
LOADGEN=build/release/bench/a2ad_bench_loadgen
GRPCLOAD=build/release/bench/a2ad_bench_grpcload
[[ -x $LOADGEN ]] || cmake --build build/release -j2 --target a2ad_bench_loadgen >/dev/null

WORK=$(mktemp -d /tmp/a2ad-ab.XXXXXX)
trap 'rm -rf "$WORK"' EXIT  # each cell stops its own server
echo '{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendMessage","params":{"message":{"messageId":"m-@SEQ@","role":"ROLE_USER","parts":[{"text":"hello from the load generator"}]}}}' \
  >"$WORK/body.json"
echo '{"jsonrpc":"2.0","id":"r@SEQ@","method":"GetTask","params":{"id":"@ID@"}}' >"$WORK/get.json"
bench_message_ids "$WORK/body.json"
sed 's/"SendMessage"/"SendStreamingMessage"/' "$WORK/body.json" >"$WORK/stream.json"
SCENARIOS=${SCENARIOS:-"send get"}
for scenario in $SCENARIOS; do
  case $scenario in
    send | get | stream) ;;
    grpc-send | grpc-get | grpc-stream)
      [[ -x $GRPCLOAD ]] || cmake --build build/release -j2 --target a2ad_bench_grpcload >/dev/null ;;
    *) echo "unknown scenario '$scenario' (SCENARIOS takes send, get, stream, grpc-send," \
      "grpc-get and grpc-stream)" >&2; exit 2 ;;
  esac
done

cell() {  # binary conns scenario -> "rps p50_ms cpu_ms_per_1k"
  local dir
  dir=$(mktemp -d "$WORK/run.XXXX")
  local grpc=()
  [[ $3 == grpc-* ]] && grpc=(--grpc-listen 127.0.0.1:0)
  bench_serve "$1" "$dir" "${grpc[@]}"
  local port=$PORT
  local load
  if [[ $3 == grpc-* ]]; then  # port 0: the card's GRPC interface says which one
    local gport
    gport=$(curl -sf -H 'A2A-Version: 1.0' "http://127.0.0.1:$port/.well-known/agent-card.json" |
      python3 -c 'import json, sys
card = json.load(sys.stdin)
print(next(i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC")
      .rsplit(":", 1)[1])')
    local seed=()
    [[ $3 == grpc-get ]] && seed=(--seed 1000)
    load=$("$GRPCLOAD" --target "127.0.0.1:$gport" --rpc "${3#grpc-}" "${seed[@]}" \
      --metadata "a2a-version: 1.0" --connections "$2" --warmup-s 1 --duration-s 3 \
      --server-pid "$PID")
  else
    local requests=(--body-file "$WORK/body.json")
    [[ $3 == get ]] && requests=(--body-file "$WORK/get.json" --seed 1000
      --seed-body-file "$WORK/body.json")
    [[ $3 == stream ]] && requests=(--body-file "$WORK/stream.json")
    load=$("$LOADGEN" --port "$port" --connections "$2" --warmup-s 1 --duration-s 3 \
      --server-pid "$PID" --header "A2A-Version: 1.0" "${requests[@]}" \
      --expect TASK_STATE_COMPLETED)
  fi
  grep '^RESULT' <<<"$load" | tr ' ' '\n' |
    awk -F= '$1=="rps"{r=$2} $1=="p50_ms"{p=$2} $1=="cpu_ms_per_1k"{c=$2} END{print r, p, c}'
  kill "$PID"
  wait "$PID" 2>/dev/null || true
}

declare -A all
for round in $(seq "$ROUNDS"); do
  for scenario in $SCENARIOS; do
    for conns in 1 64; do
      for side in old new; do
        bin=$OLD
        [[ $side == new ]] && bin=$NEW
        line=$(cell "$bin" "$conns" "$scenario")
        all[$scenario.$side.$conns]+="$line"$'\n'
        printf 'round %s  %-11s c=%-3s %-3s  req/s %-8s p50 ms %-7s CPU ms/1k %s\n' "$round" \
          "$scenario" "$conns" "$side" $line
      done
    done
  done
done
median() { sort -n | awk '{v[NR]=$1} END{print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
echo "medians over $ROUNDS rounds:"
for scenario in $SCENARIOS; do
  for conns in 1 64; do
    for side in old new; do
      rows=${all[$scenario.$side.$conns]}
      printf '  %-11s c=%-3s %-3s  req/s %-8s p50 ms %-7s CPU ms/1k %s\n' "$scenario" "$conns" \
        "$side" "$(awk 'NF{print $1}' <<<"$rows" | median)" \
        "$(awk 'NF{print $2}' <<<"$rows" | median)" "$(awk 'NF{print $3}' <<<"$rows" | median)"
    done
  done
done
