#!/usr/bin/env bash
# A test in which the server is driven by a client nobody here wrote (the
# openai package, the Vercel AI SDK, Chromium through playwright-core): the
# npm packages of package-lock.json are installed with `npm ci` into NPM_DIR
# (once per lock file, under a lock so that tests run in parallel share it),
# the test script is copied next to them, and node runs it.
# Exit status 77 (ctest: skipped) when node or npm is missing, npm cannot
# reach its registry, or (the chat page's test) Chromium is not installed;
# with KILN_CLIENT_TESTS_REQUIRED=1 (.ci/run) these fail instead.
#   client_test.sh NPM_DIR SCRIPT.mjs SERVER_PROGRAM [ARGS...]
set -euo pipefail
dir=$1
script=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
skip() {
  echo "client test $script: $1"
  [ "${KILN_CLIENT_TESTS_REQUIRED:-0}" = 1 ] && { echo "client test $script: KILN_CLIENT_TESTS_REQUIRED=1, so this fails"; exit 1; }
  exit 77
}
command -v node >/dev/null && command -v npm >/dev/null || skip "skipped, node or npm is not installed (Debian: nodejs npm)"
mkdir -p "$dir"
(
  flock 9
  if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json"; then
    cp "$here/package.json" "$here/package-lock.json" "$dir/"
    if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$dir/install.log" 2>&1; then
      rm -f "$dir/package-lock.json"  # not installed: the next test tries again
      if grep -qiE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network' "$dir/install.log"; then
        tail -n 5 "$dir/install.log"
        exit 77
      fi
      cat "$dir/install.log"
      exit 1
    fi
  fi
  cp "$here"/*.mjs "$dir/"
) 9>"$dir/.lock" || { status=$?; [ $status = 77 ] && skip "skipped, npm cannot reach its registry"; exit $status; }
exec node "$dir/$script" "$@"
