#!/usr/bin/env bash
# Side-by-side benchmarks (bench/RESULTS.md "JSON-RPC side by side" and "Restart"). Run by
# `make bench`, never by `make test`:
#
#   bash bench/run_bench.sh              # Release build, every scenario, 3 runs (~25 min)
#   QUICK=1 bash bench/run_bench.sh      # 1 run of 2 s per cell, 1 and 64 connections (~3 min)
#
# For every scenario, target and connection count it starts a fresh server on 127.0.0.1 (port
# 0, temp data dir), drives it with bench/loadgen.cpp (closed loop, keep-alive, warm-up, then
# a fixed window) and stops it. Targets:
#   a2ad         a2ad serve, A2A v0.3 JSON-RPC (message/send, tasks/get, message/stream)
#   a2ad-v1      a2ad serve, A2A v1.0 JSON-RPC (SendMessage, GetTask, SendStreamingMessage)
#   sdk1-memory  @a2a-js/sdk 1.x echo server, InMemoryTaskStore, v1.0 JSON-RPC
#   a2ad-full    a2ad-v1 with --sqlite-synchronous full (acknowledged tasks survive power loss)
#   sdk1-sqlite  @a2a-js/sdk 1.x echo server, its DatabaseTaskStore on SQLite with a2ad's
#                settings (WAL, synchronous=NORMAL), v1.0 JSON-RPC
#   sdk1-sqlite-defaults  the same on better-sqlite3's defaults (rollback journal,
#                synchronous=FULL): the SDK's SQL store as it comes
#   sdk03        @a2a-js/sdk 0.3.x echo server, InMemoryTaskStore, v0.3 JSON-RPC
#   ceiling      bench/ceiling.cpp: Beast + Boost.JSON parse/serialize, no work (send only)
#   a2ad-rest    a2ad serve, A2A 1.0 HTTP+JSON (POST /a2a/rest/message:send, GET
#                /a2a/rest/tasks/{id}, POST /a2a/rest/message:stream)
#   a2ad-grpc    a2ad serve --grpc-listen 127.0.0.1:0, lf.a2a.v1.A2AService (SendMessage,
#                GetTask, SendStreamingMessage), driven by bench/grpc_loadgen.cpp
#   sdk1-rest    @a2a-js/sdk 1.x echo server (bench/js/sdk1_bindings_server.mjs), its express
#                restHandler at /a2a/rest, InMemoryTaskStore
#   sdk1-grpc    the same server's grpcService on @grpc/grpc-js
#   a2ad-https   a2ad-v1 over TLS (--tls-cert/--tls-key; certificates made by a2ad_test_pki):
#                one TLS 1.3 session per kept-alive connection, the handshake in its first
#                request
#   a2ad-key     a2ad-v1 with authentication on: every request carries an API key
#                (Authorization: Bearer), looked up and hashed per request
#   a2ad-jwt     a2ad-v1 with --oidc-issuer (bench/js/oidc_issuer.mjs on loopback): every request
#                carries an ES256 access token, verified per request against the cached JWKS
#   a2ad-pg      a2ad-v1 on PostgreSQL (--database-url): a database of its own on the run's
#                PostgreSQL cluster (scripts/pg-scratch.sh, 127.0.0.1, fsync and
#                synchronous_commit on: a commit is on disk when acknowledged)
#   sdk1-pg      @a2a-js/sdk 1.x echo server, its DatabaseTaskStore on the same PostgreSQL
#                cluster (Kysely PostgresDialect, `pg` pool of 10), v1.0 JSON-RPC
#                The PostgreSQL targets also report the database's CPU per 1,000 requests
#                (db_cpu_ms_per_1k: the postmaster and its backends), apart from the server's.
# TARGETS=postgres is a2ad-v1 a2ad-pg sdk1-pg: a2ad on SQLite and on PostgreSQL beside the
# SDK's SQL store on the same PostgreSQL (bench/RESULTS-postgres.md).
# TARGETS=security is a2ad-v1 a2ad-https a2ad-key a2ad-jwt: what TLS, API-key and JWT
# authentication cost per request (bench/RESULTS-security.md).
# TARGETS=bindings is a2ad-v1 sdk1-memory a2ad-rest sdk1-rest a2ad-grpc sdk1-grpc: the three
# A2A 1.0 bindings side by side (bench/RESULTS-bindings.md). Within a round, every connection
# count runs every target in turn (the order reversed every other round), so an a2ad cell and
# the SDK cell it is compared with are measured close together in time.
# Raw results go to bench/out/; the tables are printed and saved as bench/out/bench-*.md.
#
# Environment:
#   QUICK=1         quick mode (RUNS=1, DURATION_S=2, WARMUP_S=0.5, CONNS="1 64", 10k restart)
#   RUNS            runs per cell (default 3)
#   DURATION_S      measured window per run (default 5); WARMUP_S warm-up (default 1)
#   CONNS           connection counts (default "1 16 64 256")
#   SCENARIOS       any of "send get stream restart fanout" (default "send get stream restart";
#                   fanout runs bench/run_fanout.sh, ~6 min)
#   TARGETS         subset of the targets above (default: all)
#   RESTART_TASKS   stored-task counts for the restart scenario (default "100000 1000000")
#   MESSAGE_IDS     counter (default): message ids "m-<request counter>", in ascending order;
#                   random: 16 hex digits in no order (bench/loadgen.cpp @RAND@), as a client
#                   making UUIDv4 ids sends them (a2ad's idempotency index then takes a page per
#                   send; bench/RESULTS.md "Stop 58")
#   SKIP_BUILD=1    use the binaries as they are; A2AD_BIN=path benchmarks another a2ad binary
#   EXTRA_RAW       raw files of earlier runs to merge into the tables (e.g. to finish a run
#                   that was interrupted, with TARGETS/SCENARIOS limited to what is missing)
#   WRITE_RESULTS   1: put the tables into bench/RESULTS.md (between its bench-tables
#                   markers); 0: only bench/out. Default: 1 for a full run (no QUICK and none
#                   of RUNS, CONNS, SCENARIOS, TARGETS, DURATION_S set), else 0
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
source bench/lib.sh
if [[ -z ${WRITE_RESULTS:-} ]]; then
  WRITE_RESULTS=1
  [[ ${QUICK:-0} == 1 || -n ${RUNS:-} || -n ${CONNS:-} || -n ${SCENARIOS:-} || -n ${TARGETS:-} ||
    -n ${DURATION_S:-} ]] && WRITE_RESULTS=0
fi
if [[ ${QUICK:-0} == 1 ]]; then
  RUNS=${RUNS:-1} DURATION_S=${DURATION_S:-2} WARMUP_S=${WARMUP_S:-0.5} CONNS=${CONNS:-"1 64"}
  RESTART_TASKS=${RESTART_TASKS:-"10000"}
fi
RUNS=${RUNS:-3}
DURATION_S=${DURATION_S:-5}
WARMUP_S=${WARMUP_S:-1}
CONNS=${CONNS:-"1 16 64 256"}
SCENARIOS=${SCENARIOS:-"send get stream restart"}
TARGETS=${TARGETS:-"a2ad a2ad-v1 a2ad-full sdk1-memory sdk1-sqlite sdk1-sqlite-defaults sdk03 ceiling"}
[[ $TARGETS == bindings ]] && TARGETS="a2ad-v1 sdk1-memory a2ad-rest sdk1-rest a2ad-grpc sdk1-grpc"
[[ $TARGETS == security ]] && TARGETS="a2ad-v1 a2ad-https a2ad-key a2ad-jwt"
[[ $TARGETS == postgres ]] && TARGETS="a2ad-v1 a2ad-pg sdk1-pg"
RESTART_TASKS=${RESTART_TASKS:-"100000 1000000"}
BUILD_DIR=build/release
A2AD=${A2AD_BIN:-$BUILD_DIR/src/a2ad/cli/a2ad}
LOADGEN=$BUILD_DIR/bench/a2ad_bench_loadgen
GRPCLOAD=$BUILD_DIR/bench/a2ad_bench_grpcload
CEILING=$BUILD_DIR/bench/a2ad_bench_ceiling
RESTART=$BUILD_DIR/bench/a2ad_bench_restart
PKI=$BUILD_DIR/tests/support/a2ad_test_pki
JS=bench/js

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  [[ -f $BUILD_DIR/build.ninja ]] || cmake --preset release >/dev/null
  cmake --build "$BUILD_DIR" -j2 --target $([[ -z ${A2AD_BIN:-} ]] && echo a2ad) \
    a2ad_bench_loadgen a2ad_bench_grpcload a2ad_bench_ceiling a2ad_bench_restart a2ad_bench_fanout \
    $([[ " $TARGETS " == *" a2ad-https "* ]] && echo a2ad_test_pki)
fi
if [[ ! -d $JS/node_modules ]] || [[ $JS/package-lock.json -nt $JS/node_modules ]]; then
  (cd "$JS" && npm ci --no-audit --no-fund)
fi
for b in "$A2AD" "$LOADGEN" "$GRPCLOAD" "$CEILING" "$RESTART"; do
  [[ -x $b ]] || { echo "missing $b (build it, or unset SKIP_BUILD)" >&2; exit 1; }
done

# One benchmark at a time on this machine (shared with bench/run_fanout.sh).
exec 9>/tmp/a2ad-bench-fanout.lock
flock -w 900 9 || { echo "another benchmark holds /tmp/a2ad-bench-fanout.lock" >&2; exit 1; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

OUT_DIR=bench/out
mkdir -p "$OUT_DIR"
STAMP=$(date -u +%Y%m%d-%H%M%S)
RAW="$OUT_DIR/bench-$STAMP.raw.txt"
TABLE="$OUT_DIR/bench-$STAMP.md"
BODIES=$(mktemp -d /tmp/a2ad-bench-bodies.XXXXXX)
SERVER_PID=""
TMP_DIR=""
cleanup() {
  stop_server
  rm -rf "$BODIES"
}
trap cleanup EXIT

# ---- request bodies: @SEQ@ = request counter, @ID@ = a seeded task id (bench/loadgen.cpp)
TEXT='hello from the load generator'
cat >"$BODIES/send-v03.json" <<EOF
{"jsonrpc":"2.0","id":"r@SEQ@","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m-@SEQ@","parts":[{"kind":"text","text":"$TEXT"}]},"configuration":{"blocking":true}}}
EOF
cat >"$BODIES/stream-v03.json" <<EOF
{"jsonrpc":"2.0","id":"r@SEQ@","method":"message/stream","params":{"message":{"kind":"message","role":"user","messageId":"m-@SEQ@","parts":[{"kind":"text","text":"$TEXT"}]}}}
EOF
cat >"$BODIES/get-v03.json" <<EOF
{"jsonrpc":"2.0","id":"r@SEQ@","method":"tasks/get","params":{"id":"@ID@"}}
EOF
cat >"$BODIES/send-v10.json" <<EOF
{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendMessage","params":{"message":{"messageId":"m-@SEQ@","role":"ROLE_USER","parts":[{"text":"$TEXT"}]}}}
EOF
cat >"$BODIES/stream-v10.json" <<EOF
{"jsonrpc":"2.0","id":"r@SEQ@","method":"SendStreamingMessage","params":{"message":{"messageId":"m-@SEQ@","role":"ROLE_USER","parts":[{"text":"$TEXT"}]}}}
EOF
cat >"$BODIES/get-v10.json" <<EOF
{"jsonrpc":"2.0","id":"r@SEQ@","method":"GetTask","params":{"id":"@ID@"}}
EOF
# HTTP+JSON (A2A 1.0): the SendMessageRequest of send-v10.json's params, for send and stream.
cat >"$BODIES/send-rest.json" <<EOF
{"message":{"messageId":"m-@SEQ@","role":"ROLE_USER","parts":[{"text":"$TEXT"}]}}
EOF
bench_message_ids "$BODIES"/send-*.json "$BODIES"/stream-*.json

# TLS: a CA and a server certificate for 127.0.0.1 (a2ad_test_pki, the OpenSSL library).
if [[ " $TARGETS " == *" a2ad-https "* ]]; then
  "$PKI" "$BODIES/pki" || { echo "cannot make the TLS certificates ($PKI)" >&2; exit 1; }
fi

wire_of() {  # target -> v03 | v10
  case $1 in a2ad | sdk03 | ceiling) echo v03 ;; *) echo v10 ;; esac
}

# One PostgreSQL cluster for the run (when a PostgreSQL target is in it), a fresh database per
# cell. Durable like a production server: fsync on (pg-scratch turns it off by default).
PG_DIR="" PG_URL=""
if [[ " $TARGETS " == *" a2ad-pg "* || " $TARGETS " == *" sdk1-pg "* ]]; then
  PG_DIR=$(mktemp -d /tmp/a2ad-bench-pg.XXXXXX)
  PG_URL=$(PG_SCRATCH_OPTS="-c fsync=on -c synchronous_commit=on" bash scripts/pg-scratch.sh start "$PG_DIR")
  trap 'bash scripts/pg-scratch.sh stop "$PG_DIR" >/dev/null 2>&1 || true' EXIT
fi
pg_fresh_db() {  # -> the URL of a new database on the run's cluster (called in $(...))
  local name
  name=cell_$(date +%s%N)
  psql "$PG_URL" -qc "CREATE DATABASE $name" >/dev/null
  echo "${PG_URL%/*}/$name"
}

start_server() {  # target; sets SERVER_PID, PORT and (gRPC targets) GRPC_PORT
  local target=$1 flags=()
  TMP_DIR=$(mktemp -d /tmp/a2ad-bench-run.XXXXXX)
  [[ $target == a2ad-pg ]] && flags=(--database-url "$(pg_fresh_db)")
  [[ $target == a2ad-grpc ]] && flags=(--grpc-listen 127.0.0.1:0)
  [[ $target == a2ad-https ]] &&
    flags=(--tls-cert "$BODIES/pki/server.pem" --tls-key "$BODIES/pki/server-key.pem")
  API_KEY=""
  ISSUER_PID=""
  if [[ $target == a2ad-key ]]; then  # a key in the fresh data directory: authentication on
    API_KEY=$("$A2AD" keys create --data-dir "$TMP_DIR/data" --tenant bench \
      --scopes tasks:read,tasks:write 2>/dev/null)
  fi
  if [[ $target == a2ad-jwt ]]; then  # an issuer on loopback; its token is the credential
    node "$JS/oidc_issuer.mjs" >"$TMP_DIR/issuer" 2>/dev/null &
    ISSUER_PID=$!
    for _ in $(seq 100); do [[ $(wc -l <"$TMP_DIR/issuer") -ge 2 ]] && break; sleep 0.1; done
    local issuer
    issuer=$(sed -n 1p "$TMP_DIR/issuer")
    API_KEY=$(sed -n 2p "$TMP_DIR/issuer")
    flags=(--oidc-issuer "$issuer" --oidc-audience a2ad-bench --oidc-jwks-url "$issuer/jwks"
      --egress-allow-http --egress-allowlist 127.0.0.1/32)
  fi
  case $target in
    a2ad | a2ad-v1 | a2ad-full | a2ad-rest | a2ad-grpc | a2ad-https | a2ad-key | a2ad-jwt | a2ad-pg)
      "$A2AD" serve --listen 127.0.0.1:0 --data-dir "$TMP_DIR/data" --log-level warn --default-skill echo \
        --sqlite-synchronous "$([[ $target == a2ad-full ]] && echo full || echo normal)" \
        "${flags[@]}" >"$TMP_DIR/stdout" 2>"$TMP_DIR/stderr" & ;;
    sdk1-rest | sdk1-grpc)
      node "$JS/sdk1_bindings_server.mjs" >"$TMP_DIR/stdout" 2>"$TMP_DIR/stderr" & ;;
    sdk1-memory)
      node "$JS/sdk1_server.mjs" --store memory >"$TMP_DIR/stdout" 2>"$TMP_DIR/stderr" & ;;
    sdk1-sqlite | sdk1-sqlite-defaults)
      node "$JS/sdk1_server.mjs" --store "${target#sdk1-}" --db "$TMP_DIR/a2a.db" \
        >"$TMP_DIR/stdout" 2>"$TMP_DIR/stderr" & ;;
    sdk1-pg)
      node "$JS/sdk1_server.mjs" --store postgres --url "$(pg_fresh_db)" \
        >"$TMP_DIR/stdout" 2>"$TMP_DIR/stderr" & ;;
    sdk03)
      node "$JS/sdk03_server.mjs" >"$TMP_DIR/stdout" 2>"$TMP_DIR/stderr" & ;;
    ceiling)
      "$CEILING" >"$TMP_DIR/stdout" 2>"$TMP_DIR/stderr" & ;;
    *) echo "unknown target $target" >&2; exit 1 ;;
  esac
  SERVER_PID=$!
  PORT=""
  for _ in $(seq 300); do
    PORT=$(sed -nE 's#.*serving https?://127\.0\.0\.1:([0-9]+).*#\1#p' "$TMP_DIR/stdout" 2>/dev/null)
    [[ -n $PORT ]] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.05
  done
  [[ -n $PORT ]] || { echo "$target did not start:" >&2; cat "$TMP_DIR/stderr" >&2; exit 1; }
  GRPC_PORT=""
  case $target in
    sdk1-grpc) GRPC_PORT=$(sed -nE 's#^sdk1: grpc 127\.0\.0\.1:([0-9]+)$#\1#p' "$TMP_DIR/stdout") ;;
    a2ad-grpc)  # port 0: the card's GRPC interface says which one
      GRPC_PORT=$(curl -sf -H 'A2A-Version: 1.0' "http://127.0.0.1:$PORT/.well-known/agent-card.json" |
        python3 -c 'import json, sys
print(next(i["url"] for i in json.load(sys.stdin)["supportedInterfaces"]
           if i["protocolBinding"] == "GRPC").rsplit(":", 1)[1])') ;;
    *) return 0 ;;
  esac
  [[ -n $GRPC_PORT ]] || { echo "$target: no gRPC port" >&2; cat "$TMP_DIR/stderr" >&2; exit 1; }
}

stop_server() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    if [[ -s $TMP_DIR/stderr ]]; then
      echo "SERVER_STDERR (last 5 lines):" >>"$RAW"
      tail -5 "$TMP_DIR/stderr" | sed 's/^/  /' >>"$RAW"
    fi
  fi
  SERVER_PID=""
  if [[ -n ${ISSUER_PID:-} ]]; then
    kill "$ISSUER_PID" 2>/dev/null || true
    wait "$ISSUER_PID" 2>/dev/null || true
    ISSUER_PID=""
  fi
  [[ -n $TMP_DIR ]] && rm -rf "$TMP_DIR"
  TMP_DIR=""
}

CXX_BIN=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' $BUILD_DIR/CMakeCache.txt 2>/dev/null)
sdk_version() { node -p "require('./$JS/node_modules/$1/package.json').version"; }
{
  echo "machine: $(nproc) cores ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r)"
  echo "versions: a2ad $(git describe --always --dirty 2>/dev/null) ($A2AD, built $(date -u -r "$A2AD" +%FT%TZ)); $(${CXX_BIN:-c++} --version | head -1); sqlite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo '?') (system libsqlite3); node $(node --version); @a2a-js/sdk $(sdk_version sdk1) and $(sdk_version sdk03); express $(sdk_version express); kysely $(sdk_version kysely); better-sqlite3 $(sdk_version better-sqlite3) (bundles SQLite $(cd $JS && node -e "const D=require('better-sqlite3');console.log(new D(':memory:').prepare('select sqlite_version() v').get().v)"))"
  echo "command: QUICK=${QUICK:-0} RUNS=$RUNS DURATION_S=$DURATION_S WARMUP_S=$WARMUP_S CONNS=\"$CONNS\" SCENARIOS=\"$SCENARIOS\" TARGETS=\"$TARGETS\" bash bench/run_bench.sh"
  echo "started: $(date -u +%FT%TZ); loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee -a "$RAW"

# ---- send / get / stream: JSON-RPC, HTTP+JSON and gRPC -------------------------------------
measure() {  # scenario target conns run
  local scenario=$1 target=$2 conns=$3 run=$4 wire extra=() expect
  wire=$(wire_of "$target")
  [[ $target == a2ad-v1 || $target == a2ad-full || $target == a2ad-rest || $target == sdk1-* ||
    $target == a2ad-https || $target == a2ad-key || $target == a2ad-jwt || $target == a2ad-pg ]] &&
    extra+=(--header "A2A-Version: 1.0")
  [[ $target == *-pg ]] && extra+=(--db-pid "$(head -1 "$PG_DIR/data/postmaster.pid")")
  if [[ $wire == v03 ]]; then expect='"completed"'; else expect='TASK_STATE_COMPLETED'; fi
  case $target:$scenario in
    *-grpc:*) ;;
    *-rest:send) extra+=(--path /a2a/rest/message:send --body-file "$BODIES/send-rest.json") ;;
    *-rest:stream) extra+=(--path /a2a/rest/message:stream --body-file "$BODIES/send-rest.json") ;;
    *-rest:get) extra+=(--method GET --path '/a2a/rest/tasks/@ID@' --seed 1000
                        --seed-path /a2a/rest/message:send --seed-body-file "$BODIES/send-rest.json") ;;
    *:send) extra+=(--body-file "$BODIES/send-$wire.json") ;;
    *:stream) extra+=(--body-file "$BODIES/stream-$wire.json") ;;
    *:get) extra+=(--body-file "$BODIES/get-$wire.json" --seed-body-file "$BODIES/send-$wire.json"
                   --seed 1000) ;;
  esac
  start_server "$target"
  [[ $target == a2ad-https ]] && extra+=(--tls-ca "$BODIES/pki/ca.pem")
  [[ -n $API_KEY ]] && extra+=(--header "Authorization: Bearer $API_KEY")
  local line rc=0
  if [[ $target == *-grpc ]]; then
    line=$("$GRPCLOAD" --target "127.0.0.1:$GRPC_PORT" --rpc "$scenario" --seed 1000 \
      --metadata "a2a-version: 1.0" --connections "$conns" --warmup-s "$WARMUP_S" \
      --duration-s "$DURATION_S" --server-pid "$SERVER_PID" 2>"$OUT_DIR/last-loadgen.err" \
      | grep '^RESULT') || rc=$?
  else
    line=$("$LOADGEN" --port "$PORT" --connections "$conns" --warmup-s "$WARMUP_S" \
      --duration-s "$DURATION_S" --server-pid "$SERVER_PID" --expect "$expect" "${extra[@]}" \
      2>"$OUT_DIR/last-loadgen.err" | grep '^RESULT') || rc=$?
  fi
  stop_server
  if [[ $rc != 0 || -z $line ]]; then
    echo "FAILED scenario=$scenario target=$target conns=$conns run=$run: $(cat "$OUT_DIR/last-loadgen.err")" | tee -a "$RAW" >&2
    return
  fi
  [[ -s $OUT_DIR/last-loadgen.err ]] && sed 's/^/  loadgen: /' "$OUT_DIR/last-loadgen.err" >>"$RAW"
  echo "RESULT scenario=$scenario target=$target run=$run ${line#RESULT }" >>"$RAW"
  printf '  %-6s %-12s c=%-3s run %s: %s\n' "$scenario" "$target" "$conns" "$run" \
    "$(tr ' ' '\n' <<<"$line" | grep -E '^(rps|p50_ms|p99_ms|cpu_ms_per_1k|rss_peak_mb|errors|unexpected)=' | tr '\n' ' ')" >&2
}

# Rounds are the outer loop: every round measures every cell once, so a slow spell on the
# machine (other tenants of the VM) touches all servers alike instead of one server's runs.
# Inside a round, the targets take turns at each connection count, in reverse order every
# other round. a2ad-full and sdk1-sqlite-defaults run send only, ceiling send only; every
# other target runs every scenario asked for (a2ad-v1's stream is the v1.0 wire's).
for run in $(seq "$RUNS"); do
  order=$TARGETS
  ((run % 2 == 0)) && order=$(tr ' ' '\n' <<<"$TARGETS" | tac | tr '\n' ' ')
  for scenario in $SCENARIOS; do
    case $scenario in send | get | stream) ;; *) continue ;; esac
    for conns in $CONNS; do
      for target in $order; do
        [[ $target == ceiling && $scenario != send ]] && continue
        [[ ($target == a2ad-full || $target == sdk1-sqlite-defaults) && $scenario != send ]] && continue
        measure "$scenario" "$target" "$conns" "$run" ||
          echo "FAILED scenario=$scenario target=$target conns=$conns run=$run: driver error" | tee -a "$RAW" >&2
      done
    done
  done
done

# ---- restart with N stored tasks ------------------------------------------------------------
if [[ " $SCENARIOS " == *" restart "* ]]; then
  for n in $RESTART_TASKS; do
    SEED_DIR=$(mktemp -d /tmp/a2ad-bench-restart.XXXXXX)
    echo "  restart: seeding $n tasks" >&2
    seed=$("$RESTART" seed --data-dir "$SEED_DIR" --tasks "$n" | grep '^SEED')
    echo "SEED n=$n ${seed#SEED }" >>"$RAW"
    id=$(sed -nE 's/.*first_id=([^ ]+).*/\1/p' <<<"$seed")
    for run in $(seq "$RUNS"); do
      for cache in warm cold; do  # cold: the database files evicted from the page cache first
        line=$("$RESTART" time --a2ad "$A2AD" --data-dir "$SEED_DIR" --task-id "$id" \
          --cold "$([[ $cache == cold ]] && echo 1 || echo 0)" | grep '^RESTART')
        echo "RESTART n=$n cache=$cache run=$run ${line#RESTART }" >>"$RAW"
        echo "  restart n=$n $cache run $run: ${line#RESTART }" >&2
      done
    done
    rm -rf "$SEED_DIR"
  done
fi

echo "finished: $(date -u +%FT%TZ); loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$RAW"
python3 bench/report.py "$RAW" ${EXTRA_RAW:-} | tee "$TABLE"
if [[ $WRITE_RESULTS == 1 ]]; then
  python3 bench/report.py --write bench/RESULTS.md "$RAW" ${EXTRA_RAW:-}
  echo "bench/RESULTS.md: tables replaced (the text around them is by hand: update it)" >&2
fi
if [[ " $SCENARIOS " == *" fanout "* ]]; then
  exec 9>&-  # run_fanout.sh takes the same lock
  SKIP_BUILD=1 A2AD_BIN=${A2AD_BIN:-} bash bench/run_fanout.sh
fi
echo "raw: $RAW   tables: $TABLE" >&2
