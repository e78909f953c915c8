#!/usr/bin/env bash
# Searches the server logs of a test run (A2AD_TEST_LOG_DIR, which `make test` sets) for
# credentials that must never be logged (issue 14; DIGEST §6.4): an API key with its secret,
# a JWT or signed interrupt token (base64url JSON header/claims followed by a signature), a
# PEM private key. Fails when one is found, and when there are no logs at all (a scan of
# nothing proves nothing).
set -euo pipefail
dir="${1:?usage: scan_test_logs.sh LOG_DIR}"
shopt -s nullglob
logs=("$dir"/*.log)
if [ "${#logs[@]}" -eq 0 ]; then
  echo "scan_test_logs: no server logs in $dir" >&2
  exit 1
fi
lines=$(cat "${logs[@]}" | wc -l)
patterns=(
  'a2ad_k_[0-9a-f]{16}_[A-Za-z0-9_-]{16,}'
  'eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}'
  '-----BEGIN [A-Z ]*PRIVATE KEY-----'
)
found=0
for p in "${patterns[@]}"; do
  if grep -E -n -H -e "$p" "${logs[@]}" | head -5 | grep .; then
    echo "scan_test_logs: a credential matching /$p/ is in the logs above" >&2
    found=1
  fi
done
[ "$found" -eq 0 ] || exit 1
echo "scan_test_logs: ${#logs[@]} server logs, $lines lines: no API key, token or private key"
