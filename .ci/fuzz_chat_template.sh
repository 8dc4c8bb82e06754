#!/usr/bin/env bash
# CI: fuzz the chat-template renderer for a bounded time (libFuzzer, with
# AddressSanitizer and UBSan), starting from the templates kiln tests with.
# Skipped with a message where clang++ is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${KILN_FUZZ_SECONDS:-60}
if ! command -v clang++ > /dev/null; then
  echo "ci: clang++ not found; chat-template fuzzing skipped"
  exit 0
fi
cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF -DKILN_MODEL= \
  -DKILN_SYNTHETIC_PRESET= > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzz_chat_template
corpus=build-fuzz/fuzz-corpus
mkdir -p "$corpus"
cp tests/chat/templates/*.jinja "$corpus"/
if [ -d ../shared/chat-templates ]; then cp ../shared/chat-templates/*.jinja "$corpus"/; fi
build-fuzz/bin/fuzz_chat_template "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
  -print_final_stats=1 2>&1 | tail -n 12
