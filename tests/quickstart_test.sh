#!/usr/bin/env bash
# scripts/quickstart.sh on copies of stories260K.gguf under names that clash.
#
#   tests/quickstart_test.sh SHARED_DIR WORK_DIR --refusals   names the quickstart must refuse, one line each
#                                                             (configure only: a few seconds; a ctest)
#   tests/quickstart_test.sh SHARED_DIR WORK_DIR --full       also builds and runs the quickstart under the names
#                                                             of kiln's test models and a tool (with --name), and
#                                                             compares the text with llama2.c's (a CI step: it
#                                                             builds kiln a second time, in WORK_DIR/build)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SHARED_DIR WORK_DIR --refusals|--full" >&2; exit 2; }
shared=$1
work=$2
mode=$3
quickstart="$(cd "$(dirname "$0")/.." && pwd)/scripts/quickstart.sh"
gguf="$shared/models/stories260K/stories260K.gguf"
reference="$shared/models/stories260K/reference-llama2c.txt"
[ -f "$gguf" ] || { echo "FAIL: $gguf not found" >&2; exit 1; }
mkdir -p "$work"
export KILN_QUICKSTART_BUILD_DIR="$work/build"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# A copy of the model named NAME.gguf.
copy_as() {
  cp "$gguf" "$work/$1.gguf"
  echo "$work/$1.gguf"
}

# refused EXPECTED-TEXT ARGS...: the quickstart exits 1 with one line on stderr containing EXPECTED-TEXT.
refused() {
  local expected=$1 err status=0
  shift
  err=$("$quickstart" "$@" 2>&1 >/dev/null) || status=$?
  if [ "$status" -ne 1 ] || [ "$(wc -l <<<"$err")" -ne 1 ] || [[ "$err" != *"$expected"* ]]; then
    fail "quickstart $* gave exit $status and: $err"
  else
    echo "ok: quickstart $* -> $err"
  fi
}

refused "clashes with kiln's own target 'kiln-codegen'; pick another name with: scripts/quickstart.sh --name" \
  "$(copy_as kiln-codegen)" -n 1
refused "clashes with kiln's own target 'kiln_models'" "$(copy_as kiln_models)" -n 1
refused "clashes with kiln's own target 'kiln_cli'" --name kiln_cli "$(copy_as story)" -n 1
refused "'my model' cannot name a model" "$(copy_as 'my model')" -n 1
refused "--name: missing value" --name
refused "--name needs a GGUF file" --name story
refused "cannot read $work/no-such.gguf" "$work/no-such.gguf"

if [ "$mode" = --full ]; then
  # llama2.c's stdout for "Once upon a time", 200 positions: 5 prompt tokens and 196 generated.
  expected=$(awk '/-i "Once upon a time"/{found=1} found&&/^----- BEGIN STDOUT/{on=1; next} on&&/^----- END STDOUT/{exit} on' \
    "$reference")
  [ -n "$expected" ] || fail "no 'Once upon a time' text in $reference"
  # ran NAME ARGS...: the quickstart's stdout is llama2.c's text.
  ran() {
    local got
    got=$("$quickstart" "$@" -p "Once upon a time" -n 196 --temp 0 -t 1) || { fail "quickstart $* failed"; return; }
    if [ "$got" = "$expected" ]; then echo "ok: quickstart $* printed llama2.c's text"; else fail "quickstart $* printed: $got"; fi
  }
  ran "$(copy_as stories260K)"                     # the README's command; once kiln's test model's name
  ran "$(copy_as kiln_test_stories260K)"           # the name of kiln's test model now
  ran --name story "$(copy_as kiln-codegen)"       # a tool's name, renamed
fi

[ "$failures" -eq 0 ] || { echo "$failures quickstart check(s) failed" >&2; exit 1; }
