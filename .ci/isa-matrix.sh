#!/usr/bin/env bash
# CI: every instruction-set level kiln supports compiles with -Werror, and its
# tests run wherever this machine can execute them. The default,
# -march=native, is built and tested in full by scripts/test.sh; here:
#   x86-64 (SSE2 baseline), x86-64-v3 (AVX2), x86-64-v4 (AVX-512 without
#     VNNI), cooperlake (AVX-512 with VNNI and BF16 but not FP16: the
#     vdpbf16ps path, which CPUs with AVX-512 FP16 leave out): the kernel
#     suites, run where this CPU can, built only elsewhere (said which); at
#     the baseline also the end-to-end suite of mixed-type models (every
#     weight type, both architectures, against the reference forward pass)
#     on 4-lane vectors. A level whose code paths are native's (the same
#     instruction-set macros) is left to the native build, and one that
#     differs only in the int8 products and the BF16 pairs skips the suites
#     of float kernels and threads (native's code). What does not
#     depend on the instruction set (tokenizers, chat, files) is tested
#     once, by the native build;
#   aarch64, cross-compiled: armv8.2-a+dotprod, the kernel suites and the
#     end-to-end suite of mixed-type models under qemu-user; armv8-a, the
#     kernel suites of int8 products (the rest compile as with dotprod);
#   an AVX-512 program started on an emulated CPU without AVX-512 must stop
#     with kiln's one-line message, not an illegal instruction; a C host of
#     the same build's shared library must get that line from
#     kiln_model_load and go on.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

if [ "$(id -u)" -eq 0 ]; then
  missing=()
  for p in g++-aarch64-linux-gnu qemu-user; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "isa-matrix: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

jobs=$(nproc)
configure() {  # build dir, then cmake arguments
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DKILN_MODEL= -DKILN_SYNTHETIC_PRESET= "$@" >/dev/null
}

# Whether this CPU runs code built with -march=$1 (the compiler's macros for
# that level, checked against the CPU's flags).
cpu_runs() {
  local needs
  needs=$(g++ -march="$1" -dM -E -x c++ /dev/null |
    sed -n 's/^#define __\(AVX512[A-Z0-9]*\|AVX2\|FMA\|F16C\|AVXVNNI\)__ 1$/\1/p' | tr 'A-Z' 'a-z')
  local flags
  flags=$(grep -m1 '^flags' /proc/cpuinfo)
  for f in $needs; do
    case $f in
      avx512vnni) f=avx512_vnni ;;
      avx512bf16) f=avx512_bf16 ;;
      avxvnni) f=avx_vnni ;;
    esac
    [[ " $flags " == *" $f "* ]] || return 1
  done
}

# The kernel suites: the list tests/CMakeLists.txt reads too.
mapfile -t kernel_tests < tests/kernel_tests.txt
# ctest's pattern for a list of suites (e2e_synth_combos runs as several
# ctest tests, e2e_synth_combos.<model>).
suites_regex() { echo "^($(IFS='|'; echo "$*"))(\\..+)?\$"; }
# The suites of float code only (xsimd's vectors, fp16 conversions) and of
# threads. The int8 products and the BF16 pairs leave their code
# unchanged, so a level that differs from another only there compiles them
# as the other does.
float_suites=(test_kernels test_kernels_arch test_team test_team_backoff)
without_float_suites() {
  for t in "$@"; do
    [[ " ${float_suites[*]} " == *" $t "* ]] || echo "$t"
  done
}

# The compiler's macros that choose code paths: kiln's (kernels/arch/,
# fp16.hpp, bf16_pairs.hpp) and xsimd's (its config header). Two levels with
# the same ones compile the same kernels.
path_macros() {
  g++ -march="$1" -dM -E -x c++ /dev/null |
    sed -n 's/^#define __\(AVX512\(F\|BW\|CD\|DQ\|VL\|VNNI\|BF16\|FP16\)\|AVX2\|AVX\|FMA4\?\|F16C\|SSE[0-9_]*\|SSSE3\)__ 1$/\1/p' |
    sort | tr '\n' ' '
}
native_paths=$(path_macros native)
# The same without the macros of the int8 products and the BF16 pairs.
float_paths() { path_macros "$1" | tr ' ' '\n' | grep -Ev '^AVX512(VNNI|BF16|FP16)$' | tr '\n' ' '; }
native_float_paths=$(float_paths native)

for level in x86-64 x86-64-v3 x86-64-v4 cooperlake; do
  # x86-64-v4 is always built: the start-up check below runs its program.
  if [ "$level" != x86-64-v4 ] && [ "$(path_macros "$level")" = "$native_paths" ]; then
    echo "isa-matrix: $level: the same kernel code paths as native (built and tested in full by scripts/test.sh); skipped"
    continue
  fi
  dir=build-isa-$level
  # A level this CPU cannot run takes the build-time tools (codegen, synth)
  # from the native build that scripts/test.sh made.
  host_tools=()
  cpu_runs "$level" || host_tools=(-DKILN_HOST_TOOLS="$PWD/build/bin")
  configure "$dir" -DKILN_ARCH="$level" "${host_tools[@]}"
  targets=("${kernel_tests[@]}")
  what="kernel suites"
  if [ "$level" = x86-64 ]; then
    targets+=(e2e_synth_combos)
    what="kernel and mixed-model end-to-end suites"
  elif [ "$(float_paths "$level")" = "$native_float_paths" ]; then
    mapfile -t targets < <(without_float_suites "${kernel_tests[@]}")
    what="kernel suites but the float ones (native's code)"
  fi
  cmake --build "$dir" -j"$jobs" --target "${targets[@]}"
  if cpu_runs "$level"; then
    ctest --test-dir "$dir" --output-on-failure -j"$jobs" -R "$(suites_regex "${targets[@]}")"
    echo "isa-matrix: $level: $what passed after $((SECONDS - start)) s"
  else
    echo "isa-matrix: $level: built, NOT run (this CPU lacks the level) after $((SECONDS - start)) s"
  fi
done

# The start-up check: an AVX-512 build on an emulated CPU without AVX-512.
out=$(qemu-x86_64 -cpu Haswell build-isa-x86-64-v4/tests/test_cpu_features 2>&1) && status=0 || status=$?
if [ "$status" -ne 1 ] || [[ "$out" != *"this binary needs AVX-512F"*"this CPU lacks them"* ]]; then
  echo "isa-matrix: an x86-64-v4 program on a Haswell CPU should stop with one line, got status $status: $out"
  exit 1
fi
echo "isa-matrix: the x86-64-v4 build refuses a Haswell CPU: $out"
# The same build's shared library in a C host: kiln_model_load refuses the
# CPU and the host goes on (its own message and exit status), where a
# program stops at start-up.
cmake --build build-isa-x86-64-v4 -j"$jobs" --target kiln_test_synth_llama_mixed_shared
cc examples/c/generate.c -Icapi -Lbuild-isa-x86-64-v4/lib -lkiln_test_synth_llama_mixed \
  -Wl,-rpath,"$PWD/build-isa-x86-64-v4/lib" -o build-isa-x86-64-v4/generate
out=$(qemu-x86_64 -cpu Haswell build-isa-x86-64-v4/generate -p hi -n 1 2>&1 | grep -v '^qemu-x86_64: warning' || true)
if [[ "$out" != "generate: kiln_model_load: this binary needs AVX-512F"*"this CPU lacks them" ]]; then
  echo "isa-matrix: an x86-64-v4 library on a Haswell CPU should refuse in kiln_model_load, got: $out"
  exit 1
fi
echo "isa-matrix: the x86-64-v4 library refuses a Haswell CPU through kiln_model_load: $out"

# aarch64: the header-only packages (xsimd, doctest, xxHash, nlohmann-json)
# from the host's /usr/include, on their own.
headers=$PWD/build-isa-arm-headers
mkdir -p "$headers"
for h in xsimd doctest xxhash.h nlohmann; do ln -sfn "/usr/include/$h" "$headers/$h"; done
arm=(-DCMAKE_TOOLCHAIN_FILE=scripts/toolchains/aarch64-linux-gnu.cmake -DKILN_INSTALL=OFF -DXSIMD_INCLUDE_DIR="$headers"
  -DDOCTEST_INCLUDE_DIR="$headers" -DKILN_XXHASH_INCLUDE_DIR="$headers" -DKILN_JSON_INCLUDE_DIR="$headers")

configure build-isa-aarch64 "${arm[@]}" -DKILN_ARCH=armv8.2-a+dotprod
# The host's cpp-httplib is an x86-64 library: the cross build leaves the server out (said at configure).
cmake --build build-isa-aarch64 -j"$jobs" --target "${kernel_tests[@]}" e2e_synth_combos
ctest --test-dir build-isa-aarch64 --output-on-failure -j"$jobs" -R "$(suites_regex "${kernel_tests[@]}" e2e_synth_combos)"
echo "isa-matrix: aarch64 (armv8.2-a+dotprod): kernel and mixed-model end-to-end suites passed under qemu after $((SECONDS - start)) s"

# armv8-a differs from armv8.2-a+dotprod only in the int8 products
# (kernels/arch/int8.hpp: the portable ones without sdot, and with them the
# rows interleaved per group) and the start-up check that asks for sdot.
mapfile -t base_tests < <(without_float_suites "${kernel_tests[@]}")
configure build-isa-aarch64-base "${arm[@]}" -DKILN_ARCH=armv8-a
cmake --build build-isa-aarch64-base -j"$jobs" --target "${base_tests[@]}"
ctest --test-dir build-isa-aarch64-base --output-on-failure -j"$jobs" -R "$(suites_regex "${base_tests[@]}")"
echo "isa-matrix: aarch64 baseline (armv8-a) kernel tests passed under qemu after $((SECONDS - start)) s"
