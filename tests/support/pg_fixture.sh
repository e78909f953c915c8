#!/usr/bin/env bash
# The PostgreSQL cluster that ctest's PostgreSQL tests share (ctest fixture "pg", made in
# tests/CMakeLists.txt): ctest runs every gtest case as a process of its own, and a cluster per
# process would cost a second or two each. Each test still gets a database of its own
# (FreshPgDatabase, pg_cluster.hpp), read from the URL file this writes.
#
#   tests/support/pg_fixture.sh start|stop BINARY_DIR
#
# The cluster lives in /tmp/a2ad-pgctest-<hash of BINARY_DIR> (short, for the socket path, and
# reachable by the postgres user that runs it when we are root); its URL in
# BINARY_DIR/pg-fixture.url. `start` first stops one left by an interrupted run.
set -euo pipefail
cmd=${1:?start|stop}
bin=${2:?binary dir}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=/tmp/a2ad-pgctest-$(printf '%s' "$bin" | sha1sum | cut -c1-10)
url_file=$bin/pg-fixture.url
case $cmd in
  start)
    rm -f "$url_file"
    [[ -e $dir ]] && { bash "$root/scripts/pg-scratch.sh" stop "$dir" || rm -rf "$dir"; }
    mkdir -p "$dir"
    url=$(PG_SCRATCH_OPTS="-c max_connections=300" bash "$root/scripts/pg-scratch.sh" start "$dir")
    printf '%s\n' "$url" >"$url_file"
    echo "pg fixture: $url"
    ;;
  stop)
    rm -f "$url_file"
    [[ -e $dir ]] && bash "$root/scripts/pg-scratch.sh" stop "$dir"
    echo "pg fixture: stopped"
    ;;
  *) echo "usage: $0 start|stop BINARY_DIR" >&2; exit 2 ;;
esac
