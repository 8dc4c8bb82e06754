#!/usr/bin/env bash
# The README's test command: installs what is missing, builds kiln and its
# test models, and runs the whole test suite. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build=${KILN_BUILD_DIR:-build}
cmake -S . -B "$build" -DKILN_MODEL= -DKILN_SYNTHETIC_PRESET= ${KILN_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$(nproc)"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
