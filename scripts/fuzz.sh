#!/usr/bin/env bash
# Runs the libFuzzer targets of the fuzz preset (tests/fuzz/README.md). Build them first
# (`make fuzz-build`); `make fuzz` and `make fuzz-smoke` (part of `make test`) call this.
#
#   scripts/fuzz.sh run SECONDS TARGET...     fuzz each target for SECONDS, starting from its
#                                             seeds (tests/fuzz/corpus/<target>) and what earlier
#                                             runs found; new inputs are merged into
#                                             build/fuzz/corpus/<target> (never into the repo)
#   scripts/fuzz.sh smoke SECONDS TARGET...   each target for SECONDS from its seeds only;
#                                             nothing is kept (make test)
#
# JOBS (default 2) targets run at a time. Logs: build/fuzz/logs/<target>.log. A crash, a
# sanitizer report, a timeout or a broken invariant fails the script; the input is saved as
# build/fuzz/artifacts/<target>/crash-... and the command that reproduces it is printed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
fuzz_dir=build/fuzz

run_one() {  # MODE SECONDS TARGET
  local mode=$1 seconds=$2 target=$3
  local bin="$fuzz_dir/tests/fuzz/$target"
  local seeds="tests/fuzz/corpus/$target"
  local found="$fuzz_dir/corpus/$target"
  local artifacts="$fuzz_dir/artifacts/$target"
  local log="$fuzz_dir/logs/$target.log"
  if [[ ! -x "$bin" ]]; then
    echo "fuzz: $target: $bin is missing (make fuzz-build)" >&2
    return 1
  fi
  mkdir -p "$artifacts" "$found" "$(dirname "$log")"
  local work
  work="$(mktemp -d "$fuzz_dir/work-$target.XXXXXX")"
  local args=(-max_total_time="$seconds" -timeout=25 -rss_limit_mb=2560 -print_final_stats=1
              -artifact_prefix="$artifacts/")
  [[ -f "tests/fuzz/$target.dict" ]] && args+=(-dict="tests/fuzz/$target.dict")
  # libFuzzer flags of the target's own (one line), e.g. -entropic=0 where the entropic
  # scheduler's bookkeeping costs more than the input does.
  if [[ -f "tests/fuzz/$target.options" ]]; then
    local extra
    read -ra extra < "tests/fuzz/$target.options" || true  # (a last line without a newline)
    args+=("${extra[@]}")
  fi
  # New inputs go to the first directory: a scratch one, merged below (run) or dropped
  # (smoke, which starts from the seeds only, so that its time stays bounded).
  local dirs=("$work" "$seeds")
  [[ "$mode" == run ]] && dirs+=("$found")
  local status=0 started=$SECONDS cpu
  cpu="$( { TIMEFORMAT='%U %S'; time UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            "$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1; } 2>&1 )" || status=$?
  local execs
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  cpu="$(awk '{printf "%.0f", $1 + $2}' <<<"${cpu:-0 0}")"
  if ((status != 0)); then
    local unit
    unit="$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)"
    echo "fuzz: $target: FAILED (exit $status) after $((SECONDS - started)) s; log: $log" >&2
    grep -m1 -E '^==[0-9]+==ERROR|==== fuzz invariant broken|runtime error|ERROR: libFuzzer' \
      "$log" >&2 || tail -n 20 "$log" >&2
    grep -A3 -m1 '==== fuzz invariant broken' "$log" | tail -n +2 >&2 || true
    if [[ -n "$unit" ]]; then
      echo "fuzz: $target: reproduce with: $bin $unit" >&2
    fi
    rm -rf "$work"
    return 1
  fi
  if [[ "$mode" == run ]]; then
    # Keep only the inputs that add coverage to what earlier runs kept.
    "$bin" -merge=1 -timeout=25 -rss_limit_mb=2560 "$found" "$work" >>"$log" 2>&1
  fi
  rm -rf "$work"
  echo "fuzz: $target: ok, ${execs:-?} inputs in $((SECONDS - started)) s (${cpu} s CPU)"
}

if [[ "${1:-}" == one ]]; then  # internal: one target, called through xargs below
  run_one "$2" "$3" "$4"
  exit
fi

mode="${1:?usage: fuzz.sh run|smoke SECONDS TARGET...}"
seconds="${2:?usage: fuzz.sh run|smoke SECONDS TARGET...}"
shift 2
[[ "$mode" == run || "$mode" == smoke ]] || { echo "fuzz.sh: unknown mode '$mode'" >&2; exit 2; }
(($# > 0)) || { echo "fuzz.sh: no targets" >&2; exit 2; }
echo "fuzz: $mode: $* for $seconds s each, ${JOBS:-2} at a time"
printf '%s\n' "$@" | xargs -P "${JOBS:-2}" -I{} bash "${BASH_SOURCE[0]}" one "$mode" "$seconds" {}
