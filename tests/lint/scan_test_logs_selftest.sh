#!/usr/bin/env bash
# scripts/scan_test_logs.sh finds each kind of credential it is for, and passes clean logs.
set -euo pipefail
scan="$1/scripts/scan_test_logs.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
expect() {  # expect <exit code> <log line>
  rm -f "$dir"/*.log
  printf '%s\n' "[info] serving" "$2" > "$dir/server-1.log"
  set +e
  bash "$scan" "$dir" > /dev/null 2>&1
  local got=$?
  set -e
  [ "$got" -eq "$1" ] || { echo "expected exit $1, got $got for: $2"; exit 1; }
}
expect 0 "[info] api key 0123456789abcdef created for tenant acme"
expect 1 "[warn] refused a2ad_k_0123456789abcdef_Zm9vYmFyYmF6cXV4cXV1eHh4eHh4eHh4eHh4eHh4eHg"
expect 1 "[debug] GET /v1/interrupts/eyJydW5JZCI6InIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl"
expect 1 "[debug] token eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJ4In0.c2ln"
expect 1 "-----BEGIN PRIVATE KEY-----"
rm -f "$dir"/*.log
if bash "$scan" "$dir" > /dev/null 2>&1; then echo "an empty log directory passed"; exit 1; fi
echo ok
