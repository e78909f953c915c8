#!/usr/bin/env bash
# Three a2ad replicas on one throwaway PostgreSQL database behind HAProxy, on loopback only.
#
#   scripts/cluster-demo.sh [--port N]   # foreground: prints the URLs; Ctrl-C stops everything
#   scripts/cluster-demo.sh start DIR    # background: prints the balancer URL, writes DIR/env
#   scripts/cluster-demo.sh stop DIR     # stops what `start DIR` started and removes DIR
#
# The database is scripts/pg-scratch.sh's (DIR/pg). Replicas r1..r3 each have a --data-dir
# (DIR/rN) and a log (DIR/rN.log) and listen on free ports of 127.0.0.1; their cards name the
# balancer (--public-url). HAProxy (DIR/haproxy.cfg, DIR/haproxy.log) balances them round robin,
# checks GET /readyz every second and sends the client's address in X-Forwarded-For, which the
# replicas read only from 127.0.0.1 (--trusted-proxies). DIR/env, for a test to source:
# BALANCER_URL, REPLICA_URLS, PIDS (r1 r2 r3 haproxy), PG_URL, LOGS. DIR must be missing or
# empty; as root its parents must let the postgres user through (/tmp does).
#
# Environment:
#   A2AD_BIN       the a2ad binary (default: build/release/src/a2ad/cli/a2ad of this repo)
#   HAPROXY_BIN    default: haproxy on PATH, else /usr/sbin/haproxy
#   CLUSTER_PORT   the balancer's port (foreground default 8090; `start` default: a free one)
# Other A2AD_* and PG_SCRATCH_* variables reach a2ad and pg-scratch.sh as usual.
set -euo pipefail

readonly marker_name=.cluster-demo   # marks DIR as made by this script (stop removes only those)
readonly ready_timeout_s=30
readonly replicas=(r1 r2 r3)

log() { printf 'cluster-demo: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
usage() { die "usage: $0 [--port N] | start DIR | stop DIR"; }
trap 'exit 130' INT   # exit, so that the EXIT trap (the cleanup) runs
trap 'exit 143' TERM

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pg_scratch=$repo_root/scripts/pg-scratch.sh
a2ad_bin=${A2AD_BIN:-$repo_root/build/release/src/a2ad/cli/a2ad}

# Prints a TCP port of 127.0.0.1 nobody listens on (the kernel's choice), or port $1 if free.
free_port() {
  python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind: TIME_WAIT is fine
s.bind(("127.0.0.1", int(sys.argv[1])))
print(s.getsockname()[1])' "${1:-0}" 2>/dev/null
}

# "STATE STARTTIME" of process $1 (STARTTIME tells it from a later one given the same id).
proc_state() {
  local stat fields
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  read -r -a fields <<<"${stat##*) }"
  printf '%s %s\n' "${fields[0]}" "${fields[19]}"
}
# Appends "NAME PID STARTTIME" of process $3 to DIR/pids.
record() { printf '%s %s %s\n' "$2" "$3" "$(proc_state "$3" | cut -d ' ' -f 2)" >>"$1/pids"; }
# Whether process $1 (started at $2) is alive and not a zombie.
alive() {
  local state start
  read -r state start < <(proc_state "$1") || return 1
  [[ $state != Z && $start == "$2" ]]
}

# Waits until URL/readyz answers 200; fails with LOG's tail once NAME (PID, START) has exited or
# DEADLINE ($SECONDS) has passed.
wait_ready() {
  local name=$1 url=$2 pid=$3 start=$4 log=$5 deadline=$6
  until curl -fso /dev/null -m 2 "$url/readyz"; do
    if ! alive "$pid" "$start" || ((SECONDS >= deadline)); then
      tail -n 30 "$log" >&2 || true
      alive "$pid" "$start" || die "$name exited (log: $log)"
      die "$name ($url) is not ready after ${ready_timeout_s} s (log: $log)"
    fi
    sleep 0.2
  done
}

# Stops the replicas (SIGTERM: they finish in-flight requests), then HAProxy, then the database,
# and removes DIR.
cmd_stop() {
  local dir=$1 group name pid start deadline
  [[ -e $dir ]] || return 0
  [[ -e $dir/$marker_name ]] || die "$dir was not made by $0 start; not removing it"
  for group in r haproxy; do   # r: r1, r2, r3
    [[ -f $dir/pids ]] || break
    while read -r name pid start; do
      if [[ $name == "$group"* ]] && alive "$pid" "$start"; then kill -TERM "$pid" || true; fi
    done <"$dir/pids"
    deadline=$((SECONDS + 15))   # a2ad's --shutdown-grace-ms is 10 s by default
    while read -r name pid start; do
      [[ $name == "$group"* ]] || continue
      while alive "$pid" "$start" && ((SECONDS < deadline)); do sleep 0.1; done
      if alive "$pid" "$start"; then
        log "$name ($pid) did not stop; killing it"
        kill -KILL "$pid" || true
      fi
    done <"$dir/pids"
  done
  [[ ! -e $dir/pg ]] || "$pg_scratch" stop "$dir/pg" || log "pg-scratch.sh stop failed"
  rm -rf -- "$dir"
}

# Starts everything in DIR and writes DIR/env. Sets an EXIT trap that stops it all: the caller
# clears it once the cluster is to outlive this script.
cmd_start() {
  local dir=$1 port=$2 id rport pid start i deadline haproxy_bin workflows=() ports=()
  [[ -x $a2ad_bin ]] || die "no a2ad binary at $a2ad_bin (build it, or set A2AD_BIN)"
  haproxy_bin=${HAPROXY_BIN:-$(command -v haproxy || echo /usr/sbin/haproxy)}
  [[ -x $haproxy_bin ]] || die "haproxy not found (scripts/bootstrap.sh installs it)"
  if [[ -e $dir ]]; then
    [[ -d $dir && -z $(ls -A "$dir") ]] || die "$dir is not an empty directory"
  fi
  mkdir -p "$dir" && : >"$dir/$marker_name"
  trap 'log "failed; cleaning up"; cmd_stop "$dir"' EXIT
  chmod 711 "$dir"   # as root, the postgres user goes through to DIR/pg
  if [[ $port == 0 ]]; then
    port=$(free_port) || die "no free port on 127.0.0.1"
  else
    free_port "$port" >/dev/null || die "port $port of 127.0.0.1 is busy (--port N, CLUSTER_PORT)"
  fi
  balancer=http://127.0.0.1:$port
  pg_url=$("$pg_scratch" start "$dir/pg")

  [[ ! -d $repo_root/workflows ]] || workflows=(--workflows-dir "$repo_root/workflows")
  urls=() logs=()
  for id in "${replicas[@]}"; do
    rport=$(free_port) || die "no free port on 127.0.0.1"
    local args=(serve --database-url "$pg_url" --data-dir "$dir/$id" --listen "127.0.0.1:$rport"
      --public-url "$balancer" --trusted-proxies 127.0.0.1/32 --forwarded-header x-forwarded-for "${workflows[@]}")
    args+=(--replica-id "$id" --lease-ttl-ms "${LEASE_TTL_MS:-8000}")
    read -ra extra <<<"${A2AD_SERVE_ARGS:-}"  # more `a2ad serve` flags for every replica
    args+=("${extra[@]}")
    mkdir -p "$dir/$id"
    # Its own session, no inherited stdio: neither a Ctrl-C nor a caller reading our stdout
    # to its end reaches it.
    setsid "$a2ad_bin" "${args[@]}" </dev/null >"$dir/$id.log" 2>&1 &
    record "$dir" "$id" $!
    urls+=("http://127.0.0.1:$rport") && ports+=("$rport") && logs+=("$dir/$id.log")
  done
  deadline=$((SECONDS + ready_timeout_s))
  for i in "${!replicas[@]}"; do
    read -r _ pid start < <(grep "^${replicas[i]} " "$dir/pids")
    wait_ready "replica ${replicas[i]}" "${urls[i]}" "$pid" "$start" "${logs[i]}" "$deadline"
  done

  # HAProxy, in the foreground (-db) of its own session, logging to DIR/haproxy.log.
  {
    cat <<EOF
global
  log stdout format raw local0
defaults
  mode http
  log global
  option httplog
  option forwardfor        # the client's address in X-Forwarded-For
  retries 2
  option redispatch        # a refused connection is retried on another replica
  timeout connect 5s
  timeout http-request 30s
  timeout client 1m        # streams stay busy: a2ad sends a heartbeat every 15 s
  timeout server 1m
  timeout tunnel 1h
frontend a2a
  bind 127.0.0.1:$port
  # The edge: drop what clients claim (a2ad reads Forwarded before X-Forwarded-For).
  http-request del-header Forwarded
  http-request del-header X-Forwarded-For
  default_backend replicas
backend replicas
  balance roundrobin
  source 127.0.0.1         # the address the replicas trust (--trusted-proxies)
  option httpchk GET /readyz
  http-check expect status 200
  default-server check inter 1s fall 2 rise 1
EOF
    for i in "${!replicas[@]}"; do printf '  server %s 127.0.0.1:%s\n' "${replicas[i]}" "${ports[i]}"; done
  } >"$dir/haproxy.cfg"
  "$haproxy_bin" -c -q -f "$dir/haproxy.cfg" || die "haproxy refuses $dir/haproxy.cfg"
  setsid "$haproxy_bin" -db -f "$dir/haproxy.cfg" </dev/null >"$dir/haproxy.log" 2>&1 &
  record "$dir" haproxy $!
  read -r _ pid start < <(grep "^haproxy " "$dir/pids")
  wait_ready haproxy "$balancer" "$pid" "$start" "$dir/haproxy.log" "$deadline"

  pids=$(cut -d ' ' -f 2 "$dir/pids" | paste -s -d ' ')
  logs+=("$dir/haproxy.log")
  printf '%s=%q\n' BALANCER_URL "$balancer" REPLICA_URLS "${urls[*]}" PIDS "$pids" \
    PG_URL "$pg_url" LOGS "${logs[*]}" >"$dir/env"
}

case ${1:-} in
  start | stop)
    [[ $# -eq 2 && -n $2 ]] || usage
    dir=$2
    case $dir in /*) ;; *) dir="$PWD/$dir" ;; esac
    dir=${dir%/}
    if [[ $1 == stop ]]; then
      cmd_stop "$dir"
    else
      cmd_start "$dir" "${CLUSTER_PORT:-0}"
      trap - EXIT
      printf '%s\n' "$balancer"
    fi
    ;;
  "" | --port)
    port=${CLUSTER_PORT:-8090}
    if [[ ${1:-} == --port ]]; then
      [[ $# -eq 2 && $2 =~ ^[0-9]+$ ]] || usage
      port=$2
    elif (($# > 0)); then usage; fi
    dir=$(mktemp -d /tmp/a2ad-cluster.XXXXXX)
    cmd_start "$dir" "$port"
    trap 'cmd_stop "$dir"; log "stopped"' EXIT
    cat >&2 <<EOF
cluster-demo: ready
  balancer: $balancer   (card: $balancer/.well-known/agent-card.json)
  replicas: ${urls[*]}
  pids:     $pids   (r1 r2 r3 haproxy)
  logs:     ${logs[*]}
  database: $pg_url
  try:      curl -s $balancer/v1/a2a -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","messageId":"m-$RANDOM","parts":[{"kind":"text","text":"/echo hi"}]}}}'
Ctrl-C stops everything.
EOF
    while true; do   # until a signal, or until one of them exits
      while read -r name pid start; do
        alive "$pid" "$start" || { tail -n 20 "$dir/$name.log" >&2; die "$name ($pid) exited"; }
      done <"$dir/pids"
      sleep 1
    done
    ;;
  *) usage ;;
esac
