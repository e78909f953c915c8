#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in one directory, for tests and for trying a2ad by hand.
#
#   scripts/pg-scratch.sh start DIR   # prints one line: postgresql://a2ad@127.0.0.1:PORT/a2ad
#   scripts/pg-scratch.sh url DIR     # the same line, for a cluster that is running
#   scripts/pg-scratch.sh stop DIR    # stops the cluster and removes DIR
#
# `start` makes a cluster in DIR/data (initdb: superuser a2ad, trust authentication, UTF8, C
# locale), starts it with pg_ctl listening on 127.0.0.1 at a free port and on a unix socket in
# DIR (never on another interface, never on 5432 by assumption), waits until it accepts
# connections (at most 30 s) and creates the database a2ad. DIR must be missing or empty; the
# server log is DIR/log. Only the URL goes to stdout; everything else goes to stderr.
#
# Throwaway clusters only: anyone on this machine can connect as the superuser a2ad (trust),
# and the cluster runs with fsync=off, so a crash of the machine can lose or corrupt its data.
#
# initdb refuses to run as root: when run as root, the cluster belongs to the `postgres` system
# user (DIR is chowned to it, and its parent directories must let it through) and initdb,
# pg_ctl and the server run as that user (setpriv, else runuser). Otherwise they run as the
# caller.
#
# Environment:
#   PG_SCRATCH_OPTS       more server settings for `start`, as postgres options:
#                         PG_SCRATCH_OPTS='-c log_statement=all -c max_connections=50'
#   PG_SCRATCH_WATCH_PID  for `start`: a process id; a detached watchdog stops the cluster and
#                         removes DIR once that process has gone (e.g. a test process that was
#                         killed before it could stop its cluster)
#   PG_BINDIR             the directory of initdb, pg_ctl and postgres (default: that of
#                         `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin, else
#                         wherever initdb is on PATH)
set -euo pipefail

readonly marker_name=.pg-scratch    # marks DIR as made by this script (stop removes only those)
readonly ready_timeout_s=30
readonly start_attempts=5           # another free port when the chosen one was taken meanwhile

log() { printf 'pg-scratch: %s\n' "$*" >&2; }
die() {
  log "$*"
  exit 1
}
usage() { die "usage: $0 start|stop|url DIR"; }

self=$(readlink -f "${BASH_SOURCE[0]}")
(($# == 2)) || [[ $# -eq 4 && $1 == _watch ]] || usage
cmd=$1
dir=$2
[[ -n $dir ]] || usage
case $dir in /*) ;; *) dir="$PWD/$dir" ;; esac
dir=${dir%/}
# pg_ctl hands the data directory and log path to a shell inside double quotes.
[[ $dir != *[\"\'\\\$\`]* && $dir != *$'\n'* ]] || die "DIR must not contain quotes, \\, \$ or \`: $dir"
data=$dir/data

find_bindir() {
  local d
  if [[ -n ${PG_BINDIR:-} ]]; then
    [[ -x $PG_BINDIR/initdb ]] || die "PG_BINDIR=$PG_BINDIR has no initdb"
    printf '%s\n' "$PG_BINDIR"
    return
  fi
  if command -v pg_config >/dev/null 2>&1; then
    d=$(pg_config --bindir 2>/dev/null || true)
    if [[ -n $d && -x $d/initdb && -x $d/pg_ctl ]]; then
      printf '%s\n' "$d"
      return
    fi
  fi
  d=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  if [[ -n $d && -x $d/initdb && -x $d/pg_ctl ]]; then
    printf '%s\n' "$d"
    return
  fi
  if command -v initdb >/dev/null 2>&1; then
    d=$(dirname "$(readlink -f "$(command -v initdb)")")
    if [[ -x $d/pg_ctl ]]; then
      printf '%s\n' "$d"
      return
    fi
  fi
  die "PostgreSQL server programs not found (initdb, pg_ctl); on Debian: apt-get install postgresql"
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# Runs a command as the owner of the cluster: `postgres` when we are root, else ourselves.
# From / so that a working directory it may not enter does not matter.
as_owner() {
  if is_root; then
    if command -v setpriv >/dev/null 2>&1; then
      (cd / && exec setpriv --reuid=postgres --regid=postgres --clear-groups -- "$@")
    else
      (cd / && exec runuser -u postgres -- "$@")
    fi
  else
    (cd / && exec "$@")
  fi
}

# A TCP port on 127.0.0.1 that nobody listens on right now (the kernel's choice).
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()' && return
  fi
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      printf '%s\n' "$p"
      return
    fi
  done
  die "no free port found on 127.0.0.1"
}

# The port of the running cluster in DIR: line 4 of postmaster.pid.
cluster_port() {
  [[ -r $data/postmaster.pid ]] || return 1
  sed -n 4p "$data/postmaster.pid"
}

url_for() { printf 'postgresql://a2ad@127.0.0.1:%s/a2ad\n' "$1"; }

# Process start time (clock ticks since boot) of pid $1: tells a process from a later one that
# was given the same id. Empty when there is no such process (or no /proc).
start_time() {
  local stat rest fields
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  rest=${stat##*) }
  read -r -a fields <<<"$rest"
  printf '%s\n' "${fields[19]}"
}

# Seconds left until $1 (in $SECONDS time), at least 1.
remaining() {
  local left=$(($1 - SECONDS))
  ((left > 0)) || left=1
  printf '%s\n' "$left"
}

cmd_start() {
  local bindir port attempt started=0 deadline
  bindir=$(find_bindir)
  # The server's socket is DIR/.s.PGSQL.PORT(.lock): sun_path holds 107 bytes.
  ((${#dir} + 21 <= 107)) || die "DIR is too long for a unix socket path (${#dir} bytes, at most 86): $dir"
  if [[ -e $dir ]]; then
    [[ -d $dir ]] || die "$dir exists and is not a directory"
    [[ -z $(ls -A "$dir") ]] || die "$dir is not empty (a cluster there already? try: $0 url $dir)"
  else
    mkdir -p "$dir"
  fi
  chmod 700 "$dir"
  : >"$dir/$marker_name"
  # Who to watch, written first: a sweeper can tell a cluster left by a killed process (its
  # watched process and watchdog gone) from one that is still starting.
  local watched_start=
  if [[ -n ${PG_SCRATCH_WATCH_PID:-} ]]; then
    watched_start=$(start_time "$PG_SCRATCH_WATCH_PID")
    [[ -n $watched_start ]] || die "PG_SCRATCH_WATCH_PID=$PG_SCRATCH_WATCH_PID: no such process"
    printf '%s\n' "$PG_SCRATCH_WATCH_PID" >"$dir/watch.pid"
  fi
  if is_root; then
    id postgres >/dev/null 2>&1 || die "running as root, but there is no 'postgres' user to own the cluster"
    chown postgres:postgres "$dir"
    as_owner test -w "$dir" ||
      die "the postgres user cannot reach $dir: a parent directory does not let it through (o+x)"
  fi

  log "initdb $data"
  if ! as_owner "$bindir/initdb" -D "$data" -A trust -U a2ad -E UTF8 --no-locale --no-sync \
      --no-instructions >"$dir/log" 2>&1; then
    cat "$dir/log" >&2
    die "initdb failed"
  fi
  if is_root; then
    chown postgres:postgres "$dir/log"
  fi
  {
    printf '\n# pg-scratch.sh: a throwaway cluster\n'
    printf "listen_addresses = '127.0.0.1'\n"
    printf "unix_socket_directories = '%s'\n" "$dir"
    printf 'fsync = off  # throwaway clusters only: a crash of the machine may corrupt the data\n'
  } >>"$data/postgresql.conf"

  deadline=$((SECONDS + ready_timeout_s))
  for ((attempt = 1; attempt <= start_attempts; attempt++)); do
    port=$(free_port)
    log "starting on 127.0.0.1:$port (log: $dir/log)"
    if as_owner "$bindir/pg_ctl" start -D "$data" -l "$dir/log" -w -t "$(remaining "$deadline")" \
        -o "-p $port ${PG_SCRATCH_OPTS:-}" >&2; then
      started=1
      break
    fi
    # The only failure worth another try: someone took the port between free_port and now.
    if tail -n 20 "$dir/log" | grep -q 'could not bind\|Address already in use'; then
      log "port $port was taken meanwhile; trying another"
      continue
    fi
    break
  done
  if ((started == 0)); then
    tail -n 30 "$dir/log" >&2 || true
    die "the server did not start (log: $dir/log)"
  fi

  local conninfo="host=127.0.0.1 port=$port user=a2ad dbname=postgres sslmode=disable connect_timeout=2"
  until "$bindir/pg_isready" -q -d "$conninfo"; do
    if ((SECONDS >= deadline)); then
      tail -n 30 "$dir/log" >&2 || true
      die "the server does not accept connections after ${ready_timeout_s} s (log: $dir/log)"
    fi
    sleep 0.1
  done
  "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -d "$conninfo" -c 'CREATE DATABASE a2ad' >&2 ||
    die "CREATE DATABASE a2ad failed"

  if [[ -n $watched_start ]]; then
    # Detached (own session, no inherited stdio) so that neither a caller reading our stdout
    # to its end nor a kill of the caller's process group waits for it or takes it along.
    setsid bash "$self" _watch "$dir" "$PG_SCRATCH_WATCH_PID" "$watched_start" \
      </dev/null >>"$dir/watchdog.log" 2>&1 &
  fi
  url_for "$port"
}

# The watchdog: waits for the watched process to go, then stops the cluster. Leaves by itself
# when the cluster was stopped (DIR removed) in the meantime.
cmd_watch() {
  local pid=$1 started=$2
  printf '%s\n' "$$" >"$dir/watchdog.pid"
  while [[ -e $dir/$marker_name && $(start_time "$pid") == "$started" ]]; do
    sleep 1
  done
  if [[ -e $dir/$marker_name ]]; then
    log "process $pid is gone; stopping the cluster in $dir"
    exec bash "$self" stop "$dir"
  fi
}

# Whether pid $1 is a live (not zombie) postgres process. A zombie matters: where nobody reaps
# orphans (some containers), a killed postmaster stays one, and signalling it "succeeds".
postmaster_alive() {
  local stat
  [[ -d /proc/self ]] || { kill -0 "$1" 2>/dev/null; return; }
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  [[ $stat == *"(postgres) "* && ${stat##*) } != Z* ]]
}

cmd_stop() {
  [[ -e $dir ]] || return 0
  [[ -e $dir/$marker_name ]] || die "$dir was not made by $0 start; not removing it"
  if [[ -e $data/postmaster.pid ]]; then
    local bindir pid
    pid=$(sed -n 1p "$data/postmaster.pid" 2>/dev/null || true)
    if [[ $pid =~ ^[0-9]+$ ]] && postmaster_alive "$pid"; then
      bindir=$(find_bindir)
      if ! as_owner "$bindir/pg_ctl" stop -D "$data" -m fast -w -t 20 >&2; then
        as_owner "$bindir/pg_ctl" stop -D "$data" -m immediate -w -t 10 >&2 || true
      fi
      # The postmaster removes its pid file just before it exits: give it a moment, then kill
      # it if it is still there.
      for _ in $(seq 1 50); do
        postmaster_alive "$pid" || break
        sleep 0.1
      done
      if postmaster_alive "$pid"; then
        log "postmaster $pid did not stop; killing it"
        kill -KILL "$pid" 2>/dev/null || true
      fi
    fi
  fi
  rm -rf -- "$dir"
}

cmd_url() {
  local bindir port
  bindir=$(find_bindir)
  port=$(cluster_port) || die "no cluster running in $dir"
  [[ $port =~ ^[0-9]+$ ]] || die "cannot read the port from $data/postmaster.pid"
  "$bindir/pg_isready" -q -d "host=127.0.0.1 port=$port user=a2ad dbname=a2ad connect_timeout=2" ||
    die "the cluster in $dir does not accept connections on 127.0.0.1:$port"
  url_for "$port"
}

case $cmd in
  start) cmd_start ;;
  stop) cmd_stop ;;
  url) cmd_url ;;
  _watch) cmd_watch "$3" "$4" ;;
  *) usage ;;
esac
