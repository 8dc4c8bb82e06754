#!/usr/bin/env bash
# The server driven by a client nobody here wrote: the official `openai`
# package from npm (installed into NPM_DIR on first use), run with node.
# Exit status 77 (ctest: skipped) only when node or npm is missing or npm
# cannot reach its registry.
#   openai_client_test.sh SERVER_PROGRAM NPM_DIR
set -euo pipefail
server=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "openai client test: skipped, node or npm is not installed (Debian: nodejs npm)"
  exit 77
fi
if [ ! -f "$dir/node_modules/openai/package.json" ]; then
  mkdir -p "$dir"
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error openai >"$dir/install.log" 2>&1; then
    if grep -qiE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|network' "$dir/install.log"; then
      echo "openai client test: skipped, npm cannot reach its registry:"
      tail -n 5 "$dir/install.log"
      exit 77
    fi
    echo "openai client test: npm install openai failed:"
    cat "$dir/install.log"
    exit 1
  fi
fi
exec node "$here/openai_client.mjs" "$server" "$dir"
