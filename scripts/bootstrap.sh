#!/usr/bin/env bash
# Installs what a2ad needs to build and test on Debian bookworm, and nothing that is already there.
#
#   scripts/bootstrap.sh
#
# Idempotent: Debian packages are installed only when missing (apt-get update runs only then),
# and `npm ci` runs in console, tests/interop and tests/browser only when node_modules is missing or older
# than the lockfile.
# Uses sudo only when not running as root.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { printf 'bootstrap: %s\n' "$*"; }

if [[ "$(id -u)" -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  log "not root and sudo is not installed; cannot install packages" >&2
  exit 1
fi

# ---- Debian packages -------------------------------------------------------------------------
packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libssl-dev libsqlite3-dev libpq-dev postgresql
  libmimalloc-dev  # the server's allocator (A2AD_MIMALLOC)
  haproxy  # scripts/cluster-demo.sh (starts its own; the haproxy service is not used)
  libspdlog-dev libcli11-dev
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc  # the gRPC binding
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  clang libclang-rt-14-dev  # the fuzz preset (tests/fuzz): clang++ and libFuzzer
  clang-tidy  # make lint (.clang-tidy)
  curl ca-certificates python3
  python3-prometheus-client  # tests/metrics: /metrics read by the Prometheus client's parser
  chromium  # tests/browser: a real browser (CORS), driven by playwright-core
)
# Node.js may come from elsewhere (e.g. NodeSource, which bundles npm); only fall back to
# Debian's packages when there is no node at all.
if ! command -v node >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for pkg in "${packages[@]}"; do
  is_installed "$pkg" || missing+=("$pkg")
done

if ((${#missing[@]} > 0)); then
  log "installing missing Debian packages: ${missing[*]}"
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
else
  log "all ${#packages[@]} Debian packages already installed"
fi

# ---- Node.js packages for the interop and browser tests ----------------------------------------
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if ((node_major < 20)); then
  log "warning: node $(node --version) found; @a2a-js/sdk 1.x declares node >= 20" >&2
fi
if ! command -v npm >/dev/null 2>&1; then
  log "node is installed but npm is not; install npm (apt-get install npm)" >&2
  exit 1
fi

for npm_dir in console tests/interop tests/browser; do
  dir="$repo_root/$npm_dir"
  [[ -f "$dir/package-lock.json" ]] || continue
  # npm ci writes node_modules/.package-lock.json; it is older than the lockfile after a change.
  stamp="$dir/node_modules/.package-lock.json"
  if [[ ! -f "$stamp" || "$dir/package-lock.json" -nt "$stamp" ]]; then
    log "npm ci in $npm_dir"
    (cd "$dir" && npm ci --no-audit --no-fund)
    touch "$stamp"
  else
    log "$npm_dir/node_modules is up to date"
  fi
done

log "done"
