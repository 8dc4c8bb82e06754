#!/usr/bin/env bash
# The README's first command: installs what is missing, builds kiln, compiles
# a model into its own binary, generates text and prints the speed.
#
#   scripts/quickstart.sh                  synthetic stories110m (RANDOM weights)
#   scripts/quickstart.sh model.gguf       your own llama GGUF
#   scripts/quickstart.sh model.gguf -p "Hello" -n 64    extra flags go to the binary
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

if [ $# -ge 1 ] && [[ "$1" == *.gguf ]]; then
  model=$(realpath "$1")
  shift
  name=$(basename "$model" .gguf)
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DKILN_MODEL="$model" -DKILN_SYNTHETIC_PRESET= >/dev/null
else
  name=stories110m-q8_0
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DKILN_MODEL= -DKILN_SYNTHETIC_PRESET=stories110m \
    -DKILN_SYNTHETIC_TYPE=q8_0 >/dev/null
  cat >&2 <<'NOTE'
kiln: no GGUF given, so this compiles a SYNTHETIC model: the stories110m shape (768 wide, 12 layers,
kiln: 32000 tokens) with RANDOM weights, made by kiln-synth. Its text is gibberish; its speed is real.
kiln: to compile a real model instead:  scripts/quickstart.sh path/to/model.gguf
NOTE
fi

cmake --build build -j"$(nproc)" --target "$name"
echo "kiln: running build/bin/$name" >&2
if [ $# -eq 0 ]; then
  set -- -p "Once upon a time" -n 128
fi
exec "build/bin/$name" "$@"
