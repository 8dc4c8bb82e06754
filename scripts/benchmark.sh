#!/usr/bin/env bash
# Runs each benchmark program with llama-bench's standard settings and prints
# one markdown table, then each program's kernel-time and memory lines
# (built by the `benchmark` target).
#   scripts/benchmark.sh BIN_DIR PROGRAM...      env: KILN_BENCH_ARGS overrides the settings
set -euo pipefail
bin=$1
shift
args=${KILN_BENCH_ARGS:-"-p 512 -n 128 -r 5 -t 1,2"}
[ -f "${XDG_CACHE_HOME:-$HOME/.cache}/kiln/machine.json" ] || "$bin/$1" --probe -p 0 -n 0 >/dev/null
echo "settings: $args"
first=1
notes=""  # each program's kernel-time and memory lines, printed under the table
for program in "$@"; do
  # shellcheck disable=SC2086
  out=$("$bin/$program" $args)
  if [ $first -eq 1 ]; then
    echo "$out" | grep '^|'
    first=0
  else
    echo "$out" | grep '^|' | tail -n +3
  fi
  notes+=$(echo "$out" | grep -E '^(kernels|memory):' || true)$'\n'
  machine=$(echo "$out" | grep '^machine:' || true)
done
echo
printf '%s' "$notes"
echo "$machine"
