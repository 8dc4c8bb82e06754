#!/usr/bin/env bash
# The README's first command: installs what is missing, builds kiln, compiles
# a model into its own binary, generates text and prints the speed.
#
#   scripts/quickstart.sh                  synthetic stories110m (RANDOM weights)
#   scripts/quickstart.sh model.gguf       your own llama GGUF
#   scripts/quickstart.sh model.gguf -p "Hello" -n 64    extra flags go to the binary
#   scripts/quickstart.sh --name NAME model.gguf ...      name the program bin/NAME (default: the file's name)
#
# It builds in a folder of its own (build-quickstart, or $KILN_QUICKSTART_BUILD_DIR)
# without kiln's tests, through scripts/quickstart/CMakeLists.txt, so what was
# built in build/ before does not matter. $KILN_CMAKE_ARGS adds configure flags.
set -euo pipefail
cd "$(dirname "$0")/.."

name=
if [ $# -ge 1 ] && [ "$1" = --name ]; then
  if [ $# -lt 2 ]; then
    echo "kiln: --name: missing value" >&2
    exit 1
  fi
  name=$2
  shift 2
fi
gguf=
if [ $# -ge 1 ] && [[ "$1" == *.gguf ]]; then
  if [ ! -f "$1" ]; then
    echo "kiln: cannot read $1" >&2
    exit 1
  fi
  # The name is the file's as given (a symlink's own name, not its target's).
  name=${name:-$(basename "$1" .gguf)}
  gguf=$(realpath "$1")
  shift
elif [ -n "$name" ]; then
  echo "kiln: --name needs a GGUF file after it: scripts/quickstart.sh --name NAME model.gguf" >&2
  exit 1
fi

scripts/setup.sh
build=${KILN_QUICKSTART_BUILD_DIR:-build-quickstart}
# Configures the quickstart project; a refusal of kiln's own (a name clash) is
# shown as its one line, anything else in full.
configure() {
  local log
  # shellcheck disable=SC2086  # KILN_CMAKE_ARGS is a list of flags
  if ! log=$(cmake -S scripts/quickstart -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" ${KILN_CMAKE_ARGS:-} 2>&1); then
    if grep -q '^  kiln: ' <<<"$log"; then
      # CMake wraps the message over indented lines: join them back into one.
      awk '/^  kiln: /{on=1} on&&!/^  /{exit} on{sub(/^  /,""); printf "%s%s", sep, $0; sep=" "} END{print ""}' \
        <<<"$log" >&2
    else
      echo "$log" >&2
    fi
    exit 1
  fi
}
if [ -n "$gguf" ]; then
  configure -DKILN_QUICKSTART_GGUF="$gguf" -DKILN_QUICKSTART_NAME="$name"
else
  name=stories110m-q8_0
  configure -DKILN_QUICKSTART_GGUF= -DKILN_QUICKSTART_NAME="$name" -DKILN_QUICKSTART_PRESET=stories110m \
    -DKILN_QUICKSTART_TYPE=q8_0
  cat >&2 <<'NOTE'
kiln: no GGUF given, so this compiles a SYNTHETIC model: the stories110m shape (768 wide, 12 layers,
kiln: 32000 tokens) with RANDOM weights, made by kiln-synth. Its text is gibberish; its speed is real.
kiln: to compile a real model instead:  scripts/quickstart.sh path/to/model.gguf
NOTE
fi

# Build output goes to stderr: stdout is the model's text alone.
cmake --build "$build" -j"$(nproc)" --target "$name" >&2
echo "kiln: running $build/bin/$name" >&2
if [ $# -eq 0 ]; then
  set -- -p "Once upon a time" -n 128
fi
exec "$build/bin/$name" "$@"
