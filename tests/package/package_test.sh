#!/usr/bin/env bash
# The Debian package (issue 18), built by CPack from the release tree and checked as an
# operator would meet it: its metadata and dependencies, the files it installs (binaries,
# systemd unit, conffile, workflows, maintainer scripts), then the installed binary, unpacked
# with dpkg -x, started with the package's own configuration (only the address and the data
# directory moved to a temporary place) serving the bundled workflows.
#
#   package_test.sh <build dir>
set -euo pipefail
build="$(cd "${1:?usage: package_test.sh BUILD_DIR}" && pwd)"
tmp="$(mktemp -d)"
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "package_test: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/out" > "$tmp/cpack.log" 2>&1) || {
  cat "$tmp/cpack.log"; fail "cpack failed"; }
deb=$(ls "$tmp"/out/a2ad_*.deb 2>/dev/null | head -1)
[[ -f "$deb" ]] || fail "no .deb in $tmp/out"

info=$(dpkg-deb --info "$deb")
grep -q "^ Package: a2ad$" <<<"$info" || fail "package name: $info"
grep -q "^ Depends: .*adduser" <<<"$info" || fail "no Depends on adduser: $info"
# dpkg-shlibdeps found the shared libraries the binaries use.
grep -q "^ Depends: .*libssl3" <<<"$info" || fail "Depends misses libssl3: $info"
grep -q "^ Depends: .*libsqlite3" <<<"$info" || fail "Depends misses libsqlite3: $info"

dpkg-deb --control "$deb" "$tmp/control"
for script in postinst prerm postrm; do
  [[ -x "$tmp/control/$script" ]] || fail "no executable $script"
  sh -n "$tmp/control/$script" || fail "$script is not valid sh"
done
grep -qx "/etc/a2ad/a2ad.env" "$tmp/control/conffiles" || fail "a2ad.env is not a conffile"

dpkg -x "$deb" "$tmp/root"
for f in usr/bin/a2ad usr/bin/a2a usr/lib/systemd/system/a2ad.service etc/a2ad/a2ad.env \
         usr/share/a2ad/workflows/campaign-brief.json \
         usr/share/a2ad/workflows/conformance/conformance-approval.json \
         usr/share/doc/a2ad/README.md; do
  [[ -e "$tmp/root/$f" ]] || fail "the package lacks /$f"
done
unit="$tmp/root/usr/lib/systemd/system/a2ad.service"
grep -q "^ExecStart=/usr/bin/a2ad serve$" "$unit" || fail "unit's ExecStart"
grep -q "^EnvironmentFile=/etc/a2ad/a2ad.env$" "$unit" || fail "unit's EnvironmentFile"
grep -q "^StateDirectory=a2ad$" "$unit" || fail "unit's StateDirectory"
if command -v systemd-analyze >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
  systemd-analyze verify "$unit" || fail "systemd-analyze verify"
fi

# The installed binary, started as the unit starts it: the conffile's settings, with the
# listen address and the data directory moved to this test's.
bin="$tmp/root/usr/bin/a2ad"
"$bin" validate "$tmp"/root/usr/share/a2ad/workflows/*.json > "$tmp/validate.log" ||
  { cat "$tmp/validate.log"; fail "the bundled workflows do not validate"; }
mkdir -p "$tmp/data"
(
  set -a
  # shellcheck disable=SC1091
  . "$tmp/root/etc/a2ad/a2ad.env"
  set +a
  A2AD_LISTEN=127.0.0.1:0 A2AD_DATA_DIR="$tmp/data" \
    A2AD_WORKFLOWS_DIR="$tmp/root/usr/share/a2ad/workflows" exec "$bin" serve
) > "$tmp/serve.out" 2> "$tmp/serve.err" &
pid=$!
base=""
for _ in $(seq 1 100); do
  base=$(sed -n 's|^a2ad: serving \(http://[^/]*\)/.*|\1|p' "$tmp/serve.out")
  [[ -n "$base" ]] && break
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.err"; fail "the installed a2ad exited"; }
  sleep 0.1
done
[[ -n "$base" ]] || { cat "$tmp/serve.err"; fail "the installed a2ad did not start"; }
curl -sf "$base/readyz" | grep -q '"ready":true' || fail "not ready: $(curl -s "$base/readyz")"
card=$(curl -sf "$base/.well-known/agent-card.json")
grep -q '"id":"campaign-brief"' <<<"$card" || fail "the card lacks the bundled workflows"
answer=$(curl -sf "$base/v1/a2a" -H 'content-type: application/json' -d '{"jsonrpc":"2.0",
  "id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user",
  "messageId":"p1","parts":[{"kind":"text","text":"hi"}],"metadata":{"skillId":"echo"}}}}')
grep -q '"state":"completed"' <<<"$answer" || fail "echo did not complete: $answer"
echo "package_test: ok: $(basename "$deb") ($(du -h "$deb" | cut -f1)), served from the package"
