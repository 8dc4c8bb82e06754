#!/usr/bin/env bash
# Builds tests/consumer, a separate project using kiln, the two ways the
# README shows: add_subdirectory of this source tree, and find_package from a
# `cmake --install` prefix. Runs its program each time and checks, from the
# compile commands, that kiln's warnings (and -Werror where kiln is the
# top-level project) reach kiln's sources, that the generated model code is
# compiled for the instruction set of kiln's libraries, and that neither
# reaches the project's own file, which still compiles as C++20. Last, that
# kiln's headers the project includes read the same at two instruction sets:
# no kernel code that differs by ISA macros, which would break the
# one-definition rule between the project's files and kiln's.
# KILN_CMAKE_ARGS go to every configure step; KILN_INSTALL_FROM names a
# release build of kiln to install instead of building one here.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/setup.sh
kiln=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs=$(nproc)
common=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON ${KILN_CMAKE_ARGS:-})

fail() { echo "consumer: $*" >&2; exit 1; }
# Runs a configure/build/install step quietly; on failure shows its output.
quiet() { "$@" >"$tmp/step.log" 2>&1 || { tail -n 60 "$tmp/step.log" >&2; fail "failed: $*"; }; }

# The compile command of the file whose path ends in /$1, from a compile_commands.json.
command_for() {
  grep -B1 -E "\"file\": \"[^\"]*/$1\"" "$2" | head -1 | sed -E 's/^ *"command": "//; s/",?$//'
}
# The macros the instruction-set flags (-m...) of a compile command define:
# what the code is compiled for, however the flags spell it.
isa_macros() { ${1%% *} $(grep -oE -- ' -m[^ ]+' <<<"$1") -dM -E -x c++ /dev/null | sort; }

# check <consumer build dir> <compile_commands.json that has kiln's own sources> <werror: yes|no>
check() {
  local build=$1 kiln_commands=$2 werror=$3
  "$build/consumer" || fail "the consumer program failed ($build)"
  local own gen lib
  own=$(command_for main.cpp "$build/compile_commands.json")
  gen=$(command_for tiny.gen.cpp "$build/compile_commands.json")
  lib=$(command_for engine/session/session.cpp "$kiln_commands")
  [ -n "$own" ] && [ -n "$gen" ] && [ -n "$lib" ] || fail "compile commands not found in $build"
  grep -qE -- '-Werror|-march=' <<<"$own" && fail "kiln's flags reached the project's own file: $own"
  grep -qE -- '-std=(c|gnu)\+\+20' <<<"$own" || fail "the project's own file is not compiled as C++20: $own"
  grep -q -- '-Wextra' <<<"$lib" || fail "kiln's own file is compiled without kiln's warnings: $lib"
  if [ "$werror" = yes ]; then
    grep -q -- '-Werror' <<<"$lib" || fail "kiln's own file is compiled without -Werror: $lib"
  fi
  grep -q -- ' -march=' <<<"$gen" && [ "$(isa_macros "$gen")" = "$(isa_macros "$lib")" ] ||
    fail "the generated model code is not compiled for kiln's instruction set: $gen"

  local isas
  case $(uname -m) in
    x86_64) isas=(-march=x86-64 -march=x86-64-v4) ;;
    aarch64) isas=(-march=armv8-a -march=armv8.2-a+fp16+dotprod) ;;
    *) echo "consumer: no ISA pair to compare headers with on $(uname -m); skipped"; return 0 ;;
  esac
  local preprocess i=0
  preprocess=$(sed -E 's/ -o [^ ]+//; s/ -c / /' <<<"$own")
  for isa in "${isas[@]}"; do
    (cd "$build" && $preprocess -E "$isa" >"$tmp/pre$i.ii") || fail "preprocessing main.cpp with $isa failed"
    grep -q '^# [0-9]* "[^"]*/xsimd/' "$tmp/pre$i.ii" && fail "main.cpp includes xsimd through kiln's headers ($isa)"
    # The text from kiln's headers and the generated one (all under $kiln or
    # $tmp); the compiler's and standard library's headers have their own ways.
    awk -v kiln="$kiln/" -v tmp="$tmp/" '
      /^# [0-9]+ "/ { file = $3; gsub(/"/, "", file); ours = index(file, kiln) == 1 || index(file, tmp) == 1; next }
      ours' "$tmp/pre$i.ii" >"$tmp/ours$i.ii"
    i=$((i + 1))
  done
  [ -s "$tmp/ours0.ii" ] || fail "no text from kiln's headers in the preprocessed main.cpp"
  cmp -s "$tmp/ours0.ii" "$tmp/ours1.ii" ||
    fail "kiln's headers read differently with ${isas[*]}: kernel code reached the public interface"
}

quiet cmake -S tests/consumer -B "$tmp/sub" -DKILN_SOURCE_DIR="$kiln" "${common[@]}"
# Only what the project's program needs: kiln's other targets are the release build's.
quiet cmake --build "$tmp/sub" -j"$jobs" --target consumer
check "$tmp/sub" "$tmp/sub/compile_commands.json" no  # -Werror: only when kiln is top-level
echo "consumer: add_subdirectory build ran after $((SECONDS - start)) s"

# The installed kiln: from KILN_INSTALL_FROM, a release build CI has already
# made (configured with compile commands), or built here.
installed=${KILN_INSTALL_FROM:-}
if [ -z "$installed" ]; then
  installed=$tmp/kiln
  quiet cmake -S . -B "$installed" -DKILN_BUILD_TESTS=OFF -DKILN_MODEL= -DKILN_SYNTHETIC_PRESET= "${common[@]}"
  quiet cmake --build "$installed" -j"$jobs"
fi
[ -f "$installed/compile_commands.json" ] || fail "$installed has no compile_commands.json (configure it with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"
quiet cmake --install "$installed" --prefix "$tmp/prefix"
quiet cmake -S tests/consumer -B "$tmp/pkg" -DCMAKE_PREFIX_PATH="$tmp/prefix" "${common[@]}"
quiet cmake --build "$tmp/pkg" -j"$jobs"
check "$tmp/pkg" "$installed/compile_commands.json" yes
echo "ci: consumer project built and ran both ways (add_subdirectory, find_package) after $((SECONDS - start)) s"
