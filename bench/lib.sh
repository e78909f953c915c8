# shellcheck shell=bash
# Shell helpers of the bench scripts (ab.sh, grow.sh, wal_pages.sh, run_bench.sh):
#   source "$ROOT/bench/lib.sh"

# bench_serve BIN DIR [ARG...]: `BIN serve` on 127.0.0.1, port 0, with the echo skill, its data
# in DIR/data and its output in DIR/out; ARGs go after --listen. Sets PID and PORT; exits when
# the server does not start.
bench_serve() {
  local bin=$1 dir=$2
  shift 2
  "$bin" serve --listen 127.0.0.1:0 "$@" --data-dir "$dir/data" --log-level warn \
    --default-skill echo >"$dir/out" 2>&1 &
  PID=$!
  PORT=""
  for _ in $(seq 200); do
    PORT=$(sed -nE 's#.*serving http://127\.0\.0\.1:([0-9]+).*#\1#p' "$dir/out" 2>/dev/null || true)
    [[ -n $PORT ]] && return 0
    sleep 0.05
  done
  echo "server did not start: $(cat "$dir/out")" >&2
  kill -9 "$PID" 2>/dev/null || true
  exit 1
}

# bench_message_ids FILE...: the message ids of these body templates ("m-@SEQ@") as MESSAGE_IDS
# says: counter (the default) keeps them, ascending; random makes them @RAND@, in no order, as
# a client making UUIDv4 ids sends them (bench/loadgen.cpp; bench/RESULTS.md "Stop 58").
bench_message_ids() {
  case ${MESSAGE_IDS:-counter} in
    counter) ;;
    random) sed -i 's/"m-@SEQ@"/"@RAND@"/' "$@" ;;
    *) echo "MESSAGE_IDS takes counter or random, not '$MESSAGE_IDS'" >&2; exit 2 ;;
  esac
}
